#pragma once
// Small helpers shared by the unit tests of every module: a temporary folder, files written and
// read back, the source tree. Running shell commands is test_commands.h's.
#include <catch2/catch.hpp>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

#include <unistd.h>

namespace cvm::test {

namespace fs = std::filesystem;

// A cudnn_version.h (or cudnn.h) that says MAJOR.MINOR.PATCHLEVEL, as NVIDIA's headers do.
inline std::string cudnn_version_header(unsigned major, unsigned minor, unsigned patch) {
    return "#define CUDNN_MAJOR " + std::to_string(major) + "\n#define CUDNN_MINOR " +
           std::to_string(minor) + "\n#define CUDNN_PATCHLEVEL " + std::to_string(patch) + "\n";
}

// A fresh folder under the system temp folder (links resolved), removed with everything in it at
// scope end, folders a test made read-only included. The one temporary folder of the unit tests:
// `path` for fs::path work, `/` to name a child, `str()` and `str(child)` where a test works in
// strings, `mkdir(child)` to make a subfolder.
class TempDir {
public:
    explicit TempDir(const std::string& tag = "t") : path(create(tag)) {}
    ~TempDir() {
        std::error_code ec;
        // Give back write permission on folders a test made read-only, so that they can be removed.
        for (auto it = fs::recursive_directory_iterator(path, ec);
             !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
            std::error_code ignored;
            if (it->is_directory(ignored) && !it->is_symlink(ignored))
                fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ignored);
        }
        fs::remove_all(path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    const fs::path path;

    fs::path operator/(const fs::path& child) const { return path / child; }
    std::string str() const { return path.string(); }
    std::string str(const fs::path& child) const { return (path / child).string(); }
    // Makes the subfolder `child` (and any folders above it) and returns its path.
    fs::path mkdir(const fs::path& child) const {
        fs::create_directories(path / child);
        return path / child;
    }

private:
    static fs::path create(const std::string& tag) {
        static std::atomic<int> counter{0};
        fs::path p = fs::temp_directory_path() / ("cvm-" + tag + "-" + std::to_string(::getpid()) +
                                                  "-" + std::to_string(counter++));
        fs::remove_all(p);
        fs::create_directories(p);
        return fs::canonical(p);
    }
};

// Writes `content` to `p` byte for byte, making its folders; a file that cannot be written fails
// the test.
inline void write_file(const fs::path& p, const std::string& content) {
    fs::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary);
    out << content;
    REQUIRE(out.good());
}

// The bytes of the file `p`; a file that cannot be opened fails the test.
inline std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    REQUIRE(in.good());
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

// The root of cvm's source tree (registry/, tests/fixtures/, tests/integration/).
inline fs::path repo_root() {
#ifdef CVM_SOURCE_DIR
    return fs::path(CVM_SOURCE_DIR); // __FILE__ is relative when ccache's base_dir is set
#else
    // This file lives in <repo>/tests/unit/.
    return fs::path(__FILE__).parent_path().parent_path().parent_path();
#endif
}

} // namespace cvm::test
