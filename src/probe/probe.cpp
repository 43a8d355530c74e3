#include "probe.h"

#ifndef _WIN32
#include "binary/elf_version_symbol.h"
#endif

#include "api.h"
#include "names.h"
#include "nccl_probe.h"
#include "os.h"
#include "runtime.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <optional>

namespace cvm::probe {
namespace {

struct CudnnApi {
    api::cudnnGetVersion_t GetVersion = nullptr;
    api::cudnnGetCudartVersion_t GetCudartVersion = nullptr;
    api::cudnnGetErrorString_t GetErrorString = nullptr;
    api::cudnnCreate_t Create = nullptr;
    api::cudnnDestroy_t Destroy = nullptr;
    api::cudnnCreateTensorDescriptor_t CreateTensorDescriptor = nullptr;
    api::cudnnSetTensor4dDescriptor_t SetTensor4dDescriptor = nullptr;
    api::cudnnDestroyTensorDescriptor_t DestroyTensorDescriptor = nullptr;
    api::cudnnCreateFilterDescriptor_t CreateFilterDescriptor = nullptr;
    api::cudnnSetFilter4dDescriptor_t SetFilter4dDescriptor = nullptr;
    api::cudnnDestroyFilterDescriptor_t DestroyFilterDescriptor = nullptr;
    api::cudnnCreateConvolutionDescriptor_t CreateConvolutionDescriptor = nullptr;
    api::cudnnSetConvolution2dDescriptor_t SetConvolution2dDescriptor = nullptr;
    api::cudnnDestroyConvolutionDescriptor_t DestroyConvolutionDescriptor = nullptr;
    api::cudnnSetConvolutionMathType_t SetConvolutionMathType = nullptr;
    api::cudnnGetConvolution2dForwardOutputDim_t GetConvolution2dForwardOutputDim = nullptr;
    api::cudnnGetConvolutionForwardAlgorithmMaxCount_t GetConvolutionForwardAlgorithmMaxCount =
        nullptr;
    api::cudnnGetConvolutionForwardAlgorithm_v7_t GetConvolutionForwardAlgorithm_v7 = nullptr;
    api::cudnnFindConvolutionForwardAlgorithm_t FindConvolutionForwardAlgorithm = nullptr;
    api::cudnnGetConvolutionForwardWorkspaceSize_t GetConvolutionForwardWorkspaceSize = nullptr;
    api::cudnnConvolutionForward_t ConvolutionForward = nullptr;
};

class Prober {
public:
    Prober(const Options& options, Report& report) : options_(options), report_(report) {}
    ~Prober() {
        if (handle_ && cudnn_.Destroy) cudnn_.Destroy(handle_);
    }
    Prober(const Prober&) = delete;
    Prober& operator=(const Prober&) = delete;

    void run();

private:
    bool load_cudnn();
    bool load_cudart();
    bool open_device();
    bool create_handle();
    void run_checks();
    void run_benchmarks();
    void inspect_modules();
    void check_sublibrary_versions();
    void check_selected(const char* what, const std::vector<std::string>& expected,
                        bool (*is_kind)(const std::string&));

    std::string cudnn_status(int status) const;
    std::string cuda_error(int error) const;

    const Options& options_;
    Report& report_;
    os::LibraryHandle cudnn_library_ = nullptr;
    os::LibraryHandle cudart_library_ = nullptr;
    CudnnApi cudnn_;
    CudartApi cudart_;
    bool cudnn_usable_ = false;
    bool cudart_usable_ = false;
    api::cudnnHandle handle_ = nullptr;
    int math_ = api::kCudnnDefaultMath;
    bool set_math_ = false;
    // The texts of the statuses seen that say a sub-library failed ("..._LOADING_FAILED (1008)").
    mutable std::vector<std::string> sublibrary_statuses_;

