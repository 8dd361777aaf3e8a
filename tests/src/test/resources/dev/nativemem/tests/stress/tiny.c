/* A library that is dlopened and dlclosed over and over: it allocates at load, from its
 * functions, and frees at unload. Built at test time. */
#include <stdlib.h>
#include <string.h>

static char *state;

__attribute__((constructor)) static void tiny_load(void) {
  state = malloc(1024);
  if (state != NULL) memset(state, 0, 1024);
}

__attribute__((destructor)) static void tiny_unload(void) { free(state); }

void *tiny_make(size_t size) {
  char *block = malloc(size);
  if (block != NULL) memset(block, 3, size);
  return block;
}

void tiny_drop(void *block) { free(block); }
