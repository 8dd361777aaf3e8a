package dev.nativemem.agent;

import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;

/**
 * What the agent instruments, one row per hook: the classes, the method and its descriptor, where
 * in the method the call goes, what it passes and which hook it calls. {@link HandleTransformer}
 * reads the rows and nothing else; a method takes the first row that matches it.
 *
 * <p>A RocksDB family's classes ({@code RocksFamily}: RocksDB's {@code org/rocksdb/}, ForSt's
 * {@code org/forstdb/}) are named inside the family's package, and {@code {rocks}} in a descriptor
 * stands for that package; in a method name or a descriptor, {@code *} matches any run of
 * characters and {@code ?} any one. The hooks add straight-line code only (no branch, no new
 * local), so stack-map frames stay valid and loaded classes can be retransformed.
 */
final class HookTable {
  private static final String HOOKS = "dev/nativemem/agent/HandleHooks";

  /** What the JDK's classes call instead (BootHooks): the one nativemem class they can see. */
  private static final String BOOT_HOOKS = BootHooks.NAME.replace('.', '/');

  private static final String FLAG = "Ljava/util/concurrent/atomic/AtomicBoolean;";
  private static final String OBJECT = "Ljava/lang/Object;";
  private static final String LIST = "Ljava/util/List;";

  static final String INFLATER = "java/util/zip/Inflater";
  static final String DEFLATER = "java/util/zip/Deflater";
  static final String INFLATER_REF = INFLATER + "$InflaterZStreamRef";
  static final String DEFLATER_REF = DEFLATER + "$DeflaterZStreamRef";
  static final String ZIP_POOL = "java/util/zip/ZipFile$CleanableResource";

  /** Spring Boot 3.2+'s loader: the Inflater cache of a nested jar. */
  static final String SPRING_POOL = "org/springframework/boot/loader/jar/NestedJarFileResources";

  /** Where in the method the call goes. */
  enum Where {
    /** First, before the method's own code. */
    ENTRY,
    /** Before every {@code return} (normal exits only: a throwing constructor made no handle). */
    RETURN,
    /** Right after the method writes the row's field of {@code this} ({@code PUTFIELD}). */
    AFTER_FIELD_WRITE
  }

  /** One hook: a row of the table. */
  static final class Hook {
    /** In a RocksDB family (names inside its package), or the JDK's or Spring Boot's classes. */
    final boolean rocks;

    final List<String> classes;
    final String method;
    final String descriptor;
    final Where where;
    private final boolean staticOnly;

    /** The field whose write the call follows ({@link Where#AFTER_FIELD_WRITE}), else null. */
    final String field;

    private final String hooks;
    private final String call;
    private final Arg[] arguments;

    /** A call per reference argument of the method, each passed {@code this} and the argument. */
    private final boolean perReferenceArgument;

    private Hook(
        boolean rocks, List<String> classes, String method, String descriptor, Where where) {
      this.rocks = rocks;
      this.classes = classes;
      this.method = method;
      this.descriptor = descriptor;
      this.where = where;
      this.staticOnly = false;
      this.field = null;
      this.hooks = HOOKS;
      this.call = null;
      this.arguments = null;
      this.perReferenceArgument = false;
    }

    /** The classes, method and place of {@code row}, with the other values given. */
    private Hook(
        Hook row,
        boolean staticOnly,
        String field,
        String hooks,
        String call,
        Arg[] arguments,
        boolean perReferenceArgument) {
      this.rocks = row.rocks;
      this.classes = row.classes;
      this.method = row.method;
      this.descriptor = row.descriptor;
      this.where = row.where;
      this.staticOnly = staticOnly;
      this.field = field;
      this.hooks = hooks;
      this.call = call;
      this.arguments = arguments;
      this.perReferenceArgument = perReferenceArgument;
    }

    /** Only static methods. */
    Hook staticOnly() {
      return new Hook(this, true, field, hooks, call, arguments, perReferenceArgument);
    }

