#pragma once
// Emulation of the Windows DLL search for a DLL name, as a pure function of its inputs (works on
// any host: tests use ordinary folders). File names compare case-insensitively, as on NTFS.
//
// Standard order for desktop applications (SafeDllSearchMode on, the default):
//   the application's folder, System32, the 16-bit System folder, the Windows folder,
//   the current folder, then each PATH folder. With SafeDllSearchMode off the current folder
//   comes second.
// Python 3.8 and later load extension modules with LOAD_LIBRARY_SEARCH_DEFAULT_DIRS |
// LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR, so a .pyd's dependencies are searched in: the .pyd's own
// folder, the application (python.exe) folder, the os.add_dll_directory folders, System32 -
// never PATH nor the current folder.
// Not modelled: KnownDLLs, already-loaded modules, side-by-side manifests, API sets (none of
// them concerns CUDA or cuDNN DLLs).

#include "file_system_view.h"
#include "linux_loader.h" // CandidateStatus

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cvm::doctor {

enum class WindowsSearchMode {
    standard,         // LoadLibrary with the default (safe) search order
    standard_unsafe,  // SafeDllSearchMode disabled in the registry
    python_extension, // dependencies of a Python 3.8+ extension module
};
const char* to_string(WindowsSearchMode m);

enum class WindowsMechanism {
    direct_path,
    dll_load_dir,
    application_dir,
    system32,
    system16,
    windows_dir,
    current_dir,
    path_env,
    user_dir, // AddDllDirectory / os.add_dll_directory
};
const char* to_string(WindowsMechanism m);

struct WindowsSearchConfig {
    WindowsSearchMode mode = WindowsSearchMode::standard;
    std::string application_dir; // folder of the .exe (python.exe for Python)
    std::string system32_dir;    // e.g. C:\Windows\System32
    std::string system16_dir;    // e.g. C:\Windows\System
    std::string windows_dir;     // e.g. C:\Windows
    std::string current_dir;
    std::optional<std::string> path;          // the PATH value, ';'-separated
    std::vector<std::string> dll_directories; // os.add_dll_directory, in the order they were added
    std::string loading_module_dir;           // python_extension: the folder of the .pyd
    // The process's machine (pe::machine_amd64, ...); 0: not checked.
    std::uint16_t machine = 0;
};

struct WindowsCandidate {
    std::string path; // the folder joined with the name as it is spelled on disk
    WindowsMechanism mechanism = WindowsMechanism::path_env;
    std::string origin; // "PATH entry 3", "os.add_dll_directory", ...
    CandidateStatus status = CandidateStatus::not_found;
    std::string detail;
};

struct WindowsSearchResult {
    std::string name;
    WindowsSearchMode mode = WindowsSearchMode::standard;
    std::vector<WindowsCandidate> candidates;
    std::optional<std::size_t> winner;
    // The first file found is of another machine: LoadLibrary fails there (ERROR_BAD_EXE_FORMAT).
    std::optional<std::size_t> failed_at;

    const WindowsCandidate* selected() const { return winner ? &candidates[*winner] : nullptr; }
    std::vector<const WindowsCandidate*> shadowed() const;
};

WindowsSearchResult search_windows_dll(const std::string& name, const WindowsSearchConfig& config,
                                       const FileSystemView& fs);

// Splits a Windows PATH value at ';', dropping empty entries and surrounding double quotes.
std::vector<std::string> split_windows_path(const std::string& value);

// ASCII case-insensitive comparison, as NTFS compares file names for ASCII.
bool iequals(const std::string& a, const std::string& b);

} // namespace cvm::doctor
