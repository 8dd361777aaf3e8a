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

  /**
   * Leaks accepted with a reason; RocksDB's own {@code defaultReadOptions_} always is (it is in
   * nativemem's catalogue of known leaks as accepted).
   */
  Known[] known() default {};

  /**
   * One accepted leak: a kind, optionally a fragment of its creation stack, and why; or an id of
   * nativemem's catalogue of known leaks as the kind ({@code @Known(kind = "FLINK-39923", reason =
   * "until Flink fixes it")}), which matches that entry's kind, frames and affected versions.
   */
  @Retention(RetentionPolicy.RUNTIME)
  @Target({})
  @interface Known {
    /** A handle kind ({@code ColumnFamilyOptions}) or a catalogue id ({@code FLINK-39753}). */
    String kind();

    /** Only handles whose creation stack contains this text; empty: every handle of the kind. */
    String at() default "";

    String reason();
  }
}