    /** Right after the method writes {@code name} of {@code this}. */
    Hook afterWriteOf(String name) {
      return new Hook(this, staticOnly, name, hooks, call, arguments, perReferenceArgument);
    }

    /** Calls {@code BootHooks} (the JDK's classes see no other class of ours). */
    Hook boot() {
      return new Hook(this, staticOnly, field, BOOT_HOOKS, call, arguments, perReferenceArgument);
    }

    /** Calls the hook {@code name} with {@code arguments}; its descriptor follows from them. */
    Hook calls(String name, Arg... arguments) {
      int result = Arrays.asList(arguments).indexOf(Arg.RESULT);
      int resultAs = Arrays.asList(arguments).indexOf(Arg.RESULT_LIST);
      int last = Math.max(result, resultAs);
      if (last > 0 && (last != 1 || arguments.length != 2)) {
        throw new IllegalArgumentException(
            name + ": the returned value goes first, or last after one other argument");
      }
      return new Hook(
          this, staticOnly, field, hooks, name, arguments.clone(), perReferenceArgument);
    }

    /** Calls {@code name(this, argument)} for each reference argument of the method. */
    Hook callsPerReferenceArgument(String name) {
      return new Hook(this, staticOnly, field, hooks, name, new Arg[] {Arg.THIS, Arg.THIS}, true);
    }

    /** The hook's descriptor: what its arguments push, returning nothing. */
    String callDescriptor() {
      StringBuilder desc = new StringBuilder("(");
      for (Arg argument : arguments) {
        desc.append(argument.type);
      }
      return desc.append(")V").toString();
    }

    /**
     * Whether this row instruments {@code name}{@code desc} of a class in the family package {@code
     * rocks} (null for the JDK's and Spring Boot's classes).
     */
    boolean matches(int access, String name, String desc, String rocks) {
      if (staticOnly && (access & Opcodes.ACC_STATIC) == 0) {
        return false;
      }
      if (!glob(method, name)
          || !glob(descriptor.replace("{rocks}", String.valueOf(rocks)), desc)) {
        return false;
      }
      for (Arg argument : arguments) {
        if (argument.slot(desc, rocks) == Arg.ABSENT) {
          return false;
        }
      }
      return true;
    }

    /** Emits the call (or the calls) into {@code mv} of {@code owner}'s method {@code desc}. */
    void emit(MethodVisitor mv, String owner, String desc, String rocks) {
      String callDescriptor = callDescriptor();
      if (perReferenceArgument) {
        int slot = 1;
        for (Type argument : Type.getArgumentTypes(desc)) {
          if (argument.getSort() == Type.OBJECT) {
            mv.visitVarInsn(Opcodes.ALOAD, 0);
            mv.visitVarInsn(Opcodes.ALOAD, slot);
            mv.visitMethodInsn(Opcodes.INVOKESTATIC, hooks, call, callDescriptor, false);
          }
          slot += argument.getSize();
        }
        return;
      }
      if (arguments.length == 2 && arguments[1].isResult()) {
        // stack: result -> result, argument, result
        mv.visitInsn(Opcodes.DUP);
        arguments[0].push(mv, owner, desc, rocks);
        mv.visitInsn(Opcodes.SWAP);
      } else {
        for (Arg argument : arguments) {
          argument.push(mv, owner, desc, rocks);
        }
      }
      mv.visitMethodInsn(Opcodes.INVOKESTATIC, hooks, call, callDescriptor, false);
    }

    /** {@code BootHooks.zipFreed(JI)V}, for a check that each hook exists. */
    String signature() {
      return hooks + "." + call + callDescriptor();
    }
  }

  /** One value a hook is passed, pushed onto the operand stack, and its type in the call. */
  abstract static class Arg {
    static final int ABSENT = -1;

    /** The hook's parameter type for this value. */
    final String type;

    Arg(String type) {
      this.type = type;
    }

    /** The value the method returns (still returned), as an Object ({@link Where#RETURN}). */
    static final Arg RESULT = result(OBJECT);

    /** The value the method returns, as a List. */
    static final Arg RESULT_LIST = result(LIST);

