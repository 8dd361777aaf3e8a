package dev.nativemem.agent;

import dev.nativemem.NativeMemory;
import dev.nativemem.base.NativeMemoryException;
import dev.nativemem.base.Setting;
import dev.nativemem.base.TrackingLevel;
import dev.nativemem.handles.NativeHandles;
import dev.nativemem.handles.tracking.HandleTracker;
import dev.nativemem.handles.tracking.RocksFamily;
import dev.nativemem.handles.tracking.TrackingOptions;
import dev.nativemem.internal.NativeLibraryLoader;
import dev.nativemem.internal.SettingsInEffect;
import dev.nativemem.profile.sampling.JavaFramesSetting;
import dev.nativemem.watch.starting.WatchStart;
import java.lang.instrument.Instrumentation;
import java.lang.instrument.UnmodifiableClassException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/** Starts tracking once per JVM: options, native library, transformers, report at exit. */
public final class AgentRuntime {
  private static final AtomicBoolean STARTED = new AtomicBoolean();

  private AgentRuntime() {}

  /** {@code lateAttach}: attached to a running JVM, whose handles may predate the agent. */
  public static void start(String args, Instrumentation instrumentation, boolean lateAttach) {
    TrackingOptions options;
    try {
      options = TrackingOptions.parse(args, System.getProperties());
    } catch (IllegalArgumentException e) {
      System.err.println(
          "nativemem agent: "
              + e.getMessage()
              + " (example: -javaagent:nativemem.jar=level=full,interval=128,"
              + "exclude=zip,report=handles.json); the agent is off, the application runs"
              + " without it");
      return;
    }
    if (!STARTED.compareAndSet(false, true)) {
      System.err.println(
          "nativemem agent: already attached with "
              + HandleTracker.get().options()
              + "; ignoring the second attach ("
              + options
              + ")");
      return;
    }
    Set<RocksFamily> families = EnumSet.noneOf(RocksFamily.class);
    for (RocksFamily family : RocksFamily.values()) {
      if (options.tracksGroup(family.group())) {
        families.add(family);
      }
    }
    boolean zip = options.tracksGroup(TrackingOptions.ZIP_GROUP);
    if (zip) {
      NativeLibraryLoader.wantJarIdentity(); // names the kept JDK classes (InstrumentedJdkClasses)
    }
    registerMBeanIfAsked();
    if (options.level() == TrackingLevel.OFF) {
      startWatch(options);
      return;
    }
    try {
      SettingsInEffect.useStandardError();
      HandleTracker.get().activate(options, lateAttach);
    } catch (Throwable e) {
      System.err.println(
          "nativemem agent: cannot load the native library ("
              + e.getMessage()
              + "); the agent is off, the application runs without it");
      return;
    }
    try {
      HandleHooks.preload();
    } catch (Throwable e) {
      System.err.println(
          "nativemem agent: cannot load its own classes ("
              + e
              + "); the agent is off, the application runs without it: report this with the"
              + " nativemem version");
      return;
    }
    if (zip) {
      try {
        BootHooks.install();
      } catch (Throwable e) {
        System.err.println(
            "nativemem agent: zip handles are not tracked (cannot give the JDK's classes their"
                + " hooks: "
                + e
                + "); add exclude=zip to silence this");
        zip = false;
      }
    }
    HandleTransformer transformer = new HandleTransformer(families, zip);
    if (!PreparedClasses.start(instrumentation, transformer)) {
      instrumentAsClassesLoad(instrumentation, transformer);
    }
    Path report = options.reportFile();
    if (report != null) {
      Thread writer =
          new Thread(() -> ReportFile.writeAtExit(report), "nativemem-handle-report-at-exit");
      Runtime.getRuntime().addShutdownHook(writer);
    }
    startWatch(options);
  }

  /**
   * Without the core's ClassPrepare watch: the transformer stays registered and sees every class
   * load; the classes loaded before it are retransformed.
   */
  private static void instrumentAsClassesLoad(
      Instrumentation instrumentation, HandleTransformer transformer) {
    instrumentation.addTransformer(transformer, true);
    List<Class<?>> loaded = new ArrayList<>();
    for (Class<?> c : instrumentation.getAllLoadedClasses()) {
      if (transformer.instruments(c.getName().replace('.', '/'))
          && instrumentation.isModifiableClass(c)) {
        loaded.add(c);
      }
    }
    if (!loaded.isEmpty()) {
      try {
        instrumentation.retransformClasses(loaded.toArray(new Class<?>[0]));
      } catch (UnmodifiableClassException | RuntimeException | LinkageError e) {
        System.err.println("nativemem agent: cannot instrument loaded classes: " + e);
      }
    }
  }

  /**
   * {@code watch=on} (or {@code -Dnativemem.watch=on}): the watch starts with the agent, except in
   * a JVM that runs nativemem's own CLI ({@code kubectl exec <pod> -- java -jar nativemem.jar
   * attach 1 ...} inherits the container's {@code JAVA_TOOL_OPTIONS}, agent included): a
   * short-lived CLI near the pod's limit would otherwise leave bundles of its own.
   */
  private static void startWatch(TrackingOptions options) {
    if (RunningCli.isThisJvm()) {
      return;
    }
    Properties settings = new Properties();
    settings.putAll(System.getProperties());
    settings.putAll(options.watchSettings());
    // Before the watch and the export, whose dumps should carry them from the first one.
    JavaFramesSetting.applyAtStart(settings);
    WatchStart.startIfOn(settings);
    try {
      dev.nativemem.export.ProfileExporter.startIfOn(settings);
    } catch (RuntimeException e) {
      System.err.println("nativemem agent: no profile export: " + e.getMessage());
    }
  }

  /**
   * {@code -Dnativemem.jmx=true} with the agent: the MXBean is there from the start, for a JMX
   * exporter in a JVM whose code never calls nativemem (otherwise it appears at the first use).
   */
  private static void registerMBeanIfAsked() {
    if (!Boolean.parseBoolean(Setting.JMX.value())) {
      return;
    }
    try {
      NativeMemory.registerMBean();
    } catch (NativeMemoryException | LinkageError e) {
      System.err.println("nativemem agent: -Dnativemem.jmx=true: " + e.getMessage());
    }
  }

  /** For tests and the CLI: whether tracking runs in this JVM. */
  public static boolean active() {
    return NativeHandles.agentActive();
  }
}
