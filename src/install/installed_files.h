#pragma once
// The record of an installed entry's files: <entry dir>/files, written by the installer beside
// the entry file (a sidecar, so that listing and the shim never read it). One line per folder,
// file or link of root/ (root/ itself is "."), '/'-separated paths relative to root/ (names
// never hold tabs or line breaks), then a count that shows the record is whole:
//
//   cvm-files 2
//   d <mode> <path>
//   f <size> <sha256> <mode> <path>
//   l <path><TAB><link target>
//   end <number of lines above>
//
// Modes are octal permission bits (0755). Version 1, written by earlier cvms, has no folders,
// modes or end line (`f <size> <sha256> <path>`). Sizes and hashes are those of the bytes the
// installer wrote. `cvm verify` compares the whole tree with it; `cvm doctor` compares sizes only
// (a stat per file).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cvm {

namespace fs = std::filesystem;

struct InstalledFile {
    enum class Type { File, Symlink, Directory };
    Type type = Type::File;
    std::string path; // relative to the entry's root/ ("." for root/ itself)
    std::uint64_t size = 0;
    std::string sha256; // lower-case hex
    std::string target; // symlinks
    std::uint32_t mode = 0; // files and folders: permission bits as installed (07777)
};

// A parsed record: its entries and whether it carries folders and modes (version 2).
struct InstalledRecord {
    std::vector<InstalledFile> files;
    int version = 2;
};

// The record's name in an entry folder.
inline const char* installed_files_name() { return "files"; }

// Writes version 2.
std::string serialize_installed_files(const std::vector<InstalledFile>& files);
// Either version. Throws std::runtime_error naming `source` and the line on malformed content,
// and for a version 2 record whose end line is missing or counts otherwise (cut short).
std::vector<InstalledFile> parse_installed_files(const std::string& text, const std::string& source);
InstalledRecord parse_installed_record(const std::string& text, const std::string& source);

// The record in `entry_dir`; nullopt when there is none (an import, or an install by a cvm that
// kept none). Throws std::runtime_error naming the file when it is malformed.
std::optional<std::vector<InstalledFile>> read_installed_files(const fs::path& entry_dir);
std::optional<InstalledRecord> read_installed_record(const fs::path& entry_dir);

struct FileDamage {
    std::string path; // relative to root/
    std::string what; // "missing", "12 bytes, 40 recorded", "content differs", ...
};

// What differs from the record in size, type or link target (lstat and readlink only); folders
// are checked to be folders.
std::vector<FileDamage> check_installed_sizes(const fs::path& root,
                                              const std::vector<InstalledFile>& files);

} // namespace cvm
