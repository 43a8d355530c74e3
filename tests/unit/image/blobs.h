#pragma once
// What the image tests read back: a file's bytes and a digest as image layouts write it.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "install/sha256.h"

namespace cvm::test {

inline std::string read_bytes(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// "sha256:<hex>"
inline std::string sha256_digest(const std::string& bytes) {
    install::Sha256 h;
    h.update(bytes.data(), bytes.size());
    return "sha256:" + h.hex_digest();
}

} // namespace cvm::test
