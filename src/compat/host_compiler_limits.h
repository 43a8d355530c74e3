#pragma once
// Which host compilers a CUDA release's nvcc accepts: from registry/host_compilers.toml, or from
// an installed toolkit's own include/crt/host_config.h (the check nvcc really makes), and the
// judgement of one compiler against them. Loading does I/O; judging is pure.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compat/compiler_id.h"
#include "spec/spec.h"

namespace cvm::compat {

struct HostCompilerLimits {
    Version cuda;                      // major.minor
    std::optional<unsigned> gcc_max;   // newest gcc major
    Version clang_min;                 // 3.3
    std::optional<unsigned> clang_max; // newest clang major
    std::optional<unsigned> msc_min, msc_max; // _MSC_VER, both included
    std::vector<std::string> visual_studio;
    std::string source;
    std::vector<std::string> inferred;

    // "gcc up to 11, clang 3.3 to 14" (Linux) / "MSVC 1910 to 1939 (Visual Studio 2017 to 2022)".
    std::string describe(bool windows) const;
};

struct HostCompilerTable {
    std::vector<HostCompilerLimits> rows; // sorted by cuda
    Version nvcc_ccbin_env;               // first release whose nvcc reads NVCC_CCBIN
    bool nvcc_ccbin_inferred = true;
    std::string nvcc_ccbin_source;
};

// Parses host_compilers.toml; `origin` names it in errors. Throws registry::RegistryError.
HostCompilerTable parse_host_compiler_table(std::string_view text, const std::string& origin);
// host_compilers.toml of the registry folder (registry::locate_registry_dir), else the copy
// compiled in. Throws registry::RegistryError.
HostCompilerTable load_host_compiler_table();

// The row of a toolkit's major.minor; nullptr when the table has none.
const HostCompilerLimits* limits_for(const HostCompilerTable& table, const Version& cuda);

// The limits host_config.h enforces (`#if __GNUC__ > 11`, `#if (__clang_major__ >= 15) ...`,
// `#if _MSC_VER < 1910 || _MSC_VER >= 1940`); nullopt when the text holds none of them.
std::optional<HostCompilerLimits> limits_from_host_config(std::string_view header,
                                                          const Version& cuda);
// The toolkit's own host_config.h: include/crt/ or targets/*/include/crt/ under `toolkit_root`,
// or beside the real nvcc (../include/crt/). nullopt when none is readable.
std::optional<HostCompilerLimits> read_toolkit_host_config(const std::filesystem::path& toolkit_root,
                                                           const Version& cuda);

enum class Verdict { Supported, TooNew, TooOld, Unknown };
// Unknown: the limits say nothing about this kind (e.g. MSVC against Linux-only data).
Verdict judge(const HostCompilerLimits& limits, const CompilerId& compiler);

} // namespace cvm::compat