    friend class ShapeSetup;
};

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
        std::find(sublibrary_statuses_.begin(), sublibrary_statuses_.end(), text) == sublibrary_statuses_.end())
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
                                    ", but the selection is cuDNN " + options_.expect_cudnn_version +
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
                                " or the CUDA " + std::to_string(report_.cudnn_cudart_version / 1000) +
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
                d.name.assign(properties.data(), std::find(properties.data(), properties.data() + 256, '\0'));
        }
        int ma = -1, mi = -1;
        if (cudart_.DeviceGetAttribute(&ma, api::kCudaDevAttrComputeCapabilityMajor, i) == api::kCudaSuccess &&
            cudart_.DeviceGetAttribute(&mi, api::kCudaDevAttrComputeCapabilityMinor, i) == api::kCudaSuccess) {
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

// Device memory that frees itself.
class DeviceBuffer {
public:
    DeviceBuffer(const CudartApi& cudart) : cudart_(cudart) {}
    ~DeviceBuffer() {
        if (pointer_) cudart_.Free(pointer_);
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    int allocate(std::size_t bytes) {
        if (pointer_) cudart_.Free(pointer_);
        pointer_ = nullptr;
        if (bytes == 0) return api::kCudaSuccess;
        return cudart_.Malloc(&pointer_, bytes);
    }
    void* get() const { return pointer_; }

private:
    const CudartApi& cudart_;
    void* pointer_ = nullptr;
};

// Descriptors and device buffers for one shape.
class ShapeSetup {
public:
    ShapeSetup(Prober& prober, const ConvShape& shape, std::uint32_t seed)
        : p_(prober), shape_(shape), x_dev_(prober.cudart_), w_dev_(prober.cudart_),
          y_dev_(prober.cudart_), workspace_(prober.cudart_) {
        x_ = test_values(shape.input_size(), seed);
        w_ = test_values(shape.filter_size(), seed + 7919);
    }
    ~ShapeSetup() {
        const CudnnApi& c = p_.cudnn_;
        if (x_desc_) c.DestroyTensorDescriptor(x_desc_);
        if (y_desc_) c.DestroyTensorDescriptor(y_desc_);
        if (w_desc_) c.DestroyFilterDescriptor(w_desc_);
        if (conv_desc_) c.DestroyConvolutionDescriptor(conv_desc_);
    }
    ShapeSetup(const ShapeSetup&) = delete;
    ShapeSetup& operator=(const ShapeSetup&) = delete;

    // Returns an error text naming the failed call, or empty. `kind` receives the problem kind.
    std::string prepare(std::string& kind);
    // Runs one algorithm with `math` and compares. Returns an error text, or empty.
    std::string run(int algorithm, int math, std::size_t max_checked, ConvolutionRun& out,
                    std::string& kind);
    std::vector<api::cudnnConvolutionFwdAlgoPerf> heuristic(std::string& error);
    std::vector<api::cudnnConvolutionFwdAlgoPerf> find(std::string& error);

private:
    std::string cudnn_failed(const char* call, int status) const {
        return std::string(call) + " returned " + p_.cudnn_status(status);
    }
    std::string cuda_failed(const char* call, int error) const {
        return std::string(call) + " returned " + p_.cuda_error(error);
    }
    int algorithm_slots() const;

    Prober& p_;
    ConvShape shape_;
    std::vector<float> x_, w_;
    api::cudnnTensorDescriptor x_desc_ = nullptr, y_desc_ = nullptr;
    api::cudnnFilterDescriptor w_desc_ = nullptr;
    api::cudnnConvolutionDescriptor conv_desc_ = nullptr;
    DeviceBuffer x_dev_, w_dev_, y_dev_, workspace_;
};

std::string ShapeSetup::prepare(std::string& kind) {
    const CudnnApi& c = p_.cudnn_;
    const CudartApi& rt = p_.cudart_;
    const ConvShape& s = shape_;
    kind = problem::kCudnnError;
    int st = c.CreateTensorDescriptor(&x_desc_);
    if (st) return x_desc_ = nullptr, cudnn_failed("cudnnCreateTensorDescriptor", st);
    st = c.SetTensor4dDescriptor(x_desc_, api::kCudnnTensorNchw, api::kCudnnDataFloat, s.n, s.c,
                                 s.h, s.w);
    if (st) return cudnn_failed("cudnnSetTensor4dDescriptor", st);
    st = c.CreateFilterDescriptor(&w_desc_);
    if (st) return w_desc_ = nullptr, cudnn_failed("cudnnCreateFilterDescriptor", st);
    st = c.SetFilter4dDescriptor(w_desc_, api::kCudnnDataFloat, api::kCudnnTensorNchw, s.k, s.c,
                                 s.r, s.s);
    if (st) return cudnn_failed("cudnnSetFilter4dDescriptor", st);
    st = c.CreateConvolutionDescriptor(&conv_desc_);
    if (st) return conv_desc_ = nullptr, cudnn_failed("cudnnCreateConvolutionDescriptor", st);
    st = c.SetConvolution2dDescriptor(conv_desc_, s.pad_h, s.pad_w, s.stride_h, s.stride_w,
                                      s.dilation_h, s.dilation_w, api::kCudnnCrossCorrelation,
                                      api::kCudnnDataFloat);
    if (st) return cudnn_failed("cudnnSetConvolution2dDescriptor", st);
    if (p_.set_math_) {
        st = c.SetConvolutionMathType(conv_desc_, p_.math_);
        if (st) return cudnn_failed("cudnnSetConvolutionMathType", st);
    }
    int n = 0, k = 0, h = 0, w = 0;
    st = c.GetConvolution2dForwardOutputDim(conv_desc_, x_desc_, w_desc_, &n, &k, &h, &w);
    if (st) return cudnn_failed("cudnnGetConvolution2dForwardOutputDim", st);
    if (n != s.n || k != s.k || h != s.out_h() || w != s.out_w()) {
        kind = problem::kWrongResult;
        return "cudnnGetConvolution2dForwardOutputDim gives " + std::to_string(n) + "x" +
               std::to_string(k) + "x" + std::to_string(h) + "x" + std::to_string(w) +
               ", the reference " + std::to_string(s.n) + "x" + std::to_string(s.k) + "x" +
               std::to_string(s.out_h()) + "x" + std::to_string(s.out_w());
    }
    st = c.CreateTensorDescriptor(&y_desc_);
    if (st) return y_desc_ = nullptr, cudnn_failed("cudnnCreateTensorDescriptor", st);
    st = c.SetTensor4dDescriptor(y_desc_, api::kCudnnTensorNchw, api::kCudnnDataFloat, n, k, h, w);
    if (st) return cudnn_failed("cudnnSetTensor4dDescriptor", st);

    kind = problem::kCudaError;
    int e = x_dev_.allocate(x_.size() * sizeof(float));
    if (e == 0) e = w_dev_.allocate(w_.size() * sizeof(float));
    if (e == 0) e = y_dev_.allocate(s.output_size() * sizeof(float));
    if (e) return cuda_failed("cudaMalloc", e);
    e = rt.Memcpy(x_dev_.get(), x_.data(), x_.size() * sizeof(float), api::kCudaMemcpyHostToDevice);
    if (e == 0)
        e = rt.Memcpy(w_dev_.get(), w_.data(), w_.size() * sizeof(float),
                      api::kCudaMemcpyHostToDevice);
    if (e) return cuda_failed("cudaMemcpy (host to device)", e);
    kind.clear();
    return {};
}

int ShapeSetup::algorithm_slots() const {
    int count = api::kCudnnFwdAlgoCount;
    if (p_.cudnn_.GetConvolutionForwardAlgorithmMaxCount) {
        int reported = 0;
        if (p_.cudnn_.GetConvolutionForwardAlgorithmMaxCount(p_.handle_, &reported) == 0 &&
            reported > 0)
            count = std::min(reported, 64);
    }
    return count;
}

std::vector<api::cudnnConvolutionFwdAlgoPerf> ShapeSetup::heuristic(std::string& error) {
    std::vector<api::cudnnConvolutionFwdAlgoPerf> results(
        static_cast<std::size_t>(algorithm_slots()));
    int returned = 0;
    int st = p_.cudnn_.GetConvolutionForwardAlgorithm_v7(p_.handle_, x_desc_, w_desc_, conv_desc_,
                                                         y_desc_, static_cast<int>(results.size()),
                                                         &returned, results.data());
    if (st) {
        error = cudnn_failed("cudnnGetConvolutionForwardAlgorithm_v7", st);
        return {};
    }
    results.resize(
        static_cast<std::size_t>(std::clamp(returned, 0, static_cast<int>(results.size()))));
    return results;
}

std::vector<api::cudnnConvolutionFwdAlgoPerf> ShapeSetup::find(std::string& error) {
    std::vector<api::cudnnConvolutionFwdAlgoPerf> results(
        static_cast<std::size_t>(algorithm_slots()));
    int returned = 0;
    int st = p_.cudnn_.FindConvolutionForwardAlgorithm(p_.handle_, x_desc_, w_desc_, conv_desc_,
                                                       y_desc_, static_cast<int>(results.size()),
                                                       &returned, results.data());
    if (st) {
        error = cudnn_failed("cudnnFindConvolutionForwardAlgorithm", st);
        return {};
    }
    results.resize(
        static_cast<std::size_t>(std::clamp(returned, 0, static_cast<int>(results.size()))));
    // cuDNN documents them sorted by time; sort anyway, failures last.
    std::stable_sort(results.begin(), results.end(), [](const auto& a, const auto& b) {
        if ((a.status == 0) != (b.status == 0)) return a.status == 0;
        return a.status == 0 && a.time < b.time;
    });
    return results;
}

std::string ShapeSetup::run(int algorithm, int math, std::size_t max_checked, ConvolutionRun& out,
                            std::string& kind) {
    const CudnnApi& c = p_.cudnn_;
    const CudartApi& rt = p_.cudart_;
    out.algorithm = forward_algorithm_name(algorithm);
    out.math = math_type_name(math);
    kind = problem::kCudnnError;
    if (p_.set_math_) {
        int st = c.SetConvolutionMathType(conv_desc_, math);
        if (st) return cudnn_failed("cudnnSetConvolutionMathType", st);
    }
    std::size_t workspace = 0;
    int st = c.GetConvolutionForwardWorkspaceSize(p_.handle_, x_desc_, w_desc_, conv_desc_, y_desc_,
                                                  algorithm, &workspace);
    if (st) return cudnn_failed("cudnnGetConvolutionForwardWorkspaceSize", st);
    out.workspace_bytes = workspace;
    kind = problem::kCudaError;
    int e = workspace_.allocate(workspace);
    if (e) return cuda_failed("cudaMalloc (workspace)", e);
    // NaN everywhere first: an algorithm that leaves outputs unwritten cannot pass.
    std::vector<float> y(shape_.output_size(), std::numeric_limits<float>::quiet_NaN());
    e = rt.Memcpy(y_dev_.get(), y.data(), y.size() * sizeof(float), api::kCudaMemcpyHostToDevice);
    if (e) return cuda_failed("cudaMemcpy (host to device)", e);
    const float alpha = 1.0f, beta = 0.0f;
    auto start = Clock::now();
    kind = problem::kCudnnError;
    st = c.ConvolutionForward(p_.handle_, &alpha, x_desc_, x_dev_.get(), w_desc_, w_dev_.get(),
                              conv_desc_, algorithm, workspace_.get(), workspace, &beta, y_desc_,
                              y_dev_.get());
    if (st) return cudnn_failed("cudnnConvolutionForward", st);
    kind = problem::kCudaError;
    e = rt.DeviceSynchronize();
    out.time_ms = ms_since(start);
    if (e) return cuda_failed("cudaDeviceSynchronize after cudnnConvolutionForward", e);
    e = rt.Memcpy(y.data(), y_dev_.get(), y.size() * sizeof(float), api::kCudaMemcpyDeviceToHost);
    if (e) return cuda_failed("cudaMemcpy (device to host)", e);
    out.ran = true;
    out.comparison = compare_with_reference(shape_, x_, w_, y, max_checked);
    kind.clear();
    return {};
}

std::string describe_mismatch(const ConvShape& shape, const std::string& algorithm,
                              const Comparison& cmp) {
    char buffer[160];
    std::snprintf(buffer, sizeof buffer,
                  "max error %.3g against max |reference| %.3g (relative %.3g > %g)",
                  cmp.max_abs_error, cmp.max_abs_reference, cmp.relative_error, kRelativeTolerance);
    std::string text = "convolution " + shape.describe() + " with " + algorithm +
                       " does not match the CPU reference: ";
    if (cmp.non_finite)
        text += std::to_string(cmp.non_finite) + " of " + std::to_string(cmp.checked) +
                " outputs are NaN or infinite";
    else
        text += buffer;
    return text;
}

// The algorithms the checks run without --benchmark, in order: the implicit precomputed GEMM,
// which cuDNN's heuristics pick first for these shapes on every recent GPU, then the implicit
// GEMM, which supports every convolution. Asking the heuristics costs about 260 ms a process on
// an H200 (cuDNN 9 builds its engine lists then), more than the convolutions themselves.
std::vector<api::cudnnConvolutionFwdAlgoPerf> fixed_algorithms() {
    std::vector<api::cudnnConvolutionFwdAlgoPerf> out;
    for (int algo : {api::kCudnnFwdAlgoImplicitPrecompGemm, api::kCudnnFwdAlgoImplicitGemm}) {
        api::cudnnConvolutionFwdAlgoPerf perf{};
        perf.algo = algo;
        out.push_back(perf);
    }
    return out;
}

void Prober::run_checks() {
    auto start = Clock::now();
    report_.algorithm_choice = options_.benchmark ? "heuristic" : "fixed";
    auto shapes = check_shapes();
    for (std::size_t i = 0; i < shapes.size(); ++i) {
        auto shape_start = Clock::now();
        ConvolutionRun run;
        run.shape = shapes[i];
        ShapeSetup setup(*this, shapes[i], static_cast<std::uint32_t>(i + 1));
        std::string kind;
        std::string error = setup.prepare(kind);
        if (error.empty()) {
            auto candidates = options_.benchmark ? setup.heuristic(error) : fixed_algorithms();
            if (error.empty() && candidates.empty())
                error = "cudnnGetConvolutionForwardAlgorithm_v7 offered no algorithm";
            // The heuristic's first usable choice is what a framework without benchmarking runs;
            // if cuDNN refuses it, the next ones tell whether any forward algorithm works. The
            // fixed list falls back the same way from the implicit precomputed GEMM.
            std::string first_error;
            for (const auto& candidate : candidates) {
                if (candidate.status != 0) continue;
                ConvolutionRun attempt = run;
                int math = set_math_ ? math_ : api::kCudnnDefaultMath;
                error = setup.run(candidate.algo, math, 0, attempt, kind);
                if (error.empty()) {
                    run = attempt;
                    break;
                }
                if (first_error.empty()) first_error = error;
                run.algorithm = attempt.algorithm;
            }
            if (!run.ran && error.empty()) error = "no algorithm succeeded";
            if (!run.ran && !first_error.empty()) error = first_error;
        }
        if (!run.ran) {
            run.error = error;
            if (kind.empty()) kind = problem::kCudnnError;
            report_.add_problem(kind, "convolution " + run.shape.describe() + ": " + error);
        } else if (!run.comparison.matched) {
            report_.add_problem(problem::kWrongResult,
                                describe_mismatch(run.shape, run.algorithm, run.comparison));
        }
        run.wall_ms = ms_since(shape_start);
        report_.convolutions.push_back(run);
    }
    report_.timings.convolution_ms = ms_since(start);
}

void Prober::run_benchmarks() {
    auto start = Clock::now();
    auto shapes = check_shapes();
    shapes.push_back(benchmark_shape());
    for (std::size_t i = 0; i < shapes.size(); ++i) {
        BenchmarkRun bench;
        bench.shape = shapes[i];
        ShapeSetup setup(*this, shapes[i], static_cast<std::uint32_t>(100 + i));
        std::string kind;
        std::string error = setup.prepare(kind);
        std::vector<api::cudnnConvolutionFwdAlgoPerf> results;
        if (error.empty()) results = setup.find(error);
        bench.error = error;
        if (!error.empty())
            report_.add_problem(kind.empty() ? problem::kCudnnError : kind,
                                "benchmark " + bench.shape.describe() + ": " + error);
        // On the large shape only the fastest algorithm, the one cudnn.benchmark would pick, is
        // checked, on an even sample of outputs: the reference is plain CPU code.
        const bool large = bench.shape.output_size() > 65536;
        const std::size_t max_checked = large ? 8192 : 0;
        bool checked_one = false;
        for (const auto& r : results) {
            AlgorithmTiming timing;
            timing.algorithm = forward_algorithm_name(r.algo);
            timing.algorithm_id = r.algo;
            timing.status = r.status == 0 ? "CUDNN_STATUS_SUCCESS" : cudnn_status(r.status);
            timing.time_ms = r.time;
            timing.workspace_bytes = r.memory;
            timing.math = math_type_name(r.mathType);
            timing.deterministic = r.determinism == 1;
            if (r.status == 0 && !(large && checked_one)) {
                checked_one = true;
                ConvolutionRun check;
                check.shape = bench.shape;
                std::string run_kind;
                std::string run_error =
                    setup.run(r.algo, set_math_ ? r.mathType : api::kCudnnDefaultMath, max_checked,
                              check, run_kind);
                timing.verified = check.ran;
                timing.comparison = check.comparison;
                timing.error = run_error;
                if (!run_error.empty())
                    report_.add_problem(run_kind.empty() ? problem::kCudnnError : run_kind,
                                        "benchmark " + bench.shape.describe() + " " +
                                            timing.algorithm + ": " + run_error);
                else if (!check.comparison.matched)
                    report_.add_problem(
                        problem::kWrongResult,
                        describe_mismatch(bench.shape, timing.algorithm, check.comparison));
            }
            bench.algorithms.push_back(timing);
        }
        report_.benchmarks.push_back(bench);
    }
    report_.timings.benchmark_ms = ms_since(start);
}

void Prober::inspect_modules() {
    std::map<std::string, std::vector<std::string>> cudnn_folders;
    for (const auto& module : os::loaded_modules()) {
        if (!os::is_cuda_module_name(module.real_path) && !os::is_cuda_module_name(module.path))
            continue;
        report_.cuda_modules.push_back(module);
        if (os::is_cudnn_module_name(module.path) || os::is_cudnn_module_name(module.real_path)) {
            const std::string& real = module.real_path;
            auto slash = real.find_last_of("/\\");
            std::string folder = slash == std::string::npos ? "." : real.substr(0, slash);
            cudnn_folders[folder].push_back(real.substr(slash + 1));
        }
    }
    check_selected("cuDNN", options_.expect_cudnn_dirs, os::is_cudnn_module_name);
    check_selected("the CUDA runtime", options_.expect_cudart_dirs, os::is_cudart_module_name);
    if (options_.nccl)
        check_selected("NCCL", options_.expect_nccl_dirs, os::is_nccl_module_name);
    std::vector<std::string> described;
    for (const auto& [folder, files] : cudnn_folders) {
        report_.cudnn_folders.push_back(folder);
        described.push_back(folder + " (" + join(files, ", ") + ")");
    }
    check_sublibrary_versions();
    if (cudnn_folders.size() > 1)
        report_.add_problem(problem::kMixedCudnnFolders,
                            "cuDNN's libraries come from " + std::to_string(cudnn_folders.size()) +
                                " folders: " + join(described, "; ") +
                                ". A sub-library found first on the search path is mixed with "
                                "another installation's; remove it from LD_LIBRARY_PATH/PATH");
}

// Every cuDNN file of the set: the main library's release from cudnnGetVersion, each loaded
// sub-library's from its own cudnnGetVersion where it exports one, else from the version symbol
// it exports, else from a full version in its real file name. The set is what was loaded plus the
// main library's folder's sub-libraries that were not (one that failed to load is among them).
// Files of two releases fail with CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED or worse.
void Prober::check_sublibrary_versions() {
#ifndef _WIN32
    struct File {
        std::string path, version, how;
        std::string load_error; // a sub-library that was not loaded and cannot be: why
    };
    std::vector<File> files;
    auto name_of = [](const std::string& path) { return path.substr(path.find_last_of('/') + 1); };
    auto listed = [&](const std::string& path) {
        for (const auto& f : files)
            if (f.path == path || name_of(f.path) == name_of(path)) return true;
        return false;
    };
    auto text_of = [](const std::array<unsigned, 3>& v) {
        return std::to_string(v[0]) + "." + std::to_string(v[1]) + "." + std::to_string(v[2]);
    };
    auto add = [&](const std::string& path, bool loaded) {
        if (listed(path)) return;
        File f{path, "", "", ""};
        // After a sub-library status, one that was not loaded is loaded here to hear why it
        // failed (an undefined symbol of another release's library says which files disagree).
        if (!loaded && !sublibrary_statuses_.empty() && !os::open_library(path, f.load_error))
            f.load_error = f.load_error.empty() ? "it cannot be loaded" : f.load_error;
        size_t (*get_version)(void) = nullptr;
        void* own = loaded ? os::module_own_symbol(path, "cudnnGetVersion") : nullptr;
        if (own) std::memcpy(&get_version, &own, sizeof own);
        std::optional<std::array<unsigned, 3>> v;
        if (get_version && (v = compat::decode_cudnn_version_number(static_cast<std::uint32_t>(get_version()))))
            f.version = text_of(*v), f.how = "its cudnnGetVersion";
        else if (auto sym = compat::read_cudnn_version_symbol_file(path))
            f.version = sym->text(), f.how = sym->name;
        else {
            // libcudnn_ops.so.9.1.0: three numbers after ".so." in the real name.
            std::string name = name_of(path);
            size_t at = name.find(".so.");
            std::string tail = at == std::string::npos ? "" : name.substr(at + 4);
            size_t second = tail.find('.', tail.find('.') + 1);
            if (second != std::string::npos && tail.find_first_not_of("0123456789.") == std::string::npos)
                f.version = tail.substr(0, tail.find('.', second + 1)), f.how = "file name";
        }
        files.push_back(f);
    };
    const std::string main_path = report_.cudnn.path;
    std::string release;
    if (report_.cudnn_version > 0) {
        if (auto v = compat::decode_cudnn_version_number(static_cast<std::uint32_t>(report_.cudnn_version))) {
            release = text_of(*v);
            files.push_back({main_path.empty() ? report_.cudnn.name : main_path, release, "cudnnGetVersion"});
        }
    }
    for (const auto& module : report_.cuda_modules) {
        if (!os::is_cudnn_module_name(module.path) && !os::is_cudnn_module_name(module.real_path)) continue;
        if (module.real_path == main_path) continue;
        add(module.real_path, true);
    }
    // The main library's folder: the sub-libraries it would load that are not loaded.
    int major = cudnn_version_major(report_.cudnn_version);
    if (!main_path.empty() && major > 0) {
        std::error_code ec;
        std::filesystem::path folder = std::filesystem::path(main_path).parent_path();
        std::vector<std::string> names;
        for (std::filesystem::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
            std::string name = it->path().filename().string();
            if (name.rfind("libcudnn_", 0) == 0 && name.size() > 5 &&
                name.compare(name.size() - 4 - std::to_string(major).size(), std::string::npos,
                             ".so." + std::to_string(major)) == 0)
                names.push_back(name);
        }
        std::sort(names.begin(), names.end());
        for (const auto& name : names) {
            std::string real = (folder / name).string();
            std::error_code e2;
            auto canonical = std::filesystem::canonical(real, e2);
            add(e2 ? real : canonical.string(), false);
        }
    }
    if (release.empty())
        for (const auto& f : files)
            if (!f.version.empty()) {
                release = f.version;
                break;
            }
    std::vector<std::string> listing, odd;
    bool mixed = false;
    for (const auto& f : files) {
        listing.push_back(f.path + " " + (f.version.empty() ? "version unknown" : f.version + " (" + f.how + ")") +
                          (f.load_error.empty() ? "" : ", fails to load: " + f.load_error));
        if (!f.load_error.empty() || (!f.version.empty() && f.version != release)) {
            mixed = true;
            odd.push_back(name_of(f.path));
        }
    }
    const std::string fix =
        ". Make every cuDNN file come from one release: " +
        (odd.empty() ? std::string("reinstall the package or wheel of the files of unknown version")
                     : "replace " + join(odd, ", ") + " with cuDNN " + release + "'s") +
        " (`cvm doctor` names the package or wheel that owns each file and the command that reinstalls it), "
        "or select one complete cuDNN with `cvm use CUDA+CUDNN`";
    // A cuDNN status saying a sub-library failed names the files too.
    bool explained = false;
    for (auto& p : report_.problems) {
        if (p.kind != problem::kCudnnError) continue;
        bool sub = false;
        for (const auto& status : sublibrary_statuses_)
            sub = sub || p.message.find(status) != std::string::npos;
        if (!sub) continue;
        p.kind = problem::kSublibraryMismatch;
        if (explained) continue;
        explained = true;
        p.message += ": a cuDNN sub-library failed to load or is of another release; cuDNN's files: " +
                     join(listing, "; ") + fix;
    }
    if (mixed && !explained)
        report_.add_problem(problem::kSublibraryMismatch,
                            "cuDNN's libraries are of different releases: " + join(listing, "; ") + fix);
#endif
}

void Prober::check_selected(const char* what, const std::vector<std::string>& expected,
                            bool (*is_kind)(const std::string&)) {
    if (expected.empty()) return;
    for (const auto& module : report_.cuda_modules) {
        if (!is_kind(module.real_path) && !is_kind(module.path)) continue;
        const std::string& real = module.real_path;
        auto folder_of = [](const std::string& file) {
            auto slash = file.find_last_of("/\\");
            return slash == std::string::npos ? std::string(".") : file.substr(0, slash);
        };
        // A selection may be a folder of links (an assembled root for a system cuDNN): the
        // folder the loader found the file in counts as well as where the file really is.
        bool inside = false;
        for (const auto& dir : expected)
            inside = inside || os::same_folder(folder_of(real), dir) ||
                     (!module.path.empty() && os::same_folder(folder_of(module.path), dir));
        if (!inside)
            report_.add_problem(problem::kNotSelected,
                                real + " was loaded, but the selected " + what + " is in " +
                                    join(expected, ", ") +
                                    ": the selection lacks this library, or a folder earlier on "
                                    "the search path wins");
    }
}

void Prober::run() {
    auto start = Clock::now();
    if (auto eager = eager_module_loading()) report_.warnings.push_back(*eager);
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

} // namespace

std::optional<std::string> eager_module_loading() {
    const char* value = std::getenv("CUDA_MODULE_LOADING");
    if (!value) return std::nullopt;
    std::string v = value;
    for (char& ch : v)
        ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    if (v != "EAGER") return std::nullopt;
    return "CUDA_MODULE_LOADING=" + std::string(value) +
           " is set: the CUDA runtime loads every kernel of every library when it starts "
           "(measured on an H200 with cuDNN 9: 3.5 s and 2.8 GB more for this probe); unset it "
           "to load kernels when they are first used";
}

namespace {

bool parse_int(const std::string& text, int low, int high, int& out) {
    if (text.empty() || text.size() > 6) return false;
    int value = 0;
    for (char ch : text) {
        if (ch < '0' || ch > '9') return false;
        value = value * 10 + (ch - '0');
    }
    if (value < low || value > high) return false;
    out = value;
    return true;
}

} // namespace

std::string usage_text() {
    return "usage: cvm-probe [--json] [--benchmark] [--nccl [--no-cudnn]] [--cudnn-major N] "
           "[--cudart-major N] [--device N]\n"
           "Loads cuDNN and the CUDA runtime by their standard names through the normal library\n"
           "search, runs forward convolutions on the GPU and compares them with a CPU reference.\n"
           "  --json           one JSON document on stdout\n"
           "  --benchmark      let cuDNN's heuristics choose the checks' algorithm and time\n"
           "                   every forward algorithm (cudnnFindConvolutionForwardAlgorithm);\n"
           "                   without it the checks run the implicit precomputed GEMM\n"
           "  --cudnn-major N  load only libcudnn.so.N / cudnn64_N.dll (default: 9, 8, 7)\n"
           "  --cudart-major N load only that CUDA runtime (default: cuDNN's own, then 13..10)\n"
           "  --device N       the CUDA device to use (default 0)\n"
           "  --expect-cudnn-dir DIR, --expect-cudart-dir DIR\n"
           "                   the selected folders: a library of that kind loaded from anywhere\n"
           "                   else is reported (repeatable)\n"
           "  --nccl           also load NCCL (libnccl.so.2), make one communicator over every\n"
           "                   visible GPU and all-reduce 8 MiB to 1 GiB, checked exactly\n"
           "  --no-cudnn       with --nccl: leave cuDNN and its convolutions out\n"
           "  --nccl-min-bytes N, --nccl-max-bytes N\n"
           "                   the all-reduce sizes (doubling; default 8388608 to 1073741824)\n"
           "  --expect-nccl-dir DIR, --expect-nccl-version V\n"
           "                   the selected NCCL's folder and version, as for cuDNN\n"
           "  --expect-cudnn-version V\n"
           "                   the selected cuDNN's version: a loaded cuDNN reporting another\n"
           "                   one is reported\n"
           "Exit status: 0 the convolutions ran on the GPU and matched; 1 a problem was found;\n"
           "2 bad usage.\n";
}

Arguments parse_arguments(const std::vector<std::string>& args) {
    Arguments parsed;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        auto number = [&](const char* flag, int low, int high, int& out) {
            std::string value;
            std::string prefix = std::string(flag) + "=";
            if (arg.rfind(prefix, 0) == 0) {
                value = arg.substr(prefix.size());
            } else if (i + 1 < args.size()) {
                value = args[++i];
            } else {
                parsed.error = std::string(flag) + " needs a number";
                return;
            }
            if (!parse_int(value, low, high, out))
                parsed.error = std::string(flag) + ": '" + value + "' is not a number from " +
                               std::to_string(low) + " to " + std::to_string(high);
        };
        auto folder = [&](const char* flag, std::vector<std::string>& out) {
            std::string prefix = std::string(flag) + "=";
            if (arg.rfind(prefix, 0) == 0)
                out.push_back(arg.substr(prefix.size()));
            else if (i + 1 < args.size())
                out.push_back(args[++i]);
            else
                parsed.error = std::string(flag) + " needs a folder";
            if (parsed.error.empty() && out.back().empty())
                parsed.error = std::string(flag) + " needs a folder";
        };
        auto value_of = [&](const char* flag) -> std::optional<std::string> {
            std::string prefix = std::string(flag) + "=";
            if (arg.rfind(prefix, 0) == 0) return arg.substr(prefix.size());
            if (i + 1 < args.size()) return args[++i];
            return std::nullopt;
        };
        // A byte count from 4 to 16 GiB, as digits.
        auto bytes = [&](const char* flag, std::size_t& out) {
            auto v = value_of(flag);
            unsigned long long n = 0;
            bool ok = v && !v->empty() && v->size() <= 12 &&
                      v->find_first_not_of("0123456789") == std::string::npos;
            if (ok) n = std::stoull(*v);
            if (!ok || n < 4 || n > (16ULL << 30))
                parsed.error = std::string(flag) + " needs a number of bytes from 4 to " +
                               std::to_string(16ULL << 30);
            else
                out = static_cast<std::size_t>(n);
        };
        auto version = [&](const char* flag, std::string& out) {
            auto v = value_of(flag);
            bool ok = v && !v->empty() && v->front() != '.' && v->back() != '.' &&
                      v->find("..") == std::string::npos && v->size() <= 32 &&
                      v->find_first_not_of("0123456789.") == std::string::npos;
            if (!ok)
                parsed.error = std::string(flag) + " needs a version like 2.28.9";
            else
                out = *v;
        };
        auto is = [&](const char* flag) {
            return arg == flag || arg.rfind(std::string(flag) + "=", 0) == 0;
        };
        if (arg == "--json")
            parsed.options.json = true;
        else if (arg == "--benchmark")
            parsed.options.benchmark = true;
        else if (arg == "-h" || arg == "--help")
            parsed.help = true;
        else if (arg == "--version")
            parsed.version = true;
        else if (is("--cudnn-major"))
            number("--cudnn-major", 1, 99, parsed.options.cudnn_major);
        else if (is("--cudart-major"))
            number("--cudart-major", 1, 99, parsed.options.cudart_major);
        else if (is("--device"))
            number("--device", 0, 1023, parsed.options.device);
        else if (is("--expect-cudnn-dir"))
            folder("--expect-cudnn-dir", parsed.options.expect_cudnn_dirs);
        else if (is("--expect-cudart-dir"))
            folder("--expect-cudart-dir", parsed.options.expect_cudart_dirs);
        else if (arg == "--nccl")
            parsed.options.nccl = true;
        else if (arg == "--no-cudnn")
            parsed.options.skip_cudnn = true;
        else if (is("--nccl-min-bytes"))
            bytes("--nccl-min-bytes", parsed.options.nccl_min_bytes);
        else if (is("--nccl-max-bytes"))
            bytes("--nccl-max-bytes", parsed.options.nccl_max_bytes);
        else if (is("--expect-nccl-dir"))
            folder("--expect-nccl-dir", parsed.options.expect_nccl_dirs);
        else if (is("--expect-nccl-version"))
            version("--expect-nccl-version", parsed.options.expect_nccl_version);
        else if (is("--expect-cudnn-version")) {
            std::string& v = parsed.options.expect_cudnn_version;
            if (arg.rfind("--expect-cudnn-version=", 0) == 0)
                v = arg.substr(std::strlen("--expect-cudnn-version="));
            else if (i + 1 < args.size())
                v = args[++i];
            bool ok = !v.empty() && v.front() != '.' && v.back() != '.' &&
                      v.find("..") == std::string::npos &&
                      v.find_first_not_of("0123456789.") == std::string::npos;
            if (!ok) parsed.error = "--expect-cudnn-version needs a version like 9.19.0";
        }
        else
            parsed.error = "unknown argument '" + arg + "'";
        if (!parsed.error.empty()) break;
    }
    if (parsed.error.empty() && parsed.options.nccl_min_bytes > parsed.options.nccl_max_bytes)
        parsed.error = "--nccl-min-bytes is larger than --nccl-max-bytes";
    if (parsed.error.empty() && parsed.options.skip_cudnn && !parsed.options.nccl)
        parsed.error = "--no-cudnn leaves nothing to probe without --nccl";
    return parsed;
}

Report run_probe(const Options& options) {
    Report report;
    Prober prober(options, report);
    prober.run();
    return report;
}

} // namespace cvm::probe
