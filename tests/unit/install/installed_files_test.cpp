#include <catch2/catch.hpp>

#include "install/installed_files.h"
#include "test_support.h"

using namespace cvm;
using cvm::test::TempDir;
using cvm::test::write_file;

namespace {
const std::string kSum(64, 'a');
}

TEST_CASE("the installed-files record reads back what was written", "[installed_files]") {
    std::vector<InstalledFile> files{{InstalledFile::Type::File, "lib/a b.so", 12, kSum, ""},
                                     {InstalledFile::Type::Symlink, "lib64", 0, "", "lib"}};
    auto back = parse_installed_files(serialize_installed_files(files), "files");
    REQUIRE(back.size() == 2);
    CHECK(back[0].path == "lib/a b.so");
    CHECK(back[0].size == 12);
    CHECK(back[0].sha256 == kSum);
    CHECK(back[1].type == InstalledFile::Type::Symlink);
    CHECK(back[1].target == "lib");
    for (const char* bad : {"", "cvm-files 2\n", "cvm-files 1\nf 1 abc x\n",
                            "cvm-files 1\nf 99999999999999999999999 " "aaaa x\n",
                            "cvm-files 1\nl nolink\n", "cvm-files 1\nf 1 " "x ../up\n", "cvm-files 1\nq\n"})
        CHECK_THROWS_AS(parse_installed_files(bad, "files"), std::runtime_error);
    CHECK_THROWS_WITH(parse_installed_files("cvm-files 1\nf 1 " + kSum + " ../up\n", "F"),
                      Catch::Contains("F:2") && Catch::Contains("bad path"));
}

TEST_CASE("version 2 records folders and modes and ends with a count", "[installed_files]") {
    std::vector<InstalledFile> files{{InstalledFile::Type::Directory, ".", 0, "", "", 0755},
                                     {InstalledFile::Type::Directory, "lib", 0, "", "", 0750},
                                     {InstalledFile::Type::File, "lib/a.so", 3, kSum, "", 0644},
                                     {InstalledFile::Type::Symlink, "lib64", 0, "", "lib"}};
    std::string text = serialize_installed_files(files);
    CHECK(text.rfind("cvm-files 2\nd 0755 .\nd 0750 lib\nf 3 " + kSum +
                         " 0644 lib/a.so\nl lib64\tlib\nend 4\n",
                     0) == 0);
    auto record = parse_installed_record(text, "files");
    CHECK(record.version == 2);
    REQUIRE(record.files.size() == 4);
    CHECK(record.files[1].mode == 0750);
    CHECK(record.files[2].mode == 0644);
    // Cut short, cut to its header, or with a line after its end: refused.
    CHECK_THROWS_WITH(parse_installed_files(text.substr(0, text.find("l lib64")), "F"),
                      Catch::Contains("cut short"));
    CHECK_THROWS_WITH(parse_installed_files("cvm-files 2\n", "F"), Catch::Contains("cut short"));
    CHECK_THROWS_AS(parse_installed_files(text + "d 0755 x\n", "F"), std::runtime_error);
    CHECK_THROWS_AS(parse_installed_files("cvm-files 2\nd 755 x\nend 1\n", "F"),
                    std::runtime_error);
    CHECK_THROWS_AS(parse_installed_files("cvm-files 2\nf 1 " + kSum + " . \nend 1\n", "F"),
                    std::runtime_error);
    // Version 1 (earlier cvms) still reads.
    auto v1 = parse_installed_record("cvm-files 1\nf 3 " + kSum + " lib/a.so\n", "files");
    CHECK(v1.version == 1);
    REQUIRE(v1.files.size() == 1);
    CHECK(v1.files[0].path == "lib/a.so");
}

TEST_CASE("sizes and links are compared with the disk", "[installed_files]") {
    TempDir tmp;
    write_file(tmp.path / "lib/a", "12345");
    write_file(tmp.path / "lib/b", "xyz");
    fs::create_directory_symlink("lib", tmp.path / "lib64");
    std::vector<InstalledFile> files{{InstalledFile::Type::File, "lib/a", 5, kSum, ""},
                                     {InstalledFile::Type::File, "lib/b", 4, kSum, ""},
                                     {InstalledFile::Type::File, "lib/gone", 1, kSum, ""},
                                     {InstalledFile::Type::Symlink, "lib64", 0, "", "lib"},
                                     {InstalledFile::Type::Symlink, "lib/c", 0, "", "a"}};
    auto damage = check_installed_sizes(tmp.path, files);
    REQUIRE(damage.size() == 3);
    CHECK(damage[0].path == "lib/b");
    CHECK(damage[0].what == "3 bytes, 4 written at install");
    CHECK(damage[1].what == "missing");
    CHECK(damage[2].path == "lib/c");
    fs::remove(tmp.path / "lib64");
    fs::create_directory_symlink("elsewhere", tmp.path / "lib64");
    CHECK(check_installed_sizes(tmp.path, files).size() == 4);
    CHECK_FALSE(read_installed_files(tmp.path));
}
