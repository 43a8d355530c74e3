/* A fake cuDNN for testing cvm-probe without a GPU: the same function names as cuDNN's legacy
 * convolution API, a CPU convolution behind them, and the real library's shape: a front library
 * (libcudnn.so.N) that loads its sub-libraries by name on first use, through the normal search.
 *
 * One source, built several ways (tests/integration/lib_probe.sh does it):
 *   -DFAKE_FRONT                      the front library: forwards every call to a sub-library
 *   -DFAKE_WITH_GRAPH / _OPS / _CNN   the implementation groups a sub-library holds
 *                                     (all three without FAKE_FRONT: cuDNN 7's single library)
 *   -DFAKE_MAJOR=9|8|7                which cuDNN generation (sub-library names, version number)
 *   -DFAKE_OMIT_FORWARD               leave cudnnConvolutionForward out (a missing symbol)
 *   -DFAKE_CUDART_VERSION=13000       what cudnnGetCudartVersion says
 * Environment switches, read at each call:
 *   FAKE_CUDNN_VERSION=N              cudnnGetVersion returns N (a version mismatch)
 *   FAKE_CUDNN_WRONG=1                the convolution gets one output wrong
 *   FAKE_CUDNN_FAIL=function:status   that function returns that status (e.g. cudnnCreate:4000)
 *   FAKE_CUDNN_REFUSE_ALGO=N          algorithm N is not supported (workspace query and forward
 *                                     return CUDNN_STATUS_NOT_SUPPORTED), as for a shape or GPU
 *                                     the real library has no kernel of that algorithm for
 *   FAKE_CUDNN_TRACE=FILE             the algorithm search appends its function's name to FILE,
 *                                     so a test sees whether the probe asked for it
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FAKE_MAJOR
#define FAKE_MAJOR 9
#endif

#if FAKE_MAJOR >= 9
#define FAKE_VERSION 91900
#define GRAPH_LIB "libcudnn_graph.so.9"
#define OPS_LIB "libcudnn_ops.so.9"
#define CNN_LIB "libcudnn_cnn.so.9"
#define STATUS_BAD_PARAM 2000
#define STATUS_NOT_SUPPORTED 3000
#define STATUS_SUBLIBRARY_LOADING_FAILED 1008
#elif FAKE_MAJOR == 8
#define FAKE_VERSION 8907
#define GRAPH_LIB "libcudnn_ops_infer.so.8"
#define OPS_LIB "libcudnn_ops_infer.so.8"
#define CNN_LIB "libcudnn_cnn_infer.so.8"
#define STATUS_BAD_PARAM 3
#define STATUS_NOT_SUPPORTED 9
#define STATUS_SUBLIBRARY_LOADING_FAILED 14
#else
#define FAKE_VERSION 7605
#define STATUS_BAD_PARAM 3
#define STATUS_NOT_SUPPORTED 9
#endif

#ifndef FAKE_CUDART_VERSION
#define FAKE_CUDART_VERSION 13000
#endif

typedef struct {
    int format, type, n, c, h, w;
} TensorDesc;
typedef struct {
    int type, format, k, c, r, s;
} FilterDesc;
typedef struct {
    int pad_h, pad_w, u, v, dil_h, dil_w, mode, type, math;
} ConvDesc;
typedef struct {
    int magic;
} Handle;

typedef struct {
    int algo;
    int status;
    float time;
    size_t memory;
    int determinism;
    int mathType;
    int reserved[3];
} AlgoPerf;

#if defined(FAKE_WITH_GRAPH) || defined(FAKE_WITH_OPS) || defined(FAKE_WITH_CNN)
/* FAKE_CUDNN_FAIL=name:status */
static int forced_status(const char* function) {
    const char* spec = getenv("FAKE_CUDNN_FAIL");
    size_t length = strlen(function);
    if (!spec || strncmp(spec, function, length) != 0 || spec[length] != ':') return 0;
    return atoi(spec + length + 1);
}
#define FAIL_IF_FORCED(name)                                                                      \
    do {                                                                                          \
        int forced_ = forced_status(name);                                                        \
        if (forced_) return forced_;                                                              \
    } while (0)
#endif

/* ---------------- graph group: handle, versions, error names ---------------- */
#ifdef FAKE_WITH_GRAPH
size_t cudnnGetVersion(void) {
    const char* forced = getenv("FAKE_CUDNN_VERSION");
    return forced ? (size_t)strtoul(forced, NULL, 10) : (size_t)FAKE_VERSION;
}

