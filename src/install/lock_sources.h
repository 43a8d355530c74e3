#pragma once
// Which downloads `cvm install --locked` makes for a cvm.lock without being told to trust it: a
// release cvm's registry knows, from NVIDIA's site or the configured mirror. A repository's
// cvm.lock alone never decides where a build in the user's store comes from.
#include <string>
#include <vector>

#include "project/lockfile.h"
#include "registry/registry.h"

namespace cvm::install {

// Why each download cvm.lock asks for is not one cvm vouches for, in order (empty: all are).
// `to_download`: the locked toolchains missing from the store (imported ones are skipped: they
// download nothing). `mirror`: the configured mirror (default_mirror()); a URL of NVIDIA's shape
// <base>/<product>/redist/<path> is fetched from it whatever its host.
std::vector<std::string> untrusted_sources(const std::vector<const LockedToolchain*>& to_download,
                                           const registry::Registry* reg,
                                           const std::string& mirror);

} // namespace cvm::install
