#pragma once
// The loader emulation reads the machine only through this interface, so tests can point it at
// temporary folders (or a fake) and the search logic stays a pure function of its inputs.

#include "binary/byte_source.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cvm::doctor {

class FileSystemView {
public:
    virtual ~FileSystemView() = default;
    // Whether `path` names a regular file (after following symbolic links).
    virtual bool is_file(const std::string& path) const = 0;
    virtual bool is_directory(const std::string& path) const = 0;
    // The file a path finally names after following every symbolic link; nullopt when missing.
    virtual std::optional<std::string> real_path(const std::string& path) const = 0;
    // The entry names of a folder (unsorted); empty when it cannot be read.
    virtual std::vector<std::string> list(const std::string& dir) const = 0;
    // The bytes of a file, or nullptr when it cannot be opened.
    virtual std::unique_ptr<binary::ByteSource> open(const std::string& path) const = 0;
};

// The real file system, through std::filesystem (UTF-8 paths).
class RealFileSystem : public FileSystemView {
public:
    bool is_file(const std::string& path) const override;
    bool is_directory(const std::string& path) const override;
    std::optional<std::string> real_path(const std::string& path) const override;
    std::vector<std::string> list(const std::string& dir) const override;
    std::unique_ptr<binary::ByteSource> open(const std::string& path) const override;
};

// The first MiB of a file as text (the small files cvm reads: version.py, METADATA, a plugin's
// __init__.py); empty when it cannot be read.
std::string text_of(const FileSystemView& fs, const std::string& path);

// The release in the name of the first `prefix*.dist-info` folder in `site`
// ("nvidia_cudnn_cu12-9.1.0.70.dist-info" gives "9.1.0.70" for prefix "nvidia_cudnn_cu").
std::optional<std::string> installed_dist_version(const FileSystemView& fs, const std::string& site,
                                                  std::string_view prefix);

// Path text helpers that work for both '/' and '\' separated paths, independent of the host.
std::string path_join(const std::string& dir, const std::string& name);
std::string path_dirname(const std::string& path);
std::string path_basename(const std::string& path);
// `path` with "." and ".." worked out and no trailing separator, '/' separated (lexical: links are
// not followed), so that two spellings of one folder compare equal.
std::string path_normal(const std::string& path);

} // namespace cvm::doctor
