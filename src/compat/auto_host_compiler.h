#pragma once
// `host_compiler = "auto"`: works out, for one toolkit of the store, whether nvcc's own choice
// of host compiler fits it and which installed compiler to hand over when not, and keeps the
// answer in the toolkit's cache file for the shim (activation/host_compiler_choice.h). Run by `cvm use`, `cvm rehash`
// and `cvm current`.
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compat/host_compiler.h"
#include "store/store.h"

namespace cvm::compat {

// The query for a toolkit of the store with this process's PATH (cvm's shims skipped) and no
// user flags: what nvcc picks unaided.
HostCompilerQuery toolkit_query(const Store& store, const Entry& toolkit);

// Whether the toolkit's nvcc reads NVCC_CCBIN: its program holds the name, else (unreadable) the
// registry's first release that does.
bool nvcc_honours_ccbin_env(const Entry& toolkit);

// The limits of a toolkit: its own host_config.h, else the registry's row; nullopt when none.
std::optional<HostCompilerLimits> toolkit_limits(const Entry& toolkit);

// Computes the status of `toolkit` and writes its cache file (removes it when there is nothing
// to hand over or the mode is "off"). Never throws for a cache it cannot write: the status
// still says what it found.
HostCompilerStatus refresh_host_compiler(const Store& store, const Entry& toolkit);

// What `cvm current` shows: the kept answer of `cvm use` / `cvm rehash` (worked out and kept
// now when there is none, or when the compiler it names is one another user could change now), so
// that it runs no compiler once the answer is known. nullopt when the mode is off.
std::optional<HostCompilerChoice> kept_host_compiler(const Store& store, const Entry& toolkit);

// One line for `cvm current` / `cvm use`: what auto hands over and why, or that nothing installed
// fits with what to install; "" when nvcc's own compiler fits or nothing is known.
std::string host_compiler_line(const HostCompilerStatus& status);
// Of `names`, those the machine's distribution has a package of; nullopt when that cannot be known.
using PackageCheck =
    std::function<std::optional<std::set<std::string>>(const std::vector<std::string>&)>;
// apt's answer (`apt-cache policy`, or CVM_APT_CACHE for tests) on a machine that has apt and its
// package lists; empty elsewhere.
PackageCheck distribution_packages();

// What to install for a toolkit whose host compiler does not fit ("install g++-11 (apt install
// g++-11) or clang-14 ..." / "install the MSVC 14.39 build tools ..."): packages only where
// `packaged` says the distribution has them, else the compilers' versions.
std::string host_compiler_fix(const HostCompilerLimits& limits, platform::Os os,
                              const PackageCheck& packaged);
// The same with this machine's distribution_packages() (for `os` the host's).
std::string host_compiler_fix(const HostCompilerLimits& limits, platform::Os os);

} // namespace cvm::compat
