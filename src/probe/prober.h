#pragma once
// The probe's state while it runs (inside cvm-probe only): the cuDNN and CUDA runtime entry points
// it resolved, the device and the handle. Its work is spread by concern: probe.cpp loads the
// libraries and opens the device, convolution_checks.cpp runs and checks the convolutions,
// loaded_modules.cpp judges the libraries in the process, sublibraries_elf.cpp (Linux) the
// releases of cuDNN's sub-libraries.

#include "api.h"
#include "os.h"
#include "arguments.h"
#include "report.h"
#include "runtime.h"

#include <string>
#include <vector>

namespace cvm::probe::detail {

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

} // namespace cvm::probe::detail
