package dev.nativemem.agent;

import dev.nativemem.handles.tracking.RocksFamily;
import java.lang.instrument.ClassFileTransformer;
import java.security.ProtectionDomain;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;

/**
 * Adds calls to {@link HandleHooks} at the base classes of RocksDB's Java API (and of each fork in
 * {@link RocksFamily}, ForSt's {@code org.forstdb}), where a block cache passes from one RocksDB
 * object to another (table configuration, options copies, column family descriptors and handles,
 * the opens of {@code RocksDB} and its subclasses), and in {@code java.util.zip.Inflater}/{@code
 * Deflater}. Only straight-line calls are added (no branches, no new locals), so stack-map frames
 * stay valid and retransformation of loaded classes is allowed.
 */
final class HandleTransformer implements ClassFileTransformer {
  private static final String HOOKS = "dev/nativemem/agent/HandleHooks";

  /** What the JDK's classes call instead (BootHooks): the one nativemem class they can see. */
  private static final String BOOT_HOOKS = BootHooks.NAME.replace('.', '/');

  private static final String FLAG = "Ljava/util/concurrent/atomic/AtomicBoolean;";
  // Classes of a RocksDB family (RocksFamily), named inside its package.
  private static final String IMMUTABLE = "AbstractImmutableNativeReference";
  private static final String ROCKS_OBJECT = "RocksObject";
  private static final String MUTABLE = "RocksMutableObject";

  /** The classes instrumented in each RocksDB family, by their names inside its package. */
  private static final List<String> ROCKS_CLASSES =
      Arrays.asList(
          IMMUTABLE,
          ROCKS_OBJECT,
          MUTABLE,
          "LRUCache",
          "ClockCache",
          "HyperClockCache",
          "ColumnFamilyOptions",
          "Options",
          "ColumnFamilyHandle",
          "RocksDB",
          "TtlDB",
          "TransactionDB",
          "OptimisticTransactionDB");

  private static final String INFLATER = "java/util/zip/Inflater";
  private static final String DEFLATER = "java/util/zip/Deflater";
  private static final String INFLATER_REF = INFLATER + "$InflaterZStreamRef";
  private static final String DEFLATER_REF = DEFLATER + "$DeflaterZStreamRef";
  private static final String ZIP_POOL = "java/util/zip/ZipFile$CleanableResource";

