// Which files of a shared folder are a CUDA toolkit's, by name, and the release a Debian
// package's version names (layouts/toolkit_name_rules.h).
#include "layouts/toolkit_name_rules.h"

#include <cctype>

#include "text/affixes.h"
#include "text/ascii.h"

namespace cvm {

bool is_cuda_program(const std::string& name, platform::Os os) {
    std::string n = name;
    if (os == platform::Os::Windows) {
        n = ascii_lower(n);
        if (ends_with(n, ".dll")) return is_cuda_library(name, os);
        if (ends_with(n, ".exe")) n.resize(n.size() - 4);
    }
    // cicc is nvvm's (nvvm/bin); gcc/g++ beside Debian's nvcc are wrappers for nvcc alone.
    static const char* const programs[] = {"nvcc",
                                           "nvcc.profile",
                                           "crt",
                                           "ptxas",
                                           "cuobjdump",
                                           "nvdisasm",
                                           "nvlink",
                                           "fatbinary",
                                           "nvprune",
                                           "cudafe++",
                                           "bin2c",
                                           "cu++filt",
                                           "__nvcc_device_query",
                                           "compute-sanitizer",
                                           "cuda-memcheck",
                                           "nvprof",
                                           "cuda-gdb",
                                           "cuda-gdbserver",
                                           "nvvp",
                                           "ncu",
                                           "nsys"};
    for (const char* p : programs)
        if (n == (os == platform::Os::Windows ? ascii_lower(p) : std::string(p))) return true;
    return false;
}

bool is_cuda_library(const std::string& name, platform::Os os) {
    static const char* const stems[] = {
        "cudart",         "cudadevrt",     "cublas",     "cublasLt",      "cufft",
        "cufftw",         "cufilt",        "cuinj64",    "culibos",       "cupti",
        "curand",         "cusolver",      "cusolverMg", "cusparse",      "nvrtc",
        "nvrtc-builtins", "nvjpeg",        "nvToolsExt", "nvblas",        "nvperf_host",
        "nvperf_target",  "nvptxcompiler", "nvJitLink",  "nvvm",          "accinj64",
        "cufile",         "cufile_rdma",   "nvfatbin",   "pcsamplingutil"};
    const bool win = os == platform::Os::Windows;
    std::string base;
    if (win) {
        std::string l = ascii_lower(name);
        if (!ends_with(l, ".dll") && !ends_with(l, ".lib")) return false;
        base = name;
    } else {
        if (!starts_with(name, "lib")) return false;
        if (name.find(".so") == std::string::npos && !ends_with(name, ".a")) return false;
        base = name.substr(3);
    }
    // After the stem: a version or suffix (".so.12", "_static.a"; on Windows "64_12.dll").
    auto ends_stem = [&](size_t at) {
        if (at >= base.size()) return false;
        char c = base[at];
        return c == '.' || c == '_' || (win && std::isdigit(static_cast<unsigned char>(c)));
    };
    for (const char* s : stems)
        if (starts_with(base, s) && ends_stem(std::char_traits<char>::length(s))) return true;
    // NPP's many libraries: nppc, nppial, nppicc, ..., npps.
    if (starts_with(base, "npp")) {
        size_t at = 3;
        while (at < base.size() && std::islower(static_cast<unsigned char>(base[at])))
            ++at;
        return at > 3 && ends_stem(at);
    }
    return false;
}

bool is_cuda_header(const std::string& name) {
    static const char* const exact[] = {"cub",
                                        "thrust",
                                        "nv",
                                        "crt",
                                        "cooperative_groups",
                                        "cooperative_groups.h",
                                        "nvtx3",
                                        "nvfunctional",
                                        "builtin_types.h",
                                        "channel_descriptor.h",
                                        "common_functions.h",
                                        "host_config.h",
                                        "host_defines.h",
                                        "library_types.h",
                                        "math_constants.h",
                                        "driver_functions.h",
                                        "driver_types.h",
                                        "fatbinary_section.h",
                                        "fatBinaryCtl.h",
                                        "mma.h",
                                        "mma.hpp",
                                        "nvml.h",
                                        "nvvm.h",
                                        "nv_decode.h",
                                        "nvblas.h",
                                        "vector_types.h"};
    static const char* const prefixes[] = {"cuda",           "cuComplex",
                                           "cublas",         "cufft",
                                           "curand",         "cusolver",
                                           "cusparse",       "cupti",
                                           "cufile",         "npp",
                                           "nvrtc",          "nvjpeg",
                                           "nvToolsExt",     "nvPTXCompiler",
                                           "nvJitLink",      "nvperf",
                                           "nvfatbin",       "sm_",
                                           "device_",        "surface_",
                                           "texture_",       "vector_functions",
                                           "math_functions", "generated_cuda"};
    for (const char* e : exact)
        if (name == e) return true;
    for (const char* p : prefixes)
        if (starts_with(name, p)) return true;
    return false;
}

std::optional<Version> release_from_debian_version(std::string_view version) {
    std::string v(version);
    if (size_t colon = v.find(':'); colon != std::string::npos) v = v.substr(colon + 1); // epoch
    if (size_t dash = v.rfind('-'); dash != std::string::npos) v.resize(dash);           // revision
    // Newer packages put the component version first: 11.8.89~11.8.0.
    if (size_t tilde = v.rfind('~'); tilde != std::string::npos) v = v.substr(tilde + 1);
    auto r = parse_version(v, 3, 3);
    // A release's third number is its update (11.8.0, 11.5.1); 10.1.243 is a build number.
    if (!r || r->parts[2] >= 20) return std::nullopt;
    return r;
}

} // namespace cvm
