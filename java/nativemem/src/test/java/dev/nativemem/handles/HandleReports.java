package dev.nativemem.handles;

import dev.nativemem.internal.Json;

/** Builds a {@link HandleReport} from the registry's JSON, for tests outside this package. */
public final class HandleReports {
  private HandleReports() {}

  public static HandleReport fromJson(boolean agentActive, String json) {
    return HandleReportReader.read(agentActive, "level=full", Json.parseObject(json), 0);
  }
}
