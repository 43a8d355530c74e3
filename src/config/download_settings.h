#pragma once
// The limits every download runs under, from the `[download]` table of the config files and
// the CVM_* variables (a variable wins over a file; the user's file over the machine's):
//
//   [download]
//   min_rate = "10k"       # CVM_DOWNLOAD_MIN_RATE: bytes/s averaged over rate_window, else abort
//   rate_window = 30       # CVM_DOWNLOAD_RATE_WINDOW: seconds
//   deadline = 600         # CVM_DOWNLOAD_DEADLINE: seconds, plus the size at deadline_rate
//   deadline_rate = "32k"  # CVM_DOWNLOAD_DEADLINE_RATE: bytes/s
//   max_size = "16G"       # CVM_DOWNLOAD_MAX_SIZE: largest file accepted when no size is known
//   connect_timeout = 30   # CVM_CONNECT_TIMEOUT: seconds
//   stall_timeout = 60     # CVM_STALL_TIMEOUT: seconds without a byte
//   retries = 4            # CVM_RETRIES: further attempts after a transient failure
//
// Sizes and rates are whole numbers of bytes, or strings with a k, M or G suffix (1024-based).
// 0 turns a limit off (min_rate, deadline, stall_timeout).
// Both are read by download_settings() in config.h.
#include <cstdint>
#include <optional>
#include <string>

namespace cvm {

struct DownloadSettings {
    std::optional<std::uint64_t> min_rate, deadline_rate, max_size;
    std::optional<long> rate_window, deadline, connect_timeout, stall_timeout, retries;

    // Fills what `other` sets and this does not.
    void fill_from(const DownloadSettings& other);
};

// "4096", "10k", "1.5M" (1024-based) -> bytes; nullopt when it is not that.
std::optional<std::uint64_t> parse_byte_amount(const std::string& text);

// The CVM_* variables alone (config.h's download_settings() puts the files' tables under them).
// Throws ConfigError for a bad variable.
DownloadSettings download_variables();

} // namespace cvm
