#include "driver.h"

#include "core/detect.h"
#include "platform/platform.h"

#include <cctype>

namespace cvm::doctor {

namespace {

bool is_driver_version(std::string_view s) {
    // 2 to 4 dot-separated numbers: 580.159.04, 452.39, 31.0.15.3623 never appears here.
    int dots = 0;
    bool digit = false;
    for (char c : s) {
        if (std::isdigit(static_cast<unsigned char>(c))) {
            digit = true;
        } else if (c == '.' && digit) {
            ++dots;
            digit = false;
        } else {
            return false;
        }
    }
    return digit && dots >= 1 && dots <= 3;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return s;
}

} // namespace

std::optional<std::string> driver_version_from_proc(std::string_view text) {
    // The first line names the kernel module and its version; the version is the first token
    // after "Module" (proprietary and open modules word the line differently).
    const auto eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    if (line.find("NVRM") == std::string_view::npos) return std::nullopt;
    auto at = line.find("Module");
    if (at == std::string_view::npos) at = 0;
    std::string_view rest = line.substr(at);
    while (!rest.empty()) {
        while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.front())))
            rest.remove_prefix(1);
        auto end = rest.find_first_of(" \t");
        std::string_view token = rest.substr(0, end);
        if (is_driver_version(token)) return std::string(token);
        if (end == std::string_view::npos) break;
        rest.remove_prefix(end);
    }
    return std::nullopt;
}

std::vector<SmiGpu> gpus_from_smi(std::string_view text) {
    std::vector<SmiGpu> out;
    while (!text.empty()) {
        auto eol = text.find('\n');
        std::string_view line = text.substr(0, eol);
        text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
        auto comma = line.rfind(',');
        if (comma == std::string_view::npos) continue;
        auto name = trim(line.substr(0, comma));
        auto driver = trim(line.substr(comma + 1));
        if (name.empty() || !is_driver_version(driver)) continue;
        out.push_back({std::string(name), std::string(driver)});
    }
    return out;
}

DriverProbe default_driver_probe() {
    DriverProbe p;
    if (auto file = platform::get_env("CVM_PROC_DRIVER_VERSION"))
        p.proc_version_file = *file;
    else if (platform::host_os() == platform::Os::Windows)
        p.proc_version_file.clear();
    if (auto smi = platform::get_env("CVM_NVIDIA_SMI")) {
        p.nvidia_smi = *smi;
    } else {
        auto path = platform::get_env("PATH");
        auto found = platform::find_executable("nvidia-smi", path ? *path : std::string());
        if (!found.empty()) p.nvidia_smi = found.u8string();
    }
    return p;
}

DriverInfo detect_driver(const DriverProbe& probe) {
    DriverInfo info;
    if (!probe.proc_version_file.empty()) {
        if (auto text = platform::read_file(fs::u8path(probe.proc_version_file), 1 << 16)) {
            if (auto v = driver_version_from_proc(*text)) {
                info.version = *v;
                info.source = probe.proc_version_file;
            } else {
                info.notes.push_back(probe.proc_version_file + " names no driver version");
            }
        }
    }
    if (!probe.nvidia_smi.empty()) {
        auto out = platform::capture_output(
            fs::u8path(probe.nvidia_smi),
            {probe.nvidia_smi, "--query-gpu=name,driver_version", "--format=csv,noheader"});
        if (!out) {
            info.notes.push_back(probe.nvidia_smi + " could not be run");
        } else {
            auto gpus = gpus_from_smi(*out);
            info.smi_ran = true;
            for (const auto& g : gpus)
                info.gpus.push_back(g.name);
            if (gpus.empty()) {
                std::string first_line = std::string(trim(out->substr(0, out->find('\n'))));
                info.notes.push_back(probe.nvidia_smi + " lists no GPU" +
                                     (first_line.empty() ? "" : ": " + first_line));
            } else if (!info.version) {
                info.version = gpus.front().driver;
                info.source = probe.nvidia_smi;
            }
        }
    }
    return info;
}

} // namespace cvm::doctor
