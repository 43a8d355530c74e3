#pragma once
// Small helpers shared by the unit tests of every module.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

namespace cvm::test {

namespace fs = std::filesystem;

// A fresh folder under the system temp folder, removed with everything in it at scope end.
struct TempDir {
    fs::path path;
    explicit TempDir(const std::string& tag = "t") {
        static std::atomic<int> counter{0};
        path = fs::temp_directory_path() /
               ("cvm-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
};

inline void write_file(const fs::path& p, const std::string& content) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
}

} // namespace cvm::test
