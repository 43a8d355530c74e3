// The report's verdict (Report::ok) and the words both renderings and the probe use for its
// values: versions, sizes, compute capabilities.
#include "report.h"

#include <cctype>

namespace cvm::probe {

std::string cc_text(int major, int minor) {
    return major >= 0 ? std::to_string(major) + "." + std::to_string(minor) : "";
}

std::string size_label(std::size_t bytes) {
    if (bytes >= (std::size_t(1) << 30) && bytes % (std::size_t(1) << 30) == 0)
        return std::to_string(bytes >> 30) + " GiB";
    if (bytes >= (std::size_t(1) << 20) && bytes % (std::size_t(1) << 20) == 0)
        return std::to_string(bytes >> 20) + " MiB";
    if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
    return std::to_string(bytes) + " B";
}

std::string one_gpu_note() {
    return "one GPU: its one-rank all-reduce moves nothing between GPUs, so no link is measured";
}

bool Report::ok() const {
    if (!problems.empty()) return false;
    if (cudnn_skipped && !nccl.asked) return false;
    if (!cudnn_skipped) {
        if (convolutions.empty()) return false;
        for (const auto& c : convolutions)
            if (!c.ran || !c.comparison.matched) return false;
    }
    if (nccl.asked) {
        if (!nccl.ran()) return false;
        for (const auto& s : nccl.sizes)
            if (!s.matched()) return false;
    }
    return true;
}

int cudnn_version_major(long long v) {
    if (v < 0) return -1;
    return static_cast<int>(v >= 90000 ? v / 10000 : v / 1000);
}

std::string cudnn_version_text(long long v) {
    if (v < 0) return {};
    long long major = cudnn_version_major(v);
    long long rest = v >= 90000 ? v % 10000 : v % 1000;
    return std::to_string(major) + "." + std::to_string(rest / 100) + "." +
           std::to_string(rest % 100);
}

std::string cuda_version_text(long long v) {
    if (v < 0) return {};
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

int major_from_library_name(const std::string& name) {
    std::string file = name.substr(name.find_last_of("/\\") + 1);
    std::size_t at = file.find(".so.");
    if (at != std::string::npos) {
        at += 4;
    } else {
        std::size_t dll = file.rfind(".dll");
        std::size_t underscore = file.rfind('_', dll);
        if (dll == std::string::npos || underscore == std::string::npos) return -1;
        at = underscore + 1;
    }
    int major = 0;
    std::size_t digits = 0;
    while (at < file.size() && std::isdigit(static_cast<unsigned char>(file[at])) && digits < 6) {
        major = major * 10 + (file[at++] - '0');
        ++digits;
    }
    return digits ? major : -1;
}

} // namespace cvm::probe
