#pragma once
// The readers of cuda.toml's and cudnn.toml's tables (load.cpp), shared with the `cvm update`
// overlay (overlay.cpp), whose rows have the same keys. Not part of the registry's interface.
#include <string>

#include <toml++/toml.h>

#include "registry/registry.h"

namespace cvm::registry {

// Reads the [[minor_compat]] and [[release]] tables of `root` (as cuda.toml has them) into `reg`,
// sorted. Throws RegistryError at "<file>:<line>:<column>: <key>: <problem>".
void read_cuda_tables(const toml::table& root, const std::string& file, Registry& reg);
// The same for cudnn.toml's [[library_set]] and [[release]] tables.
void read_cudnn_tables(const toml::table& root, const std::string& file, Registry& reg);

} // namespace cvm::registry
