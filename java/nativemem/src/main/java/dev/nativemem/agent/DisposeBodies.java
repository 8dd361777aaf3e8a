package dev.nativemem.agent;

import java.io.InputStream;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.Handle;
import org.objectweb.asm.Label;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;

/**
 * Reads a RocksDB class's own bytecode to tell whether its {@code disposeInternal(long)}, the
 * method that frees its native object, does anything at all.
 */
final class DisposeBodies {
  private static final String DISPOSE = "disposeInternal";
  private static final String DISPOSE_DESC = "(J)V";

  private DisposeBodies() {}

  /**
   * Whether the most derived {@code disposeInternal(long)} of {@code type} is an empty method (only
   * {@code return}). False when it is native, abstract, absent or unreadable: the kind is tracked.
   */
  static boolean freesNothing(Class<?> type) {
    for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
      Boolean empty = declaredDisposeIsEmpty(c);
      if (empty != null) {
        return empty;
      }
    }
    return false;
  }

  /** Null when {@code c} does not declare the method. */
  private static Boolean declaredDisposeIsEmpty(Class<?> c) {
    try {
      c.getDeclaredMethod(DISPOSE, long.class);
    } catch (NoSuchMethodException e) {
      return null;
    } catch (RuntimeException | LinkageError e) {
      return false;
    }
    String resource = c.getName().replace('.', '/') + ".class";
    ClassLoader loader = c.getClassLoader();
    try (InputStream in =
        loader == null
            ? ClassLoader.getSystemResourceAsStream(resource)
            : loader.getResourceAsStream(resource)) {
      if (in == null) {
        return false;
      }
      EmptyMethodFinder finder = new EmptyMethodFinder();
      new ClassReader(in).accept(finder, ClassReader.SKIP_DEBUG | ClassReader.SKIP_FRAMES);
      return finder.empty;
    } catch (Exception | LinkageError e) {
      return false;
    }
  }

  private static final class EmptyMethodFinder extends ClassVisitor {
    boolean empty;

    EmptyMethodFinder() {
      super(Opcodes.ASM9);
    }

    @Override
    public MethodVisitor visitMethod(
        int access, String name, String desc, String signature, String[] exceptions) {
      if (!name.equals(DISPOSE)
          || !desc.equals(DISPOSE_DESC)
          || (access & (Opcodes.ACC_NATIVE | Opcodes.ACC_ABSTRACT)) != 0) {
        return null;
      }
      return new MethodVisitor(Opcodes.ASM9) {
        private int instructions;
        private boolean onlyReturn = true;

        private void other() {
          instructions++;
          onlyReturn = false;
        }

        @Override
        public void visitInsn(int opcode) {
          instructions++;
          onlyReturn &= opcode == Opcodes.RETURN;
        }

        @Override
        public void visitIntInsn(int opcode, int operand) {
          other();
        }

        @Override
        public void visitVarInsn(int opcode, int var) {
          other();
        }

        @Override
        public void visitTypeInsn(int opcode, String type) {
          other();
        }

        @Override
        public void visitFieldInsn(int opcode, String owner, String field, String type) {
          other();
        }

        @Override
        public void visitMethodInsn(
            int opcode, String owner, String method, String type, boolean isInterface) {
          other();
        }

        @Override
        public void visitInvokeDynamicInsn(
            String method, String type, Handle bootstrap, Object... arguments) {
          other();
        }

        @Override
        public void visitJumpInsn(int opcode, Label label) {
          other();
        }

        @Override
        public void visitLdcInsn(Object value) {
          other();
        }

        @Override
        public void visitIincInsn(int var, int increment) {
          other();
        }

        @Override
        public void visitTableSwitchInsn(int min, int max, Label dflt, Label... labels) {
          other();
        }

        @Override
        public void visitLookupSwitchInsn(Label dflt, int[] keys, Label[] labels) {
          other();
        }

        @Override
        public void visitMultiANewArrayInsn(String type, int dimensions) {
          other();
        }

        @Override
        public void visitEnd() {
          empty = onlyReturn && instructions == 1;
        }
      };
    }
  }
}
