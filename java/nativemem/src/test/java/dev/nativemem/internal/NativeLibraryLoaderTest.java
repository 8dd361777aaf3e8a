package dev.nativemem.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class NativeLibraryLoaderTest {

  @Test
  void platformNames() {
    assertEquals("linux-x86_64", NativeLibraryLoader.platform("Linux", "amd64"));
    assertEquals("linux-x86_64", NativeLibraryLoader.platform("Linux", "x86_64"));
    assertEquals("linux-aarch64", NativeLibraryLoader.platform("Linux", "aarch64"));
  }

  @Test
  void unsupportedPlatformNamesWhatWasFoundAndWhatIsSupported() {
    UnsupportedOperationException e =
        assertThrows(
            UnsupportedOperationException.class,
            () -> NativeLibraryLoader.platform("Mac OS X", "aarch64"));
    assertTrue(e.getMessage().contains("os.name='Mac OS X'"), e.getMessage());
    assertTrue(e.getMessage().contains("os.arch='aarch64'"), e.getMessage());
    assertTrue(e.getMessage().contains("linux-x86_64"), e.getMessage());
    assertThrows(
        UnsupportedOperationException.class, () -> NativeLibraryLoader.platform("Linux", "s390x"));
  }

  @Test
  void extractedLibraryIsPrivate() throws Exception {
    java.nio.file.Path lib = NativeLibraryLoader.loadedPath();
    assertEquals(
        "rwx------",
        java.nio.file.attribute.PosixFilePermissions.toString(
            java.nio.file.Files.getPosixFilePermissions(lib.getParent())));
    assertTrue(
        lib.getParent()
            .getFileName()
            .toString()
            .startsWith("pid" + ProcessHandle.current().pid() + "-"));
  }
}