    static final Arg THIS = local(OBJECT, 0);

    /** {@code this.owningHandle_}, a RocksDB object's flag of ownership. */
    static final Arg OWNING_FLAG = field("owningHandle_", FLAG);

    private static Arg result(String type) {
      return new Arg(type) {
        @Override
        void push(MethodVisitor mv, String owner, String desc, String rocks) {
          mv.visitInsn(Opcodes.DUP);
        }
      };
    }

    boolean isResult() {
      return this == RESULT || this == RESULT_LIST;
    }

    /** The local variable {@code slot} of {@code type} (an object passed as Object). */
    static Arg local(String type, int slot) {
      Type local = Type.getType(type);
      return new Arg(local.getSort() == Type.OBJECT ? OBJECT : type) {
        @Override
        void push(MethodVisitor mv, String owner, String desc, String rocks) {
          mv.visitVarInsn(local.getOpcode(Opcodes.ILOAD), slot);
        }
      };
    }

    /** The field {@code name} of {@code this}. */
    static Arg field(String name, String fieldType) {
      return new Arg(fieldType) {
        @Override
        void push(MethodVisitor mv, String owner, String desc, String rocks) {
          mv.visitVarInsn(Opcodes.ALOAD, 0);
          mv.visitFieldInsn(Opcodes.GETFIELD, owner, name, fieldType);
        }
      };
    }

    /** The int {@code value} (0 to 5). */
    static Arg constant(int value) {
      return new Arg("I") {
        @Override
        void push(MethodVisitor mv, String owner, String desc, String rocks) {
          mv.visitInsn(Opcodes.ICONST_0 + value);
        }
      };
    }

    /** {@code this.zsRef.address()}: the zlib stream of an Inflater or Deflater. */
    static Arg streamAddress(String ref) {
      return new Arg("J") {
        @Override
        void push(MethodVisitor mv, String owner, String desc, String rocks) {
          mv.visitVarInsn(Opcodes.ALOAD, 0);
          mv.visitFieldInsn(Opcodes.GETFIELD, owner, "zsRef", "L" + ref + ";");
          mv.visitMethodInsn(Opcodes.INVOKEVIRTUAL, ref, "address", "()J", false);
        }
      };
    }

    /**
     * The {@code nth} argument (from 0) of the method of type {@code argumentType} ({@code {rocks}}
     * for the family's package), passed as {@code as}; a method without it is not matched.
     */
    static Arg argument(String argumentType, int nth, String as) {
      return new Arg(as) {
        @Override
        int slot(String desc, String rocks) {
          String wanted = argumentType.replace("{rocks}", String.valueOf(rocks));
          int slot = 0;
          int seen = 0;
          for (Type argument : Type.getArgumentTypes(desc)) {
            if (argument.getDescriptor().equals(wanted) && seen++ == nth) {
              return slot;
            }
            slot += argument.getSize();
          }
          return ABSENT;
        }

        @Override
        void push(MethodVisitor mv, String owner, String desc, String rocks) {
          mv.visitVarInsn(Opcodes.ALOAD, slot(desc, rocks));
        }
      };
    }

    /** The local slot this value is read from, {@link #ABSENT} when the method has none. */
    int slot(String desc, String rocks) {
      return 0;
    }

    abstract void push(MethodVisitor mv, String owner, String desc, String rocks);
  }

  // Classes of a RocksDB family, named inside its package.
  private static final String IMMUTABLE = "AbstractImmutableNativeReference";
  private static final String ROCKS_OBJECT = "RocksObject";
  private static final String MUTABLE = "RocksMutableObject";
  private static final String[] CACHES = {"LRUCache", "ClockCache", "HyperClockCache"};
  private static final String[] OPTIONS = {"ColumnFamilyOptions", "Options"};
  private static final String[] DATABASES = {
    "RocksDB", "TtlDB", "TransactionDB", "OptimisticTransactionDB"
  };
  private static final String INFLATER_TYPE = "L" + INFLATER + ";";

