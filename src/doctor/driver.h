#pragma once
// The NVIDIA driver and GPUs of this machine: from /proc/driver/nvidia/version (Linux) or
// `nvidia-smi --query-gpu=name,driver_version --format=csv,noheader`. Tests point both at fakes
// through CVM_PROC_DRIVER_VERSION (a file path) and CVM_NVIDIA_SMI (a program path).

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cvm::doctor {

struct DriverInfo {
    std::optional<std::string> version; // "580.159.04"
    std::string source;                 // the file or program it came from
    std::vector<std::string> gpus;      // GPU names (nvidia-smi); empty when none or unknown
    bool smi_ran = false;               // nvidia-smi answered (so an empty `gpus` means none)
    bool user_space_only = false;       // the version came from libcuda.so.1 / nvcuda.dll alone
    std::vector<std::string> notes;     // what could not be read, for the report
};

// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu ..." gives "580.159.04".
std::optional<std::string> driver_version_from_proc(std::string_view text);

// The rows of `nvidia-smi --query-gpu=name,FIELD --format=csv,noheader` as (name, FIELD), both
// trimmed: the name may hold commas, so FIELD is what follows the last one. Empty names are left out.
std::vector<std::pair<std::string_view, std::string_view>> smi_name_value_rows(std::string_view text);

struct SmiGpu {
    std::string name;
    std::string driver;
};
// Lines "NVIDIA H200, 580.159.04" of `nvidia-smi --query-gpu=name,driver_version
// --format=csv,noheader`; lines that do not fit are skipped.
std::vector<SmiGpu> gpus_from_smi(std::string_view text);

struct DriverProbe {
    std::string proc_version_file = "/proc/driver/nvidia/version"; // empty: do not read
    std::string nvidia_smi;                                        // empty: do not run
    // The driver's user-space library, read when neither answers (libcuda.so.1's real file name
    // libcuda.so.535.261.03; nvcuda.dll's file version 31.0.15.3623 = 536.23). CVM_LIBCUDA (a
    // list, ':' or ';' separated; empty: none) replaces the default places in tests.
    std::vector<std::string> user_space_libraries;
};

// The driver version of nvcuda.dll's file version: 31.0.15.3623 -> "536.23" (the last five
// digits of the last two numbers). nullopt when it does not fit.
std::optional<std::string> driver_version_from_nvcuda(unsigned third, unsigned fourth);
// The probe of this process: CVM_PROC_DRIVER_VERSION and CVM_NVIDIA_SMI when set, else the
// default file (Linux) and `nvidia-smi` found on PATH.
DriverProbe default_driver_probe();

DriverInfo detect_driver(const DriverProbe& probe);

} // namespace cvm::doctor
