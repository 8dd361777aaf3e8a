package dev.nativemem.junit;

import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/** Settings of {@link NativeLeakCheck} for one test class. */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
@Inherited
public @interface NativeLeakSettings {
  /** Check after each test method instead of once after the class. */
  boolean perMethod() default false;

  /** Leaks accepted with a reason; RocksDB's own {@code defaultReadOptions_} always is. */
  Known[] known() default {};

  /** One accepted leak: a kind, optionally a fragment of its creation stack, and why. */
  @Retention(RetentionPolicy.RUNTIME)
  @Target({})
  @interface Known {
    String kind();

    /** Only handles whose creation stack contains this text; empty: every handle of the kind. */
    String at() default "";

    String reason();
  }
}