  /** Spring Boot 3.2+'s loader: the Inflater cache of a nested jar. */
  private static final String SPRING_POOL =
      "org/springframework/boot/loader/jar/NestedJarFileResources";

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
    if (className.startsWith("java/util/zip/")) {
      return zip
          && (className.equals(INFLATER)
              || className.equals(DEFLATER)
              || className.equals(INFLATER_REF)
              || className.equals(DEFLATER_REF)
              || className.equals(ZIP_POOL));
    }
    if (className.equals(SPRING_POOL)) {
      return zip;
    }
    RocksFamily family = RocksFamily.ofInternalName(className);
    if (family == null || !families.contains(family)) {
      return false;
    }
    return ROCKS_CLASSES.contains(className.substring(family.internalPrefix().length()));
  }

  /**
   * The classes of {@code family} this transformer instruments, by their binary names ({@code
   * org.rocksdb.Options}); a RocksDB version may lack some of them.
   */
  List<String> classNames(RocksFamily family) {
    List<String> names = new ArrayList<>();
    if (families.contains(family)) {
      for (String simple : ROCKS_CLASSES) {
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
      for (String simple : ROCKS_CLASSES) {
        prefixes.add("L" + family.internalPrefix() + simple + ";");
      }
    }
    if (zip) {
      for (String name : new String[] {INFLATER, DEFLATER, ZIP_POOL + ";", SPRING_POOL + ";"}) {
        prefixes.add("L" + name); // Inflater and Inflater$InflaterZStreamRef alike
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

    /** The RocksDB family's package ({@code org/rocksdb/}), or null for the JDK's classes. */
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
      return next == null ? null : methodAdapter(next, access, name, desc);
    }

    private MethodVisitor methodAdapter(MethodVisitor next, int access, String name, String desc) {
      return rocks == null
          ? zipClassMethod(next, name, desc)
          : rocksMethod(next, access, name, desc, owner.substring(rocks.length()));
    }

    /** A method of a RocksDB family's class {@code local} (named inside its package). */
    private MethodVisitor rocksMethod(
        MethodVisitor next, int access, String name, String desc, String local) {
      boolean ctor = name.equals("<init>");
      switch (local) {
        case IMMUTABLE:
          if (ctor && desc.equals("(Z)V")) {
            return beforeReturn(
                next,
                mv -> {
                  thisAndField(mv, owner, "owningHandle_", FLAG);
                  hook(mv, "immutableCreated", "(Ljava/lang/Object;" + FLAG + ")V");
                });
          }
          if (name.equals("close") && desc.equals("()V")) {
            return atEntry(
                next,
                mv -> {
                  thisAndField(mv, owner, "owningHandle_", FLAG);
                  hook(mv, "closing", "(Ljava/lang/Object;" + FLAG + ")V");
                });
          }
          if (name.equals("disOwnNativeHandle") && desc.equals("()V")) {
            return atEntry(
                next,
                mv -> {
                  thisAndField(mv, owner, "owningHandle_", FLAG);
                  hook(mv, "transferring", "(Ljava/lang/Object;" + FLAG + ")V");
                });
          }
          return next;
        case ROCKS_OBJECT:
          if (ctor && desc.equals("(J)V")) {
            return beforeReturn(
                next,
                mv -> {
                  mv.visitVarInsn(Opcodes.ALOAD, 0);
                  mv.visitVarInsn(Opcodes.ALOAD, 0);
                  mv.visitFieldInsn(Opcodes.GETFIELD, owner, "nativeHandle_", "J");
                  mv.visitVarInsn(Opcodes.ALOAD, 0);
                  mv.visitFieldInsn(Opcodes.GETFIELD, owner, "owningHandle_", FLAG);
                  hook(mv, "rocksCreated", "(Ljava/lang/Object;J" + FLAG + ")V");
                });
          }
          return next;
        case MUTABLE:
          if (ctor && desc.equals("(J)V")) {
            return beforeReturn(
                next,
                mv -> {
                  mv.visitVarInsn(Opcodes.ALOAD, 0);
                  mv.visitVarInsn(Opcodes.LLOAD, 1);
                  hook(mv, "mutableCreated", "(Ljava/lang/Object;J)V");
                });
          }
          if (name.equals("setNativeHandle") && desc.equals("(JZ)V")) {
            return atEntry(
                next,
                mv -> {
                  mv.visitVarInsn(Opcodes.ALOAD, 0);
                  mv.visitVarInsn(Opcodes.LLOAD, 1);
                  mv.visitVarInsn(Opcodes.ILOAD, 3);
                  hook(mv, "mutableHandleSet", "(Ljava/lang/Object;JZ)V");
                });
          }
          if (name.equals("close") && desc.equals("()V")) {
            return atEntry(
                next,
                mv -> {
                  thisAndField(mv, owner, "owningHandle_", "Z");
                  hook(mv, "mutableClosing", "(Ljava/lang/Object;Z)V");
                });
          }
          return next;
        case "LRUCache":
        case "ClockCache":
        case "HyperClockCache":
          if (ctor && desc.startsWith("(J")) {
            return beforeReturn(
                next,
                mv -> {
                  mv.visitVarInsn(Opcodes.ALOAD, 0);
                  mv.visitVarInsn(Opcodes.LLOAD, 1);
                  hook(mv, "cacheCapacity", "(Ljava/lang/Object;J)V");
                });
          }
          return next;
        case "ColumnFamilyOptions":
        case "Options":
          if (name.equals("setTableFormatConfig") && desc.startsWith("(L" + rocks)) {
            return atEntry(
                next,
                mv -> {
                  mv.visitVarInsn(Opcodes.ALOAD, 0);
                  mv.visitVarInsn(Opcodes.ALOAD, 1);
                  hook(mv, "tableConfigSet", "(Ljava/lang/Object;Ljava/lang/Object;)V");
                });
          }
          if (ctor) {
            return beforeReturn(next, mv -> eachReferenceArgument(mv, desc));
          }
          return next;
        case "ColumnFamilyHandle":
          if (name.equals("getDescriptor") && desc.startsWith("()L")) {
            return argumentAndResult(
                next, 0, "descriptorFetched", "(Ljava/lang/Object;Ljava/lang/Object;)V");
          }
          return next;
        case "RocksDB":
        case "TtlDB":
        case "TransactionDB":
        case "OptimisticTransactionDB":
          return rocksDbMethod(next, access, name, desc);
        default:
          return next;
      }
    }

    /** A method of the JDK's zip classes or Spring Boot's nested-jar Inflater cache. */
    private MethodVisitor zipClassMethod(MethodVisitor next, String name, String desc) {
      switch (owner) {
        case INFLATER:
        case DEFLATER:
          return zipMethod(next, name);
        case ZIP_POOL:
          return zipPoolMethod(next, name, desc);
        case SPRING_POOL:
          return springPoolMethod(next, name, desc);
        case INFLATER_REF:
        case DEFLATER_REF:
          if (name.equals("run") && desc.equals("()V")) {
            // Inside the monitor of this synchronized method: address is 0 once freed.
            return atEntry(
                next,
                mv -> {
                  mv.visitVarInsn(Opcodes.ALOAD, 0);
                  mv.visitFieldInsn(Opcodes.GETFIELD, owner, "address", "J");
                  mv.visitInsn(owner.equals(INFLATER_REF) ? Opcodes.ICONST_0 : Opcodes.ICONST_1);
                  bootHook(mv, "zipFreed", "(JI)V");
                });
          }
          return next;
        default:
          return next;
      }
    }

    /**
     * {@code RocksDB} and its subclasses: a new family handle takes its descriptor's options; a
     * database opened with one {@code Options} keeps that object's table configuration for its
     * default family.
     */
    private MethodVisitor rocksDbMethod(MethodVisitor next, int access, String name, String desc) {
      Type[] args = Type.getArgumentTypes(desc);
      String returned = Type.getReturnType(desc).getDescriptor();
      if (name.startsWith("createColumnFamily")
          && args.length >= 1
          && args[0].getDescriptor().equals("L" + rocks + "ColumnFamilyDescriptor;")
          && returned.equals("L" + rocks + "ColumnFamilyHandle;")) {
        return argumentAndResult(
            next, 1, "columnFamilyCreated", "(Ljava/lang/Object;Ljava/lang/Object;)V");
      }
      if (name.equals("createColumnFamilies")
          && args.length >= 1
          && returned.equals("Ljava/util/List;")) {
        // (List<ColumnFamilyDescriptor>) or (ColumnFamilyOptions, List<byte[]>): a list of handles
        return argumentAndResult(
            next, 1, "columnFamiliesCreated", "(Ljava/lang/Object;Ljava/util/List;)V");
      }
      if ((access & Opcodes.ACC_STATIC) == 0
          || !name.startsWith("open")
          || !returned.startsWith("L" + rocks)) {
        return next;
      }
      int[] lists = new int[2];
      int found = 0;
      int options = -1;
      int slot = 0;
      for (Type arg : args) {
        if (arg.getDescriptor().equals("Ljava/util/List;") && found < 2) {
          lists[found++] = slot;
        } else if (arg.getDescriptor().equals("L" + rocks + "Options;") && options < 0) {
          options = slot;
        }
        slot += arg.getSize();
      }
      if (found == 2) {
        return beforeReturn(
            next,
            mv -> {
              // stack: db -> db, db, descriptors, handles
              mv.visitInsn(Opcodes.DUP);
              mv.visitVarInsn(Opcodes.ALOAD, lists[0]);
              mv.visitVarInsn(Opcodes.ALOAD, lists[1]);
              hook(
                  mv,
                  "columnFamiliesOpened",
                  "(Ljava/lang/Object;Ljava/util/List;Ljava/util/List;)V");
            });
      }
      if (options >= 0) {
        int optionsSlot = options;
        return beforeReturn(
            next,
            mv -> {
              // stack: db -> db, db, options
              mv.visitInsn(Opcodes.DUP);
              mv.visitVarInsn(Opcodes.ALOAD, optionsSlot);
              hook(mv, "databaseOpened", "(Ljava/lang/Object;Ljava/lang/Object;)V");
            });
      }
      return next;
    }

    private MethodVisitor zipPoolMethod(MethodVisitor next, String name, String desc) {
      String inflater = "L" + INFLATER + ";";
      if (name.equals("releaseInflater") && desc.equals("(" + inflater + ")V")) {
        return atEntry(
            next,
            mv -> {
              mv.visitVarInsn(Opcodes.ALOAD, 1);
              bootHook(mv, "zipReleased", "(Ljava/lang/Object;)V");
            });
      }
      if (name.equals("getInflater") && desc.equals("()" + inflater)) {
        return beforeReturn(
            next,
            mv -> {
              mv.visitInsn(Opcodes.DUP);
              bootHook(mv, "zipTaken", "(Ljava/lang/Object;)V");
            });
      }
      return next;
    }

    /**
     * {@code getOrCreateInflater()} hands an Inflater out; {@code endOrCacheInflater(Inflater)}
     * (3.2+; {@code returnInflater} in some releases) caches it or ends it: the hook runs after it,
     * so an ended one is already known as ended.
     */
    private MethodVisitor springPoolMethod(MethodVisitor next, String name, String desc) {
      String inflater = "L" + INFLATER + ";";
      if (name.equals("getOrCreateInflater") && desc.equals("()" + inflater)) {
        return beforeReturn(
            next,
            mv -> {
              // stack: inflater -> inflater, pool, inflater
              mv.visitInsn(Opcodes.DUP);
              mv.visitVarInsn(Opcodes.ALOAD, 0);
              mv.visitInsn(Opcodes.SWAP);
              hook(mv, "springInflaterTaken", "(Ljava/lang/Object;Ljava/lang/Object;)V");
            });
      }
      if ((name.equals("endOrCacheInflater") || name.equals("returnInflater"))
          && desc.equals("(" + inflater + ")V")) {
        return beforeReturn(
            next,
            mv -> {
              mv.visitVarInsn(Opcodes.ALOAD, 0);
              mv.visitVarInsn(Opcodes.ALOAD, 1);
              hook(mv, "springInflaterReleased", "(Ljava/lang/Object;Ljava/lang/Object;)V");
            });
      }
      return next;
    }

    /**
     * Constructors: the stream's address once {@code zsRef} is set; code 0 inflater, 1 deflater.
     */
    private MethodVisitor zipMethod(MethodVisitor next, String name) {
      String ref = owner.equals(INFLATER) ? INFLATER_REF : DEFLATER_REF;
      int kind = owner.equals(INFLATER) ? Opcodes.ICONST_0 : Opcodes.ICONST_1;
      if (name.equals("<init>")) {
        return new MethodVisitor(Opcodes.ASM9, next) {
          @Override
          public void visitFieldInsn(int opcode, String fieldOwner, String field, String type) {
            super.visitFieldInsn(opcode, fieldOwner, field, type);
            if (opcode == Opcodes.PUTFIELD && field.equals("zsRef")) {
              mv.visitVarInsn(Opcodes.ALOAD, 0);
              mv.visitVarInsn(Opcodes.ALOAD, 0);
              mv.visitFieldInsn(Opcodes.GETFIELD, owner, "zsRef", "L" + ref + ";");
              mv.visitMethodInsn(Opcodes.INVOKEVIRTUAL, ref, "address", "()J", false);
              mv.visitInsn(kind);
              bootHook(mv, "zipCreated", "(Ljava/lang/Object;JI)V");
            }
          }
        };
      }
      return next;
    }
  }

  /** Code emitted into a method. */
  private interface Emitter {
    void emit(MethodVisitor mv);
  }

  private static void hook(MethodVisitor mv, String name, String desc) {
    mv.visitMethodInsn(Opcodes.INVOKESTATIC, HOOKS, name, desc, false);
  }

  private static void bootHook(MethodVisitor mv, String name, String desc) {
    mv.visitMethodInsn(Opcodes.INVOKESTATIC, BOOT_HOOKS, name, desc, false);
  }

  private static void thisAndField(MethodVisitor mv, String owner, String field, String type) {
    mv.visitVarInsn(Opcodes.ALOAD, 0);
    mv.visitVarInsn(Opcodes.ALOAD, 0);
    mv.visitFieldInsn(Opcodes.GETFIELD, owner, field, type);
  }

  /** For each reference argument of a constructor: {@code optionsDerived(this, arg)}. */
  private static void eachReferenceArgument(MethodVisitor mv, String desc) {
    int slot = 1;
    for (Type arg : Type.getArgumentTypes(desc)) {
      if (arg.getSort() == Type.OBJECT) {
        mv.visitVarInsn(Opcodes.ALOAD, 0);
        mv.visitVarInsn(Opcodes.ALOAD, slot);
        hook(mv, "optionsDerived", "(Ljava/lang/Object;Ljava/lang/Object;)V");
      }
      slot += arg.getSize();
    }
  }

  private static MethodVisitor atEntry(MethodVisitor next, Emitter emitter) {
    return new MethodVisitor(Opcodes.ASM9, next) {
      @Override
      public void visitCode() {
        super.visitCode();
        emitter.emit(mv);
      }
    };
  }

  /**
   * Before every {@code return}: {@code hook(local slot, returned value)}, value still returned.
   */
  private static MethodVisitor argumentAndResult(
      MethodVisitor next, int slot, String name, String desc) {
    return beforeReturn(
        next,
        mv -> {
          // stack: result -> result, argument, result
          mv.visitInsn(Opcodes.DUP);
          mv.visitVarInsn(Opcodes.ALOAD, slot);
          mv.visitInsn(Opcodes.SWAP);
          hook(mv, name, desc);
        });
  }

  /** Before every {@code return} (normal exits only; a throwing constructor made no handle). */
  private static MethodVisitor beforeReturn(MethodVisitor next, Emitter emitter) {
    return new MethodVisitor(Opcodes.ASM9, next) {
      @Override
      public void visitInsn(int opcode) {
        if (opcode >= Opcodes.IRETURN && opcode <= Opcodes.RETURN) {
          emitter.emit(mv);
        }
        super.visitInsn(opcode);
      }
    };
  }
}
