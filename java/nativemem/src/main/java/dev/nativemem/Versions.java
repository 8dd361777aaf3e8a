package dev.nativemem;

import dev.nativemem.internal.Json;
import java.util.LinkedHashMap;
import java.util.Map;

/** The versions of the Java API and of the native library it loaded; they always match. */
public final class Versions {
  private final String java;
  private final String nativeLibrary;
  private final String libraryPath;

  Versions(String java, String nativeLibrary, String libraryPath) {
    this.java = java;
    this.nativeLibrary = nativeLibrary;
    this.libraryPath = libraryPath;
  }

  /** Version of the Java API (this jar). */
  public String java() {
    return java;
  }

  /** Version reported by {@code libnativemem.so}. */
  public String nativeLibrary() {
    return nativeLibrary;
  }

  /** The file the native library was loaded from. */
  public String libraryPath() {
    return libraryPath;
  }

  /** One JSON object: {@code java}, {@code native}, {@code library_path}. */
  public String toJson() {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("java", java);
    json.put("native", nativeLibrary);
    json.put("library_path", libraryPath);
    return Json.write(json);
  }

  @Override
  public String toString() {
    return "nativemem " + java + " (native " + nativeLibrary + ", " + libraryPath + ")";
  }
}
