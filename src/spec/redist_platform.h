#pragma once
// NVIDIA's redist site: its base URL, and its platform names, as its manifests, archive names and
// cvm's registry spell them: "linux-x86_64", "linux-sbsa", "windows-x86_64", ... (and the OS part
// alone: "windows10").
#include <string_view>

namespace cvm {

// NVIDIA's download site: the base of its manifests and every redist URL, unless CVM_MIRROR
// replaces it (install/store_install.h, default_mirror).
constexpr const char* kNvidiaDownloadBase = "https://developer.download.nvidia.com/compute";

// Whether `platform` names a Windows platform ("windows-x86_64", "windows10", ...).
inline bool is_windows_platform(std::string_view platform) {
    return platform.substr(0, 7) == "windows";
}

} // namespace cvm
