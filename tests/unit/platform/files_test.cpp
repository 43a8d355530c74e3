#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "platform/platform.h"
#include "test_support.h"

#ifndef _WIN32
#include <sys/stat.h>
#endif

using namespace cvm;
using cvm::test::TempDir;
using cvm::test::write_file;

TEST_CASE("folder_names: every name of a folder larger than one read of the kernel's records") {
    TempDir tmp("names");
    std::set<std::string> made;
    // 600 names of 120 characters: about 80 KiB of directory records, many calls' worth.
    for (int i = 0; i < 600; ++i) {
        std::string name = std::string(115, 'n') + std::to_string(10000 + i);
        write_file(tmp.path / name, "");
        made.insert(name);
    }
    std::filesystem::create_directory(tmp.path / ".hidden");
    made.insert(".hidden");
    platform::FileMeta meta;
    auto names = platform::folder_names(tmp.path.u8string(), &meta);
    CHECK(std::set<std::string>(names.begin(), names.end()) == made);
    CHECK(names.size() == made.size()); // no name twice, no "." or ".."
    CHECK(meta.type == platform::FileMeta::Type::Directory);

    platform::FileMeta missing_meta;
    missing_meta.type = platform::FileMeta::Type::Regular;
    CHECK(platform::folder_names((tmp.path / "absent").u8string(), &missing_meta).empty());
    CHECK(missing_meta.type != platform::FileMeta::Type::Directory);
    // A file is not a folder.
    CHECK(platform::folder_names((tmp.path / *made.begin()).u8string()).empty());
}

TEST_CASE("read_file_checked: whole files of every size around the read's edges") {
    TempDir tmp("read");
    for (std::size_t size : {0, 1, 7, 4095, 4096, 4097, 70000}) {
        std::string text;
        for (std::size_t i = 0; i < size; ++i) text += static_cast<char>('a' + i % 26);
        auto file = tmp.path / ("f" + std::to_string(size));
        write_file(file, text);
        auto read = platform::read_file_checked(file.u8string());
        REQUIRE(read.text);
        CHECK(*read.text == text);
        // A limit below the size gives the first bytes only.
        if (size > 3) {
            auto part = platform::read_file_checked(file.u8string(), 3);
            REQUIRE(part.text);
            CHECK(*part.text == text.substr(0, 3));
        }
    }
    CHECK(platform::read_file_checked((tmp.path / "absent").u8string()).absent());
#ifndef _WIN32
    // procfs reports size 0 and has more: read to its end.
    auto status = platform::read_file_checked("/proc/self/status");
    REQUIRE(status.text);
    CHECK(status.text->find("VmRSS") != std::string::npos);
    // A FIFO is not read (nor waited on).
    auto fifo = tmp.path / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    auto f = platform::read_file_checked(fifo.u8string());
    CHECK_FALSE(f.text);
    CHECK(f.meta.type == platform::FileMeta::Type::Other);
#endif
}

#ifndef _WIN32
TEST_CASE("the current folder and files below a path longer than the system's limit") {
    cvm::test::TempDir tmp("long-path");
    const fs::path before = fs::current_path();
    const std::string part(200, 'd');
    fs::current_path(tmp.path);
    fs::path expected = fs::canonical(tmp.path);
    for (int i = 0; i < 24; ++i) { // 24 * 201 bytes: past PATH_MAX (4096)
        fs::create_directory(part + std::to_string(i));
        fs::current_path(part + std::to_string(i));
        expected /= part + std::to_string(i);
    }
    REQUIRE(expected.native().size() > 4096);
    std::error_code ec;
    CHECK(cvm::platform::current_folder_walked(ec) == expected);
    CHECK(!ec);
    CHECK(cvm::platform::current_folder(ec) == expected);
    // A file there, read by its long absolute path.
    {
        std::FILE* f = std::fopen("v.txt", "w");
        REQUIRE(f);
        std::fputs("12.4\n", f);
        std::fclose(f);
    }
    auto read = cvm::platform::read_file_checked((expected / "v.txt").u8string());
    CHECK(read.error == 0);
    CHECK(read.text.value_or("") == "12.4\n");
    CHECK(cvm::platform::read_file_checked((expected / "absent.txt").u8string()).absent());
    fs::current_path(before);
    // TempDir removes the folders: from the top, whose path is short.
}
#endif
