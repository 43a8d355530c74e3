#include "install/sha256.h"

// The digest itself is in sha256_openssl.cpp (Linux: OpenSSL EVP) or sha256_bcrypt.cpp (Windows:
// CNG); src/install/CMakeLists.txt picks one, so no platform test is needed here.

#include "install/error.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

namespace cvm::install {

std::string sha256_file(const std::filesystem::path& path) {
    return file_digest(path, Sha256::Algorithm::Sha256);
}

std::string file_digest(const std::filesystem::path& path, Sha256::Algorithm algorithm) {
    // std::ifstream takes the path as the OS spells it (wide on Windows).
    std::ifstream file(path, std::ios::binary);
    if (!file) fail_operation("cannot read " + path.string() + ": " + std::strerror(errno));
    Sha256 hash(algorithm);
    std::vector<char> buffer(1 << 20);
    for (;;) {
        file.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
        std::streamsize got = file.gcount();
        hash.update(buffer.data(), static_cast<std::size_t>(got));
        if (!file) {
            if (file.bad()) fail_operation("cannot read " + path.string() + ": I/O error");
            break;
        }
    }
    return hash.hex_digest();
}

bool is_hex_digest(const std::string& s, std::size_t digits) {
    return s.size() == digits &&
           std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
}

bool is_sha256_hex(const std::string& s) { return is_hex_digest(s, 64); }

bool sha256_equal(const std::string& a, const std::string& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(a[i])) !=
            std::tolower(static_cast<unsigned char>(b[i])))
            return false;
    return true;
}

} // namespace cvm::install
