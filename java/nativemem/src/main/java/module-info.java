/**
 * nativemem's API, one package per feature: the front door {@code dev.nativemem} ({@code
 * NativeMemory}, the MXBean), {@code dev.nativemem.base} (what every layer names: {@code Setting},
 * the exceptions, {@code Advice}, {@code TrackingLevel}), {@code dev.nativemem.memory} (the
 * breakdown, snapshot, allocator and remedies), {@code dev.nativemem.handles} (native handles and
 * their leaks), {@code dev.nativemem.profile} (heap profiles), {@code dev.nativemem.watch} (the
 * memory watch) and {@code dev.nativemem.metrics} (the metric table). The bridge to the native
 * library ({@code dev.nativemem.internal}), the incident page's renderer, the agent, the attach
 * channel and the CLI stay inside, so other modules (the JUnit extension, metrics binders) reach
 * the native side only through these packages. Commons CLI, ASM and jackson-jr are shaded into the
 * jar ({@code dev.nativemem.shaded.*}), hence {@code requires static}: needed to compile, never
 * resolved at run time. On the class path (the agent, {@code java -jar}, fat jars) this descriptor
 * is ignored.
 */
module dev.nativemem {
  exports dev.nativemem;
  exports dev.nativemem.base;
  exports dev.nativemem.handles;
  exports dev.nativemem.memory;
  exports dev.nativemem.metrics;
  exports dev.nativemem.profile;
  exports dev.nativemem.watch;

  requires java.management;
  requires java.instrument;
  requires static org.apache.commons.cli;
  requires static org.objectweb.asm;
  requires static com.fasterxml.jackson.jr.ob;
  requires static com.fasterxml.jackson.core;
}
