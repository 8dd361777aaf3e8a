package dev.nativemem.profile;

import static dev.nativemem.ContractFixtures.check;
import static dev.nativemem.ContractFixtures.checkWrittenBack;

import dev.nativemem.internal.JsonBinding;
import dev.nativemem.profile.sampling.SamplingStatus;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.junit.jupiter.api.Test;

/**
 * The JSON contract with the native library for {@code dev.nativemem.profile}: see {@link
 * dev.nativemem.ContractFixtures}.
 */
class ProfileContractFixturesTest {
  @Test
  void samplingStatus() {
    check("sampling-status.json", SamplingStatus::of);
  }

  /** The dump's answer is the profile: its path and summary, nothing read again. */
  @Test
  void dumpedProfile() {
    check(
        "dumped-profile.json",
        HeapProfile::dumped,
        // As in the summary, and where the sidecar went (beside the dump, by its name).
        "symbols_dir",
        "mapping_count",
        "warnings");
  }

  @Test
  void profileSummary() {
    Path dump = Paths.get("/var/tmp/app.heap");
    check(
        "profile-summary.json",
        json -> HeapProfile.of(dump, json),
        // The dump's own figures; its warnings come again in analyze()'s report, which reads them.
        "mapping_count",
        "warnings");
  }

  @Test
  void profileReport() {
    checkWrittenBack("profile-report.json", json -> JsonBinding.read(ProfileReport.class, json));
  }
}
