#pragma once
// NVIDIA's platform names, as its manifests, archive names and cvm's registry spell them:
// "linux-x86_64", "linux-sbsa", "windows-x86_64", ... (and the OS part alone: "windows10").
#include <string_view>

namespace cvm {

// Whether `platform` names a Windows platform ("windows-x86_64", "windows10", ...).
inline bool is_windows_platform(std::string_view platform) {
    return platform.substr(0, 7) == "windows";
}

} // namespace cvm
