#pragma once
// Our own declarations of the small part of the CUDA runtime and cuDNN APIs that the probe calls,
// written from NVIDIA's documented C API. The probe links neither library: every function is
// resolved by name at run time, so these are function-pointer types, not prototypes.
// The enum values are the documented ones and have been stable from cuDNN 7 to 9.

#include <cstddef>

namespace cvm::probe::api {

// ---- CUDA runtime ----
using cudaError = int;
constexpr cudaError kCudaSuccess = 0;
constexpr cudaError kCudaErrorStubLibrary = 34;
constexpr cudaError kCudaErrorInsufficientDriver = 35;
constexpr cudaError kCudaErrorNoDevice = 100;
constexpr cudaError kCudaErrorSystemDriverMismatch = 803;
constexpr cudaError kCudaErrorCompatNotSupportedOnDevice = 804;

constexpr int kCudaMemcpyHostToDevice = 1;
constexpr int kCudaMemcpyDeviceToHost = 2;

constexpr int kCudaDevAttrComputeCapabilityMajor = 75;
constexpr int kCudaDevAttrComputeCapabilityMinor = 76;

// cudaDeviceProp starts with `char name[256]` in every CUDA release; its total size grows with
// releases, so the probe passes a buffer far larger than any of them and reads only the name.
constexpr std::size_t kDevicePropBufferSize = 16384;

using cudaGetDeviceCount_t = cudaError (*)(int* count);
using cudaGetDeviceProperties_t = cudaError (*)(void* prop, int device);
using cudaDeviceGetAttribute_t = cudaError (*)(int* value, int attr, int device);
using cudaDriverGetVersion_t = cudaError (*)(int* version);
using cudaRuntimeGetVersion_t = cudaError (*)(int* version);
using cudaSetDevice_t = cudaError (*)(int device);
using cudaMalloc_t = cudaError (*)(void** ptr, std::size_t size);
using cudaFree_t = cudaError (*)(void* ptr);
using cudaMemcpy_t = cudaError (*)(void* dst, const void* src, std::size_t count, int kind);
using cudaDeviceSynchronize_t = cudaError (*)();
using cudaGetErrorName_t = const char* (*)(cudaError error);
using cudaGetErrorString_t = const char* (*)(cudaError error);
using cudaStream = struct CUstream_st*;
using cudaMemset_t = cudaError (*)(void* ptr, int value, std::size_t count);
using cudaStreamCreate_t = cudaError (*)(cudaStream* stream);
using cudaStreamSynchronize_t = cudaError (*)(cudaStream stream);
using cudaStreamDestroy_t = cudaError (*)(cudaStream stream);
using cudaDeviceCanAccessPeer_t = cudaError (*)(int* can, int device, int peer);
using cudaDeviceGetPCIBusId_t = cudaError (*)(char* bus_id, int length, int device);
using cudaMallocHost_t = cudaError (*)(void** ptr, std::size_t size);
using cudaFreeHost_t = cudaError (*)(void* ptr);

// ---- cuDNN ----
using cudnnStatus = int;
constexpr cudnnStatus kCudnnStatusSuccess = 0;

struct cudnnContext;
struct cudnnTensorStruct;
struct cudnnFilterStruct;
struct cudnnConvolutionStruct;
using cudnnHandle = cudnnContext*;
using cudnnTensorDescriptor = cudnnTensorStruct*;
using cudnnFilterDescriptor = cudnnFilterStruct*;
using cudnnConvolutionDescriptor = cudnnConvolutionStruct*;

constexpr int kCudnnDataFloat = 0;        // CUDNN_DATA_FLOAT
constexpr int kCudnnTensorNchw = 0;       // CUDNN_TENSOR_NCHW
constexpr int kCudnnCrossCorrelation = 1; // CUDNN_CROSS_CORRELATION (what frameworks call conv)
constexpr int kCudnnDefaultMath = 0;      // CUDNN_DEFAULT_MATH
constexpr int kCudnnTensorOpMath = 1;     // CUDNN_TENSOR_OP_MATH
constexpr int kCudnnTensorOpMathAllowConversion = 2;
constexpr int kCudnnFmaMath = 3;      // CUDNN_FMA_MATH (cuDNN 8 and later): no TF32
constexpr int kCudnnFwdAlgoCount = 8; // CUDNN_CONVOLUTION_FWD_ALGO_COUNT
constexpr int kCudnnFwdAlgoImplicitGemm = 0;        // CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM
constexpr int kCudnnFwdAlgoImplicitPrecompGemm = 1; // ..._IMPLICIT_PRECOMP_GEMM

// cudnnConvolutionFwdAlgoPerf_t
struct cudnnConvolutionFwdAlgoPerf {
    int algo;
    cudnnStatus status;
    float time; // milliseconds
    std::size_t memory;
    int determinism;
    int mathType;
    int reserved[3];
};

using cudnnGetVersion_t = std::size_t (*)();
using cudnnGetCudartVersion_t = std::size_t (*)();
using cudnnGetErrorString_t = const char* (*)(cudnnStatus status);
using cudnnCreate_t = cudnnStatus (*)(cudnnHandle* handle);
using cudnnDestroy_t = cudnnStatus (*)(cudnnHandle handle);
using cudnnCreateTensorDescriptor_t = cudnnStatus (*)(cudnnTensorDescriptor* desc);
using cudnnSetTensor4dDescriptor_t = cudnnStatus (*)(cudnnTensorDescriptor desc, int format,
                                                     int dataType, int n, int c, int h, int w);
using cudnnDestroyTensorDescriptor_t = cudnnStatus (*)(cudnnTensorDescriptor desc);
using cudnnCreateFilterDescriptor_t = cudnnStatus (*)(cudnnFilterDescriptor* desc);
// Note the order: data type before format, unlike the tensor setter.
using cudnnSetFilter4dDescriptor_t = cudnnStatus (*)(cudnnFilterDescriptor desc, int dataType,
                                                     int format, int k, int c, int h, int w);
using cudnnDestroyFilterDescriptor_t = cudnnStatus (*)(cudnnFilterDescriptor desc);
using cudnnCreateConvolutionDescriptor_t = cudnnStatus (*)(cudnnConvolutionDescriptor* desc);
using cudnnSetConvolution2dDescriptor_t = cudnnStatus (*)(cudnnConvolutionDescriptor desc,
                                                          int pad_h, int pad_w, int u, int v,
                                                          int dilation_h, int dilation_w, int mode,
                                                          int computeType);
using cudnnDestroyConvolutionDescriptor_t = cudnnStatus (*)(cudnnConvolutionDescriptor desc);
using cudnnSetConvolutionMathType_t = cudnnStatus (*)(cudnnConvolutionDescriptor desc,
                                                      int mathType);
using cudnnGetConvolution2dForwardOutputDim_t = cudnnStatus (*)(cudnnConvolutionDescriptor conv,
                                                                cudnnTensorDescriptor input,
                                                                cudnnFilterDescriptor filter,
                                                                int* n, int* c, int* h, int* w);
using cudnnGetConvolutionForwardAlgorithmMaxCount_t = cudnnStatus (*)(cudnnHandle handle,
                                                                      int* count);
using cudnnGetConvolutionForwardAlgorithm_v7_t =
    cudnnStatus (*)(cudnnHandle handle, cudnnTensorDescriptor x, cudnnFilterDescriptor w,
                    cudnnConvolutionDescriptor conv, cudnnTensorDescriptor y, int requested,
                    int* returned, cudnnConvolutionFwdAlgoPerf* results);
using cudnnFindConvolutionForwardAlgorithm_t = cudnnGetConvolutionForwardAlgorithm_v7_t;
using cudnnGetConvolutionForwardWorkspaceSize_t = cudnnStatus (*)(
    cudnnHandle handle, cudnnTensorDescriptor x, cudnnFilterDescriptor w,
    cudnnConvolutionDescriptor conv, cudnnTensorDescriptor y, int algo, std::size_t* bytes);
using cudnnConvolutionForward_t = cudnnStatus (*)(cudnnHandle handle, const void* alpha,
                                                  cudnnTensorDescriptor xDesc, const void* x,
                                                  cudnnFilterDescriptor wDesc, const void* w,
                                                  cudnnConvolutionDescriptor convDesc, int algo,
                                                  void* workSpace, std::size_t workSpaceBytes,
                                                  const void* beta, cudnnTensorDescriptor yDesc,
                                                  void* y);

} // namespace cvm::probe::api
