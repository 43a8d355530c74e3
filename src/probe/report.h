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
constexpr const char* kNcclError = "nccl_error";
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
    double wall_ms = 0; // the whole shape: descriptors, buffers, cuDNN's first-call work, the run, the check
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
    double nccl_ms = 0; // loading NCCL, ncclCommInitAll, the all-reduces and their checks
    double total_ms = 0;
};

// One CUDA device as the runtime reports it.
struct DeviceInfo {
    int index = 0;
    std::string name;
    int cc_major = -1;
    int cc_minor = -1;
};

// One all-reduce size of the NCCL check.
struct NcclSize {
    std::size_t bytes = 0;
    int iterations = 0;         // timed, after the warm-up
    double time_us = 0;         // per all-reduce, wall time over every rank's stream
    bool timed = false;         // algbw and busbw measured (several ranks, or one with --benchmark)
    double algbw_gbs = 0;       // bytes / time (GB/s, 10^9)
    double busbw_gbs = 0;       // algbw * 2(n-1)/n, as nccl-tests define it
    std::size_t checked = 0;    // floats compared, over every rank
    std::size_t mismatched = 0; // of them, not the exact sum
    std::string first_mismatch; // "rank 1, element 12: 3 instead of 5"
    bool matched() const { return checked > 0 && mismatched == 0; }
};

// A connection NCCL chose between two ranks, from its own log ("Channel 00/0 : 0[0] -> 1[1] via
// P2P/CUMEM/read").
struct NcclLink {
    int from = 0, to = 0;
    std::string transport; // "P2P/CUMEM/read", "SHM/direct/direct", "NVLS", ...
    int channels = 0;      // how many channels use it
};

struct NcclReport {
    bool asked = false; // --nccl
    LibraryInfo library;
    long long version_code = -1;      // ncclGetVersion
    std::string version;              // decoded: "2.28.9"
    std::string banner;               // the library file's own text: "NCCL version 2.28.9+cuda13.0"
    std::string built_for_cuda;       // from the banner: "13.0"
    int ranks = 0;                    // the communicator's GPUs (every visible one)
    std::vector<std::string> bus_ids; // per rank
    std::vector<std::vector<int>> peer_access; // [i][j]: 1 peer access, 0 none, -1 unknown
    std::vector<NcclLink> links;
    std::vector<NcclSize> sizes;
    std::vector<std::string> environment; // NCCL_* variables in force ("NCCL_P2P_DISABLE=1")
    double init_ms = 0;                   // ncclCommInitAll
    double allreduce_ms = 0;              // buffers, all-reduces and checks
    bool ran() const { return !sizes.empty(); }
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
    // How the checks chose their algorithm: "fixed" (the implicit precomputed GEMM, then the
    // implicit GEMM) or "heuristic" (cudnnGetConvolutionForwardAlgorithm_v7, with --benchmark).
    std::string algorithm_choice;
    std::vector<os::LoadedModule> cuda_modules;
    std::vector<std::string> cudnn_folders;
    std::vector<os::SearchFolder> searched_folders; // filled when a library was not found
    std::vector<std::string> cache_entries;
    std::vector<ConvolutionRun> convolutions;
    std::vector<BenchmarkRun> benchmarks;
    bool cudnn_skipped = false; // --no-cudnn: only NCCL was asked about
    NcclReport nccl;
    std::vector<Problem> problems;
    std::vector<std::string> warnings;
    Timings timings;

    void add_problem(const std::string& kind, const std::string& message) {
        problems.push_back({kind, message});
    }
    // True when every check ran on the GPU, matched, and nothing else went wrong: the
    // convolutions (unless --no-cudnn) and, with --nccl, every all-reduce.
    bool ok() const;
};

// 91900 -> "9.19.0", 8907 -> "8.9.7", 7605 -> "7.6.5".
std::string cudnn_version_text(long long version);
int cudnn_version_major(long long version);
// 13000 -> "13.0", 12020 -> "12.2", 11080 -> "11.8".
std::string cuda_version_text(long long version);
// A buffer size in its largest whole unit: "64 MiB", "1 GiB", "4100 B".
std::string size_label(std::size_t bytes);
// The major version in a library file name: libcudnn.so.9 -> 9, cudnn64_8.dll -> 8; -1 if none.
int major_from_library_name(const std::string& name);

// "one GPU: its one-rank all-reduce moves nothing between GPUs, so no link is measured"
std::string one_gpu_note();
// A compute capability, "9.0"; "" when unknown (major -1).
std::string cc_text(int major, int minor);

// The report as JSON (report_json.cpp) and as text for a person (report_text.cpp).
std::string render_json(const Report& report);
std::string render_text(const Report& report);

} // namespace cvm::probe
