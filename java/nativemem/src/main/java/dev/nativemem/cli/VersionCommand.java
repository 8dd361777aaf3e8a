package dev.nativemem.cli;

import dev.nativemem.NativeMemory;
import dev.nativemem.Versions;
import picocli.CommandLine.Command;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Option;

@Command(name = "version", description = "Print the Java and native library versions.")
final class VersionCommand implements Runnable {
  @Option(names = "--json", description = "Print JSON.")
  boolean json;

  @Override
  public void run() {
    Versions versions = NativeMemory.version();
    System.out.println(json ? versions.toJson() : versions.toString());
  }

  static final class Provider implements IVersionProvider {
    @Override
    public String[] getVersion() {
      return new String[] {NativeMemory.version().toString()};
    }
  }
}
