/* The loop bench/UnsampledPairCost.java times (not a test): n malloc+free pairs through this
 * library's own imports, as a JNI library's allocations go. */
#include <jni.h>
#include <stdlib.h>

JNIEXPORT jlong JNICALL Java_UnsampledPairCost_pairs(JNIEnv *env, jclass type, jlong n,
                                                     jlong size) {
  long sum = 0;
  for (long i = 0; i < n; i++) {
    char *block = malloc((size_t)size);
    /* Keeps the compiler from eliding the pair. */
    __asm__ volatile("" : : "r"(block) : "memory");
    sum += block != NULL;
    free(block);
  }
  return sum;
}
