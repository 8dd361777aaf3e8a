package dev.nativemem.junit;

import dev.nativemem.base.NativeLeakError;
import dev.nativemem.base.Setting;
import dev.nativemem.handles.HandleScope;
import dev.nativemem.handles.KnownLeak;
import dev.nativemem.handles.NativeHandles;
import dev.nativemem.profile.LiveBytesScope;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionConfigurationException;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test class (or, with {@code @NativeLeakSettings(perMethod = true)}, a test method) whose
 * code leaked native handles or left them open: RocksDB objects and zlib streams with the nativemem
 * agent, and resources registered with {@code NativeHandles.track}.
 *
 * <p>Use {@code @ExtendWith(NativeLeakCheck.class)}, or register it for every test class with
 * {@code junit.jupiter.extensions.autodetection.enabled=true}. The check collects garbage and waits
 * (at most {@link HandleScope#GC_TIMEOUT_MILLIS}) for reference processing; the failure lists kind,
 * count and creation stack of each group of leaked and unclosed handles: while the class (or
 * method) runs, every creation stack is recorded whatever the agent's level, so the line is always
 * there. Without the agent it fails and shows the Surefire {@code argLine} that adds it, unless
 * {@code -Dnativemem.junit.requireAgent=false}. A group that is a leak of nativemem's catalogue of
 * known leaks is named in the failure (id, the version you run, fixed version, what to do);
 * {@code @NativeLeakSettings(known = @Known(id = "<catalogue id>"))} accepts it.
 *
 * <p>With heap profiling available (on Linux x86-64 and aarch64 always: a profiling allocator such
 * as the bundled one preloaded, else import rewriting, which misses what libc allocates inside
 * itself), it also fails the class whose code left more native bytes live than {@code
 * -Dnativemem.junit.maxLeakedBytes} (4 MiB unless set; {@code @NativeLeakSettings(maxLeakedBytes =
 * ...)} for one class) after it ended: two heap profiles with Java frames, before and after,
 * compared over the samples whose Java stack passes through the class, so the JVM's own allocations
 * (JIT, class loading) never count. The failure names the class's line, the native stack and the
 * estimated bytes. Without profiling that check is off, and the first class says why in one line on
 * standard error.
 */
public final class NativeLeakCheck
    implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {
  public static final String REQUIRE_AGENT_PROPERTY = Setting.JUNIT_REQUIRE_AGENT.property();
  public static final String MAX_LEAKED_BYTES_PROPERTY = Setting.JUNIT_MAX_LEAKED_BYTES.property();
  private static final ExtensionContext.Namespace NAMESPACE =
      ExtensionContext.Namespace.create(NativeLeakCheck.class);

  /** Whether this JVM can check bytes: null until the first class asks. */
  private static Boolean bytesCheckable;

  @Override
  public void beforeAll(ExtensionContext context) {
    requireAgent();
    knownLeaks(context); // a wrong @Known fails the class before its tests run
    maxLeakedBytes(context); // so does a wrong limit
    if (!perMethod(context)) {
      open(context, context.getRequiredTestClass().getName());
    }
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    if (perMethod(context)) {
      open(context, context.getRequiredTestClass().getName() + "#" + context.getDisplayName());
    }
  }

  @Override
  public void afterEach(ExtensionContext context) {
    if (perMethod(context)) {
      check(context);
    }
  }

  @Override
  public void afterAll(ExtensionContext context) {
    if (!perMethod(context)) {
      check(context);
    }
  }

  private static void requireAgent() {
    if (!NativeHandles.agentActive() && !"false".equals(Setting.JUNIT_REQUIRE_AGENT.value())) {
      throw new ExtensionConfigurationException(
          "NativeLeakCheck: "
              + NativeHandles.agentMissingHint()
              + " (or set -D"
              + REQUIRE_AGENT_PROPERTY
              + "=false to check only resources registered with NativeHandles.track)");
    }
  }

  private static boolean perMethod(ExtensionContext context) {
    return settings(context).map(NativeLeakSettings::perMethod).orElse(false);
  }

  private static Optional<NativeLeakSettings> settings(ExtensionContext context) {
    return context.getTestClass().map(type -> type.getAnnotation(NativeLeakSettings.class));
  }

  private static void open(ExtensionContext context, String name) {
    context.getStore(NAMESPACE).put(HandleScope.class, NativeHandles.testScope(name));
    long maxBytes = maxLeakedBytes(context);
    if (maxBytes != NativeLeakSettings.NOT_CHECKED && bytesCheckable()) {
      String className = context.getRequiredTestClass().getName();
      context.getStore(NAMESPACE).put(LiveBytesScope.class, LiveBytesScope.open(name, className));
    }
  }

  /**
   * The class's limit of leaked native bytes: its annotation's, else the property's; {@link
   * NativeLeakSettings#NOT_CHECKED} when off.
   */
  static long maxLeakedBytes(ExtensionContext context) {
    long annotated =
        settings(context)
            .map(NativeLeakSettings::maxLeakedBytes)
            .orElse(NativeLeakSettings.FROM_PROPERTY);
    if (annotated >= 0) {
      return annotated;
    }
    if (annotated != NativeLeakSettings.FROM_PROPERTY) {
      throw new ExtensionConfigurationException(
          "NativeLeakCheck: @NativeLeakSettings(maxLeakedBytes = "
              + annotated
              + ") is negative: give bytes (0 fails on any byte left live), or"
              + " NativeLeakSettings.NOT_CHECKED");
    }
    return maxLeakedBytes(Setting.JUNIT_MAX_LEAKED_BYTES.value());
  }

  /** The property's value: bytes, or {@code off}. */
  static long maxLeakedBytes(String value) {
    String v = value.trim();
    if (v.equalsIgnoreCase("off")) {
      return NativeLeakSettings.NOT_CHECKED;
    }
    try {
      long bytes = Long.parseLong(v.replace("_", ""));
      if (bytes >= 0) {
        return bytes;
      }
    } catch (NumberFormatException e) {
      // said below
    }
    throw new ExtensionConfigurationException(
        "NativeLeakCheck: -D"
            + MAX_LEAKED_BYTES_PROPERTY
            + "="
            + value
            + " is neither a number of bytes nor 'off' (default "
            + Setting.JUNIT_MAX_LEAKED_BYTES.defaultValue()
            + ")");
  }

  /** Whether heap profiles with Java frames can run here; says why not once per JVM. */
  private static synchronized boolean bytesCheckable() {
    if (bytesCheckable == null) {
      String why = LiveBytesScope.unavailableReason();
      bytesCheckable = why.isEmpty();
      if (!bytesCheckable) {
        System.err.println(
            "NativeLeakCheck: leaked native bytes are not checked in this JVM (leaked handles"
                + " are): "
                + why.replace('\n', ' ')
                + " (-D"
                + MAX_LEAKED_BYTES_PROPERTY
                + "=off hides this line)");
      }
    }
    return bytesCheckable;
  }

  /** A catalogue entry by {@code id}, or handles of a {@code kind}: exactly one of the two. */
  static KnownLeak known(NativeLeakSettings.Known k, Class<?> testClass) {
    String reason = k.reason().trim();
    if (!k.id().isEmpty()) {
      if (!k.kind().isEmpty() || !k.at().isEmpty()) {
        throw new ExtensionConfigurationException(
            "NativeLeakCheck: @Known(id = \""
                + k.id()
                + "\") names a catalogue entry, which has its own kind and frames: remove kind"
                + " and at");
      }
      if (!KnownLeak.isCatalogued(k.id())) {
        throw new ExtensionConfigurationException(
            "NativeLeakCheck: @Known(id = \""
                + k.id()
                + "\") is not in nativemem's catalogue; its ids are "
                + KnownLeak.ids()
                + " (a handle kind goes in kind = ...)");
      }
      return KnownLeak.catalogued(k.id(), reason);
    }
    if (k.kind().isEmpty()) {
      throw new ExtensionConfigurationException(
          "NativeLeakCheck: @Known needs kind = \"<handle kind>\" or id = \"<catalogue id>\"");
    }
    if (KnownLeak.isCatalogued(k.kind())) {
      throw new ExtensionConfigurationException(
          "NativeLeakCheck: @Known(kind = \""
              + k.kind()
              + "\") is a catalogue id, not a handle kind: write @Known(id = \""
              + k.kind()
              + "\")");
    }
    String why =
        reason.isEmpty() ? "accepted by @NativeLeakSettings on " + testClass.getName() : reason;
    return k.at().isEmpty() ? KnownLeak.ofKind(k.kind(), why) : KnownLeak.at(k.kind(), k.at(), why);
  }

  /** The leaks the class's {@code @NativeLeakSettings} accepts. */
  private static List<KnownLeak> knownLeaks(ExtensionContext context) {
    List<KnownLeak> known = new ArrayList<>();
    settings(context)
        .ifPresent(
            s -> {
              for (NativeLeakSettings.Known k : s.known()) {
                known.add(known(k, context.getRequiredTestClass()));
              }
            });
    return known;
  }

  private static void check(ExtensionContext context) {
    HandleScope scope = context.getStore(NAMESPACE).remove(HandleScope.class, HandleScope.class);
    LiveBytesScope bytes =
        context.getStore(NAMESPACE).remove(LiveBytesScope.class, LiveBytesScope.class);
    if (scope == null) {
      return;
    }
    String failure;
    String bytesFailure = null;
    try {
      scope.close();
      // The catalogue's known leaks apply in HandleScope.check itself; these are the class's own.
      failure = scope.check(knownLeaks(context).toArray(new KnownLeak[0]));
      if (bytes != null) {
        bytesFailure = bytes.check(maxLeakedBytes(context));
      }
      if (bytesFailure != null) {
        bytesFailure +=
            "  (a limit for this class: @NativeLeakSettings(maxLeakedBytes = ...); for every class:"
                + " -D"
                + MAX_LEAKED_BYTES_PROPERTY
                + "=<bytes>)";
      }
    } finally {
      if (bytes != null) {
        bytes.close();
      }
    }
    if (failure != null) {
      throw new NativeLeakError(bytesFailure == null ? failure : failure + "\n" + bytesFailure);
    }
    if (bytesFailure != null) {
      throw new NativeLeakError(bytesFailure);
    }
  }
}
