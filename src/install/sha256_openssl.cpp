// SHA-256 through OpenSSL's EVP interface (Linux and other POSIX builds).
#include "install/error.h"
#include "install/sha256.h"

#include <openssl/evp.h>

namespace cvm::install {

struct Sha256::Impl {
    EVP_MD_CTX* ctx = nullptr;
    const EVP_MD* md = nullptr;
    explicit Impl(Algorithm algorithm) {
        md = algorithm == Algorithm::Md5 ? EVP_md5() : EVP_sha256();
        ctx = EVP_MD_CTX_new();
        if (ctx == nullptr || EVP_DigestInit_ex(ctx, md, nullptr) != 1)
            fail_operation("sha256: OpenSSL could not start a digest");
    }
    ~Impl() { EVP_MD_CTX_free(ctx); }
};

Sha256::Sha256(Algorithm algorithm) : impl_(std::make_unique<Impl>(algorithm)) {}
Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(const void* data, std::size_t size) {
    if (size == 0) return;
    if (EVP_DigestUpdate(impl_->ctx, data, size) != 1)
        fail_operation("sha256: OpenSSL digest update failed");
}

std::string Sha256::hex_digest() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (EVP_DigestFinal_ex(impl_->ctx, digest, &length) != 1 ||
        EVP_DigestInit_ex(impl_->ctx, impl_->md, nullptr) != 1)
        fail_operation("sha256: OpenSSL digest final failed");
    static const char* hex = "0123456789abcdef";
    std::string out;
    out.reserve(length * 2);
    for (unsigned int i = 0; i < length; ++i) {
        out.push_back(hex[digest[i] >> 4]);
        out.push_back(hex[digest[i] & 15]);
    }
    return out;
}

} // namespace cvm::install