size_t cudnnGetCudartVersion(void) { return FAKE_CUDART_VERSION; }

const char* cudnnGetErrorString(int status) {
    switch (status) {
    case 0: return "CUDNN_STATUS_SUCCESS";
#if FAKE_MAJOR >= 9
    case 1008: return "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED";
    case 2000: return "CUDNN_STATUS_BAD_PARAM";
    case 3000: return "CUDNN_STATUS_NOT_SUPPORTED";
    case 4000: return "CUDNN_STATUS_INTERNAL_ERROR";
    case 5000: return "CUDNN_STATUS_EXECUTION_FAILED";
#else
    case 3: return "CUDNN_STATUS_BAD_PARAM";
    case 4: return "CUDNN_STATUS_INTERNAL_ERROR";
    case 8: return "CUDNN_STATUS_EXECUTION_FAILED";
    case 9: return "CUDNN_STATUS_NOT_SUPPORTED";
#endif
    default: return "CUDNN_UNKNOWN_STATUS";
    }
}

int cudnnCreate(Handle** handle) {
    FAIL_IF_FORCED("cudnnCreate");
    *handle = (Handle*)malloc(sizeof(Handle));
    (*handle)->magic = 0x0c0d;
    return 0;
}

int cudnnDestroy(Handle* handle) {
    free(handle);
    return 0;
}
#endif

/* ---------------- ops group: tensor and filter descriptors ---------------- */
#ifdef FAKE_WITH_OPS
int cudnnCreateTensorDescriptor(TensorDesc** desc) {
    FAIL_IF_FORCED("cudnnCreateTensorDescriptor");
    *desc = (TensorDesc*)calloc(1, sizeof(TensorDesc));
    return 0;
}
int cudnnSetTensor4dDescriptor(TensorDesc* d, int format, int type, int n, int c, int h, int w) {
    FAIL_IF_FORCED("cudnnSetTensor4dDescriptor");
    if (format != 0 || type != 0 || n <= 0 || c <= 0 || h <= 0 || w <= 0) return STATUS_BAD_PARAM;
    d->format = format, d->type = type, d->n = n, d->c = c, d->h = h, d->w = w;
    return 0;
}
int cudnnDestroyTensorDescriptor(TensorDesc* d) {
    free(d);
    return 0;
}
int cudnnCreateFilterDescriptor(FilterDesc** desc) {
    *desc = (FilterDesc*)calloc(1, sizeof(FilterDesc));
    return 0;
}
int cudnnSetFilter4dDescriptor(FilterDesc* d, int type, int format, int k, int c, int r, int s) {
    if (format != 0 || type != 0 || k <= 0 || c <= 0 || r <= 0 || s <= 0) return STATUS_BAD_PARAM;
    d->type = type, d->format = format, d->k = k, d->c = c, d->r = r, d->s = s;
    return 0;
}
int cudnnDestroyFilterDescriptor(FilterDesc* d) {
    free(d);
    return 0;
}
#endif

/* ---------------- cnn group: convolution ---------------- */
#ifdef FAKE_WITH_CNN
static int out_dim(int in, int pad, int filter, int dil, int stride) {
    return (in + 2 * pad - dil * (filter - 1) - 1) / stride + 1;
}

int cudnnCreateConvolutionDescriptor(ConvDesc** desc) {
    *desc = (ConvDesc*)calloc(1, sizeof(ConvDesc));
    return 0;
}
int cudnnSetConvolution2dDescriptor(ConvDesc* d, int pad_h, int pad_w, int u, int v, int dil_h,
                                    int dil_w, int mode, int type) {
    if (pad_h < 0 || pad_w < 0 || u <= 0 || v <= 0 || dil_h <= 0 || dil_w <= 0)
        return STATUS_BAD_PARAM;
    d->pad_h = pad_h, d->pad_w = pad_w, d->u = u, d->v = v, d->dil_h = dil_h, d->dil_w = dil_w;
    d->mode = mode, d->type = type;
    return 0;
}
int cudnnSetConvolutionMathType(ConvDesc* d, int math) {
    d->math = math;
    return 0;
}
int cudnnDestroyConvolutionDescriptor(ConvDesc* d) {
    free(d);
    return 0;
}
int cudnnGetConvolution2dForwardOutputDim(const ConvDesc* conv, const TensorDesc* x,
                                          const FilterDesc* w, int* n, int* c, int* h, int* wo) {
    if (x->c != w->c) return STATUS_BAD_PARAM;
    *n = x->n;
    *c = w->k;
    *h = out_dim(x->h, conv->pad_h, w->r, conv->dil_h, conv->u);
    *wo = out_dim(x->w, conv->pad_w, w->s, conv->dil_w, conv->v);
    return 0;
}
int cudnnGetConvolutionForwardAlgorithmMaxCount(Handle* handle, int* count) {
    (void)handle;
    *count = 8;
    return 0;
}
static size_t workspace_for(int algo) { return algo == 0 ? 0 : (size_t)algo * 4096; }

