/* LD_PRELOAD fault injector for Seer's fault-injection suite (tests/fault/fault_test.py).
 *
 * It intercepts the libc calls Seer's storage seam uses and fails one of them, chosen by
 * the environment; with SEER_FAULT_PATH unset it only forwards (one getenv at start):
 *   SEER_FAULT_PATH    substring of the path (as the program passed it to open/fopen);
 *                      only calls on fds opened with a matching path count
 *   SEER_FAULT_OP      read (read, pread, preadv) | write (write, pwrite, writev,
 *                      pwritev, fwrite, fflush) | open (open, openat, creat, fopen) |
 *                      fsync (fsync, fdatasync) | ftruncate | fallocate | rename (rename
 *                      whose target matches)
 *   SEER_FAULT_ERRNO   EIO | ENOSPC | EAGAIN | EINTR | SHORT (the call moves half the
 *                      bytes, at least 1) | EOF (a read returns 0) | TRUNCATE (the call
 *                      succeeds, but first the file SEER_FAULT_TRUNCATE is cut to
 *                      SEER_FAULT_TRUNCATE_SIZE bytes, default 0: a file truncated under
 *                      a running reader, whatever reader it is, mmap included)
 *   SEER_FAULT_NTH     the matching call that fails, 1-based (default 1)
 *   SEER_FAULT_REPEAT  1: every matching call from the Nth on fails (a full disk)
 *   SEER_FAULT_LOG     file to which one line is appended each time a fault fires, so a
 *                      test can tell an injected fault from an untouched run
 * io_uring reads do not go through libc: the suite runs its read faults with
 * --io pread (and mmap/uring only with TRUNCATE, which needs no interception of reads).
 * Plain C, no Seer dependency; thread-safe (atomic counters, a fixed fd table). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

enum { kOpRead, kOpWrite, kOpOpen, kOpFsync, kOpFtruncate, kOpFallocate, kOpRename, kOpNone };
enum { kModeErrno, kModeShort, kModeEof, kModeTruncate };
#define kMaxFd 65536

static int g_active = -1; /* -1: not read yet */
static const char* g_path;
static int g_op = kOpNone;
static int g_mode = kModeErrno;
static int g_errno = EIO;
static long g_nth = 1;
static int g_repeat;
static const char* g_log;
static const char* g_truncate_path;
static long long g_truncate_size;
static long g_count;
static unsigned char g_fd_matches[kMaxFd];

static void Init(void) {
  if (__atomic_load_n(&g_active, __ATOMIC_ACQUIRE) >= 0) return;
  const char* path = getenv("SEER_FAULT_PATH");
  const char* op = getenv("SEER_FAULT_OP");
  const char* err = getenv("SEER_FAULT_ERRNO");
  int active = path != NULL && *path != '\0' && op != NULL;
  if (active) {
    g_path = path;
    if (strcmp(op, "read") == 0) g_op = kOpRead;
    else if (strcmp(op, "write") == 0) g_op = kOpWrite;
    else if (strcmp(op, "open") == 0) g_op = kOpOpen;
    else if (strcmp(op, "fsync") == 0) g_op = kOpFsync;
    else if (strcmp(op, "ftruncate") == 0) g_op = kOpFtruncate;
    else if (strcmp(op, "fallocate") == 0) g_op = kOpFallocate;
    else if (strcmp(op, "rename") == 0) g_op = kOpRename;
    if (err == NULL || strcmp(err, "EIO") == 0) g_errno = EIO;
    else if (strcmp(err, "ENOSPC") == 0) g_errno = ENOSPC;
    else if (strcmp(err, "EAGAIN") == 0) g_errno = EAGAIN;
    else if (strcmp(err, "EINTR") == 0) g_errno = EINTR;
    else if (strcmp(err, "SHORT") == 0) g_mode = kModeShort;
    else if (strcmp(err, "EOF") == 0) g_mode = kModeEof;
    else if (strcmp(err, "TRUNCATE") == 0) g_mode = kModeTruncate;
    const char* nth = getenv("SEER_FAULT_NTH");
    if (nth != NULL) g_nth = atol(nth);
    const char* repeat = getenv("SEER_FAULT_REPEAT");
    g_repeat = repeat != NULL && strcmp(repeat, "1") == 0;
    g_log = getenv("SEER_FAULT_LOG");
    g_truncate_path = getenv("SEER_FAULT_TRUNCATE");
    const char* size = getenv("SEER_FAULT_TRUNCATE_SIZE");
    if (size != NULL) g_truncate_size = atoll(size);
  }
  __atomic_store_n(&g_active, active, __ATOMIC_RELEASE);
}

