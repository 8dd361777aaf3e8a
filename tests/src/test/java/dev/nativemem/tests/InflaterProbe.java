package dev.nativemem.tests;

import java.util.zip.Inflater;

/** A JVM that makes and ends one Inflater: the agent's instrumented JDK class runs. */
public final class InflaterProbe {
  private InflaterProbe() {}

  public static void main(String[] args) {
    new Inflater().end();
    System.out.println("INFLATER OK");
  }
}
