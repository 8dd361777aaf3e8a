package dev.nativemem.memory.reading;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.nativemem.base.NativeMemoryException;
import org.junit.jupiter.api.Test;

class NmtSummaryTest {
  // Trimmed from 'vmNativeMemory summary scale=b' on JDK 17.0.15.
  static final String JDK17 =
      "\nNative Memory Tracking:\n\n"
          + "Total: reserved=8029108502, committed=489474326\n"
          + "       malloc: 9787670 #16157\n"
          + "       mmap:   reserved=8019320832, committed=479686656\n\n"
          + "-                 Java Heap (reserved=6320816128, committed=406847488)\n"
          + "                            (mmap: reserved=6320816128, committed=406847488) \n \n"
          + "-                     Class (reserved=1073888487, committed=539879)\n"
          + "                            (classes #1516)\n"
          + "                            (malloc=212455 #2120) \n"
          + "                            (mmap: reserved=1073676032, committed=327424) \n \n"
          + "-                    Thread (reserved=19976712, committed=911368)\n"
          + "                            (thread #19)\n"
          + "-        Shared class space (reserved=12582912, committed=12574720)\n";
  // Trimmed from JDK 25: the malloc line carries a peak, categories carry tags.
  static final String JDK25 =
      "\nNative Memory Tracking:\n\n"
          + "Total: reserved=7922094885, committed=485311269\n"
          + "       malloc: 14926629 #13291, peak=15500571 #12656\n"
          + "       mmap:   reserved=7907168256, committed=470384640\n\n"
          + "-                 Java Heap (reserved=6320816128, committed=402653184)\n"
          + "                            (mmap: reserved=6320816128, committed=402653184, at"
          + " peak)\n";

  @Test
  void jdk17Summary() {
    NmtSummary s = assertTotals(JDK17, 489474326L, 9787670L, 479686656L);
    assertEquals(8029108502L, s.reservedBytes());
    assertEquals(406847488L, s.committedByCategory().get("Java Heap"));
    assertEquals(12574720L, s.committedByCategory().get("Shared class space"));
    // Each category's own mmap line, several lines below its header; none for Thread here.
    assertEquals(406847488L, s.mmapCommittedByCategory().get("Java Heap"));
    assertEquals(327424L, s.mmapCommittedByCategory().get("Class"));
    assertNull(s.mmapCommittedByCategory().get("Thread"));
  }

  @Test
  void jdk25Summary() {
    NmtSummary s = assertTotals(JDK25, 485311269L, 14926629L, 470384640L);
    assertEquals(402653184L, s.mmapCommittedByCategory().get("Java Heap"));
  }

  static NmtSummary assertTotals(String text, long committed, long malloc, long mmap) {
    NmtSummary s = NmtSummary.parse(text);
    assertEquals(committed, s.committedBytes());
    assertEquals(malloc, s.mallocBytes());
    assertEquals(mmap, s.mmapCommittedBytes());
    return s;
  }

  @Test
  void offIsNullAndGarbageIsAnError() {
    assertNull(NmtSummary.parse("Native memory tracking is not enabled\n"));
    assertThrows(NativeMemoryException.class, () -> NmtSummary.parse("something else"));
  }

  @Test
  void thisJvmRunsWithoutNmt() {
    // surefire does not pass -XX:NativeMemoryTracking: the MBean answers, and says it is off.
    assertNull(NmtSummary.read());
  }
}
