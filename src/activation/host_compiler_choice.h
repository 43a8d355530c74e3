#pragma once
// The kept side of `host_compiler = "auto"`: cheap on purpose (the shim reads it before every
// tool, and every activation puts it into CUDAHOSTCXX / NVCC_CCBIN, see environment.h).
// The choice itself is made by `cvm use`, `cvm rehash` and `cvm current`
// (compat/auto_host_compiler.h) and kept in one small file per toolkit,
// $CVM_ROOT/cache/host-compiler/<toolkit id>:
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

#include "activation/environment.h"

namespace cvm {

struct HostCompilerChoice {
    std::string ccbin;    // the compiler handed to nvcc; "" when there is nothing to hand over
    bool via_env = false; // through NVCC_CCBIN (the nvcc reads it) rather than -ccbin
    std::string why;      // one line
    std::string line;     // what `cvm current` prints ("" when nvcc's own compiler fits)
};

// The cache file of a toolkit; empty when the id cannot be a file name.
std::filesystem::path host_compiler_cache_file(const std::filesystem::path& root,
                                               const std::string& toolkit_id);
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

// The kept choice of `toolkit_id` as activations hand it over: nothing when CVM_HOST_COMPILER=off,
// when there is no kept file, when it names nothing to hand over or a compiler that is gone, or
// when another user could have written it or could now change the compiler it names
// (program_trust.h; then a warning line on stderr).
HostCompiler handed_host_compiler(const std::filesystem::path& root, const std::string& toolkit_id);

// The nvcc's command line, run after the environment of the selection is set: `-ccbin X` is
// inserted after argv[0] for an nvcc that does not read NVCC_CCBIN, unless the user named a
// compiler on the command line or in NVCC_PREPEND_FLAGS / NVCC_APPEND_FLAGS. X is the user's own
// NVCC_CCBIN (one cvm did not set: kHostCompilerMark) when there is one, else `handed`'s.
// `reads_env`: the nvcc reads NVCC_CCBIN itself (then nothing is inserted).
void add_ccbin_argument(const HostCompiler& handed, bool reads_env, std::vector<std::string>& args);

} // namespace cvm
