package dev.nativemem.internal;

import dev.nativemem.base.NativeMemoryException;
import java.lang.management.ManagementFactory;
import javax.management.InstanceAlreadyExistsException;
import javax.management.InstanceNotFoundException;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * The one JMX habit of nativemem's MXBeans: registered on the platform MBean server under a fixed
 * name; where a copy loaded by another class loader (a restarted job) holds the name, the newest
 * registration replaces it, so the live copy serves and the old one's class loader can go.
 */
public final class Jmx {
  private Jmx() {}

  /**
   * Registers {@code bean} as {@code objectName}, replacing whatever another copy registered there.
   *
   * @throws NativeMemoryException if the server refuses the bean; the message says which name
   */
  public static ObjectName register(String objectName, Object bean) {
    if (RuntimeModules.JMX_ABSENCE != null) {
      throw new NativeMemoryException(
          "cannot register " + objectName + ": " + RuntimeModules.JMX_ABSENCE);
    }
    MBeanServer server = ManagementFactory.getPlatformMBeanServer();
    try {
      ObjectName name = new ObjectName(objectName);
      for (int attempt = 0; ; attempt++) {
        try {
          if (server.isRegistered(name)) {
            server.unregisterMBean(name);
          }
          server.registerMBean(bean, name);
          return name;
        } catch (InstanceAlreadyExistsException | InstanceNotFoundException e) {
          if (attempt == 2) {
            throw e; // another copy keeps registering at the same moment
          }
        }
      }
    } catch (JMException e) {
      throw new NativeMemoryException(
          "cannot register " + objectName + " with the platform MBean server: " + e.getMessage(),
          e);
    }
  }

  /** Unregisters {@code name} if it is still registered; never throws. */
  public static void unregister(ObjectName name) {
    try {
      ManagementFactory.getPlatformMBeanServer().unregisterMBean(name);
    } catch (JMException | RuntimeException e) {
      // already gone, or replaced and removed by a newer copy
    }
  }
}
