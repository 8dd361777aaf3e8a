package dev.nativemem.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.nativemem.ContractFixtures;
import dev.nativemem.NativeMemory;
import dev.nativemem.internal.Json;
import dev.nativemem.internal.JsonBinding;
import dev.nativemem.profile.ProfileReport;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * One spelling per value, checked byte for byte where it matters: a value bound from the native
 * library's JSON writes that JSON back with {@code toJson()}, every key in the native order and a
 * null written as null, so that a bundle or a {@code --json} answer is the Rust struct's JSON, not
 * a Java dialect of it.
 */
class ToJsonIsTheNativeJsonTest {
  private static void writesBack(String fixture, Function<Map<String, Object>, Object> read) {
    String nativeJson = ContractFixtures.text(fixture);
    Object value = read.apply(Json.parseObject(nativeJson));
    String written;
    try {
      written = (String) value.getClass().getMethod("toJson").invoke(value);
    } catch (ReflectiveOperationException e) {
      throw new AssertionError(e);
    }
    assertEquals(
        Json.writeWithNulls(Json.parseObject(nativeJson)),
        written,
        fixture + ": toJson() is not the native library's JSON");
  }

  @Test
  void allocatorInfo() {
    writesBack("allocator-jemalloc.json", json -> JsonBinding.read(AllocatorInfo.class, json));
    writesBack("allocator-glibc.json", json -> JsonBinding.read(AllocatorInfo.class, json));
  }

  @Test
  void allocatorStats() {
    writesBack("allocator-stats-jemalloc.json", AllocatorStats::of);
    writesBack("allocator-stats-glibc.json", AllocatorStats::of);
  }

  @Test
  void processMemory() {
    writesBack("process-memory.json", json -> JsonBinding.read(ProcessMemory.class, json));
  }

  @Test
  void remedyResult() {
    writesBack("remedy.json", json -> JsonBinding.read(NativeMemory.RemedyResult.class, json));
  }

  @Test
  void profileReport() {
    writesBack("profile-report.json", json -> JsonBinding.read(ProfileReport.class, json));
  }
}
