package dev.nativemem.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.ContractFixtures;
import dev.nativemem.base.Advice;
import dev.nativemem.handles.HandleReport;
import dev.nativemem.handles.NativeHandles;
import dev.nativemem.internal.Json;
import dev.nativemem.internal.JsonBinding;
import dev.nativemem.memory.reading.NmtSummary;
import dev.nativemem.profile.sampling.SamplingStatus;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The advice about heap profiles follows the engine that can run: where the import-rewriting engine
 * profiles (glibc, or a jemalloc that cannot profile itself), no advice says profiles are missing
 * or need a restart, and each names what that engine does not see.
 */
class AdviceRulesTest {
  /** NMT's summary with 9.3 MiB of the JVM's own malloc: the fixture's 80 MiB allocated is more. */
  private static final String NMT =
      "\nNative Memory Tracking:\n\n"
          + "Total: reserved=8029108502, committed=489474326\n"
          + "       malloc: 9787670 #16157\n"
          + "       mmap:   reserved=8019320832, committed=479686656\n\n"
          + "-                 Java Heap (reserved=6320816128, committed=406847488)\n"
          + "                            (mmap: reserved=6320816128, committed=406847488) \n";

  private static final SamplingStatus IMPORTS = sampling(Map.of());

  private static final SamplingStatus NONE =
      sampling(
          Map.of(
              "engine", "",
              "engine_reason", "",
              "available", false,
              "unavailable_reason", "heap profiles need jemalloc, but glibc serves malloc"));

  private static final SamplingStatus JEMALLOC =
      sampling(Map.of("engine", "jemalloc", "engine_reason", "jemalloc can profile"));

  @Test
  void underGlibcWithImportRewritingProfilesAreThereAndWhatTheyMissIsNamed() {
    List<Advice> advice = evaluate("allocator-glibc.json", IMPORTS);
    Advice glibc = only(advice, "GLIBC_PROFILES_BY_IMPORTS");
    assertTrue(glibc.message().contains("NativeMemory.profiling().start()"), glibc.message());
    assertTrue(glibc.message().contains(AdviceRules.IMPORTS_DO_NOT_SEE), glibc.message());
    assertEquals(AdviceRules.envCommand(), glibc.suggestedSetting());
    Advice outside = only(advice, "MALLOC_OUTSIDE_JVM");
    assertEquals("NativeMemory.dumpProfile()", outside.suggestedSetting(), outside.message());
    assertNoAdviceSaysProfilesAreMissing(advice);
  }

  @Test
  void underGlibcWithoutAnEngineTheAdviceSendsToTheJarsAllocator() {
    List<Advice> advice = evaluate("allocator-glibc.json", NONE);
    Advice glibc = only(advice, "GLIBC_NO_PROFILING");
    assertTrue(glibc.message().contains("no heap profiles here"), glibc.message());
    Advice outside = only(advice, "MALLOC_OUTSIDE_JVM");
    assertEquals(AdviceRules.envCommand(), outside.suggestedSetting(), outside.message());
    assertFalse(codes(advice).contains("GLIBC_PROFILES_BY_IMPORTS"), codes(advice).toString());
  }

  @Test
  void jemallocStartedWithoutProfilingSaysTheImportEngineProfilesMeanwhile() {
    Map<String, Object> allocator =
        Json.parseObject(ContractFixtures.text("allocator-jemalloc.json"));
    @SuppressWarnings("unchecked")
    Map<String, Object> config = (Map<String, Object>) allocator.get("jemalloc");
    config.put("opt_prof", false);
    List<Advice> advice = evaluate(JsonBinding.read(AllocatorInfo.class, allocator), IMPORTS);
    Advice notAtStart = only(advice, "PROFILING_NOT_ENABLED_AT_START");
    assertTrue(
        notAtStart.message().contains("until then heap profiles come from the import-rewriting"),
        notAtStart.message());
    assertNoAdviceSaysProfilesAreMissing(advice);

    config.put("config_prof", false);
    advice = evaluate(JsonBinding.read(AllocatorInfo.class, allocator), IMPORTS);
    Advice notBuilt = only(advice, "PROFILING_NOT_COMPILED_IN");
    assertTrue(notBuilt.message().contains(AdviceRules.IMPORTS_DO_NOT_SEE), notBuilt.message());
    assertNoAdviceSaysProfilesAreMissing(advice);
  }

  @Test
  void aProfilingJemallocGetsNoAdviceAboutEngines() {
    List<Advice> advice = evaluate("allocator-jemalloc.json", JEMALLOC);
    assertFalse(
        advice.stream().anyMatch(a -> a.message().contains("import-rewriting")), advice.toString());
    Advice outside = only(advice, "MALLOC_OUTSIDE_JVM");
    assertEquals("NativeMemory.dumpProfile()", outside.suggestedSetting(), outside.message());
  }

  private static List<Advice> evaluate(String allocatorFixture, SamplingStatus sampling) {
    return evaluate(
        JsonBinding.read(
            AllocatorInfo.class, Json.parseObject(ContractFixtures.text(allocatorFixture))),
        sampling);
  }

  private static List<Advice> evaluate(AllocatorInfo allocator, SamplingStatus sampling) {
    HandleReport handles = NativeHandles.report();
    MemoryBreakdown breakdown =
        MemoryBreakdownReader.read(
            Json.parseObject(ContractFixtures.text("native-view.json")),
            NmtSummary.parse(NMT),
            handles,
            MemoryBreakdown.View.COMMITTED);
    return AdviceRules.evaluate(allocator, breakdown, handles, Map.of(), sampling);
  }

  /** The fixture's status (the import-rewriting engine, available) with {@code changes}. */
  private static SamplingStatus sampling(Map<String, Object> changes) {
    Map<String, Object> json = Json.parseObject(ContractFixtures.text("sampling-status.json"));
    json.putAll(changes);
    return SamplingStatus.of(json);
  }

  private static Advice only(List<Advice> advice, String code) {
    List<Advice> found =
        advice.stream().filter(a -> a.code().equals(code)).collect(Collectors.toList());
    assertEquals(1, found.size(), code + " in " + codes(advice));
    return found.get(0);
  }

  private static List<String> codes(List<Advice> advice) {
    return advice.stream().map(Advice::code).collect(Collectors.toList());
  }

  private static void assertNoAdviceSaysProfilesAreMissing(List<Advice> advice) {
    for (Advice a : advice) {
      assertFalse(a.message().contains("no heap profiles"), a.message());
      assertFalse(a.message().contains("cannot be taken"), a.message());
      assertFalse(a.message().contains("needs the profiling allocator"), a.message());
    }
  }
}
