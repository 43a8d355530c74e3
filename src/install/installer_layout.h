#pragma once
// What a toolkit install takes from NVIDIA's installers, and where it goes: the paths of the
// Linux runfile's payload and of the Windows installer's 7-Zip archive, mapped to the layout a
// redist (manifest) install of the same components has, so views, shims, env and doctor treat
// both alike.
//
//   runfile 11.x   builds/<component>/{bin,include,lib64,nvvm,...}   lib64/ -> lib/
//                  builds/<component>/targets/<arch>-linux/{include,lib}/ -> include/, lib/
//   runfile 10.1+  builds/cuda-toolkit/ (one merged tree) and builds/cublas/
//   runfile <10.1  run_files/*.run (installers inside the installer): refused
//   win 11.x       <component>/<part>/{bin,include,lib/x64,nvvm,...} (e.g. cuda_nvcc/nvcc/,
//                  libcublas/cublas/ and libcublas/cublas_dev/)
// The driver, samples, documentation and Nsight tools are never taken.
#include <optional>
#include <string>

namespace cvm::install {

enum class InstallerFamily { LinuxRunfile, WindowsLocal };

// What an installer's file name says: cuda_11.2.2_460.32.03_linux.run,
// cuda_11.2.2_461.33_win10.exe, cuda_12.0.0_windows_network.exe, ..._linux_sbsa.run.
struct InstallerName {
    std::string version;  // "11.2.2"
    std::string driver;   // "460.32.03"; empty when the name has none
    std::string platform; // "linux-x86_64", "linux-sbsa", "linux-ppc64le", "windows-x86_64"
    bool network = false; // a network installer (no payload)
};
std::optional<InstallerName> parse_installer_name(const std::string& file_name);

// Where an extracted path goes: the component it belongs to and its path in the toolkit root
// ('/'-separated). `component` is "cuda-toolkit" for the merged tree of 10.x runfiles.
struct PlacedPath {
    std::string component;
    std::string path;
};

// Whether extraction writes `path` at all (the toolkit's components and the version files).
bool installer_path_wanted(InstallerFamily family, const std::string& path);

// Where `path` goes; nullopt for what is not installed (an installer's metadata, a link that
// only points into targets/). `is_symlink`: the entry is a symbolic link.
std::optional<PlacedPath> place_installer_path(InstallerFamily family, const std::string& path,
                                               bool is_symlink);

// The toolkit version a version file of the payload states: version.json's "cuda" entry or
// version.txt's "CUDA Version X.Y.Z"; empty when it states none.
std::string installer_toolkit_version(const std::string& version_file_text);

} // namespace cvm::install
