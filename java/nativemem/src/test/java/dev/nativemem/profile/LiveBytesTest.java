package dev.nativemem.profile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Which samples count for a class, on collapsed difference lines as the analysis writes them
 * (stacks taken from real dumps of JDK 17 under the bundled allocator with Java frames).
 */
class LiveBytesTest {
  private static final String OWNER = "com.example.LeakyTest";
  private static final String JUNIT =
      "org.junit.platform.launcher.core.EngineExecutionOrchestrator.execute(EngineExecutionOrchestrator.java:57)"
          + ";jdk.internal.reflect.NativeMethodAccessorImpl.invoke0(Native Method)";
  private static final String DEFLATER =
      ";java.util.zip.Deflater.<init>(Deflater.java:218)"
          + ";java.util.zip.Deflater.<init>(Deflater.java:201)"
          + ";java.util.zip.Deflater.init(Native Method)"
          + ";long java.util.zip.Deflater.init"
          + ";Java_java_util_zip_Deflater_init"
          + ";deflateInit2_";

  private static LiveBytes of(String... lines) {
    return LiveBytes.of(String.join("\n", lines) + "\n", OWNER, 524288);
  }

  @Test
  void aNativeMethodsAllocationUnderTheClassCountsByTheClassLine() {
    LiveBytes live =
        of(
            JUNIT + ";" + OWNER + ".leak(LeakyTest.java:42)" + DEFLATER + " 0 485276930",
            JUNIT
                + ";"
                + OWNER
                + ".leak(LeakyTest.java:42)"
                + ";Interpreter"
                + DEFLATER
                + " 1000 35546707",
            JUNIT
                + ";"
                + OWNER
                + "$Inner.lambda$run$0(LeakyTest.java:50)"
                + DEFLATER
                + " 0 3000000");
    assertEquals(485276930L + 35545707L + 3000000L, live.bytes());
    List<LiveBytes.Site> sites = live.sites();
    assertEquals(2, sites.size());
    assertEquals(OWNER + ".leak(LeakyTest.java:42)", sites.get(0).line());
    assertEquals(485276930L + 35545707L, sites.get(0).bytes());
    assertEquals("deflateInit2_", sites.get(0).stack().get(0));
    assertEquals(OWNER + ".leak(LeakyTest.java:42)", sites.get(0).stack().get(6));
    assertEquals(OWNER + "$Inner.lambda$run$0(LeakyTest.java:50)", sites.get(1).line());
    String failure = live.failure("com.example.LeakyTest", 4 << 20);
    assertTrue(
        failure.startsWith(
            "native memory left live by 'com.example.LeakyTest': 499.6 MiB (523822637 bytes) over"
                + " the limit of 4.0 MiB"),
        failure);
    assertTrue(
        failure.contains(
            "  496.7 MiB (520822637 bytes) allocated at com.example.LeakyTest.leak(LeakyTest.java:42)\n"
                + "      at deflateInit2_\n"
                + "      at Java_java_util_zip_Deflater_init\n"),
        failure);
    assertNull(live.failure("x", 523822637L));
  }

  @Test
  void otherClassesAndClassesWhoseNameItPrefixesDoNotCount() {
    LiveBytes live =
        of(
            JUNIT + ";com.example.Other.leak(Other.java:1)" + DEFLATER + " 0 5000000",
            JUNIT + ";" + OWNER + "Two.leak(LeakyTestTwo.java:1)" + DEFLATER + " 0 5000000",
            "clone3;start_thread;CompileBroker::compiler_thread_loop;Arena::grow;os::malloc 0 900000");
    assertEquals(0, live.bytes());
    assertEquals(0, live.jvmBytes());
    assertNull(live.failure("x", 0));
  }

  @Test
  void theJvmsOwnAllocationsUnderTheClassDoNotCount() {
    String line = JUNIT + ";" + OWNER + ".churn(LeakyTest.java:7)";
    LiveBytes live =
        of(
            // String interning while resolving a constant: below a bytecode frame.
            line
                + ";Interpreter;InterpreterRuntime::resolve_ldc;StringTable::intern;AllocateHeap"
                + ";os::malloc 0 524608",
            // A lambda's or proxy's class defined: a native method of the JDK, into HotSpot.
            line
                + ";java.lang.ClassLoader.defineClass0(Native Method);JVM_LookupDefineClass"
                + ";SystemDictionary::resolve_from_stream;Symbol::operator new;os::malloc 0 70000",
            // A hidden class's loader data: HotSpot's strdup, os::malloc inlined into it.
            line
                + ";java.lang.ClassLoader.defineClass0(Native Method)"
                + ";java.lang.Class java.lang.ClassLoader.defineClass0"
                + ";Java_java_lang_ClassLoader_defineClass0;JVM_LookupDefineClass"
                + ";ClassLoaderDataGraph::add;Mutex::Mutex;os::strdup 0 16400",
            // Unnamed code of a libjvm without symbols, below a JDK native method.
            line
                + ";java.lang.Class.forName0(Native Method);Java_java_lang_Class_forName0"
                + ";libjvm.so+0x5a1f00 0 9000",
            // A library loaded.
            line
                + ";jdk.internal.loader.NativeLibraries.load(Native Method);JVM_LoadLibrary"
                + ";os::dll_load;dlopen;_dl_open 0 40000",
            // nativemem's own records of the handles the agent tracks.
            line
                + ";dev.nativemem.internal.NativeBridge.handlesCreated(Native Method)"
                + ";Java_dev_nativemem_internal_NativeBridge_handlesCreated 0 30000");
    assertEquals(0, live.bytes());
    assertEquals(524608 + 70000 + 16400 + 9000 + 40000 + 30000, live.jvmBytes());
    assertNull(live.failure("x", 0));
  }

  @Test
  void directBuffersAllocatedThroughTheJvmAreTheApplications() {
    LiveBytes live =
        of(
            JUNIT
                + ";"
                + OWNER
                + ".buffers(LeakyTest.java:9)"
                + ";java.nio.ByteBuffer.allocateDirect(ByteBuffer.java:332)"
                + ";jdk.internal.misc.Unsafe.allocateMemory0(Native Method)"
                + ";Unsafe_AllocateMemory0;os::malloc 0 8388608",
            // JDK 25: Unsafe_AllocateMemory0 jumps to os::malloc, leaving no frame of its own.
            JUNIT
                + ";"
                + OWNER
                + ".buffers(LeakyTest.java:10)"
                + ";java.nio.ByteBuffer.allocateDirect(ByteBuffer.java:367)"
                + ";jdk.internal.misc.Unsafe.allocateMemory0(Native Method)"
                + ";Interpreter;os::malloc 0 33554432");
    assertEquals(8388608 + 33554432, live.bytes());
  }

  @Test
  void bytesFreedSinceTheBaseCountAgainst() {
    LiveBytes live =
        of(
            JUNIT + ";" + OWNER + ".leak(LeakyTest.java:42)" + DEFLATER + " 6000000 1000000",
            JUNIT + ";" + OWNER + ".other(LeakyTest.java:43)" + DEFLATER + " 0 2000000");
    assertEquals(-3000000, live.bytes());
    assertNull(live.failure("x", 0));
  }
}