  static final List<Hook> ROWS =
      List.of(
          // Every RocksDB object: created, closed, handed to C++ (disowned).
          rocks(IMMUTABLE, "<init>", "(Z)V", Where.RETURN)
              .calls("immutableCreated", Arg.THIS, Arg.OWNING_FLAG),
          rocks(IMMUTABLE, "close", "()V", Where.ENTRY).calls("closing", Arg.THIS, Arg.OWNING_FLAG),
          rocks(IMMUTABLE, "disOwnNativeHandle", "()V", Where.ENTRY)
              .calls("transferring", Arg.THIS, Arg.OWNING_FLAG),
          rocks(ROCKS_OBJECT, "<init>", "(J)V", Where.RETURN)
              .calls("rocksCreated", Arg.THIS, Arg.field("nativeHandle_", "J"), Arg.OWNING_FLAG),
          rocks(MUTABLE, "<init>", "(J)V", Where.RETURN)
              .calls("mutableCreated", Arg.THIS, Arg.local("J", 1)),
          rocks(MUTABLE, "setNativeHandle", "(JZ)V", Where.ENTRY)
              .calls("mutableHandleSet", Arg.THIS, Arg.local("J", 1), Arg.local("Z", 3)),
          rocks(MUTABLE, "close", "()V", Where.ENTRY)
              .calls("mutableClosing", Arg.THIS, Arg.field("owningHandle_", "Z")),
          // Where a block cache's capacity is known, and how the cache passes between objects.
          rocks(CACHES, "<init>", "(J*", Where.RETURN)
              .calls("cacheCapacity", Arg.THIS, Arg.local("J", 1)),
          rocks(OPTIONS, "setTableFormatConfig", "(L{rocks}*", Where.ENTRY)
              .calls("tableConfigSet", Arg.THIS, Arg.local(OBJECT, 1)),
          rocks(OPTIONS, "<init>", "*", Where.RETURN).callsPerReferenceArgument("optionsDerived"),
          rocks("ColumnFamilyHandle", "getDescriptor", "()L*", Where.RETURN)
              .calls("descriptorFetched", Arg.local(OBJECT, 0), Arg.RESULT),
          // RocksDB and its subclasses: a new family handle takes its descriptor's options; a
          // database opened with one Options keeps that object's table configuration for its
          // default family. createColumnFamilies takes (List<ColumnFamilyDescriptor>) or
          // (ColumnFamilyOptions, List<byte[]>) and returns a list of handles.
          rocks(
                  DATABASES,
                  "createColumnFamily*",
                  "(L{rocks}ColumnFamilyDescriptor;*)L{rocks}ColumnFamilyHandle;",
                  Where.RETURN)
              .calls("columnFamilyCreated", Arg.local(OBJECT, 1), Arg.RESULT),
          rocks(DATABASES, "createColumnFamilies", "(?*)" + LIST, Where.RETURN)
              .calls("columnFamiliesCreated", Arg.local(OBJECT, 1), Arg.RESULT_LIST),
          rocks(DATABASES, "open*", "*)L{rocks}*", Where.RETURN)
              .staticOnly()
              .calls(
                  "columnFamiliesOpened",
                  Arg.RESULT,
                  Arg.argument(LIST, 0, LIST),
                  Arg.argument(LIST, 1, LIST)),
          rocks(DATABASES, "open*", "*)L{rocks}*", Where.RETURN)
              .staticOnly()
              .calls("databaseOpened", Arg.RESULT, Arg.argument("L{rocks}Options;", 0, OBJECT)),
          // zlib: a stream's address once zsRef is set (kind 0 inflater, 1 deflater); its end in
          // the cleaner's synchronized run, where address is 0 once freed.
          jdk(INFLATER, "<init>", "*", Where.AFTER_FIELD_WRITE)
              .afterWriteOf("zsRef")
              .boot()
              .calls("zipCreated", Arg.THIS, Arg.streamAddress(INFLATER_REF), Arg.constant(0)),
          jdk(DEFLATER, "<init>", "*", Where.AFTER_FIELD_WRITE)
              .afterWriteOf("zsRef")
              .boot()
              .calls("zipCreated", Arg.THIS, Arg.streamAddress(DEFLATER_REF), Arg.constant(1)),
          jdk(INFLATER_REF, "run", "()V", Where.ENTRY)
              .boot()
              .calls("zipFreed", Arg.field("address", "J"), Arg.constant(0)),
          jdk(DEFLATER_REF, "run", "()V", Where.ENTRY)
              .boot()
              .calls("zipFreed", Arg.field("address", "J"), Arg.constant(1)),
          // The JDK's pool of a zip file's Inflaters.
          jdk(ZIP_POOL, "releaseInflater", "(" + INFLATER_TYPE + ")V", Where.ENTRY)
              .boot()
              .calls("zipReleased", Arg.local(OBJECT, 1)),
          jdk(ZIP_POOL, "getInflater", "()" + INFLATER_TYPE, Where.RETURN)
              .boot()
              .calls("zipTaken", Arg.RESULT),
          // Spring Boot's nested-jar Inflater cache: handed out, then cached or ended (the hook
          // runs after, so an ended one is already known as ended); returnInflater in some
          // releases.
          jdk(SPRING_POOL, "getOrCreateInflater", "()" + INFLATER_TYPE, Where.RETURN)
              .calls("springInflaterTaken", Arg.local(OBJECT, 0), Arg.RESULT),
          jdk(SPRING_POOL, "endOrCacheInflater", "(" + INFLATER_TYPE + ")V", Where.RETURN)
              .calls("springInflaterReleased", Arg.THIS, Arg.local(OBJECT, 1)),
          jdk(SPRING_POOL, "returnInflater", "(" + INFLATER_TYPE + ")V", Where.RETURN)
              .calls("springInflaterReleased", Arg.THIS, Arg.local(OBJECT, 1)));

