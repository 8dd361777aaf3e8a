package dev.nativemem.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.base.NativeMemoryException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The one rule that binds values to the native library's JSON, both ways. */
class JsonBindingTest {
  enum Shape {
    ROUND,
    SQUARE
  }

  static final class Part {
    private String name;
    private long sizeBytes;

    private Part() {}
  }

  static final class Whole {
    private long totalBytes;
    private double topShare;
    private boolean difference;
    private Long pid;
    private Shape shape;
    private List<Part> parts;
    private List<String> warnings;
    private transient long derived = 7;

    private Whole() {}
  }

  /** A native count with what the Java side adds to it. */
  static final class Enriched {
    private long countedBytes;
    @JsonBinding.Added private String owner;
    @JsonBinding.Added private Map<String, Object> detail;
    private long keptBytes;

    private Enriched() {}
  }

  private static Map<String, Object> whole() {
    Map<String, Object> part = new LinkedHashMap<>();
    part.put("name", "arena");
    part.put("size_bytes", 4096);
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("total_bytes", 1L << 40);
    json.put("top_share", 0.25);
    json.put("difference", true);
    json.put("pid", null);
    json.put("shape", "square");
    json.put("parts", List.of(part));
    json.put("warnings", List.of("truncated"));
    return json;
  }

  @Test
  void fieldsAreTheKeysInSnakeCase() {
    Whole w = JsonBinding.read(Whole.class, whole());
    assertEquals(1L << 40, w.totalBytes);
    assertEquals(0.25, w.topShare);
    assertTrue(w.difference);
    assertNull(w.pid);
    assertEquals(Shape.SQUARE, w.shape);
    assertEquals("arena", w.parts.get(0).name);
    assertEquals(4096, w.parts.get(0).sizeBytes);
    assertEquals(List.of("truncated"), w.warnings);
    assertThrows(UnsupportedOperationException.class, () -> w.parts.add(null));
  }

  @Test
  void writingGivesBackTheKeysInFieldOrderNullsIncludedWithoutDerivedOnes() {
    Whole w = JsonBinding.read(Whole.class, whole());
    Map<String, Object> back = JsonBinding.toMap(w);
    assertEquals(
        List.of("total_bytes", "top_share", "difference", "pid", "shape", "parts", "warnings"),
        List.copyOf(back.keySet()));
    assertEquals("square", back.get("shape"));
    assertEquals(
        "{\"total_bytes\":1099511627776,\"top_share\":0.25,\"difference\":true,"
            + "\"pid\":null,\"shape\":\"square\",\"parts\":[{\"name\":\"arena\",\"size_bytes\":4096}],"
            + "\"warnings\":[\"truncated\"]}",
        JsonBinding.write(w));
  }

  @Test
  void aMissingOrMistypedKeyIsNamed() {
    Map<String, Object> json = whole();
    json.remove("total_bytes");
    NativeMemoryException missing =
        assertThrows(NativeMemoryException.class, () -> JsonBinding.read(Whole.class, json));
    assertTrue(
        missing.getMessage().contains("'total_bytes' of Whole is missing"), missing.getMessage());
    Map<String, Object> mistyped = whole();
    mistyped.put("top_share", "a quarter");
    NativeMemoryException wrong =
        assertThrows(NativeMemoryException.class, () -> JsonBinding.read(Whole.class, mistyped));
    assertTrue(wrong.getMessage().contains("Whole"), wrong.getMessage());
  }

  @Test
  void anAddedKeyIsNotReadButIsWrittenInItsPlace() {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("counted_bytes", 4096);
    json.put("owner", "not the native library's to say");
    json.put("kept_bytes", 512);
    Enriched e = JsonBinding.read(Enriched.class, json);
    assertNull(e.owner, "an added key is not read");
    assertNull(e.detail);
    assertEquals(512, e.keptBytes);
    json.remove("owner");
    assertEquals(4096, JsonBinding.read(Enriched.class, json).countedBytes, "nor required");
    e.owner = "app";
    Map<String, Object> detail = new LinkedHashMap<>();
    detail.put("id", "A-1");
    detail.put("shapes", List.of(Shape.ROUND));
    e.detail = detail;
    assertEquals(
        "{\"counted_bytes\":4096,\"owner\":\"app\",\"detail\":{\"id\":\"A-1\","
            + "\"shapes\":[\"round\"]},\"kept_bytes\":512}",
        JsonBinding.write(e));
  }
}