#define REAL(ret, name, ...)                                     \
  static ret (*real_##name)(__VA_ARGS__);                        \
  if (real_##name == NULL) real_##name = (ret(*)(__VA_ARGS__))dlsym(RTLD_NEXT, #name)

static int PathMatches(const char* path) { return path != NULL && g_path != NULL && strstr(path, g_path) != NULL; }
static int FdMatches(int fd) { return fd >= 0 && fd < kMaxFd && __atomic_load_n(&g_fd_matches[fd], __ATOMIC_RELAXED); }
static void Track(int fd, const char* path) {
  if (fd >= 0 && fd < kMaxFd) __atomic_store_n(&g_fd_matches[fd], (unsigned char)PathMatches(path), __ATOMIC_RELAXED);
}

static void Log(const char* what, const char* detail) {
  if (g_log == NULL) return;
  REAL(int, open, const char*, int, ...);
  REAL(ssize_t, write, int, const void*, size_t);
  REAL(int, close, int);
  int fd = real_open(g_log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  char line[512];
  int n = snprintf(line, sizeof line, "fault %s %s (call %ld)\n", what, detail, g_nth);
  if (n > 0) {
    ssize_t w = real_write(fd, line, (size_t)(n < (int)sizeof line ? n : (int)sizeof line - 1));
    (void)w;
  }
  real_close(fd);
}

/* Whether this call (of kind op, on a matching file) is the one to fail. */
static int Fire(int op, const char* what) {
  Init();
  if (!g_active || op != g_op) return 0;
  long k = __atomic_add_fetch(&g_count, 1, __ATOMIC_RELAXED);
  if (k < g_nth || (k > g_nth && !g_repeat)) return 0;
  if (g_mode == kModeTruncate) {
    if (k == g_nth && g_truncate_path != NULL) {
      REAL(int, truncate, const char*, off_t);
      real_truncate(g_truncate_path, (off_t)g_truncate_size);
      Log("TRUNCATE", g_truncate_path);
    }
    return 0; /* the triggering call itself goes through */
  }
  Log(what, g_mode == kModeShort ? "SHORT" : g_mode == kModeEof ? "EOF" : strerror(g_errno));
  return 1;
}

/* Fail (errno) or shorten a transfer of n bytes. Returns the byte count to pass on to the
 * real call, or -1 with errno set (call fails), or -2 for "return 0 now" (EOF). */
static long long Decide(int op, const char* what, size_t n) {
  if (!Fire(op, what)) return (long long)n;
  if (g_mode == kModeShort) return n > 1 ? (long long)(n / 2) : (long long)n;
  if (g_mode == kModeEof && op == kOpRead) return -2;
  errno = g_errno;
  return -1;
}

/* The shapes every wrapper below shares. FdFails/PathFails: whether this call fails now
 * (errno set). Transfer: Decide for a matching descriptor (else n unchanged). */
static int FdFails(int fd, int op, const char* what) {
  if (g_active == 0 || !FdMatches(fd) || !Fire(op, what)) return 0;
  errno = g_errno;
  return 1;
}
static int PathFails(const char* path, int op, const char* what) {
  Init();
  if (!g_active || !PathMatches(path) || !Fire(op, what)) return 0;
  errno = g_errno;
  return 1;
}
static long long Transfer(int fd, int op, const char* what, size_t n) {
  return g_active != 0 && FdMatches(fd) ? Decide(op, what, n) : (long long)n;
}
/* The mode argument of open/openat (present only with O_CREAT or O_TMPFILE). */
#define OPEN_MODE(flags, last, mode)             \
  mode_t mode = 0;                                \
  if ((flags) & (O_CREAT | O_TMPFILE)) {          \
    va_list ap;                                   \
    va_start(ap, last);                           \
    mode = va_arg(ap, mode_t);                    \
    va_end(ap);                                   \
  }

/* ---- open / close ----------------------------------------------------------------- */

int open(const char* path, int flags, ...) {
  REAL(int, open, const char*, int, ...);
  OPEN_MODE(flags, flags, mode)
  if (PathFails(path, kOpOpen, "open")) return -1;
  int fd = real_open(path, flags, mode);
  if (g_active) Track(fd, path);
  return fd;
}
int open64(const char* path, int flags, ...) {
  OPEN_MODE(flags, flags, mode)
  return open(path, flags, mode);
}
int openat(int dirfd, const char* path, int flags, ...) {
  REAL(int, openat, int, const char*, int, ...);
  OPEN_MODE(flags, flags, mode)
  if (PathFails(path, kOpOpen, "openat")) return -1;
  int fd = real_openat(dirfd, path, flags, mode);
  if (g_active) Track(fd, path);
  return fd;
}
int openat64(int dirfd, const char* path, int flags, ...) {
  OPEN_MODE(flags, flags, mode)
  return openat(dirfd, path, flags, mode);
}
int creat(const char* path, mode_t mode) { return open(path, O_CREAT | O_WRONLY | O_TRUNC, mode); }

FILE* fopen(const char* path, const char* mode) {
  REAL(FILE*, fopen, const char*, const char*);
  if (PathFails(path, kOpOpen, "fopen")) return NULL;
  FILE* f = real_fopen(path, mode);
  if (g_active && f != NULL) Track(fileno(f), path);
  return f;
}
FILE* fopen64(const char* path, const char* mode) { return fopen(path, mode); }

int close(int fd) {
  REAL(int, close, int);
  if (fd >= 0 && fd < kMaxFd) __atomic_store_n(&g_fd_matches[fd], 0, __ATOMIC_RELAXED);
  return real_close(fd);
}
int fclose(FILE* f) {
  REAL(int, fclose, FILE*);
  if (f != NULL) {
    int fd = fileno(f);
    if (fd >= 0 && fd < kMaxFd) __atomic_store_n(&g_fd_matches[fd], 0, __ATOMIC_RELAXED);
  }
  return real_fclose(f);
}

/* ---- reads -------------------------------------------------------------------------- */

ssize_t read(int fd, void* buf, size_t n) {
  REAL(ssize_t, read, int, void*, size_t);
  const long long k = Transfer(fd, kOpRead, "read", n);
  if (k < 0) return k == -2 ? 0 : -1;
  n = (size_t)k;
  return real_read(fd, buf, n);
}
ssize_t pread(int fd, void* buf, size_t n, off_t off) {
  REAL(ssize_t, pread, int, void*, size_t, off_t);
  const long long k = Transfer(fd, kOpRead, "pread", n);
  if (k < 0) return k == -2 ? 0 : -1;
  n = (size_t)k;
  return real_pread(fd, buf, n, off);
}
ssize_t pread64(int fd, void* buf, size_t n, off_t off) { return pread(fd, buf, n, off); }
ssize_t preadv(int fd, const struct iovec* iov, int cnt, off_t off) {
  REAL(ssize_t, preadv, int, const struct iovec*, int, off_t);
  REAL(ssize_t, pread, int, void*, size_t, off_t);
  if (g_active != 0 && FdMatches(fd)) {
    long long k = Decide(kOpRead, "preadv", cnt > 0 ? iov[0].iov_len : 0);
    if (k == -1) return -1;
    if (k == -2) return 0;
    if (cnt > 0 && (size_t)k < iov[0].iov_len) return real_pread(fd, iov[0].iov_base, (size_t)k, off);
  }
  return real_preadv(fd, iov, cnt, off);
}

/* ---- writes ------------------------------------------------------------------------- */

ssize_t write(int fd, const void* buf, size_t n) {
  REAL(ssize_t, write, int, const void*, size_t);
  const long long k = Transfer(fd, kOpWrite, "write", n);
  if (k < 0) return -1;
  n = (size_t)k;
  return real_write(fd, buf, n);
}
ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
  REAL(ssize_t, pwrite, int, const void*, size_t, off_t);
  const long long k = Transfer(fd, kOpWrite, "pwrite", n);
  if (k < 0) return -1;
  n = (size_t)k;
  return real_pwrite(fd, buf, n, off);
}
ssize_t pwrite64(int fd, const void* buf, size_t n, off_t off) { return pwrite(fd, buf, n, off); }
ssize_t writev(int fd, const struct iovec* iov, int cnt) {
  REAL(ssize_t, writev, int, const struct iovec*, int);
  if (g_active != 0 && FdMatches(fd)) {
    long long k = Decide(kOpWrite, "writev", cnt > 0 ? iov[0].iov_len : 0);
    if (k < 0) return -1;
    if (cnt > 0 && (size_t)k < iov[0].iov_len) return write(fd, iov[0].iov_base, (size_t)k);
  }
  return real_writev(fd, iov, cnt);
}
ssize_t pwritev(int fd, const struct iovec* iov, int cnt, off_t off) {
  REAL(ssize_t, pwritev, int, const struct iovec*, int, off_t);
  REAL(ssize_t, pwrite, int, const void*, size_t, off_t);
  if (g_active != 0 && FdMatches(fd)) {
    long long k = Decide(kOpWrite, "pwritev", cnt > 0 ? iov[0].iov_len : 0);
    if (k < 0) return -1;
    if (cnt > 0 && (size_t)k < iov[0].iov_len) return real_pwrite(fd, iov[0].iov_base, (size_t)k, off);
  }
  return real_pwritev(fd, iov, cnt, off);
}
/* stdio's own writes go through glibc-internal calls, so FILE* writers are failed here. */
size_t fwrite(const void* buf, size_t size, size_t count, FILE* f) {
  REAL(size_t, fwrite, const void*, size_t, size_t, FILE*);
  if (g_active != 0 && FdMatches(fileno(f)) && size > 0) {
    long long k = Decide(kOpWrite, "fwrite", count);
    if (k < 0) return 0;
    count = (size_t)k;
  }
  return real_fwrite(buf, size, count, f);
}
int fflush(FILE* f) {
  REAL(int, fflush, FILE*);
  if (g_active != 0 && f != NULL && FdMatches(fileno(f))) {
    if (Fire(kOpWrite, "fflush") && g_mode == kModeErrno) {
      errno = g_errno;
      return EOF;
    }
  }
  return real_fflush(f);
}

/* ---- metadata ----------------------------------------------------------------------- */

int fsync(int fd) {
  REAL(int, fsync, int);
  if (FdFails(fd, kOpFsync, "fsync")) return -1;
  return real_fsync(fd);
}
int fdatasync(int fd) {
  REAL(int, fdatasync, int);
  if (FdFails(fd, kOpFsync, "fdatasync")) return -1;
  return real_fdatasync(fd);
}
int ftruncate(int fd, off_t len) {
  REAL(int, ftruncate, int, off_t);
  if (FdFails(fd, kOpFtruncate, "ftruncate")) return -1;
  return real_ftruncate(fd, len);
}
int ftruncate64(int fd, off_t len) { return ftruncate(fd, len); }
int fallocate(int fd, int mode, off_t off, off_t len) {
  REAL(int, fallocate, int, int, off_t, off_t);
  if (FdFails(fd, kOpFallocate, "fallocate")) return -1;
  return real_fallocate(fd, mode, off, len);
}
int fallocate64(int fd, int mode, off_t off, off_t len) { return fallocate(fd, mode, off, len); }
int posix_fallocate(int fd, off_t off, off_t len) {
  REAL(int, posix_fallocate, int, off_t, off_t);
  if (g_active != 0 && FdMatches(fd) && Fire(kOpFallocate, "posix_fallocate")) return g_errno;
  return real_posix_fallocate(fd, off, len);
}
int rename(const char* from, const char* to) {
  REAL(int, rename, const char*, const char*);
  if (PathFails(to, kOpRename, "rename")) return -1;
  return real_rename(from, to);
}
