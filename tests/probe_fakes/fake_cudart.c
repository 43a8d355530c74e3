/* A fake CUDA runtime for testing cvm-probe without a GPU: "device memory" is host memory, so
 * the fake cuDNN can run its CPU convolution on the pointers the probe hands it.
 *
 * Build: cc -shared -fPIC -DFAKE_RUNTIME_VERSION=13000 -Wl,-soname,libcudart.so.13 \
 *           -o libcudart.so.13 fake_cudart.c
 * Environment switches, read at each call:
 *   FAKE_CUDART_MODE=no_driver   no driver: cudaDriverGetVersion gives 0, device count fails (35)
 *   FAKE_CUDART_MODE=no_device   a driver but no device (cudaErrorNoDevice, 100)
 *   FAKE_CUDART_MODE=old_driver  the driver supports CUDA 11.0 only (35, driver version 11000)
 *   FAKE_CUDART_DEVICES=9.0,8.6  the devices' compute capabilities (default: one, 9.0); device 0
 *                                runs the convolutions, every one holds memory ("Fake GPU N")
 *   FAKE_CUDART_NO_PEER=1        no device reaches another's memory (cudaDeviceCanAccessPeer 0)
 *   FAKE_CUDART_MALLOC_LIMIT=N   cudaMalloc of more than N bytes fails (out of memory, 2)
 *   FAKE_CUDART_ENV_LOG=FILE     cudaGetDeviceCount, where the real runtime starts the driver,
 *                                appends CUDA_DEVICE_MAX_CONNECTIONS's value then (or "unset")
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FAKE_RUNTIME_VERSION
#define FAKE_RUNTIME_VERSION 13000
#endif
#ifndef FAKE_DRIVER_VERSION
#define FAKE_DRIVER_VERSION 13000
#endif

static int mode_is(const char* wanted) {
    const char* mode = getenv("FAKE_CUDART_MODE");
    return mode && strcmp(mode, wanted) == 0;
}

int cudaDriverGetVersion(int* version) {
    *version = mode_is("no_driver") ? 0 : mode_is("old_driver") ? 11000 : FAKE_DRIVER_VERSION;
    return 0;
}

int cudaRuntimeGetVersion(int* version) {
    *version = FAKE_RUNTIME_VERSION;
    return 0;
}

/* The compute capability of `device` (major * 10 + minor) from FAKE_CUDART_DEVICES; -1 when
 * there is no such device. */
static int device_cc(int device) {
    const char* list = getenv("FAKE_CUDART_DEVICES");
    if (!list || !*list) return device == 0 ? 90 : -1;
    for (int i = 0; *list; ++i) {
        int major = atoi(list);
        const char* dot = strchr(list, '.');
        int minor = dot ? atoi(dot + 1) : 0;
        if (i == device) return major * 10 + minor;
        const char* comma = strchr(list, ',');
        if (!comma) break;
        list = comma + 1;
    }
    return -1;
}

int cudaGetDeviceCount(int* count) {
    const char* log = getenv("FAKE_CUDART_ENV_LOG");
    FILE* f = log && *log ? fopen(log, "a") : NULL;
    if (f) {
        const char* connections = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
        fprintf(f, "%s\n", connections ? connections : "unset");
        fclose(f);
    }
    *count = 0;
    if (mode_is("no_driver") || mode_is("old_driver")) return 35;
    if (mode_is("no_device")) return 100;
    while (device_cc(*count) >= 0) ++*count;
    return 0;
}

static int current_device = 0;

int cudaSetDevice(int device) {
    if (device_cc(device) < 0) return 101;
    current_device = device;
    return 0;
}

int cudaGetDevice(int* device) {
    *device = current_device;
    return 0;
}

int cudaDeviceCanAccessPeer(int* can, int device, int peer) {
    if (device_cc(device) < 0 || device_cc(peer) < 0) return 101;
    *can = device != peer && !getenv("FAKE_CUDART_NO_PEER");
    return 0;
}

int cudaDeviceGetPCIBusId(char* bus_id, int length, int device) {
    if (device_cc(device) < 0) return 101;
    snprintf(bus_id, (size_t)length, "0000:%02X:00.0", 0x18 + device);
    return 0;
}

typedef struct {
    int device;
} Stream;

int cudaStreamCreate(Stream** stream) {
    *stream = (Stream*)malloc(sizeof(Stream));
    (*stream)->device = current_device;
    return 0;
}

int cudaStreamSynchronize(Stream* stream) {
    return stream && stream->device == current_device ? 0 : 400;
}

int cudaStreamDestroy(Stream* stream) {
    free(stream);
    return 0;
}

int cudaMemset(void* pointer, int value, size_t bytes) {
    memset(pointer, value, bytes);
    return 0;
}

int cudaMallocHost(void** pointer, size_t bytes) {
    *pointer = malloc(bytes ? bytes : 1);
    return *pointer ? 0 : 2;
}

int cudaFreeHost(void* pointer) {
    free(pointer);
    return 0;
}

int cudaGetDeviceProperties(void* properties, int device) {
    if (device_cc(device) < 0) return 101;
    memset(properties, 0, 256);
    if (device == 0)
        strcpy((char*)properties, "Fake GPU (CPU convolution)");
    else
        strcpy((char*)properties, "Fake GPU 1");
    if (device > 1) ((char*)properties)[9] = (char)('0' + device % 10);
    return 0;
}

int cudaDeviceGetAttribute(int* value, int attribute, int device) {
    int cc = device_cc(device);
    if (cc < 0) return 101;
    /* 75 = cudaDevAttrComputeCapabilityMajor, 76 = ...Minor */
    *value = attribute == 75 ? cc / 10 : attribute == 76 ? cc % 10 : 0;
    return 0;
}

int cudaMalloc(void** pointer, size_t bytes) {
    const char* limit = getenv("FAKE_CUDART_MALLOC_LIMIT");
    if (limit && *limit && bytes > strtoull(limit, NULL, 10)) return 2;
    *pointer = malloc(bytes ? bytes : 1);
    return *pointer ? 0 : 2;
}

int cudaFree(void* pointer) {
    free(pointer);
    return 0;
}

int cudaMemcpy(void* destination, const void* source, size_t bytes, int kind) {
    (void)kind;
    memcpy(destination, source, bytes);
    return 0;
}

int cudaDeviceSynchronize(void) { return 0; }

const char* cudaGetErrorName(int error) {
    switch (error) {
    case 0: return "cudaSuccess";
    case 2: return "cudaErrorMemoryAllocation";
    case 35: return "cudaErrorInsufficientDriver";
    case 100: return "cudaErrorNoDevice";
    case 101: return "cudaErrorInvalidDevice";
    case 400:
        return "cudaErrorInvalidResourceHandle";
    default: return "cudaErrorUnknown";
    }
}

const char* cudaGetErrorString(int error) {
    switch (error) {
    case 0: return "no error";
    case 35: return "CUDA driver version is insufficient for CUDA runtime version";
    case 100: return "no CUDA-capable device is detected";
    default: return "fake error";
    }
}
