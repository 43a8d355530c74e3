// cvm-probe's command line and the environment it warns about.
#include "arguments.h"

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace cvm::probe {

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
           "                   with --nccl on one GPU: time its all-reduce at every size too\n"
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
        } else
            parsed.error = "unknown argument '" + arg + "'";
        if (!parsed.error.empty()) break;
    }
    if (parsed.error.empty() && parsed.options.nccl_min_bytes > parsed.options.nccl_max_bytes)
        parsed.error = "--nccl-min-bytes is larger than --nccl-max-bytes";
    if (parsed.error.empty() && parsed.options.skip_cudnn && !parsed.options.nccl)
        parsed.error = "--no-cudnn leaves nothing to probe without --nccl";
    return parsed;
}

} // namespace cvm::probe
