/** JUnit 5 support for nativemem: fail tests that leak native handles. */
package dev.nativemem.junit;
