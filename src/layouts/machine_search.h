#pragma once
// `cvm import --detect`: the folders on this machine that may hold a CUDA toolkit or a cuDNN,
// each with where it was found. Only candidates: `cvm import`'s own detection decides what each
// folder holds.
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "platform/platform.h"

namespace cvm {

namespace fs = std::filesystem;

// Runs `python -c` printing sysconfig's purelib and platlib; a python still running after
// `timeout_ms` is killed and gives nothing.
std::vector<fs::path> python_site_packages(const std::string& python, int timeout_ms = 10000);

// True when a toolkit folder was assembled from NVIDIA's wheels: it keeps their records in
// <dir>/dist-info/nvidia_*.dist-info (the real /usr/local/cuda-13.0 of this project's machines),
// which `cvm verify` compares its files with; it is not NVIDIA's installer's.
bool assembled_from_wheels(const fs::path& dir);

struct DiscoveredFolder {
    fs::path dir;
    std::string found; // "CUDA_PATH_V11_8", "Debian package nvidia-cuda-toolkit", ...
};

struct DiscoverInputs {
    // Stands for the machine's / (CVM_DETECT_ROOT in tests): usr, opt, var/lib/dpkg below it.
    fs::path root = "/";
    std::map<std::string, std::string> env; // CUDA_PATH*, CONDA_PREFIX, ProgramFiles
    fs::path home;                          // for ~/.conda/environments.txt
    platform::Os os = platform::host_os();
    std::string python; // the interpreter whose wheels are looked at; empty for none
    // Asks `python` for its site-packages folders (empty when it cannot tell).
    std::function<std::vector<fs::path>(const std::string&)> site_packages = [](const std::string& py) {
        return python_site_packages(py);
    };
};

// This process's environment, CVM_DETECT_ROOT, HOME, and the python of CVM_PYTHON, else
// $VIRTUAL_ENV, else python3 on PATH.
DiscoverInputs discover_inputs_from_environment();

// Every candidate folder, each once with every reason it was found for, in the order: CUDA_PATH_V*, the
// default toolkit folders, CUDA_PATH, Debian's toolkit, NVIDIA's cuDNN packages, conda
// environments, the python's wheels.
std::vector<DiscoveredFolder> discover_folders(const DiscoverInputs& in);

} // namespace cvm
