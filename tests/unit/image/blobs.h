#pragma once
// What the image tests read back: a digest as image layouts write it.
#include <string>

#include "install/sha256.h"

namespace cvm::test {

// "sha256:<hex>"
inline std::string sha256_digest(const std::string& bytes) {
    install::Sha256 h;
    h.update(bytes.data(), bytes.size());
    return "sha256:" + h.hex_digest();
}

} // namespace cvm::test
