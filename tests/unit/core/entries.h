#pragma once
// Store entries as `cvm import` writes them, for the core tests.
#include <filesystem>
#include <string>

#include "store/store.h"

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

// A library build (cuDNN, NCCL) as import writes it: its own include/ and lib/.
inline Entry library_entry(Kind kind, const std::string& id, const Version& version,
                           const Version& cuda, const std::filesystem::path& path) {
    Entry e;
    e.kind = kind;
    e.id = id;
    e.version = version;
    e.cuda = cuda;
    e.path = path;
    e.imported = true;
    e.include_dirs = {"include"};
    e.lib_dirs = {"lib"};
    return e;
}

inline Entry cudnn_entry(const std::string& id, const std::filesystem::path& path) {
    auto c = parse_cudnn_id(id);
    return library_entry(Kind::Cudnn, id, c->version, c->cuda, path);
}

inline Entry nccl_entry(const std::string& id, const std::filesystem::path& path) {
    auto n = parse_nccl_id(id);
    return library_entry(Kind::Nccl, id, n->version, n->cuda, path);
}

} // namespace cvm::test
