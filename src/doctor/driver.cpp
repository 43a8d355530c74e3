#include "driver.h"

#include "binary/elf_reader.h"
#include "text/ascii.h"
#include "cuda_libraries.h"
#include "file_system_view.h"

#include "layouts/folder_facts.h"
#include "config/program_trust.h"
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

std::vector<std::pair<std::string_view, std::string_view>>
smi_name_value_rows(std::string_view text) {
    std::vector<std::pair<std::string_view, std::string_view>> out;
    while (!text.empty()) {
        auto eol = text.find('\n');
        std::string_view line = text.substr(0, eol);
        text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
        auto comma = line.rfind(',');
        if (comma == std::string_view::npos) continue;
        auto name = ascii_trim(line.substr(0, comma));
        if (!name.empty()) out.emplace_back(name, ascii_trim(line.substr(comma + 1)));
    }
    return out;
}

std::vector<SmiGpu> gpus_from_smi(std::string_view text) {
    std::vector<SmiGpu> out;
    for (const auto& [name, driver] : smi_name_value_rows(text))
        if (is_driver_version(driver)) out.push_back({std::string(name), std::string(driver)});
    return out;
}

DriverProbe default_driver_probe() {
    DriverProbe p;
    if (auto file = platform::get_env("CVM_PROC_DRIVER_VERSION"))
        p.proc_version_file = *file;
    else if (platform::host_os() == platform::Os::Windows)
        p.proc_version_file.clear();
    if (auto libs = platform::get_env("CVM_LIBCUDA")) {
        for (const auto& item :
             binary::split_search_path(*libs, platform::host_os() == platform::Os::Windows))
            if (!item.empty()) p.user_space_libraries.push_back(item);
    } else if (platform::host_os() == platform::Os::Windows) {
        auto root = platform::get_env("SystemRoot").value_or("C:\\Windows");
        p.user_space_libraries = {root + "\\System32\\nvcuda.dll"};
    } else {
        p.user_space_libraries = {"/usr/lib/x86_64-linux-gnu/libcuda.so.1",
                                  "/usr/lib64/libcuda.so.1",
                                  "/usr/lib/aarch64-linux-gnu/libcuda.so.1",
                                  "/usr/lib/wsl/lib/libcuda.so.1", "/usr/lib/libcuda.so.1"};
    }
    if (auto smi = platform::get_env("CVM_NVIDIA_SMI")) {
        p.nvidia_smi = *smi;
    } else {
        auto path = platform::get_env("PATH");
        auto found = find_trusted_program("nvidia-smi", path ? *path : std::string());
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
                std::string first_line = std::string(ascii_trim(out->substr(0, out->find('\n'))));
                info.notes.push_back(probe.nvidia_smi + " lists no GPU" +
                                     (first_line.empty() ? "" : ": " + first_line));
            } else if (!info.version) {
                info.version = gpus.front().driver;
                info.source = probe.nvidia_smi;
            }
        }
    }
    if (!info.version) {
        for (const auto& lib : probe.user_space_libraries) {
            if (!platform::exists(lib)) continue;
            std::optional<std::string> v;
            std::string real = lib;
            if (auto dll = dll_file_version(lib, RealFileSystem())) {
                v = driver_version_from_nvcuda(dll->parts[2], dll->parts[3]);
            } else if (auto so = linux_library_version(lib, RealFileSystem())) {
                real = so->real_path;
                if (is_driver_version(so->version)) v = so->version;
            }
            if (!v) continue;
            info.version = *v;
            info.source = real;
            info.user_space_only = true;
            break;
        }
    }
    return info;
}

std::optional<std::string> driver_version_from_nvcuda(unsigned third, unsigned fourth) {
    if (fourth > 9999) return std::nullopt;
    unsigned number = (third % 10) * 10000 + fourth; // 15.3623 -> 53623
    if (number < 10000) return std::nullopt;
    std::string minor = std::to_string(number % 100);
    if (minor.size() < 2) minor = "0" + minor;
    return std::to_string(number / 100) + "." + minor;
}

} // namespace cvm::doctor
