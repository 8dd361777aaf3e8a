package dev.nativemem.export;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * What a fleet's profiles are told apart by, as OpenTelemetry resource attributes: {@code
 * OTEL_SERVICE_NAME} and {@code OTEL_RESOURCE_ATTRIBUTES} as the OpenTelemetry SDKs read them, the
 * host and pid, the pod from the Kubernetes downward API's usual variables ({@code POD_NAME},
 * {@code POD_NAMESPACE}, {@code CONTAINER_NAME}, {@code NODE_NAME}, or the {@code K8S_*} forms),
 * the allocator and nativemem's version. Later sources do not override what the user set in {@code
 * OTEL_RESOURCE_ATTRIBUTES}.
 */
final class ExportLabels {
  private ExportLabels() {}

  /** Downward-API variables and the attribute each fills. */
  private static final String[][] POD = {
    {"k8s.pod.name", "POD_NAME", "K8S_POD_NAME"},
    {"k8s.namespace.name", "POD_NAMESPACE", "K8S_NAMESPACE_NAME", "NAMESPACE"},
    {"k8s.container.name", "CONTAINER_NAME", "K8S_CONTAINER_NAME"},
    {"k8s.node.name", "NODE_NAME", "K8S_NODE_NAME"},
    {"k8s.pod.uid", "POD_UID", "K8S_POD_UID"},
  };

  /** At most this many characters of a value we did not choose. */
  static final int MAX_VALUE = 255;

  static Map<String, String> of(
      Function<String, String> env, String host, long pid, String allocator, String version) {
    Map<String, String> labels = new LinkedHashMap<>();
    String service = env.apply("OTEL_SERVICE_NAME");
    Map<String, String> given = resourceAttributes(env.apply("OTEL_RESOURCE_ATTRIBUTES"));
    if (service != null && !service.trim().isEmpty()) {
      labels.put("service.name", clip(service.trim()));
    } else if (!given.containsKey("service.name")) {
      labels.put("service.name", "unknown_service:java");
    }
    given.forEach(labels::putIfAbsent);
    labels.putIfAbsent("host.name", clip(host));
    labels.putIfAbsent("process.pid", Long.toString(pid));
    labels.putIfAbsent("process.runtime.name", "java");
    for (String[] attribute : POD) {
      for (int i = 1; i < attribute.length; i++) {
        String value = env.apply(attribute[i]);
        if (value != null && !value.trim().isEmpty()) {
          labels.putIfAbsent(attribute[0], clip(value.trim()));
          break;
        }
      }
    }
    labels.put("nativemem.allocator", allocator);
    labels.put("nativemem.version", version);
    return Collections.unmodifiableMap(labels);
  }

  /**
   * {@code key1=value1,key2=value2} with percent-encoded values, as the OpenTelemetry SDKs read
   * {@code OTEL_RESOURCE_ATTRIBUTES}; malformed pairs are skipped.
   */
  static Map<String, String> resourceAttributes(String text) {
    Map<String, String> attributes = new LinkedHashMap<>();
    if (text == null) {
      return attributes;
    }
    for (String pair : text.split(",")) {
      int eq = pair.indexOf('=');
      if (eq <= 0) {
        continue;
      }
      String key = pair.substring(0, eq).trim();
      String value = decode(pair.substring(eq + 1).trim());
      if (!key.isEmpty() && value != null) {
        attributes.put(clip(key), clip(value));
      }
    }
    return attributes;
  }

  private static String decode(String value) {
    try {
      return java.net.URLDecoder.decode(
          value.replace("+", "%2B"), java.nio.charset.StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  private static String clip(String value) {
    return value.length() <= MAX_VALUE ? value : value.substring(0, MAX_VALUE);
  }
}
