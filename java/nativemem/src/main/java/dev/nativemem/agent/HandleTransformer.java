package dev.nativemem.agent;

import dev.nativemem.handles.tracking.RocksFamily;
import java.lang.instrument.ClassFileTransformer;
import java.security.ProtectionDomain;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;

/**
 * Adds the calls of {@link HookTable}, one row per hook, to the classes it names: the base classes
 * of RocksDB's Java API (and of each fork in {@link RocksFamily}, ForSt's {@code org.forstdb}),
 * where a block cache passes from one RocksDB object to another, the JDK's zlib classes and Spring
 * Boot's nested-jar Inflater cache. A method takes the first row that matches it.
 */
final class HandleTransformer implements ClassFileTransformer {

  /** The RocksDB families whose classes are instrumented. */
  private final Set<RocksFamily> families;

  private final boolean zip;

  HandleTransformer(Set<RocksFamily> families, boolean zip) {
    this.families =
        families.isEmpty() ? EnumSet.noneOf(RocksFamily.class) : EnumSet.copyOf(families);
    this.zip = zip;
  }

  boolean instruments(String className) {
    if (className == null) {
      return false;
    }
    if (HookTable.ZIP_CLASSES.contains(className)) {
      return zip;
    }
    RocksFamily family = RocksFamily.ofInternalName(className);
    if (family == null || !families.contains(family)) {
      return false;
    }
    return HookTable.ROCKS_CLASSES.contains(className.substring(family.internalPrefix().length()));
  }

  /**
   * The classes of {@code family} this transformer instruments, by their binary names ({@code
   * org.rocksdb.Options}); a RocksDB version may lack some of them.
   */
  List<String> classNames(RocksFamily family) {
    List<String> names = new ArrayList<>();
    if (families.contains(family)) {
      for (String simple : HookTable.ROCKS_CLASSES) {
        names.add(family.packagePrefix() + simple);
      }
    }
    return names;
  }

  /**
   * JVM signature prefixes ({@code Lorg/rocksdb/}) covering every class {@link #instruments} names,
   * for the core's ClassPrepare watch ({@link PreparedClasses}).
   */
  String[] signaturePrefixes() {
    List<String> prefixes = new ArrayList<>();
    for (RocksFamily family : families) {
      for (String simple : HookTable.ROCKS_CLASSES) {
        prefixes.add("L" + family.internalPrefix() + simple + ";");
      }
    }
    if (zip) {
      for (String name : HookTable.ZIP_CLASSES) {
        prefixes.add("L" + name + ";");
      }
    }
    return prefixes.toArray(new String[0]);
  }

  @Override
  public byte[] transform(
      ClassLoader loader,
      String className,
      Class<?> redefined,
      ProtectionDomain domain,
      byte[] classfile) {
    if (!instruments(className)) {
      return null;
    }
    // The JDK's classes come out the same in every JVM of this JDK: done once, then read back.
    boolean jdk = className.startsWith("java/");
    byte[] cached = jdk ? InstrumentedJdkClasses.get(className, classfile) : null;
    if (cached != null) {
      return cached;
    }
    try {
      ClassReader reader = new ClassReader(classfile);
      ClassWriter writer = new ClassWriter(reader, ClassWriter.COMPUTE_MAXS);
      reader.accept(new ClassAdapter(writer, className), 0);
      byte[] instrumented = writer.toByteArray();
      if (jdk) {
        InstrumentedJdkClasses.put(className, classfile, instrumented);
      }
      return instrumented;
    } catch (Throwable e) {
      System.err.println(
          "nativemem agent: cannot instrument "
              + className
              + "; its handles are not tracked: "
              + e);
      return null;
    }
  }

  private static final class ClassAdapter extends ClassVisitor {
    private final String owner;

    /** The RocksDB family's package ({@code org/rocksdb/}), or null for the other classes. */
    private final String rocks;

    ClassAdapter(ClassVisitor next, String owner) {
      super(Opcodes.ASM9, next);
      this.owner = owner;
      RocksFamily family = RocksFamily.ofInternalName(owner);
      this.rocks = family == null ? null : family.internalPrefix();
    }

    @Override
    public MethodVisitor visitMethod(
        int access, String name, String desc, String signature, String[] exceptions) {
      MethodVisitor next = super.visitMethod(access, name, desc, signature, exceptions);
      if (next == null) {
        return null;
      }
      String local = rocks == null ? owner : owner.substring(rocks.length());
      HookTable.Hook hook = HookTable.find(owner, local, access, name, desc, rocks);
      return hook == null ? next : place(next, hook, desc);
    }

    /** {@code next} with the hook's call where the row says. */
    private MethodVisitor place(MethodVisitor next, HookTable.Hook hook, String desc) {
      switch (hook.where) {
        case ENTRY:
          return new MethodVisitor(Opcodes.ASM9, next) {
            @Override
            public void visitCode() {
              super.visitCode();
              hook.emit(mv, owner, desc, rocks);
            }
          };
        case RETURN:
          return new MethodVisitor(Opcodes.ASM9, next) {
            @Override
            public void visitInsn(int opcode) {
              if (opcode >= Opcodes.IRETURN && opcode <= Opcodes.RETURN) {
                hook.emit(mv, owner, desc, rocks);
              }
              super.visitInsn(opcode);
            }
          };
        case AFTER_FIELD_WRITE:
          return new MethodVisitor(Opcodes.ASM9, next) {
            @Override
            public void visitFieldInsn(int opcode, String fieldOwner, String field, String type) {
              super.visitFieldInsn(opcode, fieldOwner, field, type);
              if (opcode == Opcodes.PUTFIELD && field.equals(hook.field)) {
                hook.emit(mv, owner, desc, rocks);
              }
            }
          };
        default:
          throw new IllegalStateException("no placement for " + hook.where);
      }
    }
  }
}
