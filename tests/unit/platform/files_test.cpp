#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "platform/platform.h"
#include "test_support.h"

#ifndef _WIN32
#include <sys/stat.h>
#endif

using namespace cvm;
namespace fs = std::filesystem;
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

#ifndef _WIN32
TEST_CASE("rewrite_in_place: only the user's regular file of that size, never through a link or a FIFO") {
    TempDir tmp("rewrite");
    auto read = [](const std::filesystem::path& p) { return platform::read_file(p).value_or("<none>"); };
    const auto stamp = tmp.path / "123";
    // Missing: nothing made (the caller writes it atomically).
    CHECK_FALSE(platform::rewrite_in_place(stamp, "123\n"));
    CHECK_FALSE(std::filesystem::exists(stamp));
    write_file(stamp, "999\n");
    CHECK(platform::rewrite_in_place(stamp, "123\n"));
    CHECK(read(stamp) == "123\n");
    // Another size: left as it is.
    CHECK_FALSE(platform::rewrite_in_place(stamp, "12345\n"));
    CHECK(read(stamp) == "123\n");
    // A link is not followed: its target keeps its bytes.
    const auto target = tmp.path / "target";
    write_file(target, "abcd");
    const auto link = tmp.path / "link";
    std::filesystem::create_symlink(target, link);
    CHECK_FALSE(platform::rewrite_in_place(link, "123\n"));
    CHECK(read(target) == "abcd");
    // A FIFO without a reader answers at once, unwritten.
    const auto fifo = tmp.path / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    CHECK_FALSE(platform::rewrite_in_place(fifo, "123\n"));
}

TEST_CASE("change_stamp: a write, a chmod or a replacement changes it; absence is its own") {
    TempDir tmp("stamp");
    const auto file = tmp.path / "config.toml";
    auto absent = platform::change_stamp(file);
    CHECK(absent.text == "absent");
    CHECK_FALSE(absent.meta);
    CHECK(platform::change_stamp(tmp.path / "no" / "such").text == "absent");
    write_file(file, "store_path = []\n");
    auto first = platform::change_stamp(file);
    REQUIRE(first.meta);
    CHECK(first.meta->type == platform::FileMeta::Type::Regular);
    CHECK_FALSE(first.settled); // written just now
    CHECK(platform::change_stamp(file).text == first.text);
    ::chmod(file.c_str(), 0640); // a mode write_file never gives (the change time may not move
                                 // within one clock tick; the mode does)
    auto chmodded = platform::change_stamp(file);
    CHECK(chmodded.text != first.text);
    // The same size and bytes in a new file renamed over it (as editors save): another inode.
    const auto other = tmp.path / "other";
    write_file(other, "store_path = []\n");
    ::chmod(other.c_str(), 0640);
    std::filesystem::rename(other, file);
    CHECK(platform::change_stamp(file).text != chmodded.text);
}
#endif
