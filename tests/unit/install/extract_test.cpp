#include "archive_builder.h"
#include "install/error.h"
#include "install/extract.h"
#include "install/sha256.h"
#include "install/owner_records.h"
#include "install/verify.h"
#include "test_util.h"

#include <sys/stat.h>

#include <set>

using namespace cvm::install;
using namespace cvm::install::test;
namespace fs = std::filesystem;

namespace {

ArchiveBuilder honest_tree() {
    ArchiveBuilder b;
    b.dir("top/")
        .dir("top/lib/")
        .file("top/lib/libcudnn.so.8.1.0", pseudo_random_bytes(200000, 1), 0755)
        .symlink("top/lib/libcudnn.so.8", "libcudnn.so.8.1.0")
        .symlink("top/lib/libcudnn.so", "libcudnn.so.8")
        .file("top/include/cudnn_version.h", "#define CUDNN_MAJOR 8\n")
        .symlink("top/include/up", "../lib/libcudnn.so")
        .file("top/bin/tool", "#!/bin/sh\necho hi\n", 0750)
        .file("top/LICENSE", "license text\n", 0444)
        .hardlink("top/lib/libcudnn_copy.so", "top/lib/libcudnn.so.8.1.0");
    return b;
}

void check_honest_tree(const fs::path& dest) {
    fs::path lib = dest / "top" / "lib";
    CHECK(read_file(lib / "libcudnn.so.8.1.0") == pseudo_random_bytes(200000, 1));
    CHECK(fs::is_symlink(lib / "libcudnn.so.8"));
    CHECK(fs::read_symlink(lib / "libcudnn.so.8") == "libcudnn.so.8.1.0");
    CHECK(fs::read_symlink(lib / "libcudnn.so") == "libcudnn.so.8");
    CHECK(read_file(lib / "libcudnn.so") == pseudo_random_bytes(200000, 1));
    CHECK(read_file(dest / "top/include/up") == pseudo_random_bytes(200000, 1));
    struct stat st {};
    REQUIRE(::stat((lib / "libcudnn.so.8.1.0").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0755);
    REQUIRE(::stat((dest / "top/bin/tool").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0750);
    REQUIRE(::stat((dest / "top/LICENSE").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0644); // owner write kept so the store can be cleaned
    struct stat a {
    }, b{};
    REQUIRE(::stat((lib / "libcudnn_copy.so").c_str(), &a) == 0);
    REQUIRE(::stat((lib / "libcudnn.so.8.1.0").c_str(), &b) == 0);
    CHECK(a.st_ino == b.st_ino);
    CHECK(a.st_mtime == 1700000000);
}

// Everything in `dir`, relative, for "nothing was written outside" checks.
std::set<std::string> listing(const fs::path& dir) {
    std::set<std::string> out;
    for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator();
         ++it)
        out.insert(it->path().lexically_relative(dir).generic_string());
    return out;
}

std::string refusal(const ArchiveBuilder& b, ArchiveBuilder::Format format, const TempDir& tmp,
                    const std::string& name = "a") {
    fs::path archive = tmp / (name + (format == ArchiveBuilder::Format::Zip ? ".zip" : ".tar.xz"));
    b.write(archive, format);
    fs::path dest = tmp / ("dest-" + name);
    fs::create_directories(dest);
    auto before = listing(tmp.path);
    std::string message = "(extracted)";
    try {
        extract_archive(archive, dest);
    } catch (const InstallError& e) {
        message = e.what();
        CHECK(e.exit_code() == 2);
    }
    // Nothing appeared outside the destination.
    auto after = listing(tmp.path);
    for (const auto& p : after)
        if (p.rfind("dest-" + name, 0) != 0) {
            INFO("new outside the destination: " << p);
            CHECK(before.count(p) == 1);
        }
    return message;
}

} // namespace

TEST_CASE("entry path normalisation", "[extract]") {
    std::string why;
    CHECK(normalize_entry_path("a/b/c", &why) == "a/b/c");
    CHECK(normalize_entry_path("./a//b/./c/", &why) == "a/b/c");
    CHECK(normalize_entry_path("a\\b", &why) == "a/b");
    CHECK(normalize_entry_path("./", &why) == ".");
    CHECK(normalize_entry_path("../a", &why).empty());
    CHECK(why.find("..") != std::string::npos);
    CHECK(normalize_entry_path("a/../../b", &why).empty());
    CHECK(normalize_entry_path("a\\..\\..\\b", &why).empty());
    CHECK(normalize_entry_path("/etc/passwd", &why).empty());
    CHECK(why == "absolute path");
    CHECK(normalize_entry_path("C:/Windows/x", &why).empty());
    CHECK(normalize_entry_path("\\\\server\\share", &why).empty());
    CHECK(normalize_entry_path("", &why).empty());
    CHECK(normalize_entry_path(std::string("a\nb"), &why).empty());
}

TEST_CASE("link targets resolve from the link's folder", "[extract]") {
    std::string why;
    CHECK(resolve_link_target("lib/libx.so", "libx.so.1", &why) == "lib/libx.so.1");
    CHECK(resolve_link_target("a/b/l", "../../c", &why) == "c");
    CHECK(resolve_link_target("a/l", "..", &why) == ".");
    CHECK(resolve_link_target("a/l", "../..", &why).empty());
    CHECK(why.find("leaves") != std::string::npos);
    CHECK(resolve_link_target("l", "/etc/passwd", &why).empty());
    CHECK(why.find("absolute") != std::string::npos);
    CHECK(resolve_link_target("l", "", &why).empty());
}

TEST_CASE("format detection reads the bytes, not the name", "[extract]") {
    TempDir tmp;
    ArchiveBuilder b;
    b.file("x", "y");
    b.write(tmp / "a.zip.tar.xz", ArchiveBuilder::Format::Zip);
    CHECK(detect_archive_format(tmp / "a.zip.tar.xz") == ArchiveFormat::Zip);
    b.write(tmp / "b.zip", ArchiveBuilder::Format::TarXz);
    CHECK(detect_archive_format(tmp / "b.zip") == ArchiveFormat::TarXz);
    b.write(tmp / "c", ArchiveBuilder::Format::TarGz);
    CHECK(detect_archive_format(tmp / "c") == ArchiveFormat::TarGz);
    b.write(tmp / "d", ArchiveBuilder::Format::Tar);
    CHECK(detect_archive_format(tmp / "d") == ArchiveFormat::Tar);
    write_file(tmp / "e", "hello");
    CHECK(detect_archive_format(tmp / "e") == ArchiveFormat::Unknown);
    fs::create_directories(tmp / "out");
    try {
        extract_archive(tmp / "e", tmp / "out");
        FAIL("no error");
    } catch (const InstallError& e) {
        CHECK(std::string(e.what()).find("not an archive") != std::string::npos);
    }
}

TEST_CASE("honest archives extract with links, permissions and times in every format",
          "[extract]") {
    for (auto format : {ArchiveBuilder::Format::TarXz, ArchiveBuilder::Format::TarGz,
                        ArchiveBuilder::Format::Tar, ArchiveBuilder::Format::Zip}) {
        if (format == ArchiveBuilder::Format::Zip) continue; // zip has no hard links; tested below
        TempDir tmp;
        honest_tree().write(tmp / "a", format);
        fs::create_directories(tmp / "out");
        std::uint64_t last = 0, total = 0;
        ExtractOptions options;
        options.progress = [&](std::uint64_t done, std::uint64_t all) {
            CHECK(done >= last);
            last = done;
            total = all;
        };
        ExtractResult r = extract_archive(tmp / "a", tmp / "out", options);
        check_honest_tree(tmp / "out");
        CHECK(r.bytes_written >= 200000);
        CHECK(total == fs::file_size(tmp / "a"));
        CHECK(last == total);
        bool saw_link = false;
        for (const auto& e : r.entries)
            if (e.path == "top/lib/libcudnn.so" && e.type == ExtractedEntry::Type::Symlink)
                saw_link = e.link_target == "libcudnn.so.8";
        CHECK(saw_link);
    }
}

TEST_CASE("zip archives extract on several threads with links and permissions", "[extract]") {
    TempDir tmp;
    ArchiveBuilder b;
    b.dir("top/").symlink("top/lib/libz.so", "libz.so.1");
    for (int i = 0; i < 40; ++i)
        b.file("top/lib/f" + std::to_string(i), pseudo_random_bytes(1000 + i * 3000, i),
               i % 2 ? 0755 : 0644);
    b.file("top/lib/libz.so.1", "zz");
    b.write(tmp / "a.zip", ArchiveBuilder::Format::Zip);
    fs::create_directories(tmp / "out");
    ExtractOptions options;
    options.threads = 3;
    ExtractResult r = extract_archive(tmp / "a.zip", tmp / "out", options);
    CHECK(r.format == ArchiveFormat::Zip);
    CHECK(r.entries.size() == 43);
    for (int i = 0; i < 40; ++i) {
        fs::path f = tmp / "out" / "top/lib" / ("f" + std::to_string(i));
        CHECK(read_file(f) == pseudo_random_bytes(1000 + i * 3000, i));
        struct stat st {};
        REQUIRE(::stat(f.c_str(), &st) == 0);
        CHECK((st.st_mode & 0777) == static_cast<unsigned>(i % 2 ? 0755 : 0644));
    }
    CHECK(fs::read_symlink(tmp / "out/top/lib/libz.so") == "libz.so.1");
    CHECK(read_file(tmp / "out/top/lib/libz.so") == "zz");
}

TEST_CASE("multi-block xz (xz -T2) decodes on several threads", "[extract]") {
    if (shell("command -v xz > /dev/null") != 0) {
        WARN("xz is not installed: multi-block files cannot be made here");
        return;
    }
    TempDir tmp;
    ArchiveBuilder b;
    for (int i = 0; i < 8; ++i)
        b.file("d/f" + std::to_string(i), pseudo_random_bytes(300000, 100 + i));
    b.write(tmp / "a.tar", ArchiveBuilder::Format::Tar);
    REQUIRE(shell("xz -T2 --block-size=262144 -k " + shell_quote((tmp / "a.tar").string())) == 0);
    // The file really holds several blocks.
    REQUIRE(shell("xz --robot -lv " + shell_quote((tmp / "a.tar.xz").string()) +
                  " | awk '$1==\"block\"' | wc -l | grep -qv '^1$'") == 0);
    fs::create_directories(tmp / "out");
    ExtractOptions options;
    options.threads = 2;
    extract_archive(tmp / "a.tar.xz", tmp / "out", options);
    for (int i = 0; i < 8; ++i)
        CHECK(read_file(tmp / "out/d" / ("f" + std::to_string(i))) ==
              pseudo_random_bytes(300000, 100 + i));
}

TEST_CASE("damaged and truncated archives are refused clearly", "[extract]") {
    TempDir tmp;
    ArchiveBuilder b;
    b.file("d/big", pseudo_random_bytes(600000, 7));
    b.write(tmp / "a.tar.xz", ArchiveBuilder::Format::TarXz);
    std::string bytes = read_file(tmp / "a.tar.xz");
    auto attempt = [&](const std::string& content, const char* name) {
        write_file(tmp / name, content);
        fs::path out = tmp / (std::string("out-") + name);
        fs::create_directories(out);
        try {
            extract_archive(tmp / name, out);
        } catch (const InstallError& e) {
            CHECK(e.exit_code() == 2);
            return std::string(e.what());
        }
        return std::string("(extracted)");
    };
    std::string flipped = bytes;
    flipped[flipped.size() / 2] ^= 0x55;
    std::string m1 = attempt(flipped, "flipped.tar.xz");
    CHECK(m1.find("flipped.tar.xz") != std::string::npos);
    CHECK(m1.find("damaged") != std::string::npos);
    std::string m2 = attempt(bytes.substr(0, bytes.size() / 2), "cut.tar.xz");
    CHECK(m2.find("cut.tar.xz") != std::string::npos);
    CHECK((m2.find("truncated") != std::string::npos || m2.find("damaged") != std::string::npos));
    b.write(tmp / "z.zip", ArchiveBuilder::Format::Zip);
    std::string zip = read_file(tmp / "z.zip");
    zip[zip.size() / 3] ^= 0x55;
    std::string m3 = attempt(zip, "bad.zip");
    CHECK(m3.find("bad.zip") != std::string::npos);
    CHECK(m3 != "(extracted)");
}

TEST_CASE("hostile archives are refused and write nothing outside", "[extract][hostile]") {
    using F = ArchiveBuilder::Format;
    for (F format : {F::TarXz, F::Zip}) {
        TempDir tmp;
        auto refused = [&](ArchiveBuilder b, const std::string& name, const std::string& expect) {
            std::string m = refusal(b, format, tmp, name);
            INFO(name << ": " << m);
            CHECK(m.find("refused") != std::string::npos);
            CHECK(m.find(expect) != std::string::npos);
        };
        refused(ArchiveBuilder().file("ok", "x").file("../evil", "x"), "dotdot", "\"..\"");
        refused(ArchiveBuilder().file("a/../../evil", "x"), "dotdot2", "\"..\"");
        refused(ArchiveBuilder().file("..\\evil", "x"), "backslash", "\"..\"");
        refused(ArchiveBuilder().file(tmp.path.string() + "/abs-evil", "x"), "absolute",
                "absolute");
        refused(ArchiveBuilder().symlink("lib/l", "../../outside"), "linkout", "leaves");
        refused(ArchiveBuilder().symlink("l", "/etc/passwd"), "linkabs", "absolute");
        refused(ArchiveBuilder().symlink("d", ".").file("d/x", "y"), "through", "symlink \"d\"");
        refused(ArchiveBuilder().symlink("d", tmp.path.string()).file("d/evil", "y"),
                "throughabs", "absolute");
        // Lexically inside, really outside: a/l1 is the root, so b = root/.. .
        refused(ArchiveBuilder().symlink("a/l1", "..").symlink("b", "a/l1/.."), "chain",
                "resolves outside");
        refused(ArchiveBuilder().file("x", "1").file("x", "2"), "twice", "listed twice");
        if (format == F::TarXz) {
            refused(ArchiveBuilder().hardlink("h", "../outside"), "hardout", "\"..\"");
            refused(ArchiveBuilder().hardlink("h", "/etc/passwd"), "hardabs", "absolute");
            refused(ArchiveBuilder().hardlink("h", "nothing"), "hardmissing", "not a file");
            refused(ArchiveBuilder().special("fifo", AE_IFIFO), "fifo", "device files");
            refused(ArchiveBuilder().special("dev", AE_IFCHR), "chr", "device files");
            refused(ArchiveBuilder().special("blk", AE_IFBLK), "blk", "device files");
        }
        CHECK_FALSE(fs::exists(tmp.path.parent_path() / "evil"));
        CHECK_FALSE(fs::exists(tmp / "abs-evil"));
        CHECK_FALSE(fs::exists(tmp / "evil"));
    }
}

TEST_CASE("several archives extract at once", "[extract]") {
    TempDir tmp;
    std::vector<ArchiveJob> jobs;
    for (int i = 0; i < 5; ++i) {
        ArchiveBuilder b;
        b.file("c" + std::to_string(i) + "/lib/x", pseudo_random_bytes(50000, 40 + i));
        fs::path archive = tmp / ("c" + std::to_string(i) + ".tar.xz");
        b.write(archive, i == 3 ? ArchiveBuilder::Format::Zip : ArchiveBuilder::Format::TarXz);
        fs::create_directories(tmp / ("out" + std::to_string(i)));
        jobs.push_back({archive, tmp / ("out" + std::to_string(i))});
    }
    auto results = extract_archives(jobs, 2);
    REQUIRE(results.size() == 5);
    for (int i = 0; i < 5; ++i)
        CHECK(read_file(tmp / ("out" + std::to_string(i)) / ("c" + std::to_string(i)) / "lib/x") ==
              pseudo_random_bytes(50000, 40 + i));
    // One bad archive fails the whole set.
    write_file(jobs[2].archive, "garbage");
    for (auto& job : jobs) {
        fs::remove_all(job.destination);
        fs::create_directories(job.destination);
    }
    CHECK_THROWS_AS(extract_archives(jobs, 2), InstallError);
}

#ifndef _WIN32
namespace {
// The process's umask as the kernel holds it now (not a value cached by cvm).
unsigned kernel_umask() {
    std::string status = read_file("/proc/self/status");
    auto at = status.find("\nUmask:");
    REQUIRE(at != std::string::npos);
    return static_cast<unsigned>(std::stoul(status.substr(at + 7), nullptr, 8));
}
} // namespace

// libarchive learns the umask by setting it to 0 and back; two threads doing so at once can
// leave the process at umask 0, and every file cvm writes afterwards world-writable.
TEST_CASE("extracting on many threads at once leaves the process's umask as it was", "[extract]") {
    TempDir tmp;
    const mode_t before = umask(027);
    std::vector<ArchiveJob> jobs;
    for (int i = 0; i < 8; ++i) {
        ArchiveBuilder b;
        b.file("c/x" + std::to_string(i), "x");
        fs::path archive = tmp / ("c" + std::to_string(i) + ".tar");
        b.write(archive, ArchiveBuilder::Format::Tar);
        jobs.push_back({archive, tmp / ("out" + std::to_string(i))});
    }
    for (int round = 0; round < 300; ++round) {
        for (auto& job : jobs) {
            fs::remove_all(job.destination);
            fs::create_directories(job.destination);
        }
        extract_archives(jobs, 8);
        INFO("round " << round);
        REQUIRE(kernel_umask() == 027);
    }
    umask(before);
}
#endif

TEST_CASE("each file's size and SHA-256 are those of the bytes on disk, in every format",
          "[extract]") {
    for (auto format : {ArchiveBuilder::Format::TarXz, ArchiveBuilder::Format::TarGz,
                        ArchiveBuilder::Format::Tar, ArchiveBuilder::Format::Zip}) {
        TempDir tmp;
        ArchiveBuilder b;
        b.file("top/empty", "")
            .file("top/big", pseudo_random_bytes(3 << 20, 7), 0777)
            .file("top/small", "abc", 0666)
            .symlink("top/link", "small");
        b.write(tmp / "a", format);
        fs::create_directories(tmp / "out");
        ExtractResult r = extract_archive(tmp / "a", tmp / "out");
        int files = 0;
        for (const auto& e : r.entries) {
            if (e.type != ExtractedEntry::Type::File) continue;
            ++files;
            fs::path p = tmp / "out" / e.path;
            CHECK(e.size == fs::file_size(p));
            CHECK(e.sha256 == sha256_file(p));
            // 0777 and 0666 from the archive: never group- or world-writable in the store.
            struct stat st {};
            REQUIRE(::stat(p.c_str(), &st) == 0);
            CHECK((st.st_mode & 022) == 0);
        }
        CHECK(files == 3);
        CHECK(sha256_file(tmp / "out/top/small") ==
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}

TEST_CASE("wheel RECORD digests are urlsafe base64 without padding", "[verify]") {
    // sha256("abc")
    CHECK(hex_to_urlsafe_base64("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") ==
          "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0");
    CHECK(hex_to_urlsafe_base64("ff") == "_w");
    CHECK(hex_to_urlsafe_base64("ffff") == "__8");
}
