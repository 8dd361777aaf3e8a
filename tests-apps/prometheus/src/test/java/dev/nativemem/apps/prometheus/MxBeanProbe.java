package dev.nativemem.apps.prometheus;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.Inflater;
import javax.management.Attribute;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * An application that never calls nativemem: started with the agent, {@code -Dnativemem.jmx=true}
 * and the JMX exporter. It holds a few Inflaters open, prints {@code ready}, and for each {@code
 * read} on its input prints the MXBean's numeric attributes as the exporter reads them ({@code
 * getAttributes}), one {@code Name value} per line, then {@code end}.
 */
public final class MxBeanProbe {
  static final int OPEN_INFLATERS = 7;

  private MxBeanProbe() {}

  public static void main(String[] args) throws Exception {
    List<Inflater> open = new ArrayList<>();
    for (int i = 0; i < OPEN_INFLATERS; i++) {
      open.add(new Inflater());
    }
    MBeanServer server = ManagementFactory.getPlatformMBeanServer();
    ObjectName name = new ObjectName("dev.nativemem:type=NativeMemory");
    System.out.println("ready");
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      if (!line.equals("read")) {
        continue;
      }
      List<String> numeric = new ArrayList<>();
      for (MBeanAttributeInfo info : server.getMBeanInfo(name).getAttributes()) {
        if (info.getType().equals("long") || info.getType().equals("double")) {
          numeric.add(info.getName());
        }
      }
      for (Attribute a : server.getAttributes(name, numeric.toArray(new String[0])).asList()) {
        System.out.println(a.getName() + " " + a.getValue());
      }
      System.out.println("end");
    }
    open.forEach(Inflater::end);
  }
}
