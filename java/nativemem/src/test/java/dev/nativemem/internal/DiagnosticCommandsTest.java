package dev.nativemem.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.base.NativeMemoryException;
import java.lang.management.ManagementFactory;
import javax.management.ObjectName;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The in-process diagnostic commands answer what the DiagnosticCommand MBean answers. */
class DiagnosticCommandsTest {
  @BeforeAll
  static void load() {
    NativeLibraryLoader.load();
  }

  @Test
  void hotSpotRunsThem() {
    assertNull(DiagnosticCommands.absence());
    assertTrue(DiagnosticCommands.available());
  }

  @Test
  void answersAsTheMBeanDoes() throws Exception {
    Object mbean =
        ManagementFactory.getPlatformMBeanServer()
            .invoke(
                new ObjectName("com.sun.management:type=DiagnosticCommand"),
                "vmVersion",
                null,
                null);
    assertEquals(mbean, DiagnosticCommands.run("VM.version"));
    assertTrue(
        DiagnosticCommands.run("VM.version").contains(Runtime.version().toString()),
        DiagnosticCommands.run("VM.version"));
  }

  @Test
  void passesArguments() {
    String flags = DiagnosticCommands.run("VM.flags", "-all");
    assertTrue(flags.contains("DisableAttachMechanism"), flags);
    assertFalse(DiagnosticCommands.run("VM.flags").contains("DisableAttachMechanism"));
  }

  @Test
  void aRefusedCommandSaysWhyNeverNull() {
    NativeMemoryException e =
        assertThrows(NativeMemoryException.class, () -> DiagnosticCommands.run("No.such_command"));
    assertTrue(e.getMessage().contains("'No.such_command'"), e.getMessage());
    assertTrue(e.getMessage().contains("Unknown diagnostic command"), e.getMessage());
    assertFalse(e.getMessage().endsWith("null"), e.getMessage());
  }
}
