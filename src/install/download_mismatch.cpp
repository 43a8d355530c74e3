// The words for a download that is not the file asked for (download.h), shared by the downloader
// and by those who name where the expected sum came from (held_download.cpp).
#include "install/download.h"
#include "install/progress.h"

namespace cvm::install {

std::string bytes_text(std::uint64_t n) {
    return std::to_string(n) + " bytes" + (n >= 10240 ? " (" + Progress::format_bytes(n) + ")" : "");
}

std::string DownloadMismatch::describe(const std::string& whose) const {
    switch (check) {
    case Check::Sha256:
        return "checksum mismatch: expected sha256 " + expected_sha256 + ", got " + actual_sha256;
    case Check::Size:
        return "size mismatch: expected " + std::to_string(expected_size) + " bytes, got " +
               std::to_string(actual_size);
    case Check::AnnouncedSize:
        return "the server announces " + bytes_text(actual_size) + ", more than the " + bytes_text(expected_size) +
               " " + whose;
    case Check::SentSize:
        break;
    }
    return "the server sent more than the " + bytes_text(expected_size) + " " + whose;
}

} // namespace cvm::install
