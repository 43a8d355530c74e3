#pragma once
// The few operating-system services the probe needs, behind plain functions so that they can move
// to src/platform later. os_posix.cpp and os_windows.cpp implement them; CMake picks one.

#include <string>
#include <vector>

namespace cvm::probe::os {

// An opened shared library; null when the open failed.
using LibraryHandle = void*;

// Loads a library by its bare name through the system's normal search (dlopen / LoadLibrary),
// exactly as a program asking for that name would. On failure returns null and sets `error`.
LibraryHandle open_library(const std::string& name, std::string& error);

// The address of `symbol` in `library`, or null.
void* find_symbol(LibraryHandle library, const char* symbol);

// The path the loader used for an opened library, resolved to a real path where possible.
std::string library_path(LibraryHandle library, const char* any_symbol);

// `symbol` as the already loaded module `real_path` itself defines it (not a library it
// depends on); null when that module is not loaded or lacks it. Never loads anything.
void* module_own_symbol(const std::string& real_path, const char* symbol);

struct LoadedModule {
    std::string path;      // as the loader names it
    std::string real_path; // symbolic links resolved
};

// Every module mapped into the process right now (dl_iterate_phdr / EnumProcessModules).
std::vector<LoadedModule> loaded_modules();

struct SearchFolder {
    std::string path;
    std::string origin; // e.g. "LD_LIBRARY_PATH", "RUNPATH", "system default", "PATH"
};

// The folders the loader searches for a bare library name from this program, in order.
std::vector<SearchFolder> library_search_folders();

// Entries of the loader's cache (Linux ld.so.cache) whose name starts with `prefix`, as
// "name => path" lines; empty where the system has no such cache.
std::vector<std::string> loader_cache_entries(const std::string& prefix);

// Candidate file names for the CUDA runtime and cuDNN on this OS. `major` < 0 means all known.
std::vector<std::string> cudart_names(int major);
std::vector<std::string> cudnn_names(int major);
// NCCL's: libnccl.so.2 on Linux; none on Windows, where NVIDIA publishes no NCCL.
std::vector<std::string> nccl_names();
// True for libnccl.so* (NCCL is also a CUDA module for the report's list).
bool is_nccl_module_name(const std::string& file_name);

// Sets a variable of this process's environment unless it is set already; true when set here.
bool set_env_if_unset(const char* name, const std::string& value);
// Every variable of this process's environment whose name starts with `prefix`, as NAME=VALUE.
std::vector<std::string> environment_with_prefix(const std::string& prefix);
// A new empty file in the temporary folder; "" when none can be made.
std::string make_temporary_file(const std::string& prefix);

// True when a module file name belongs to CUDA or cuDNN (libcudnn*, libcudart*, libcuda.so*,
// cudnn64_9.dll, nvcuda.dll, ...).
bool is_cuda_module_name(const std::string& file_name);

// True when a module file name is one of cuDNN's libraries (front or sub-library).
bool is_cudnn_module_name(const std::string& file_name);
// True when a module file name is the CUDA runtime (libcudart.so.*, cudart64_*.dll).
bool is_cudart_module_name(const std::string& file_name);

// The same folder, compared as the OS does (after resolving links; case-blind on Windows).
bool same_folder(const std::string& a, const std::string& b);

} // namespace cvm::probe::os