static int refused(int algo) {
    const char* refuse = getenv("FAKE_CUDNN_REFUSE_ALGO");
    return refuse && *refuse && atoi(refuse) == algo;
}

static void trace(const char* function) {
    const char* file = getenv("FAKE_CUDNN_TRACE");
    FILE* f = file && *file ? fopen(file, "a") : NULL;
    if (!f) return;
    fprintf(f, "%s\n", function);
    fclose(f);
}

int cudnnGetConvolutionForwardWorkspaceSize(Handle* handle, const TensorDesc* x,
                                            const FilterDesc* w, const ConvDesc* conv,
                                            const TensorDesc* y, int algo, size_t* bytes) {
    (void)handle, (void)x, (void)w, (void)conv, (void)y;
    if (algo < 0 || algo > 7) return STATUS_BAD_PARAM;
    if (refused(algo)) return STATUS_NOT_SUPPORTED;
    *bytes = workspace_for(algo);
    return 0;
}

static void convolve(const TensorDesc* xd, const float* x, const FilterDesc* wd, const float* w,
                     const ConvDesc* cd, const TensorDesc* yd, float* y, float alpha, float beta) {
    int n, k, oh, ow, c, r, s;
    for (n = 0; n < yd->n; ++n)
        for (k = 0; k < yd->c; ++k)
            for (oh = 0; oh < yd->h; ++oh)
                for (ow = 0; ow < yd->w; ++ow) {
                    float sum = 0;
                    for (c = 0; c < xd->c; ++c)
                        for (r = 0; r < wd->r; ++r) {
                            int ih = oh * cd->u - cd->pad_h + r * cd->dil_h;
                            if (ih < 0 || ih >= xd->h) continue;
                            for (s = 0; s < wd->s; ++s) {
                                int iw = ow * cd->v - cd->pad_w + s * cd->dil_w;
                                if (iw < 0 || iw >= xd->w) continue;
                                sum += x[((n * xd->c + c) * xd->h + ih) * xd->w + iw] *
                                       w[((k * wd->c + c) * wd->r + r) * wd->s + s];
                            }
                        }
                    {
                        size_t at = (((size_t)n * yd->c + k) * yd->h + oh) * yd->w + ow;
                        y[at] = alpha * sum + (beta != 0 ? beta * y[at] : 0);
                    }
                }
}

#ifndef FAKE_OMIT_FORWARD
int cudnnConvolutionForward(Handle* handle, const void* alpha, const TensorDesc* xd,
                            const void* x, const FilterDesc* wd, const void* w,
                            const ConvDesc* cd, int algo, void* workspace, size_t workspace_bytes,
                            const void* beta, const TensorDesc* yd, void* y) {
    (void)handle;
    FAIL_IF_FORCED("cudnnConvolutionForward");
    if (algo < 0 || algo > 7) return STATUS_BAD_PARAM;
    if (refused(algo)) return STATUS_NOT_SUPPORTED;
    if (workspace_bytes < workspace_for(algo) || (workspace_for(algo) && !workspace))
        return STATUS_BAD_PARAM;
    if (cd->mode != 1) return STATUS_NOT_SUPPORTED; /* only cross-correlation is faked */
    convolve(xd, (const float*)x, wd, (const float*)w, cd, yd, (float*)y, *(const float*)alpha,
             *(const float*)beta);
    if (getenv("FAKE_CUDNN_WRONG")) {
        size_t count = (size_t)yd->n * yd->c * yd->h * yd->w;
        ((float*)y)[count / 2] += 0.5f;
    }
    return 0;
}
#endif

