package dev.nativemem.attach;

import com.sun.tools.attach.AgentInitializationException;
import com.sun.tools.attach.AgentLoadException;
import com.sun.tools.attach.AttachNotSupportedException;
import com.sun.tools.attach.VirtualMachine;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;

/**
 * The attaching side: loads the agent into the target with a command, reads the result back from
 * the target's properties and has it removed. The only class that needs {@code jdk.attach}, so
 * nothing else of nativemem links against it.
 */
public final class AttachClient {
  private AttachClient() {}

  /** Runs {@code command} in JVM {@code pid} with the agent of {@code jar}; null if no result. */
  public static AttachProtocol.Result run(String pid, String jar, List<String> command) {
    VirtualMachine vm = attach(pid);
    String id = Long.toHexString(System.nanoTime()) + "-" + ProcessHandle.current().pid();
    try {
      vm.loadAgent(jar, AttachProtocol.command(id, command));
      String property = vm.getSystemProperties().getProperty(AttachProtocol.resultProperty(id));
      vm.loadAgent(jar, AttachProtocol.FORGET + id);
      return AttachProtocol.Result.parse(property);
    } catch (AgentLoadException | AgentInitializationException e) {
      throw new IllegalStateException(
          "process " + pid + " could not run the nativemem agent: " + e.getMessage(), e);
    } catch (IOException e) {
      if (exits(pid)) {
        throw new IllegalStateException("process " + pid + " exited during the command", e);
      }
      throw new IllegalStateException("lost the connection to process " + pid + ": " + e, e);
    } finally {
      try {
        vm.detach();
      } catch (IOException e) {
        // the target is gone; said above
      }
    }
  }

  /** Whether {@code pid} is gone or dying (a zombie) within a second: its connection broke. */
  private static boolean exits(String pid) {
    Path stat = Paths.get("/proc", pid, "stat");
    for (int i = 0; i < 20; i++) {
      try {
        String text = new String(Files.readAllBytes(stat), StandardCharsets.US_ASCII);
        char state = text.charAt(text.lastIndexOf(')') + 2);
        if (state == 'Z' || state == 'X') {
          return true;
        }
        Thread.sleep(50);
      } catch (IOException | RuntimeException gone) {
        return true;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    return false;
  }

  private static VirtualMachine attach(String pid) {
    try {
      return VirtualMachine.attach(pid);
    } catch (AttachNotSupportedException | IOException e) {
      throw new IllegalStateException(
          "cannot attach to process "
              + pid
              + ": "
              + e.getMessage()
              + " (started with -XX:+DisableAttachMechanism? In another container, run this"
              + " inside it: kubectl exec / docker exec, as the same user)",
          e);
    }
  }
}
