/**
 * nativemem's API. Only {@code dev.nativemem}, its metric table ({@code dev.nativemem.metrics}),
 * the memory watch ({@code dev.nativemem.watch}) and the incident page ({@code
 * dev.nativemem.incident}) are exported: the bridge to the native library, the handle tracker, the
 * agent and the CLI stay inside, so other modules (the JUnit extension, metrics binders) reach the
 * native side only through the facade. Commons CLI, ASM and jackson-jr are shaded into the jar
 * ({@code dev.nativemem.shaded.*}), hence {@code requires static}: needed to compile, never
 * resolved at run time. On the class path (the agent, {@code java -jar}, fat jars) this descriptor
 * is ignored.
 */
module dev.nativemem {
  exports dev.nativemem;
  exports dev.nativemem.incident;
  exports dev.nativemem.metrics;
  exports dev.nativemem.watch;

  requires java.management;
  requires java.instrument;
  requires static org.apache.commons.cli;
  requires static org.objectweb.asm;
  requires static com.fasterxml.jackson.jr.ob;
  requires static com.fasterxml.jackson.core;
  requires static rocksdbjni;
}