/* The heuristic's order. The real library commonly puts the precomputed implicit GEMM first;
 * this one puts GEMM first, so a test tells the heuristic's choice from the probe's fixed one. */
static const int heuristic_order[8] = {2, 1, 0, 6, 7, 4, 5, 3};

int cudnnGetConvolutionForwardAlgorithm_v7(Handle* handle, const TensorDesc* x,
                                           const FilterDesc* w, const ConvDesc* conv,
                                           const TensorDesc* y, int requested, int* returned,
                                           AlgoPerf* results) {
    int i;
    (void)handle, (void)x, (void)w, (void)y;
    trace("cudnnGetConvolutionForwardAlgorithm_v7");
    FAIL_IF_FORCED("cudnnGetConvolutionForwardAlgorithm_v7");
    *returned = requested < 8 ? requested : 8;
    for (i = 0; i < *returned; ++i) {
        memset(&results[i], 0, sizeof results[i]);
        results[i].algo = heuristic_order[i];
        results[i].status = 0;
        results[i].time = -1;
        results[i].memory = workspace_for(heuristic_order[i]);
        results[i].determinism = 1;
        results[i].mathType = conv->math;
    }
    return 0;
}

int cudnnFindConvolutionForwardAlgorithm(Handle* handle, const TensorDesc* x, const FilterDesc* w,
                                         const ConvDesc* conv, const TensorDesc* y, int requested,
                                         int* returned, AlgoPerf* results) {
    /* Times are made up, but distinct and shape-dependent, so the order is the probe's to keep. */
    double macs = (double)y->n * y->c * y->h * y->w * x->c * w->r * w->s;
    int i, j, count = requested < 8 ? requested : 8;
    (void)handle;
    trace("cudnnFindConvolutionForwardAlgorithm");
    FAIL_IF_FORCED("cudnnFindConvolutionForwardAlgorithm");
    for (i = 0; i < count; ++i) {
        memset(&results[i], 0, sizeof results[i]);
        results[i].algo = i;
        /* FFT cannot dilate, as in the real library */
        results[i].status = (i == 4 || i == 5) && (conv->dil_h > 1 || conv->dil_w > 1)
                                ? STATUS_NOT_SUPPORTED
                                : 0;
        results[i].time = (float)(macs / 1e9 * (1 + (i * 5 + x->c) % 8));
        results[i].memory = workspace_for(i);
        results[i].determinism = 1;
        results[i].mathType = conv->math;
    }
    /* sorted by time, failures last, as cuDNN documents */
    for (i = 1; i < count; ++i)
        for (j = i; j > 0; --j) {
            AlgoPerf* p = &results[j - 1];
            AlgoPerf* q = &results[j];
            int swap = (p->status != 0 && q->status == 0) ||
                       (p->status == 0 && q->status == 0 && q->time < p->time);
            if (swap) {
                AlgoPerf t = *p;
                *p = *q;
                *q = t;
            }
        }
    *returned = count;
    return 0;
}
#endif

/* The read-only version datum real sub-libraries export (cudnn_ops_infer_version = 0x091300). */
#ifdef FAKE_VERSION_SYMBOL
const unsigned FAKE_VERSION_SYMBOL = FAKE_VERSION_VALUE;
#endif

/* ---------------- front: forwards to the sub-libraries, loaded on first use ---------------- */
#ifdef FAKE_FRONT
#include <dlfcn.h>

static void* sub_symbol(const char* library, const char* name) {
    /* dlopen from here searches LD_LIBRARY_PATH, then this library's RUNPATH ($ORIGIN), then
     * the cache, exactly as the real front library's search does. */
    void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    void* symbol;
    if (!handle) {
        fprintf(stderr, "fake cudnn: %s\n", dlerror());
        return NULL;
    }
    symbol = dlsym(handle, name);
    return symbol;
}

