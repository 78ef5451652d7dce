// A FUSE file system of one file, "disk", held in memory, whose reads and
// writes at or beyond an offset wait DELAY_MS first: a loop device over it
// has requests that are slow in the device itself (throttling with io.max
// or dm-delay holds I/O before the request exists). Opened with direct I/O,
// so every request of the loop device reaches it.
//   slow_fuse MOUNTPOINT SIZE_MIB SLOW_FROM_MIB DELAY_MS
// Runs in the foreground until unmounted.
#define FUSE_USE_VERSION 31
#include <errno.h>
#include <fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static char* g_data;
static off_t g_size, g_slow_from;
static long g_delay_ms;

static void maybe_wait(off_t off, size_t n) {
  if (off + (off_t)n <= g_slow_from) return;
  struct timespec ts = {g_delay_ms / 1000, (g_delay_ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static int fs_getattr(const char* path, struct stat* st, struct fuse_file_info* fi) {
  (void)fi;
  memset(st, 0, sizeof(*st));
  if (strcmp(path, "/") == 0) {
    st->st_mode = S_IFDIR | 0755;
    st->st_nlink = 2;
    return 0;
  }
  if (strcmp(path, "/disk") != 0) return -ENOENT;
  st->st_mode = S_IFREG | 0600;
  st->st_nlink = 1;
  st->st_size = g_size;
  return 0;
}

static int fs_readdir(const char* path, void* buf, fuse_fill_dir_t fill, off_t off,
                      struct fuse_file_info* fi, enum fuse_readdir_flags flags) {
  (void)off, (void)fi, (void)flags;
  if (strcmp(path, "/") != 0) return -ENOENT;
  fill(buf, ".", NULL, 0, 0);
  fill(buf, "..", NULL, 0, 0);
  fill(buf, "disk", NULL, 0, 0);
  return 0;
}

static int fs_open(const char* path, struct fuse_file_info* fi) {
  if (strcmp(path, "/disk") != 0) return -ENOENT;
  fi->direct_io = 1;
  return 0;
}

static int fs_read(const char* path, char* buf, size_t n, off_t off, struct fuse_file_info* fi) {
  (void)path, (void)fi;
  if (off >= g_size) return 0;
  if (off + (off_t)n > g_size) n = (size_t)(g_size - off);
  maybe_wait(off, n);
  memcpy(buf, g_data + off, n);
  return (int)n;
}

static int fs_write(const char* path, const char* buf, size_t n, off_t off,
                    struct fuse_file_info* fi) {
  (void)path, (void)fi;
  if (off >= g_size) return -ENOSPC;
  if (off + (off_t)n > g_size) n = (size_t)(g_size - off);
  maybe_wait(off, n);
  memcpy(g_data + off, buf, n);
  return (int)n;
}

static const struct fuse_operations ops = {
    .getattr = fs_getattr,
    .open = fs_open,
    .read = fs_read,
    .write = fs_write,
    .readdir = fs_readdir,
};

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: slow_fuse MOUNTPOINT SIZE_MIB SLOW_FROM_MIB DELAY_MS\n");
    return 2;
  }
  g_size = (off_t)atol(argv[2]) << 20;
  g_slow_from = (off_t)atol(argv[3]) << 20;
  g_delay_ms = atol(argv[4]);
  g_data = calloc(1, (size_t)g_size);
  if (!g_data) return 1;
  char* args[] = {argv[0], "-f", "-o", "allow_other", argv[1], NULL};
  return fuse_main(5, args, &ops, NULL);
}
