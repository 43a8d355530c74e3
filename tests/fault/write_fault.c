/* LD_PRELOAD library for the integrity tests: fails the Nth write(2) to a file under a folder.
 *
 *   CVM_FAULT_DIR    folder whose files count (compared with /proc/self/fd/N's target)
 *   CVM_FAULT_NTH    which write to fail (1 = the first), counted across threads
 *   CVM_FAULT_ERRNO  ENOSPC (default) or EIO
 *   CVM_FAULT_ALL    when set, every write from the Nth on fails (a disk that stays full)
 *   CVM_FAULT_SLEEP_MS  when set, each counted write first sleeps this long (a slow disk, so a
 *                    test can interrupt an install in the middle); CVM_FAULT_NTH=0 fails none
 *   CVM_FAULT_HOLD   a file: each counted write first waits until it exists. A test that stops
 *                    cvm in the middle sends its signal, then makes the file: the work cannot end
 *                    before the signal however slowly the test runs (a slow disk alone can)
 *
 * Built by tests/integration/install_integrity.sh with the system's C compiler. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static ssize_t (*real_write)(int, const void*, size_t);
static long counter;

static int under_fault_dir(int fd) {
    const char* dir = getenv("CVM_FAULT_DIR");
    if (dir == NULL || *dir == '\0') return 0;
    char link[64], target[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0) return 0;
    target[n] = '\0';
    size_t len = strlen(dir);
    return strncmp(target, dir, len) == 0 && (target[len] == '/' || target[len] == '\0');
}

ssize_t write(int fd, const void* buf, size_t count) {
    if (real_write == NULL) real_write = (ssize_t(*)(int, const void*, size_t))dlsym(RTLD_NEXT, "write");
    if (fd > 2 && under_fault_dir(fd)) {
        long nth = atol(getenv("CVM_FAULT_NTH") ? getenv("CVM_FAULT_NTH") : "1");
        long now = __atomic_add_fetch(&counter, 1, __ATOMIC_SEQ_CST);
        const char* sleep_ms = getenv("CVM_FAULT_SLEEP_MS");
        if (sleep_ms != NULL) usleep((useconds_t)atol(sleep_ms) * 1000);
        const char* hold = getenv("CVM_FAULT_HOLD");
        if (hold != NULL && *hold != '\0')
            while (access(hold, F_OK) != 0) usleep(10000);
        if (nth > 0 && now == nth || (now > nth && getenv("CVM_FAULT_ALL") != NULL)) {
            const char* e = getenv("CVM_FAULT_ERRNO");
            errno = (e != NULL && strcmp(e, "EIO") == 0) ? EIO : ENOSPC;
            return -1;
        }
    }
    return real_write(fd, buf, count);
}
