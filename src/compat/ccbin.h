#pragma once
// The shim's side of `host_compiler = "auto"`: cheap on purpose (it runs before every nvcc).
// The choice itself is made by `cvm use`, `cvm rehash` and `cvm current` (auto_host_compiler.h)
// and kept in one small file per toolkit, $CVM_ROOT/cache/host-compiler/<toolkit id>:
//
//   ccbin /usr/bin/clang++-14
//   via arg            (or: via env, for an nvcc that reads NVCC_CCBIN)
//   why gcc 12.2.0 (/usr/bin/gcc) is newer than CUDA 11.8 supports (gcc up to 11, clang 3.3 to 14)
//   line host compiler: /usr/bin/clang++-14 is handed to nvcc (-ccbin, CUDAHOSTCXX): ...
//
// ("via none" and no ccbin: worked out, nothing to hand over.)
// The shim reads it, runs no compiler and parses no TOML.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cvm::compat {

struct HostCompilerChoice {
    std::string ccbin;    // the compiler handed to nvcc; "" when there is nothing to hand over
    bool via_env = false; // through NVCC_CCBIN (the nvcc reads it) rather than -ccbin
    std::string why;      // one line
    std::string line;     // what `cvm current` prints ("" when nvcc's own compiler fits)
};

// The cache file of a toolkit; empty when the id cannot be a file name.
std::filesystem::path host_compiler_cache_file(const std::filesystem::path& root, const std::string& toolkit_id);
std::string format_host_compiler_choice(const HostCompilerChoice& c);
// nullopt when the text is not such a file; a choice with an empty ccbin when it records that
// there is nothing to hand over.
std::optional<HostCompilerChoice> parse_host_compiler_choice(std::string_view text);

// The value of -ccbin / --compiler-bindir (any of `-ccbin X`, `-ccbin=X`, `--compiler-bindir X`,
// `--compiler-bindir=X`) among `args`; nullopt when none names one.
std::optional<std::string> ccbin_in_args(const std::vector<std::string>& args);
// NVCC_PREPEND_FLAGS / NVCC_APPEND_FLAGS split into words (blanks separate; quotes group).
std::vector<std::string> split_flag_words(std::string_view text);

// Whether the user already chose nvcc's host compiler: -ccbin on the command line (args[1..]),
// in NVCC_PREPEND_FLAGS or NVCC_APPEND_FLAGS, or NVCC_CCBIN set.
bool user_chose_host_compiler(const std::vector<std::string>& args,
                              const std::optional<std::string>& prepend_flags,
                              const std::optional<std::string>& append_flags,
                              const std::optional<std::string>& nvcc_ccbin);

// The shim's step for nvcc: unless CVM_HOST_COMPILER=off or the user chose a compiler, hand over
// the cached choice of `toolkit_id` (when its compiler still exists): NVCC_CCBIN for an nvcc
// that reads it, else `-ccbin X` inserted after argv[0]; CUDAHOSTCXX when unset. Edits `args`
// and this process's environment; does nothing for other programs.
void apply_host_compiler(const std::filesystem::path& root, const std::string& toolkit_id,
                         const std::string& tool_base, std::vector<std::string>& args);

} // namespace cvm::compat