  /** The classes of a RocksDB family some row instruments, by their names inside its package. */
  static final List<String> ROCKS_CLASSES = classes(true);

  /** The JDK's and Spring Boot's classes some row instruments. */
  static final List<String> ZIP_CLASSES = classes(false);

  private HookTable() {}

  private static List<String> classes(boolean rocks) {
    Set<String> names = new LinkedHashSet<>();
    for (Hook hook : ROWS) {
      if (hook.rocks == rocks) {
        names.addAll(hook.classes);
      }
    }
    return List.copyOf(names);
  }

  /**
   * The first row for the method {@code name}{@code desc} of {@code owner} ({@code local} inside
   * the family package {@code rocks}, null for the other classes), or null.
   */
  static Hook find(String owner, String local, int access, String name, String desc, String rocks) {
    for (Hook hook : ROWS) {
      if (hook.rocks == (rocks != null)
          && hook.classes.contains(rocks != null ? local : owner)
          && hook.matches(access, name, desc, rocks)) {
        return hook;
      }
    }
    return null;
  }

  private static Hook rocks(String clazz, String method, String descriptor, Where where) {
    return new Hook(true, List.of(clazz), method, descriptor, where);
  }

  private static Hook rocks(String[] classes, String method, String descriptor, Where where) {
    return new Hook(true, List.of(classes), method, descriptor, where);
  }

  private static Hook jdk(String clazz, String method, String descriptor, Where where) {
    return new Hook(false, List.of(clazz), method, descriptor, where);
  }

  /**
   * Whether {@code text} matches {@code pattern}: {@code *} any run of characters, {@code ?} one.
   */
  static boolean glob(String pattern, String text) {
    return glob(pattern, 0, text, 0);
  }

  private static boolean glob(String pattern, int p, String text, int t) {
    while (p < pattern.length()) {
      char c = pattern.charAt(p);
      if (c == '*') {
        for (int rest = t; rest <= text.length(); rest++) {
          if (glob(pattern, p + 1, text, rest)) {
            return true;
          }
        }
        return false;
      }
      if (t >= text.length() || (c != '?' && c != text.charAt(t))) {
        return false;
      }
      p++;
      t++;
    }
    return t == text.length();
  }
}
