package dev.nativemem.handles.catalogue;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Which code sources are the application's own, and so name no library. */
class LibraryOwnersTest {
  @Test
  void directoriesAndTheStartedJarAreTheApplications() {
    assertTrue(LibraryOwners.isApplication("file:/work/app/target/classes/", "com.example.Main"));
    assertTrue(
        LibraryOwners.isApplication(
            "jar:nested:/srv/app.jar/!BOOT-INF/classes/!/", "/srv/app.jar serve"));
    assertTrue(LibraryOwners.isApplication("file:/srv/app.jar", "/srv/app.jar serve"));
    assertTrue(LibraryOwners.isApplication("file:/srv/target/app.jar", "target/app.jar"));
  }

  @Test
  void otherJarsAreLibraries() {
    assertFalse(
        LibraryOwners.isApplication(
            "jar:nested:/srv/app.jar/!BOOT-INF/lib/thymeleaf-3.1.3.RELEASE.jar!/", "/srv/app.jar"));
    assertFalse(LibraryOwners.isApplication("file:/m2/org/x/widgets-1.2.3.jar", "/srv/app.jar"));
    assertFalse(LibraryOwners.isApplication("file:/srv/other-app.jar", "app.jar"));
  }
}