#define FORWARD(lib, name, params, args)                                                          \
    int name params {                                                                             \
        int(*target) params;                                                                      \
        *(void**)(&target) = sub_symbol(lib, #name);                                              \
        if (!target) return STATUS_SUBLIBRARY_LOADING_FAILED;                                     \
        return target args;                                                                       \
    }

size_t cudnnGetVersion(void) {
    size_t (*target)(void);
    *(void**)(&target) = sub_symbol(GRAPH_LIB, "cudnnGetVersion");
    return target ? target() : 0;
}
size_t cudnnGetCudartVersion(void) {
    size_t (*target)(void);
    *(void**)(&target) = sub_symbol(GRAPH_LIB, "cudnnGetCudartVersion");
    return target ? target() : 0;
}
const char* cudnnGetErrorString(int status) {
    const char* (*target)(int);
    *(void**)(&target) = sub_symbol(GRAPH_LIB, "cudnnGetErrorString");
    return target ? target(status) : "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED";
}
FORWARD(GRAPH_LIB, cudnnCreate, (Handle * *h), (h))
FORWARD(GRAPH_LIB, cudnnDestroy, (Handle * h), (h))
FORWARD(OPS_LIB, cudnnCreateTensorDescriptor, (TensorDesc * *d), (d))
FORWARD(OPS_LIB, cudnnSetTensor4dDescriptor,
        (TensorDesc * d, int f, int t, int n, int c, int h, int w), (d, f, t, n, c, h, w))
FORWARD(OPS_LIB, cudnnDestroyTensorDescriptor, (TensorDesc * d), (d))
FORWARD(OPS_LIB, cudnnCreateFilterDescriptor, (FilterDesc * *d), (d))
FORWARD(OPS_LIB, cudnnSetFilter4dDescriptor,
        (FilterDesc * d, int t, int f, int k, int c, int r, int s), (d, t, f, k, c, r, s))
FORWARD(OPS_LIB, cudnnDestroyFilterDescriptor, (FilterDesc * d), (d))
FORWARD(CNN_LIB, cudnnCreateConvolutionDescriptor, (ConvDesc * *d), (d))
FORWARD(CNN_LIB, cudnnSetConvolution2dDescriptor,
        (ConvDesc * d, int ph, int pw, int u, int v, int dh, int dw, int m, int t),
        (d, ph, pw, u, v, dh, dw, m, t))
FORWARD(CNN_LIB, cudnnSetConvolutionMathType, (ConvDesc * d, int m), (d, m))
FORWARD(CNN_LIB, cudnnDestroyConvolutionDescriptor, (ConvDesc * d), (d))
FORWARD(CNN_LIB, cudnnGetConvolution2dForwardOutputDim,
        (const ConvDesc* c, const TensorDesc* x, const FilterDesc* w, int* n, int* k, int* h,
         int* wo),
        (c, x, w, n, k, h, wo))
FORWARD(CNN_LIB, cudnnGetConvolutionForwardAlgorithmMaxCount, (Handle * h, int* n), (h, n))
FORWARD(CNN_LIB, cudnnGetConvolutionForwardWorkspaceSize,
        (Handle * h, const TensorDesc* x, const FilterDesc* w, const ConvDesc* c,
         const TensorDesc* y, int a, size_t* b),
        (h, x, w, c, y, a, b))
FORWARD(CNN_LIB, cudnnGetConvolutionForwardAlgorithm_v7,
        (Handle * h, const TensorDesc* x, const FilterDesc* w, const ConvDesc* c,
         const TensorDesc* y, int req, int* ret, AlgoPerf* p),
        (h, x, w, c, y, req, ret, p))
FORWARD(CNN_LIB, cudnnFindConvolutionForwardAlgorithm,
        (Handle * h, const TensorDesc* x, const FilterDesc* w, const ConvDesc* c,
         const TensorDesc* y, int req, int* ret, AlgoPerf* p),
        (h, x, w, c, y, req, ret, p))
#ifndef FAKE_OMIT_FORWARD
FORWARD(CNN_LIB, cudnnConvolutionForward,
        (Handle * h, const void* al, const TensorDesc* xd, const void* x, const FilterDesc* wd,
         const void* w, const ConvDesc* cd, int algo, void* ws, size_t wsb, const void* be,
         const TensorDesc* yd, void* y),
        (h, al, xd, x, wd, w, cd, algo, ws, wsb, be, yd, y))
#endif
#endif

/* ---------------- the sub-libraries the probe never calls (adv, heuristic, engines...) ------ */
#if !defined(FAKE_FRONT) && !defined(FAKE_WITH_GRAPH) && !defined(FAKE_WITH_OPS) &&               \
    !defined(FAKE_WITH_CNN)
int fake_cudnn_empty_sublibrary = FAKE_MAJOR;
#endif
