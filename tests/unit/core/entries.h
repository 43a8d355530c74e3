#pragma once
// Store entries as `cvm import` writes them, for the core tests.
#include <filesystem>
#include <string>

#include "core/store.h"

namespace cvm::test {

inline Entry toolkit_entry(const std::string& id, const std::filesystem::path& path) {
    Entry e;
    e.kind = Kind::Cuda;
    e.id = id;
    e.version = *parse_version(id);
    e.path = path;
    e.imported = true;
    e.include_dirs = {"include"};
    e.lib_dirs = {"lib64"};
    e.bin_dirs = {"bin"};
    return e;
}

inline Entry cudnn_entry(const std::string& id, const std::filesystem::path& path) {
    auto c = parse_cudnn_id(id);
    Entry e;
    e.kind = Kind::Cudnn;
    e.id = id;
    e.version = c->version;
    e.cuda = c->cuda;
    e.path = path;
    e.imported = true;
    e.include_dirs = {"include"};
    e.lib_dirs = {"lib"};
    return e;
}

inline Entry nccl_entry(const std::string& id, const std::filesystem::path& path) {
    auto n = parse_nccl_id(id);
    Entry e;
    e.kind = Kind::Nccl;
    e.id = id;
    e.version = n->version;
    e.cuda = n->cuda;
    e.path = path;
    e.imported = true;
    e.include_dirs = {"include"};
    e.lib_dirs = {"lib"};
    return e;
}

} // namespace cvm::test
