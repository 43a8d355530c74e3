#pragma once
// SHA-256 of files and streams: OpenSSL's EVP interface on Linux (sha256_openssl.cpp), Windows'
// CNG on Windows (sha256_bcrypt.cpp); install/CMakeLists.txt picks the file.
#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>

namespace cvm::install {

class Sha256 {
public:
    // MD5 only to compare with records that use it (dpkg's md5sums), never to trust a download.
    enum class Algorithm { Sha256, Md5 };
    explicit Sha256(Algorithm algorithm = Algorithm::Sha256);
    ~Sha256();
    Sha256(const Sha256&) = delete;
    Sha256& operator=(const Sha256&) = delete;
    Sha256(Sha256&&) noexcept;
    Sha256& operator=(Sha256&&) noexcept;

    void update(const void* data, std::size_t size);
    // Lower-case hex digest; the object is reset afterwards.
    std::string hex_digest();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Lower-case hex SHA-256 of a whole file. Throws InstallError naming the file when unreadable.
std::string sha256_file(const std::filesystem::path& path);
// The same with another algorithm.
std::string file_digest(const std::filesystem::path& path, Sha256::Algorithm algorithm);

// Case-insensitive comparison of two hex digests.
bool sha256_equal(const std::string& a, const std::string& b);
// Whether `s` is a digest of `digits` hex digits (either case); a SHA-256 has 64, an MD5 32.
bool is_hex_digest(const std::string& s, std::size_t digits);
// Whether `s` is a SHA-256 in hex (64 digits, either case).
bool is_sha256_hex(const std::string& s);

} // namespace cvm::install
