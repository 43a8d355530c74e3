#pragma once
// Trust on first use, for archives no public source gives a checksum for (legacy cuDNN, see
// legacy_cudnn.h): the SHA-256 and size of the first download are recorded in
// $CVM_ROOT/registry/first-use.toml (beside the cache, not in it: `cvm cache clean --all` keeps
// it), and every later download of the same archive must match them.
//
//   # comments
//   [[archive]]
//   name = "cudnn-11.2-windows-x64-v8.1.0.77.zip"
//   sha256 = "<64 hex digits>"
//   size = 1234
//   url = "https://developer.download.nvidia.com/compute/redist/cudnn/v8.1.0/..."
//   first_use = "2026-12-01T04:30:00Z"
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cvm {
class Store;
}

namespace cvm::install {

struct FirstUseRecord {
    std::string name; // the archive's file name
    std::string sha256;
    std::uint64_t size = 0;
    std::string url;       // where it was first downloaded from
    std::string first_use; // UTC time of that download
};

// $CVM_ROOT/registry/first-use.toml.
std::filesystem::path first_use_file(const Store& store);

// The records in `file` (none when it does not exist). Throws InstallError naming the file and
// line when it is malformed, and when it is not the user's own (config/trust.h).
std::vector<FirstUseRecord> read_first_use(const std::filesystem::path& file);
std::vector<FirstUseRecord> parse_first_use(const std::string& text, const std::string& origin);
std::string format_first_use(const std::vector<FirstUseRecord>& records);

// The record of archive `name`, if any.
std::optional<FirstUseRecord> find_first_use(const std::filesystem::path& file, const std::string& name);

// Adds `record` (under a lock in `locks_dir`, written atomically). A record of the same name
// that is already there wins: it is returned, and the caller compares.
FirstUseRecord record_first_use(const std::filesystem::path& file, const std::filesystem::path& locks_dir,
                                const FirstUseRecord& record);

} // namespace cvm::install
