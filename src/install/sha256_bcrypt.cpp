// SHA-256 through Windows' CNG (bcrypt.dll), for the Windows builds, which have no OpenSSL.
#include "install/error.h"
#include "install/sha256.h"

#include <windows.h>

#include <bcrypt.h>

namespace cvm::install {

struct Sha256::Impl {
    BCRYPT_ALG_HANDLE algorithm = nullptr;
    BCRYPT_HASH_HANDLE hash = nullptr;
    ULONG length = 32;
    explicit Impl(Algorithm which) {
        if (which == Algorithm::Md5) length = 16;
        if (BCryptOpenAlgorithmProvider(&algorithm,
                                        which == Algorithm::Md5 ? BCRYPT_MD5_ALGORITHM
                                                                : BCRYPT_SHA256_ALGORITHM,
                                        nullptr, 0) != 0)
            fail_operation("sha256: Windows CNG has no SHA-256 provider");
        reset();
    }
    ~Impl() {
        if (hash != nullptr) BCryptDestroyHash(hash);
        if (algorithm != nullptr) BCryptCloseAlgorithmProvider(algorithm, 0);
    }
    void reset() {
        if (hash != nullptr) BCryptDestroyHash(hash);
        hash = nullptr;
        if (BCryptCreateHash(algorithm, &hash, nullptr, 0, nullptr, 0, 0) != 0)
            fail_operation("sha256: Windows CNG could not start a digest");
    }
};

Sha256::Sha256(Algorithm algorithm) : impl_(std::make_unique<Impl>(algorithm)) {}
Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(const void* data, std::size_t size) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    while (size > 0) {
        ULONG chunk = size > 0x40000000u ? 0x40000000u : static_cast<ULONG>(size);
        if (BCryptHashData(impl_->hash, const_cast<PUCHAR>(bytes), chunk, 0) != 0)
            fail_operation("sha256: Windows CNG digest update failed");
        bytes += chunk;
        size -= chunk;
    }
}

std::string Sha256::hex_digest() {
    unsigned char digest[32];
    const ULONG length = impl_->length;
    if (BCryptFinishHash(impl_->hash, digest, length, 0) != 0)
        fail_operation("sha256: Windows CNG digest final failed");
    impl_->reset();
    static const char* hex = "0123456789abcdef";
    std::string out;
    for (ULONG i = 0; i < length; ++i) {
        out.push_back(hex[digest[i] >> 4]);
        out.push_back(hex[digest[i] & 15]);
    }
    return out;
}

} // namespace cvm::install
