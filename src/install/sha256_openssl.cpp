// SHA-256 through OpenSSL's EVP interface (Linux and other POSIX builds).
//
// OpenSSL's libcrypto is loaded (dlopen) when the first digest is made, not when the program
// starts: cvm links this file for doctor's checks of cuDNN files, and mapping libcrypto (4.7 MB,
// and its start-up probing of the CPU) cost every command, `cvm current` and the prompt hook's
// included, about 0.8 ms before it read its arguments. cvm-install links libcrypto (through
// libcurl too), so there the library is found already loaded.
#include "install/error.h"
#include "install/sha256.h"

#include <dlfcn.h>
#include <openssl/evp.h>

namespace cvm::install {

// The functions used, found in the library once it is open.
struct OpensslFunctions {
    decltype(&EVP_MD_CTX_new) ctx_new = nullptr;
    decltype(&EVP_MD_CTX_free) ctx_free = nullptr;
    decltype(&EVP_sha256) sha256 = nullptr;
    decltype(&EVP_md5) md5 = nullptr;
    decltype(&EVP_DigestInit_ex) init = nullptr;
    decltype(&EVP_DigestUpdate) update = nullptr;
    decltype(&EVP_DigestFinal_ex) final = nullptr;
};

namespace {

template <typename F>
void bind_symbol(void* handle, F& f, const char* name) {
    f = reinterpret_cast<F>(::dlsym(handle, name));
    if (f == nullptr)
        fail_operation(std::string("sha256: ") + CVM_LIBCRYPTO_SONAME + " lacks " + name +
                       "; reinstall OpenSSL's libcrypto (Debian: libssl3)");
}

const OpensslFunctions& libcrypto() {
    static const OpensslFunctions loaded = [] {
        void* handle = ::dlopen(CVM_LIBCRYPTO_SONAME, RTLD_NOW | RTLD_LOCAL);
        if (handle == nullptr) {
            const char* why = ::dlerror();
            fail_operation(std::string("sha256: cannot load OpenSSL's ") + CVM_LIBCRYPTO_SONAME +
                           " (" + (why ? why : "not found") +
                           "); install it (Debian: libssl3) or reinstall cvm");
        }
        OpensslFunctions l;
        bind_symbol(handle, l.ctx_new, "EVP_MD_CTX_new");
        bind_symbol(handle, l.ctx_free, "EVP_MD_CTX_free");
        bind_symbol(handle, l.sha256, "EVP_sha256");
        bind_symbol(handle, l.md5, "EVP_md5");
        bind_symbol(handle, l.init, "EVP_DigestInit_ex");
        bind_symbol(handle, l.update, "EVP_DigestUpdate");
        bind_symbol(handle, l.final, "EVP_DigestFinal_ex");
        return l; // the library stays loaded for the rest of the run
    }();
    return loaded;
}

} // namespace

struct Sha256::Impl {
    const OpensslFunctions& c = libcrypto();
    EVP_MD_CTX* ctx = nullptr;
    const EVP_MD* md = nullptr;
    explicit Impl(Algorithm algorithm) {
        md = algorithm == Algorithm::Md5 ? c.md5() : c.sha256();
        ctx = c.ctx_new();
        if (ctx == nullptr || c.init(ctx, md, nullptr) != 1)
            fail_operation("sha256: OpenSSL could not start a digest");
    }
    ~Impl() { c.ctx_free(ctx); }
};

Sha256::Sha256(Algorithm algorithm) : impl_(std::make_unique<Impl>(algorithm)) {}
Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(const void* data, std::size_t size) {
    if (size == 0) return;
    if (impl_->c.update(impl_->ctx, data, size) != 1)
        fail_operation("sha256: OpenSSL digest update failed");
}

std::string Sha256::hex_digest() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (impl_->c.final(impl_->ctx, digest, &length) != 1 ||
        impl_->c.init(impl_->ctx, impl_->md, nullptr) != 1)
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
