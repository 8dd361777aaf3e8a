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
   * Leaks accepted; RocksDB's own {@code defaultReadOptions_} always is (it is in nativemem's
   * catalogue of known leaks as accepted).
   */
  Known[] known() default {};

  /**
   * One accepted leak: either a handle {@code kind}, optionally with a fragment of its creation
   * stack ({@code @Known(kind = "ColumnFamilyOptions", at = "com.example.Cache.<init>")}), or the
   * {@code id} of an entry of nativemem's catalogue of known leaks ({@code @Known(id =
   * "FLINK-39923", reason = "until Flink 2.3")}), which matches that entry's kind, frames and
   * affected versions. Give one of {@code kind} and {@code id}. The accepted handles are listed
   * under "known leaks, not failed" in a failure's text, with the {@code reason} when there is one.
   */
  @Retention(RetentionPolicy.RUNTIME)
  @Target({})
  @interface Known {
    /** A handle kind, such as {@code ColumnFamilyOptions} or {@code Inflater}. */
    String kind() default "";

    /**
     * A catalogue id, such as {@code FLINK-39753} ({@code java -jar nativemem.jar known-leaks}).
     */
    String id() default "";

    /** Only handles whose creation stack contains this text (with {@code kind}); empty: all. */
    String at() default "";

    /** Why the leak is accepted, shown beside it in a failure's text; optional. */
    String reason() default "";
  }
}
