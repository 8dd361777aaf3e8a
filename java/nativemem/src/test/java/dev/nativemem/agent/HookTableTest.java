package dev.nativemem.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;

/** The table of hooks names hooks that exist, and a method takes the row written for it. */
class HookTableTest {
  private static final String ROCKS = "org/rocksdb/";

  @Test
  void everyRowCallsAPublicStaticHookOfThatDescriptor() throws IOException {
    Set<String> hooks = new HashSet<>();
    for (Method method : HandleHooks.class.getDeclaredMethods()) {
      if (Modifier.isPublic(method.getModifiers()) && Modifier.isStatic(method.getModifiers())) {
        hooks.add(
            "dev/nativemem/agent/HandleHooks."
                + method.getName()
                + Type.getMethodDescriptor(method));
      }
    }
    hooks.addAll(bootHooks());
    assertFalse(HookTable.ROWS.isEmpty());
    for (HookTable.Hook hook : HookTable.ROWS) {
      assertTrue(hooks.contains(hook.signature()), hook.signature() + " is not among " + hooks);
    }
  }

  @Test
  void aRocksDbOpenTakesTheRowOfItsArguments() {
    String db = "L" + ROCKS + "RocksDB;";
    HookTable.Hook families =
        find(
            "RocksDB",
            Opcodes.ACC_STATIC,
            "open",
            "(Ljava/lang/String;Ljava/util/List;Ljava/util/List;)" + db);
    assertEquals(
        "dev/nativemem/agent/HandleHooks.columnFamiliesOpened"
            + "(Ljava/lang/Object;Ljava/util/List;Ljava/util/List;)V",
        families.signature());
    HookTable.Hook options =
        find(
            "TtlDB", Opcodes.ACC_STATIC, "open", "(L" + ROCKS + "Options;Ljava/lang/String;)" + db);
    assertTrue(options.signature().contains(".databaseOpened("), options.signature());
    // Not static, or no Options and no two lists: not instrumented.
    assertNull(find("RocksDB", 0, "open", "(L" + ROCKS + "Options;)" + db));
    assertNull(find("RocksDB", Opcodes.ACC_STATIC, "open", "(Ljava/lang/String;)" + db));
    // createColumnFamilies needs an argument and returns a list.
    assertNull(find("RocksDB", 0, "createColumnFamilies", "()Ljava/util/List;"));
    assertNotNull(find("RocksDB", 0, "createColumnFamilies", "(Ljava/util/List;)Ljava/util/List;"));
  }

  @Test
  void theSameClassNameOutsideAFamilyIsNotARocksDbClass() {
    assertNull(HookTable.find("Options", "Options", 0, "<init>", "()V", null));
    assertNotNull(HookTable.find(ROCKS + "Options", "Options", 0, "<init>", "()V", ROCKS));
  }

  @Test
  void globsMatchRunsAndSingleCharacters() {
    assertTrue(HookTable.glob("open*", "open"));
    assertTrue(HookTable.glob("open*", "openReadOnly"));
    assertFalse(HookTable.glob("open*", "reopen"));
    assertTrue(HookTable.glob("(?*)X", "(J)X"));
    assertFalse(HookTable.glob("(?*)X", "()X"));
    assertTrue(HookTable.glob("*)L*", "(JZ)Lorg/rocksdb/TtlDB;"));
    assertFalse(HookTable.glob("()V", "()Z"));
  }

  @Test
  void theReturnedValueGoesFirstOrLastAfterOneArgument() {
    assertThrows(
        IllegalArgumentException.class,
        () ->
            HookTable.ROWS
                .get(0)
                .calls("x", HookTable.Arg.THIS, HookTable.Arg.THIS, HookTable.Arg.RESULT));
  }

  private static HookTable.Hook find(String local, int access, String name, String desc) {
    return HookTable.find(ROCKS + local, local, access, name, desc, ROCKS);
  }

  /** The public static methods of the class defined in the bootstrap loader (BootHooks). */
  private static Set<String> bootHooks() throws IOException {
    byte[] bytes;
    try (InputStream in = bootClassFile()) {
      assertNotNull(in, "the boot class file is on the class path");
      bytes = in.readAllBytes();
    }
    Set<String> methods = new HashSet<>();
    String owner = BootHooks.NAME.replace('.', '/');
    new ClassReader(bytes)
        .accept(
            new ClassVisitor(Opcodes.ASM9) {
              @Override
              public MethodVisitor visitMethod(
                  int access, String name, String desc, String signature, String[] exceptions) {
                if ((access & Opcodes.ACC_PUBLIC) != 0 && (access & Opcodes.ACC_STATIC) != 0) {
                  methods.add(owner + "." + name + desc);
                }
                return null;
              }
            },
            ClassReader.SKIP_CODE);
    return methods;
  }

  private static InputStream bootClassFile() {
    InputStream packaged = BootHooks.class.getResourceAsStream(BootHooks.RESOURCE);
    return packaged != null
        ? packaged
        : BootHooks.class.getResourceAsStream("/" + BootHooks.NAME.replace('.', '/') + ".class");
  }
}
