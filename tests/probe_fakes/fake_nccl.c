/* A fake NCCL for testing cvm-probe without GPUs: NCCL's function names and its banner text, the
 * all-reduce done on the CPU over the fake CUDA runtime's "device" memory (host memory).
 *
 * Build (tests/integration/lib_probe.sh probe_build_nccl does it):
 *   cc -shared -fPIC -DFAKE_NCCL_VERSION='"2.28.9"' -DFAKE_NCCL_CODE=22809
 * -DFAKE_NCCL_CUDA='"13.0"' \ -Wl,-soname,libnccl.so.2 -o libnccl.so.2.28.9 fake_nccl.c
 * FAKE_NCCL_CODE is what ncclGetVersion returns (X*1000+Y*100+Z up to 2.8, X*10000+Y*100+Z
 * after); the banner "NCCL version <FAKE_NCCL_VERSION>+cuda<FAKE_NCCL_CUDA>" is in the read-only
 * data, as in the real library.
 * Environment switches, read at each call:
 *   FAKE_NCCL_WRONG=1          the all-reduce gets one sum wrong on the last rank
 *   FAKE_NCCL_SKIP_RANK=N      rank N's result is never written
 *   FAKE_NCCL_FAIL=function:N  that function returns N (e.g. ncclCommInitAll:2, a system error)
 * With NCCL_DEBUG=INFO and NCCL_DEBUG_FILE set, ncclCommInitAll writes the channel lines the real
 * library writes ("Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read"), P2P between ranks unless
 * NCCL_P2P_DISABLE=1 (then SHM).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FAKE_NCCL_VERSION
#define FAKE_NCCL_VERSION "2.28.9"
#endif
#ifndef FAKE_NCCL_CODE
#define FAKE_NCCL_CODE 22809
#endif
#ifndef FAKE_NCCL_CUDA
#define FAKE_NCCL_CUDA "13.0"
#endif

/* As nccl.h's VERSION_STRING: kept in .rodata, found by readers of the file. */
const char fake_nccl_banner[] = "NCCL version " FAKE_NCCL_VERSION "+cuda" FAKE_NCCL_CUDA;

typedef struct {
    int rank, ranks, device;
} Comm;

typedef struct {
    const float* send;
    float* receive;
    size_t count;
    Comm* comm;
} Op;

#define MAX_OPS 64
static Op pending[MAX_OPS];
static int pending_count = 0;
static int group_depth = 0;

static int forced(const char* function) {
    const char* spec = getenv("FAKE_NCCL_FAIL");
    size_t length = strlen(function);
    if (!spec || strncmp(spec, function, length) != 0 || spec[length] != ':') return 0;
    return atoi(spec + length + 1);
}

int ncclGetVersion(int* version) {
    *version = FAKE_NCCL_CODE;
    return 0;
}

const char* ncclGetErrorString(int result) {
    switch (result) {
    case 0:
        return "no error";
    case 1:
        return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case 2:
        return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case 3:
        return "internal error - please report this issue to the NCCL developers";
    case 4:
        return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    default:
        return "unknown result code";
    }
}

const char* ncclGetLastError(Comm* comm) {
    (void)comm;
    return forced("ncclCommInitAll") ? "fake: posix_fallocate failed : No space left on device"
                                     : "";
}

static void log_channels(int ranks) {
    const char* debug = getenv("NCCL_DEBUG");
    const char* file = getenv("NCCL_DEBUG_FILE");
    const char* p2p = getenv("NCCL_P2P_DISABLE");
    const char* via = p2p && strcmp(p2p, "1") == 0 ? "SHM/direct/direct" : "P2P/CUMEM/read";
    FILE* f;
    int channel, r;
    if (!debug || strcmp(debug, "INFO") != 0 || !file) return;
    f = fopen(file, "a");
    if (!f) return;
    fprintf(f, "fakehost:1:1 [0] NCCL INFO NCCL version " FAKE_NCCL_VERSION "+cuda" FAKE_NCCL_CUDA
               "\n");
    for (channel = 0; channel < 2 && ranks > 1; ++channel)
        for (r = 0; r < ranks; ++r)
            fprintf(f, "fakehost:1:1 [%d] NCCL INFO Channel %02d/0 : %d[%d] -> %d[%d] via %s\n", r,
                    channel, r, r, (r + 1) % ranks, (r + 1) % ranks, via);
    fprintf(f, "fakehost:1:1 [0] NCCL INFO Connected all rings\n");
    fclose(f);
}

int ncclCommInitAll(Comm** comms, int ranks, const int* devices) {
    int i, failure = forced("ncclCommInitAll");
    if (failure) return failure;
    if (ranks <= 0) return 4;
    for (i = 0; i < ranks; ++i) {
        comms[i] = (Comm*)malloc(sizeof(Comm));
        comms[i]->rank = i;
        comms[i]->ranks = ranks;
        comms[i]->device = devices ? devices[i] : i;
    }
    log_channels(ranks);
    return 0;
}

int ncclCommDestroy(Comm* comm) {
    free(comm);
    return 0;
}

/* Every rank of one collective queued: each receive gets the sum of all sends, added in rank
 * order as before (0 + s0 + s1 ...; the probe's values are small integers, exact in any order).
 * The sums go through a small block that stays in the cache, with loops the compiler vectorizes:
 * the probe's default sizes reach 1 GiB per rank, and a test runs them. */
#define SUM_BLOCK 16384
static int run_pending(void) {
    static float sums[SUM_BLOCK];
    int ranks = pending_count, r, skip_rank = -1;
    size_t start, i, n, count;
    const char* skip = getenv("FAKE_NCCL_SKIP_RANK");
    if (ranks == 0) return 0;
    if (skip && *skip) skip_rank = atoi(skip);
    count = pending[0].count;
    for (r = 0; r < ranks; ++r)
        if (pending[r].count != count || pending[r].comm->ranks != ranks)
            return 5; /* invalid usage */
    for (start = 0; start < count; start += n) {
        n = count - start < SUM_BLOCK ? count - start : SUM_BLOCK;
        for (i = 0; i < n; ++i)
            sums[i] = 0;
        for (r = 0; r < ranks; ++r) {
            const float* restrict send = pending[r].send + start;
            for (i = 0; i < n; ++i)
                sums[i] += send[i];
        }
        for (r = 0; r < ranks; ++r)
            if (r != skip_rank) memcpy(pending[r].receive + start, sums, n * sizeof(float));
    }
    if (getenv("FAKE_NCCL_WRONG")) pending[ranks - 1].receive[count / 2] += 1.0f;
    pending_count = 0;
    return 0;
}

int ncclGroupStart(void) {
    ++group_depth;
    return 0;
}

int ncclGroupEnd(void) {
    if (group_depth <= 0) return 5;
    if (--group_depth == 0) return run_pending();
    return 0;
}

int ncclAllReduce(const void* send, void* receive, size_t count, int datatype, int op, Comm* comm,
                  void* stream) {
    int failure = forced("ncclAllReduce");
    (void)stream;
    if (failure) return failure;
    if (datatype != 7 || op != 0 || !comm) return 4; /* only float sums are faked */
    if (pending_count == MAX_OPS) return 3;
    pending[pending_count].send = (const float*)send;
    pending[pending_count].receive = (float*)receive;
    pending[pending_count].count = count;
    pending[pending_count].comm = comm;
    ++pending_count;
    if (group_depth == 0) {
        if (comm->ranks != 1) return 5; /* several ranks from one thread need a group */
        return run_pending();
    }
    return 0;
}
