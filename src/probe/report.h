#pragma once
// What one probe found, and its two renderings: human text and JSON.

#include "convolution.h"
#include "os.h"

#include <cstddef>
#include <string>
#include <vector>

namespace cvm::probe {

// Problem kinds (the "kind" field of the JSON report).
namespace problem {
constexpr const char* kLibraryNotFound = "library_not_found";
constexpr const char* kMissingSymbol = "missing_symbol";
constexpr const char* kVersionMismatch = "version_mismatch";
constexpr const char* kNoDriver = "no_driver";
constexpr const char* kNoDevice = "no_device";
constexpr const char* kCudaError = "cuda_error";
constexpr const char* kCudnnError = "cudnn_error";
constexpr const char* kWrongResult = "wrong_result";
constexpr const char* kMixedCudnnFolders = "mixed_cudnn_folders";
constexpr const char* kSublibraryMismatch = "sublibrary_mismatch";
constexpr const char* kNotSelected = "not_selected";
constexpr const char* kUsage = "usage";
} // namespace problem

struct Problem {
    std::string kind;
    std::string message;
};

struct LoadAttempt {
    std::string name;
    std::string error; // empty when it loaded
};

struct LibraryInfo {
    std::string name; // the name that loaded, e.g. libcudnn.so.9
    std::string path; // its real path
    std::vector<LoadAttempt> attempts;
    bool loaded() const { return !path.empty() || !name.empty(); }
};

struct ConvolutionRun {
    ConvShape shape{};
    bool ran = false; // cudnnConvolutionForward returned success on the device
    std::string algorithm;
    std::string math;
    std::size_t workspace_bytes = 0;
    double time_ms = 0;
    Comparison comparison;
    std::string error; // why it did not run
};

struct AlgorithmTiming {
    std::string algorithm;
    int algorithm_id = -1;
    std::string status;
    double time_ms = 0;
    std::size_t workspace_bytes = 0;
    std::string math;
    bool deterministic = false;
    bool verified = false; // the probe ran it and compared
    Comparison comparison;
    std::string error;
};

struct BenchmarkRun {
    ConvShape shape{};
    std::vector<AlgorithmTiming> algorithms; // fastest first
    std::string error;
};

struct Timings {
    double load_ms = 0;        // loading cuDNN and the CUDA runtime
    double init_ms = 0;        // driver, device and cudnnCreate
    double convolution_ms = 0; // the checks
    double benchmark_ms = 0;
    double total_ms = 0;
};

// One CUDA device as the runtime reports it.
struct DeviceInfo {
    int index = 0;
    std::string name;
    int cc_major = -1;
    int cc_minor = -1;
};

struct Report {
    LibraryInfo cudnn;
    LibraryInfo cudart;
    long long cudnn_version = -1;
    long long cudnn_cudart_version = -1;
    int runtime_version = -1;
    int driver_version = -1;
    int device_count = -1;
    int device_index = 0;
    std::string device_name;
    int cc_major = -1;
    int cc_minor = -1;
    std::vector<DeviceInfo> devices; // every device's name and compute capability
    std::string math; // the math mode the checks asked for
    std::vector<os::LoadedModule> cuda_modules;
    std::vector<std::string> cudnn_folders;
    std::vector<os::SearchFolder> searched_folders; // filled when a library was not found
    std::vector<std::string> cache_entries;
    std::vector<ConvolutionRun> convolutions;
    std::vector<BenchmarkRun> benchmarks;
    std::vector<Problem> problems;
    std::vector<std::string> warnings;
    Timings timings;

    void add_problem(const std::string& kind, const std::string& message) {
        problems.push_back({kind, message});
    }
    // True when every check ran on the GPU, matched, and nothing else went wrong.
    bool ok() const;
};

// 91900 -> "9.19.0", 8907 -> "8.9.7", 7605 -> "7.6.5".
std::string cudnn_version_text(long long version);
int cudnn_version_major(long long version);
// 13000 -> "13.0", 12020 -> "12.2", 11080 -> "11.8".
std::string cuda_version_text(long long version);
// The major version in a library file name: libcudnn.so.9 -> 9, cudnn64_8.dll -> 8; -1 if none.
int major_from_library_name(const std::string& name);

std::string render_json(const Report& report);
std::string render_text(const Report& report);

} // namespace cvm::probe
