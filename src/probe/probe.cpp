// cvm-probe's run: loads cuDNN and the CUDA runtime by their standard names, opens the device,
// creates the handle, then hands over to the checks (prober.h says where each lives).
#include "probe.h"

#include "prober.h"

#include "names.h"
#include "nccl_probe.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>

namespace cvm::probe {
namespace detail {

std::string Prober::cudnn_status(int status) const {
    std::string name;
    if (cudnn_.GetErrorString) {
        const char* text = cudnn_.GetErrorString(status);
        if (text) name = text;
    }
    if (name.empty() || name.find("UNKNOWN") != std::string::npos)
        name = cudnn_status_fallback_name(status);
    std::string text = name + " (" + std::to_string(status) + ")";
    if (is_sublibrary_status(status, cudnn_version_major(report_.cudnn_version)) &&
        std::find(sublibrary_statuses_.begin(), sublibrary_statuses_.end(), text) ==
            sublibrary_statuses_.end())
        sublibrary_statuses_.push_back(text);
    return text;
}

std::string Prober::cuda_error(int error) const {
    return cuda_error_text(cudart_, error);
}

bool Prober::load_cudnn() {
    cudnn_library_ =
        load_first(os::cudnn_names(options_.cudnn_major), "cudnnGetVersion", report_.cudnn);
    if (!cudnn_library_) {
        report_not_found(report_, "cuDNN", "libcudnn", report_.cudnn);
        return false;
    }
    SymbolResolver symbols(cudnn_library_);
    symbols.need(cudnn_.GetVersion, "cudnnGetVersion");
    symbols.want(cudnn_.GetCudartVersion, "cudnnGetCudartVersion");
    symbols.need(cudnn_.GetErrorString, "cudnnGetErrorString");
    symbols.need(cudnn_.Create, "cudnnCreate");
    symbols.need(cudnn_.Destroy, "cudnnDestroy");
    symbols.need(cudnn_.CreateTensorDescriptor, "cudnnCreateTensorDescriptor");
    symbols.need(cudnn_.SetTensor4dDescriptor, "cudnnSetTensor4dDescriptor");
    symbols.need(cudnn_.DestroyTensorDescriptor, "cudnnDestroyTensorDescriptor");
    symbols.need(cudnn_.CreateFilterDescriptor, "cudnnCreateFilterDescriptor");
    symbols.need(cudnn_.SetFilter4dDescriptor, "cudnnSetFilter4dDescriptor");
    symbols.need(cudnn_.DestroyFilterDescriptor, "cudnnDestroyFilterDescriptor");
    symbols.need(cudnn_.CreateConvolutionDescriptor, "cudnnCreateConvolutionDescriptor");
    symbols.need(cudnn_.SetConvolution2dDescriptor, "cudnnSetConvolution2dDescriptor");
    symbols.need(cudnn_.DestroyConvolutionDescriptor, "cudnnDestroyConvolutionDescriptor");
    symbols.want(cudnn_.SetConvolutionMathType, "cudnnSetConvolutionMathType");
    symbols.need(cudnn_.GetConvolution2dForwardOutputDim, "cudnnGetConvolution2dForwardOutputDim");
    symbols.want(cudnn_.GetConvolutionForwardAlgorithmMaxCount,
                 "cudnnGetConvolutionForwardAlgorithmMaxCount");
    // The algorithm search only with --benchmark: by default the checks run a fixed algorithm.
    if (options_.benchmark) {
        symbols.need(cudnn_.GetConvolutionForwardAlgorithm_v7,
                     "cudnnGetConvolutionForwardAlgorithm_v7");
        symbols.need(cudnn_.FindConvolutionForwardAlgorithm,
                     "cudnnFindConvolutionForwardAlgorithm");
    }
    symbols.need(cudnn_.GetConvolutionForwardWorkspaceSize,
                 "cudnnGetConvolutionForwardWorkspaceSize");
    symbols.need(cudnn_.ConvolutionForward, "cudnnConvolutionForward");

    if (cudnn_.GetVersion) report_.cudnn_version = static_cast<long long>(cudnn_.GetVersion());
    if (cudnn_.GetCudartVersion)
        report_.cudnn_cudart_version = static_cast<long long>(cudnn_.GetCudartVersion());

    if (!symbols.missing().empty()) {
        report_.add_problem(problem::kMissingSymbol,
                            report_.cudnn.name + " (" + report_.cudnn.path + ") lacks " +
                                join(symbols.missing(), ", ") +
                                ": it is not a complete cuDNN of the version its name says");
        return false;
    }
    int name_major = major_from_library_name(report_.cudnn.name);
    int version_major = cudnn_version_major(report_.cudnn_version);
    if (name_major > 0 && version_major != name_major) {
        report_.add_problem(problem::kVersionMismatch,
                            report_.cudnn.name + " (" + report_.cudnn.path + ") reports cuDNN " +
                                cudnn_version_text(report_.cudnn_version) + " (cudnnGetVersion " +
                                std::to_string(report_.cudnn_version) +
                                ") but its name promises cuDNN " + std::to_string(name_major) +
                                ": a renamed or mislinked library");
    }
    if (!options_.expect_cudnn_version.empty() && report_.cudnn_version >= 0) {
        // Compare as many numbers as both have (cudnnGetVersion knows three).
        std::string loaded = cudnn_version_text(report_.cudnn_version);
        std::string want = options_.expect_cudnn_version;
        std::size_t dots = 0, cut = 0;
        while (cut < want.size() && !(want[cut] == '.' && ++dots == 3))
            ++cut;
        want.resize(cut);
        if (loaded != want && loaded.rfind(want + ".", 0) != 0)
            report_.add_problem(problem::kNotSelected,
                                report_.cudnn.path + " reports cuDNN " + loaded +
                                    ", but the selection is cuDNN " +
                                    options_.expect_cudnn_version +
                                    ": the selected folder holds another build than cvm recorded; "
                                    "install or import that build again");
    }
    // CUDNN_FMA_MATH (cuDNN 8 and later) keeps FP32 convolutions off TF32 tensor cores, so the
    // tolerance below holds; cuDNN 7 has no TF32 and its default math is plain FP32 already.
    if (cudnn_.SetConvolutionMathType) {
        set_math_ = true;
        math_ = version_major >= 8 ? api::kCudnnFmaMath : api::kCudnnDefaultMath;
    }
    report_.math = math_type_name(math_);
    return true;
}

bool Prober::load_cudart() {
    std::vector<std::string> names;
    int preferred = options_.cudart_major;
    if (preferred <= 0 && report_.cudnn_cudart_version >= 1000)
        preferred = static_cast<int>(report_.cudnn_cudart_version / 1000);
    if (preferred > 0) names = os::cudart_names(preferred);
    if (options_.cudart_major <= 0)
        for (const auto& name : os::cudart_names(-1))
            if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    cudart_library_ = load_first(names, "cudaGetDeviceCount", report_.cudart);
    if (!cudart_library_) {
        report_not_found(report_, "The CUDA runtime", "libcudart", report_.cudart);
        return false;
    }
    SymbolResolver symbols(cudart_library_);
    symbols.need(cudart_.GetDeviceCount, "cudaGetDeviceCount");
    // CUDA 12 renamed the current ABI to _v2 and kept the old name for old callers.
    symbols.want(cudart_.GetDeviceProperties, "cudaGetDeviceProperties_v2");
    if (!cudart_.GetDeviceProperties)
        symbols.want(cudart_.GetDeviceProperties, "cudaGetDeviceProperties");
    symbols.need(cudart_.DeviceGetAttribute, "cudaDeviceGetAttribute");
    symbols.need(cudart_.DriverGetVersion, "cudaDriverGetVersion");
    symbols.need(cudart_.RuntimeGetVersion, "cudaRuntimeGetVersion");
    symbols.want(cudart_.SetDevice, "cudaSetDevice");
    symbols.need(cudart_.Malloc, "cudaMalloc");
    symbols.need(cudart_.Free, "cudaFree");
    symbols.need(cudart_.Memcpy, "cudaMemcpy");
    symbols.need(cudart_.DeviceSynchronize, "cudaDeviceSynchronize");
    symbols.want(cudart_.GetErrorName, "cudaGetErrorName");
    symbols.want(cudart_.GetErrorString, "cudaGetErrorString");
    symbols.want(cudart_.Memset, "cudaMemset");
    symbols.want(cudart_.StreamCreate, "cudaStreamCreate");
    symbols.want(cudart_.StreamSynchronize, "cudaStreamSynchronize");
    symbols.want(cudart_.StreamDestroy, "cudaStreamDestroy");
    symbols.want(cudart_.DeviceCanAccessPeer, "cudaDeviceCanAccessPeer");
    symbols.want(cudart_.DeviceGetPCIBusId, "cudaDeviceGetPCIBusId");
    symbols.want(cudart_.MallocHost, "cudaMallocHost");
    symbols.want(cudart_.FreeHost, "cudaFreeHost");
    if (!symbols.missing().empty()) {
        report_.add_problem(problem::kMissingSymbol, report_.cudart.name + " (" +
                                                         report_.cudart.path + ") lacks " +
                                                         join(symbols.missing(), ", ") +
                                                         ": it is not a complete CUDA runtime");
        return false;
    }
    int runtime = -1;
    if (cudart_.RuntimeGetVersion(&runtime) == api::kCudaSuccess) report_.runtime_version = runtime;
    if (report_.cudnn_cudart_version >= 1000 && runtime >= 1000 &&
        report_.cudnn_cudart_version / 1000 != runtime / 1000)
        report_.add_problem(problem::kVersionMismatch,
                            "cuDNN (" + report_.cudnn.path + ") was built for CUDA " +
                                cuda_version_text(report_.cudnn_cudart_version) +
                                " but the CUDA runtime loaded beside it is CUDA " +
                                cuda_version_text(runtime) + " (" + report_.cudart.path +
                                "): use a cuDNN built for CUDA " + std::to_string(runtime / 1000) +
                                " or the CUDA " +
                                std::to_string(report_.cudnn_cudart_version / 1000) +
                                " runtime, e.g. `cvm use CUDA+CUDNN` with matching majors");
    return true;
}

bool Prober::open_device() {
    int driver = -1;
    int error = cudart_.DriverGetVersion(&driver);
    if (error != api::kCudaSuccess) {
        report_.add_problem(problem::kCudaError,
                            "cudaDriverGetVersion failed: " + cuda_error(error));
        return false;
    }
    report_.driver_version = driver;
    int count = 0;
    error = cudart_.GetDeviceCount(&count);
    const std::string cudnn_note =
        cudnn_usable_ ? " cuDNN itself loaded and answered; only the GPU side is missing." : "";
    if (error != api::kCudaSuccess) {
        if (driver == 0 || error == api::kCudaErrorStubLibrary) {
            report_.add_problem(
                problem::kNoDriver,
                "no NVIDIA driver: cudaGetDeviceCount returned " + cuda_error(error) +
                    (driver == 0 ? "; cudaDriverGetVersion reports 0, so the driver library "
                                   "(libcuda.so.1 / nvcuda.dll) could not be loaded."
                                 : ".") +
                    cudnn_note);
        } else if (error == api::kCudaErrorNoDevice) {
            report_.add_problem(problem::kNoDevice,
                                "no CUDA device: cudaGetDeviceCount returned " + cuda_error(error) +
                                    "; the driver supports CUDA " + cuda_version_text(driver) +
                                    "." + cudnn_note);
        } else {
            std::string why = error == api::kCudaErrorInsufficientDriver
                                  ? "; the driver supports CUDA " + cuda_version_text(driver) +
                                        " but the runtime is CUDA " +
                                        cuda_version_text(report_.runtime_version) +
                                        ": update the driver or select an older toolkit"
                                  : "";
            report_.add_problem(problem::kCudaError,
                                "cudaGetDeviceCount returned " + cuda_error(error) + why);
        }
        return false;
    }
    report_.device_count = count;
    if (count <= 0) {
        report_.add_problem(problem::kNoDevice, "no CUDA device: cudaGetDeviceCount reports 0");
        return false;
    }
    if (options_.device >= count) {
        report_.add_problem(problem::kNoDevice, "device " + std::to_string(options_.device) +
                                                    " was asked for; there are " +
                                                    std::to_string(count));
        return false;
    }
    // Every device's compute capability (a machine may mix GPUs), before the one probed is chosen.
    for (int i = 0; i < count; ++i) {
        DeviceInfo d;
        d.index = i;
        if (cudart_.GetDeviceProperties) {
            std::vector<char> properties(api::kDevicePropBufferSize, 0);
            if (cudart_.GetDeviceProperties(properties.data(), i) == api::kCudaSuccess)
                d.name.assign(properties.data(),
                              std::find(properties.data(), properties.data() + 256, '\0'));
        }
        int ma = -1, mi = -1;
        if (cudart_.DeviceGetAttribute(&ma, api::kCudaDevAttrComputeCapabilityMajor, i) ==
                api::kCudaSuccess &&
            cudart_.DeviceGetAttribute(&mi, api::kCudaDevAttrComputeCapabilityMinor, i) ==
                api::kCudaSuccess) {
            d.cc_major = ma;
            d.cc_minor = mi;
        }
        report_.devices.push_back(std::move(d));
    }
    report_.device_index = options_.device;
    if (cudart_.SetDevice) {
        error = cudart_.SetDevice(options_.device);
        if (error != api::kCudaSuccess) {
            report_.add_problem(problem::kCudaError, "cudaSetDevice(" +
                                                         std::to_string(options_.device) +
                                                         ") failed: " + cuda_error(error));
            return false;
        }
    }
    if (cudart_.GetDeviceProperties) {
        std::vector<char> properties(api::kDevicePropBufferSize, 0);
        if (cudart_.GetDeviceProperties(properties.data(), options_.device) == api::kCudaSuccess)
            report_.device_name.assign(properties.data(),
                                       std::find(properties.data(), properties.data() + 256, '\0'));
    }
    int major = -1, minor = -1;
    error = cudart_.DeviceGetAttribute(&major, api::kCudaDevAttrComputeCapabilityMajor,
                                       options_.device);
    if (error == api::kCudaSuccess)
        error = cudart_.DeviceGetAttribute(&minor, api::kCudaDevAttrComputeCapabilityMinor,
                                           options_.device);
    if (error != api::kCudaSuccess) {
        report_.add_problem(problem::kCudaError,
                            "cudaDeviceGetAttribute (compute capability) failed: " +
                                cuda_error(error));
        return false;
    }
    report_.cc_major = major;
    report_.cc_minor = minor;
    return true;
}

bool Prober::create_handle() {
    int status = cudnn_.Create(&handle_);
    if (status != api::kCudnnStatusSuccess) {
        handle_ = nullptr;
        report_.add_problem(problem::kCudnnError,
                            "cudnnCreate failed with " + cudnn_status(status) +
                                "; the driver and device answer, so the fault is in cuDNN (" +
                                report_.cudnn.path + ") or its sub-libraries");
        return false;
    }
    return true;
}

void Prober::run() {
    auto start = Clock::now();
    if (auto eager = eager_module_loading()) report_.warnings.push_back(*eager);
    // One hardware work queue instead of the default eight, set before the runtime starts the
    // driver: the checks use one stream, and the context is made and torn down faster (on an
    // H200 the probe's median wall went from 0.45-0.48 s to 0.35 s, 9 runs interleaved). Not
    // with NCCL, whose streams must overlap; a value the user set is kept.
    if (!options_.nccl) os::set_env_if_unset("CUDA_DEVICE_MAX_CONNECTIONS", "1");
    report_.cudnn_skipped = options_.skip_cudnn;
    if (!options_.skip_cudnn) cudnn_usable_ = load_cudnn();
    cudart_usable_ = load_cudart();
    report_.timings.load_ms = ms_since(start);
    auto init_start = Clock::now();
    bool device = cudart_usable_ && open_device();
    if (device && cudnn_usable_ && create_handle()) {
        report_.timings.init_ms = ms_since(init_start);
        run_checks();
        if (options_.benchmark) run_benchmarks();
    } else {
        report_.timings.init_ms = ms_since(init_start);
    }
    if (options_.nccl) {
        auto nccl_start = Clock::now();
        probe_nccl(options_, cudart_usable_ ? &cudart_ : nullptr, device ? report_.device_count : 0,
                   report_.runtime_version, report_);
        report_.timings.nccl_ms = ms_since(nccl_start);
    }
    inspect_modules();
    report_.timings.total_ms = ms_since(start);
}

} // namespace detail

void run_probe(const Options& options, const std::function<void(const Report&)>& deliver) {
    Report report;
    detail::Prober prober(options, report);
    prober.run();
    deliver(report);
}

} // namespace cvm::probe
