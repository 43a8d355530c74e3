#pragma once
// Archive bytes served in small, uneven pieces, as a download arrives (extract_archive_stream).
#include "install/error.h"
#include "install/extract.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace cvm::install::test {

// Fails (as a download that stopped) after `fail_at` bytes.
class PieceSource : public ArchiveSource {
public:
    explicit PieceSource(std::string bytes, std::size_t fail_at = std::string::npos)
        : bytes_(std::move(bytes)), fail_at_(fail_at) {}
    std::size_t read(void* buffer, std::size_t size) override {
        if (at_ >= fail_at_) fail_operation("the download stopped");
        std::size_t n = std::min({size, bytes_.size() - at_, std::size_t{1000} + at_ % 7919,
                                  fail_at_ - at_});
        std::memcpy(buffer, bytes_.data() + at_, n);
        at_ += n;
        return n;
    }
    std::uint64_t expected_size() const override { return bytes_.size(); }

private:
    std::string bytes_;
    std::size_t fail_at_;
    std::size_t at_ = 0;
};

} // namespace cvm::install::test
