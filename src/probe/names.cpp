#include "names.h"

namespace cvm::probe {

bool is_sublibrary_status(int status, int cudnn_major) {
    if (cudnn_major >= 9 || (cudnn_major < 0 && status >= 1000)) return status == 1002 || status == 1008;
    return cudnn_major == 8 && status == 14;
}

std::string cudnn_status_fallback_name(int status) {
    switch (status) {
    case 0:
        return "CUDNN_STATUS_SUCCESS";
    // cuDNN 7 and 8
    case 1:
        return "CUDNN_STATUS_NOT_INITIALIZED";
    case 2:
        return "CUDNN_STATUS_ALLOC_FAILED";
    case 3:
        return "CUDNN_STATUS_BAD_PARAM";
    case 4:
        return "CUDNN_STATUS_INTERNAL_ERROR";
    case 5:
        return "CUDNN_STATUS_INVALID_VALUE";
    case 6:
        return "CUDNN_STATUS_ARCH_MISMATCH";
    case 7:
        return "CUDNN_STATUS_MAPPING_ERROR";
    case 8:
        return "CUDNN_STATUS_EXECUTION_FAILED";
    case 9:
        return "CUDNN_STATUS_NOT_SUPPORTED";
    case 10:
        return "CUDNN_STATUS_LICENSE_ERROR";
    case 11:
        return "CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING";
    case 12:
        return "CUDNN_STATUS_RUNTIME_IN_PROGRESS";
    case 13:
        return "CUDNN_STATUS_RUNTIME_FP_OVERFLOW";
    case 14:
        return "CUDNN_STATUS_VERSION_MISMATCH";
    // cuDNN 9
    case 1001:
        return "CUDNN_STATUS_NOT_INITIALIZED";
    case 1002:
        return "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH";
    case 1003:
        return "CUDNN_STATUS_SERIALIZATION_VERSION_MISMATCH";
    case 1004:
        return "CUDNN_STATUS_DEPRECATED";
    case 1005:
        return "CUDNN_STATUS_LICENSE_ERROR";
    case 1006:
        return "CUDNN_STATUS_RUNTIME_IN_PROGRESS";
    case 1007:
        return "CUDNN_STATUS_RUNTIME_FP_OVERFLOW";
    case 1008:
        return "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED";
    case 2000:
        return "CUDNN_STATUS_BAD_PARAM";
    case 2001:
        return "CUDNN_STATUS_INVALID_VALUE";
    case 2002:
        return "CUDNN_STATUS_BAD_PARAM_NULL_POINTER";
    case 2003:
        return "CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER";
    case 2004:
        return "CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED";
    case 2005:
        return "CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND";
    case 2006:
        return "CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT";
    case 2007:
        return "CUDNN_STATUS_BAD_PARAM_STREAM_MISMATCH";
    case 2008:
        return "CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH";
    case 2009:
        return "CUDNN_STATUS_BAD_PARAM_DUPLICATED_ENTRIES";
    case 2010:
        return "CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE";
    case 2011:
        return "CUDNN_STATUS_BAD_PARAM_CUDA_GRAPH_MISMATCH";
    case 2012:
        return "CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE";
    case 3000:
        return "CUDNN_STATUS_NOT_SUPPORTED";
    case 3001:
        return "CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN";
    case 3002:
        return "CUDNN_STATUS_NOT_SUPPORTED_SHAPE";
    case 3003:
        return "CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE";
    case 3004:
        return "CUDNN_STATUS_NOT_SUPPORTED_LAYOUT";
    case 3005:
        return "CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER";
    case 3006:
        return "CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART";
    case 3007:
        return "CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH";
    case 3008:
        return "CUDNN_STATUS_NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING";
    case 3009:
        return "CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE";
    case 3010:
        return "CUDNN_STATUS_NOT_SUPPORTED_SHARED_MEMORY_INSUFFICIENT";
    case 3011:
        return "CUDNN_STATUS_NOT_SUPPORTED_PADDING";
    case 3012:
        return "CUDNN_STATUS_NOT_SUPPORTED_BAD_LAUNCH_PARAM";
    case 3013:
        return "CUDNN_STATUS_NOT_SUPPORTED_CUDA_GRAPH_NATIVE_API";
    case 3014:
        return "CUDNN_STATUS_NOT_SUPPORTED_INVALID_DYNAMIC_SHAPE";
    case 4000:
        return "CUDNN_STATUS_INTERNAL_ERROR";
    case 4001:
        return "CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED";
    case 4002:
        return "CUDNN_STATUS_INTERNAL_ERROR_UNEXPECTED_VALUE";
    case 4003:
        return "CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED";
    case 4004:
        return "CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED";
    case 4005:
        return "CUDNN_STATUS_INTERNAL_ERROR_BAD_LAUNCH_PARAM";
    case 4006:
        return "CUDNN_STATUS_INTERNAL_ERROR_TEXTURE_CREATION_FAILED";
    case 5000:
        return "CUDNN_STATUS_EXECUTION_FAILED";
    case 5001:
        return "CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER";
    case 5002:
        return "CUDNN_STATUS_EXECUTION_FAILED_CUBLAS";
    case 5003:
        return "CUDNN_STATUS_EXECUTION_FAILED_CUDART";
    case 5004:
        return "CUDNN_STATUS_EXECUTION_FAILED_CURAND";
    default:
        break;
    }
    // cuDNN 9 keeps the category in the thousands.
    switch (status / 1000) {
    case 1:
        return "CUDNN_STATUS_NOT_INITIALIZED (category)";
    case 2:
        return "CUDNN_STATUS_BAD_PARAM (category)";
    case 3:
        return "CUDNN_STATUS_NOT_SUPPORTED (category)";
    case 4:
        return "CUDNN_STATUS_INTERNAL_ERROR (category)";
    case 5:
        return "CUDNN_STATUS_EXECUTION_FAILED (category)";
    default:
        return "CUDNN_STATUS_UNKNOWN";
    }
}

std::string cuda_error_fallback_name(int error) {
    switch (error) {
    case 0:
        return "cudaSuccess";
    case 1:
        return "cudaErrorInvalidValue";
    case 2:
        return "cudaErrorMemoryAllocation";
    case 3:
        return "cudaErrorInitializationError";
    case 34:
        return "cudaErrorStubLibrary";
    case 35:
        return "cudaErrorInsufficientDriver";
    case 100:
        return "cudaErrorNoDevice";
    case 101:
        return "cudaErrorInvalidDevice";
    case 209:
        return "cudaErrorNoKernelImageForDevice";
    case 222:
        return "cudaErrorUnsupportedPtxVersion";
    case 700:
        return "cudaErrorIllegalAddress";
    case 803:
        return "cudaErrorSystemDriverMismatch";
    case 804:
        return "cudaErrorCompatNotSupportedOnDevice";
    case 999:
        return "cudaErrorUnknown";
    default:
        return "cudaError " + std::to_string(error);
    }
}

std::string forward_algorithm_name(int algorithm) {
    static const char* const names[] = {
        "IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING",
        "WINOGRAD",      "WINOGRAD_NONFUSED"};
    if (algorithm >= 0 && algorithm < static_cast<int>(sizeof names / sizeof names[0]))
        return names[algorithm];
    return "ALGO_" + std::to_string(algorithm);
}

std::string math_type_name(int math) {
    switch (math) {
    case 0:
        return "DEFAULT";
    case 1:
        return "TENSOR_OP";
    case 2:
        return "TENSOR_OP_ALLOW_CONVERSION";
    case 3:
        return "FMA";
    default:
        return "MATH_" + std::to_string(math);
    }
}

} // namespace cvm::probe
