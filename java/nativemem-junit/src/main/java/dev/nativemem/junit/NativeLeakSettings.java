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
  /** {@link #maxLeakedBytes()}: the limit of {@code -Dnativemem.junit.maxLeakedBytes}. */
  long FROM_PROPERTY = -1;

  /** {@link #maxLeakedBytes()}: no check of leaked native bytes for this class. */
  long NOT_CHECKED = Long.MAX_VALUE;

  /** Check after each test method instead of once after the class. */
  boolean perMethod() default false;

  /**
   * With heap profiling available, fail when the class's code left more native bytes live than this
   * after it ended (after a GC and the JDK's cleaners), estimated from heap profile samples whose
   * Java frames pass through the class. {@link #FROM_PROPERTY} (the default) takes {@code
   * -Dnativemem.junit.maxLeakedBytes}, itself 4194304 (4 MiB) unless set; {@link #NOT_CHECKED}
   * turns the check off.
   */
  long maxLeakedBytes() default FROM_PROPERTY;

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
