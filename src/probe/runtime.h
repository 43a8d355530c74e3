#pragma once
// What the cuDNN and NCCL parts of the probe share: loading a library by its standard names,
// resolving its functions by name, the CUDA runtime's functions, and naming its errors.

#include "api.h"
#include "os.h"
#include "report.h"

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

namespace cvm::probe {

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string join(const std::vector<std::string>& items, const std::string& separator);

// dlsym returns an object pointer; copying its bytes into the function pointer avoids the
// conditionally-supported cast.
template <typename F> bool resolve(os::LibraryHandle library, const char* name, F& function) {
    static_assert(sizeof(F) == sizeof(void*), "function pointers must be pointer-sized");
    void* address = os::find_symbol(library, name);
    function = nullptr;
    if (address) std::memcpy(&function, &address, sizeof function);
    return function != nullptr;
}

// Collects the names of symbols a library lacks.
class SymbolResolver {
public:
    explicit SymbolResolver(os::LibraryHandle library) : library_(library) {}
    template <typename F> void need(F& function, const char* name) {
        if (!resolve(library_, name, function)) missing_.push_back(name);
    }
    template <typename F> void want(F& function, const char* name) {
        resolve(library_, name, function);
    }
    const std::vector<std::string>& missing() const { return missing_; }

private:
    os::LibraryHandle library_;
    std::vector<std::string> missing_;
};

// Opens the first of `names` that loads, recording every attempt in `info`.
os::LibraryHandle load_first(const std::vector<std::string>& names, const char* any_symbol,
                             LibraryInfo& info);

// A library_not_found problem for `what` (e.g. "cuDNN"), with the folders searched and the
// loader cache's entries starting with `cache_prefix`.
void report_not_found(Report& report, const char* what, const char* cache_prefix,
                      const LibraryInfo& info);

struct CudartApi {
    api::cudaGetDeviceCount_t GetDeviceCount = nullptr;
    api::cudaGetDeviceProperties_t GetDeviceProperties = nullptr;
    api::cudaDeviceGetAttribute_t DeviceGetAttribute = nullptr;
    api::cudaDriverGetVersion_t DriverGetVersion = nullptr;
    api::cudaRuntimeGetVersion_t RuntimeGetVersion = nullptr;
    api::cudaSetDevice_t SetDevice = nullptr;
    api::cudaMalloc_t Malloc = nullptr;
    api::cudaFree_t Free = nullptr;
    api::cudaMemcpy_t Memcpy = nullptr;
    api::cudaDeviceSynchronize_t DeviceSynchronize = nullptr;
    api::cudaGetErrorName_t GetErrorName = nullptr;
    api::cudaGetErrorString_t GetErrorString = nullptr;
    // What the NCCL all-reduce needs beyond the convolutions (resolved where present).
    api::cudaMemset_t Memset = nullptr;
    api::cudaStreamCreate_t StreamCreate = nullptr;
    api::cudaStreamSynchronize_t StreamSynchronize = nullptr;
    api::cudaStreamDestroy_t StreamDestroy = nullptr;
    api::cudaDeviceCanAccessPeer_t DeviceCanAccessPeer = nullptr;
    api::cudaDeviceGetPCIBusId_t DeviceGetPCIBusId = nullptr;
    api::cudaMallocHost_t MallocHost = nullptr;
    api::cudaFreeHost_t FreeHost = nullptr;
};

// "cudaErrorNoDevice (100): no CUDA-capable device is detected"; the library's own names where it
// has them.
std::string cuda_error_text(const CudartApi& cudart, int error);

} // namespace cvm::probe
