/* A heap workload with known sites, run under a profiling jemalloc (LD_PRELOAD, MALLOC_CONF with
 * prof:true) to make real heap_v2 dumps for the analysis tests and the benchmark.
 *
 * usage: heap_workload <dump path> <tree depth> [base dump path]
 *   - planted_big: 256 blocks of 64 KiB; planted_small: 4096 blocks of 256 B, via a calloc path;
 *   - a binary tree of mutually recursive calls, 2^depth distinct stacks, one 1 KiB block per leaf;
 *   - with a base path, a first dump is written before planted_growth adds 128 blocks of 32 KiB.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*mallctl_fn)(const char *, void *, size_t *, void *, size_t);

static void *volatile keep[1 << 20];
static size_t kept;

static void hold(void *p) {
  if (p == NULL || kept == sizeof(keep) / sizeof(keep[0])) {
    fprintf(stderr, "allocation failed or too many blocks\n");
    exit(3);
  }
  memset(p, 1, 1);
  keep[kept++] = p;
}

__attribute__((noinline)) void planted_big(void) {
  for (int i = 0; i < 256; i++) hold(malloc(64 << 10));
}

__attribute__((noinline)) void planted_small(void) {
  for (int i = 0; i < 4096; i++) hold(calloc(1, 256));
}

__attribute__((noinline)) void planted_growth(void) {
  for (int i = 0; i < 128; i++) hold(malloc(32 << 10));
}

__attribute__((noinline)) void tree_leaf(unsigned path) { hold(malloc(1024 + (path % 7) * 16)); }

void tree_left(int depth, unsigned path);
void tree_right(int depth, unsigned path);

__attribute__((noinline)) void tree_left(int depth, unsigned path) {
  if (depth == 0) {
    tree_leaf(path);
  } else if (path & (1u << (depth - 1))) {
    tree_right(depth - 1, path);
  } else {
    tree_left(depth - 1, path);
  }
  __asm__ volatile("" ::: "memory"); /* no tail call: keep this frame on the stack */
}

__attribute__((noinline)) void tree_right(int depth, unsigned path) {
  if (depth == 0) {
    tree_leaf(path);
  } else if (path & (1u << (depth - 1))) {
    tree_right(depth - 1, path);
  } else {
    tree_left(depth - 1, path);
  }
  __asm__ volatile("" ::: "memory");
}

static void dump(mallctl_fn mallctl, const char *path) {
  if (mallctl("prof.dump", NULL, NULL, &path, sizeof(path)) != 0) {
    fprintf(stderr, "prof.dump failed: is jemalloc preloaded with MALLOC_CONF=prof:true?\n");
    exit(2);
  }
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s <dump> <depth> [base dump]\n", argv[0]);
    return 1;
  }
  mallctl_fn mallctl = (mallctl_fn)dlsym(RTLD_DEFAULT, "mallctl");
  if (mallctl == NULL) {
    fprintf(stderr, "no mallctl: preload libjemalloc.so.2\n");
    return 2;
  }
  int depth = atoi(argv[2]);
  planted_big();
  planted_small();
  for (unsigned path = 0; path < (1u << depth); path++) tree_left(depth, path);
  if (argc > 3) {
    dump(mallctl, argv[3]);
    planted_growth();
  }
  dump(mallctl, argv[1]);
  return 0;
}
