/* JNI methods of dev.nativemem.tests.StressNative: allocation through this library's own imports
 * (every entry point the import-rewriting engine hooks), getline growing a buffer this library
 * allocated, and dlopen/dlclose of a second library that allocates. Built at test time. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <jni.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One round of each allocation entry point, every block freed; returns the bytes touched. */
JNIEXPORT jlong JNICALL Java_dev_nativemem_tests_StressNative_churn(JNIEnv *env, jclass type,
                                                                    jint rounds, jint size) {
  long touched = 0;
  for (int i = 0; i < rounds; i++) {
    size_t n = (size_t)size + (size_t)(i % 7) * 64;
    char *a = malloc(n);
    char *b = calloc(4, n / 4 + 1);
    if (a == NULL || b == NULL) return -1;
    memset(a, 1, n);
    char *grown = realloc(a, 3 * n);
    if (grown == NULL) return -1;
    memset(grown, 2, 3 * n);
    char *shrunk = realloc(grown, n / 2 + 1);
    if (shrunk == NULL) return -1;
    char *array = reallocarray(NULL, 8, n / 8 + 1);
    void *aligned = NULL;
    if (posix_memalign(&aligned, 64, n) != 0) return -1;
    void *a2 = aligned_alloc(256, 4096);
    void *a3 = memalign(128, n);
    void *a4 = valloc(n);
    void *a5 = pvalloc(n);
    touched += (long)(n * 7);
    free(shrunk);
    free(b);
    free(array);
    free(aligned);
    free(a2);
    free(a3);
    free(a4);
    free(a5);
    /* glibc's realloc to 0 bytes frees the block and returns NULL. */
    free(realloc(malloc(32), 0));
  }
  return touched;
}

/* Reads the file line by line with getline into a buffer allocated here (through the hooked
 * malloc) and grown by glibc itself (inside libc, not through any import); frees it here. Then the
 * same through open_memstream, whose buffer libc allocates and the caller frees. */
JNIEXPORT jlong JNICALL Java_dev_nativemem_tests_StressNative_getlines(JNIEnv *env, jclass type,
                                                                       jstring path) {
  const char *name = (*env)->GetStringUTFChars(env, path, NULL);
  if (name == NULL) return -1;
  FILE *f = fopen(name, "r");
  (*env)->ReleaseStringUTFChars(env, path, name);
  if (f == NULL) return -1;
  size_t cap = 8;
  char *line = malloc(cap);
  long total = 0;
  ssize_t n;
  while ((n = getline(&line, &cap, f)) >= 0) total += n;
  free(line);
  fclose(f);
  char *buffer = NULL;
  size_t size = 0;
  FILE *out = open_memstream(&buffer, &size);
  if (out == NULL) return -1;
  for (int i = 0; i < 200; i++) fprintf(out, "line %d of the memory stream\n", i);
  fclose(out);
  total += (long)size;
  free(buffer);
  return total;
}

/* dlopen of the library at path, one allocation made and freed by its code, dlclose. */
JNIEXPORT jlong JNICALL Java_dev_nativemem_tests_StressNative_dlopenChurn(JNIEnv *env, jclass type,
                                                                          jstring path) {
  const char *name = (*env)->GetStringUTFChars(env, path, NULL);
  if (name == NULL) return -1;
  void *handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  (*env)->ReleaseStringUTFChars(env, path, name);
  if (handle == NULL) return -2;
  void *(*make)(size_t) = (void *(*)(size_t))dlsym(handle, "tiny_make");
  void (*drop)(void *) = (void (*)(void *))dlsym(handle, "tiny_drop");
  long made = 0;
  if (make != NULL && drop != NULL) {
    for (int i = 0; i < 16; i++) {
      void *block = make(4096 + i * 512);
      if (block != NULL) made++;
      drop(block);
    }
  }
  return dlclose(handle) == 0 ? made : -3;
}
