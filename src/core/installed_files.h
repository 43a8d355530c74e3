#pragma once
// The record of an installed entry's files: <entry dir>/files, written by the installer beside
// the entry file (a sidecar, so that listing and the shim never read it). One line per file or
// link of root/, '/'-separated paths relative to root/ (names never hold tabs or line breaks):
//
//   cvm-files 1
//   f <size> <sha256> <path>
//   l <path><TAB><link target>
//
// Sizes and hashes are those of the bytes the installer wrote. `cvm verify` compares them with
// the disk; `cvm doctor` compares sizes only (a stat per file).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cvm {

namespace fs = std::filesystem;

struct InstalledFile {
    enum class Type { File, Symlink };
    Type type = Type::File;
    std::string path;   // relative to the entry's root/
    std::uint64_t size = 0;
    std::string sha256; // lower-case hex
    std::string target; // symlinks
};

// The record's name in an entry folder.
inline const char* installed_files_name() { return "files"; }

std::string serialize_installed_files(const std::vector<InstalledFile>& files);
// Throws std::runtime_error naming `source` and the line on malformed content.
std::vector<InstalledFile> parse_installed_files(const std::string& text, const std::string& source);

// The record in `entry_dir`; nullopt when there is none (an import, or an install by a cvm that
// kept none). Throws std::runtime_error naming the file when it is malformed.
std::optional<std::vector<InstalledFile>> read_installed_files(const fs::path& entry_dir);

struct FileDamage {
    std::string path; // relative to root/
    std::string what; // "missing", "12 bytes, 40 recorded", "content differs", ...
};

// What differs from the record in size, type or link target (lstat and readlink only).
std::vector<FileDamage> check_installed_sizes(const fs::path& root,
                                              const std::vector<InstalledFile>& files);

} // namespace cvm
