#pragma once
// The host compiler nvcc would use here, the compilers installed, and the choice cvm hands to
// nvcc with `host_compiler = "auto"`. These run compilers (`--version`), so they belong to `cvm
// use`, `cvm rehash`, `cvm current` and `cvm doctor`, never to the shim (activation/host_compiler_choice.h reads the result).
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "activation/host_compiler_choice.h"
#include "compat/compiler_id.h"
#include "compat/host_compiler_limits.h"
#include "platform/platform.h"

namespace cvm::compat {

struct HostCompilerQuery {
    platform::Os os = platform::host_os();
    std::vector<std::string> nvcc_args;     // the command line after `nvcc` (empty for doctor)
    std::map<std::string, std::string> env; // NVCC_PREPEND_FLAGS, NVCC_APPEND_FLAGS, NVCC_CCBIN, PATH
    std::filesystem::path nvcc;             // the toolkit's nvcc (its nvcc.profile is read)
    bool nvcc_reads_ccbin_env = false;      // nvcc_reads_ccbin_env() of that nvcc
    std::vector<std::filesystem::path> visual_studio_roots; // Windows: "...\Microsoft Visual Studio"
    std::filesystem::path visual_studio_instances; // Windows: the Visual Studio Installer's records
    std::filesystem::path skip_dir;         // cvm's shims folder: never a compiler
};

struct FoundCompiler {
    std::string path;   // the program
    std::string origin; // "-ccbin on the command line", "NVCC_APPEND_FLAGS", "NVCC_CCBIN", "PATH", ...
    std::optional<CompilerId> id;
    std::string said; // unidentified: the first line it printed (stderr too)
    // Not run: why another user could change it (config/program_trust.h); "" when trusted.
    std::string untrusted;
    bool exists = false;
    // nvcc picked it itself (from PATH), rather than the user naming it: auto may replace it.
    bool chosen_by_nvcc() const { return origin == "PATH" || origin == "nvcc.profile's PATH"; }
};

// The compiler nvcc would use for `query`: -ccbin/--compiler-bindir on the command line, then
// in NVCC_PREPEND_FLAGS / NVCC_APPEND_FLAGS, then NVCC_CCBIN (an nvcc that reads it), then gcc
// on PATH after nvcc.profile's additions (Linux) or cl.exe on PATH (Windows; nvcc looks nowhere
// else). The compiler is run to identify it, unless another user could change it (then
// `untrusted` says why, and it is not run).
FoundCompiler find_nvcc_host_compiler(const HostCompilerQuery& query);

// Runs `program --version` (gcc, clang) or reads the MSVC toolset folder of a cl.exe (elsewhere
// cl.exe's banner). Unidentified, `said` (when given) gets the first line the program printed.
std::optional<CompilerId> identify_compiler(const std::filesystem::path& program, platform::Os os,
                                            std::string* said = nullptr);

// The C++ host compilers installed: g++, g++-N, clang++, clang++-N on PATH (Linux); cl.exe of
// every MSVC toolset of the Visual Studio installs (Windows; visual_studio.h). Identified; newest
// first per kind. One that another user could change (program_trust.h) is skipped with a note,
// never run, and does not hide one of the same name further on PATH.
std::vector<FoundCompiler> installed_host_compilers(const HostCompilerQuery& query);

// Whether an nvcc program reads NVCC_CCBIN (its file holds the name); nullopt when unreadable.
std::optional<bool> nvcc_reads_ccbin_env(const std::filesystem::path& nvcc);

struct HostCompilerStatus {
    FoundCompiler nvcc_default;                // what nvcc would use unaided
    std::optional<HostCompilerLimits> limits;  // nullopt: nothing known for this toolkit
    Verdict verdict = Verdict::Unknown;        // of nvcc_default (Unknown also when not found)
    std::optional<HostCompilerChoice> choice;  // what auto hands over; nullopt: nothing to do / none fits
    std::string problem;                       // one line when the default does not fit ("" when fine)
};

// The judgement and, when the default compiler does not fit, the best supported installed one
// (newest gcc, then newest clang; newest MSVC on Windows).
HostCompilerStatus host_compiler_status(const HostCompilerQuery& query, const HostCompilerLimits* limits);

// "auto" or "off": CVM_HOST_COMPILER, else host_compiler of the config files (user's first),
// else "auto".
std::string host_compiler_mode();

} // namespace cvm::compat
