// A zip streamed through its local headers, settled against its central directory in place
// (settle_streamed_zip): zips as Python writes them (stored entries, data descriptors, symlinks),
// entries whose data the stream missed read again alone, and the refusals.
#include "archive_builder.h"
#include "install/error.h"
#include "install/extract.h"
#include "install/zip_directory.h"
#include "install/zip_streamed.h"
#include "piece_source.h"
#include "test_util.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <map>

using namespace cvm::install;
using namespace cvm::install::test;
namespace fs = std::filesystem;

namespace {

// Writes zips with Python's zipfile into `folder`:
//   stored.zip    every entry stored, sizes in the local headers, symlinks (made on Unix)
//   described.zip written to a pipe: every entry with a data descriptor, stored and deflated
//   zip64.zip     the same tree with zip64 fields in its headers
//   evil-link.zip a symlink that leaves the folder
const char* kMakeZips = R"PY(
import os, stat, sys, zipfile
out = sys.argv[1]
big = bytes((i * 7919 + (i >> 9)) & 0xFF for i in range(300000))
def info(name, mode, method):
    i = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
    i.create_system = 3
    i.external_attr = mode << 16
    i.compress_type = method
    return i
S, D = zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED
tree = [("top/", stat.S_IFDIR | 0o755, S, b""),
        ("top/lib/libx.so.9.1.0", stat.S_IFREG | 0o755, D, big),
        ("top/lib/libx.so.9", stat.S_IFLNK | 0o777, S, b"libx.so.9.1.0"),
        ("top/lib/libx.so", stat.S_IFLNK | 0o777, S, b"libx.so.9"),
        ("top/include/x.h", stat.S_IFREG | 0o644, S, b"#define X 1\n" * 50),
        ("top/empty", stat.S_IFREG | 0o600, S, b""),
        ("top/LICENSE", stat.S_IFREG | 0o644, D, b"license\n")]
with zipfile.ZipFile(os.path.join(out, "stored.zip"), "w") as z:
    for name, mode, method, data in tree:
        z.writestr(info(name, mode, S), data)
class Pipe:  # not seekable: zipfile writes data descriptors
    def __init__(self, f): self.f = f
    def write(self, b): return self.f.write(b)
    def flush(self): self.f.flush()
    def tell(self): raise OSError("a pipe")
    def seekable(self): return False
with open(os.path.join(out, "described.zip"), "wb") as f, zipfile.ZipFile(Pipe(f), "w") as z:
    for name, mode, method, data in tree:
        if name.endswith("/"):
            z.writestr(info(name, mode, S), data)
            continue
        with z.open(info(name, mode, method), "w") as w:
            w.write(data)
limit = zipfile.ZIP64_LIMIT
zipfile.ZIP64_LIMIT = 1000  # zip64 records for every field of the larger entries
with zipfile.ZipFile(os.path.join(out, "zip64.zip"), "w") as z:
    for name, mode, method, data in tree:
        z.writestr(info(name, mode, method), data)
zipfile.ZIP64_LIMIT = limit
with zipfile.ZipFile(os.path.join(out, "evil-link.zip"), "w") as z:
    z.writestr(info("top/", stat.S_IFDIR | 0o755, S), b"")
    z.writestr(info("top/out", stat.S_IFLNK | 0o777, S), b"../../etc")
)PY";

void make_zips(const fs::path& folder) {
    write_file(folder / "make.py", kMakeZips);
    REQUIRE(shell("python3 " + shell_quote((folder / "make.py").string()) + " " +
                  shell_quote(folder.string())) == 0);
}

std::map<std::string, std::string> records(const ExtractResult& r) {
    std::map<std::string, std::string> out;
    for (const auto& e : r.entries)
        out[e.path] = std::to_string(static_cast<int>(e.type)) + " " + e.sha256 + " " +
                      e.link_target + " " + std::to_string(e.size);
    return out;
}

unsigned mode_of(const fs::path& p) {
    struct stat st {};
    REQUIRE(::lstat(p.c_str(), &st) == 0);
    return st.st_mode & 07777;
}

ExtractResult stream(const fs::path& zip, const fs::path& out) {
    fs::create_directories(out);
    PieceSource source(read_file(zip));
    return extract_archive_stream(source, zip.filename().string(), out);
}

} // namespace

TEST_CASE("zips with stored entries, data descriptors and symlinks settle in one pass") {
    TempDir t;
    make_zips(t.path);
    for (const char* name : {"stored.zip", "described.zip", "zip64.zip"}) {
        INFO(name);
        fs::path zip = t / name;
        if (std::string(name) == "described.zip")
            REQUIRE(read_file(zip).find("PK\x07\x08") != std::string::npos);
        if (std::string(name) == "zip64.zip")
            REQUIRE(read_file(zip).find("PK\x06\x06") != std::string::npos);
        fs::path out = t / (std::string(name) + ".out");
        ExtractResult streamed = stream(zip, out);
        // Nothing read twice: every entry came whole through its local header.
        CHECK(settle_streamed_zip(zip, out, streamed, name) == 0);
        CHECK_FALSE(fs::exists(t / (std::string(name) + ".out.again")));
        fs::create_directories(t / "file");
        ExtractResult from_file = extract_archive(zip, t / "file");
        CHECK(records(streamed) == records(from_file));
        CHECK(fs::is_symlink(out / "top/lib/libx.so"));
        CHECK(fs::read_symlink(out / "top/lib/libx.so") == "libx.so.9");
        CHECK(read_file(out / "top/lib/libx.so") == read_file(out / "top/lib/libx.so.9.1.0"));
        CHECK(read_file(out / "top/lib/libx.so.9.1.0").size() == 300000);
        CHECK(read_file(out / "top/include/x.h") == read_file(t / "file/top/include/x.h"));
        CHECK(read_file(out / "top/empty").empty());
        CHECK((mode_of(out / "top/lib/libx.so.9.1.0") & 0777) == 0755);
        CHECK((mode_of(out / "top/empty") & 0777) == 0600);
        fs::remove_all(t / "file");
    }
}

TEST_CASE("a file whose streamed bytes differ is read again alone") {
    TempDir t;
    make_zips(t.path);
    fs::path zip = t / "stored.zip";
    fs::path out = t / "out";
    ExtractResult streamed = stream(zip, out);
    ExtractResult expected = streamed;
    // As when the streaming reader delivers no data for an entry: an empty file, its record so.
    write_file(out / "top/include/x.h", "");
    std::string license_before = read_file(out / "top/LICENSE");
    fs::last_write_time(out / "top/LICENSE", fs::file_time_type{});
    for (auto& e : streamed.entries)
        if (e.path == "top/include/x.h") e.size = 0, e.crc32 = 0, e.sha256 = "none";
    CHECK(settle_streamed_zip(zip, out, streamed, "stored.zip") == 1);
    std::string header;
    for (int i = 0; i < 50; ++i)
        header += "#define X 1\n";
    CHECK(read_file(out / "top/include/x.h") == header);
    // The others were left as they were streamed.
    CHECK(fs::last_write_time(out / "top/LICENSE") == fs::file_time_type{});
    CHECK(read_file(out / "top/LICENSE") == license_before);
    ExtractResult fresh;
    {
        fs::create_directories(t / "file");
        fresh = extract_archive(zip, t / "file");
    }
    CHECK(records(streamed) == records(fresh));
    CHECK_FALSE(fs::exists(t / "out.again"));
}

TEST_CASE("a streamed zip whose links or names break the rules is refused") {
    TempDir t;
    make_zips(t.path);
    SECTION("a symlink that leaves the folder") {
        ExtractResult streamed = stream(t / "evil-link.zip", t / "out");
        CHECK_THROWS_WITH(settle_streamed_zip(t / "evil-link.zip", t / "out", streamed, "e.zip"),
                          Catch::Contains("e.zip refused: entry \"top/out\": symlink to "
                                          "\"../../etc\" leaves the install folder"));
        CHECK_FALSE(fs::is_symlink(t / "out/top/out"));
    }
    SECTION("a file written through a symlink") {
        // (A stream cannot write one: the link's path is a file, or a folder, on disk.)
        ExtractResult streamed = stream(t / "stored.zip", t / "out");
        streamed.entries.push_back(
            {"top/lib/libx.so/passwd", ExtractedEntry::Type::File, "", 1, "", 0});
        CHECK_THROWS_WITH(
            settle_streamed_zip(t / "stored.zip", t / "out", streamed, "s.zip"),
            Catch::Contains("entry \"top/lib/libx.so/passwd\": goes through the symlink "
                            "\"top/lib/libx.so\""));
    }
    SECTION("a link whose target leads outside through another link") {
        // Each target alone stays inside; followed on disk, b leads out through a.
        REQUIRE(shell("cd " + shell_quote(t.path.string()) +
                      " && python3 -c \"import zipfile, stat\n"
                      "with zipfile.ZipFile('chain.zip', 'w') as z:\n"
                      "    for n, d in (('top/d/a', b'..'), ('top/b', b'd/a/../..')):\n"
                      "        i = zipfile.ZipInfo(n)\n"
                      "        i.create_system = 3\n"
                      "        i.external_attr = (stat.S_IFLNK | 0o777) << 16\n"
                      "        z.writestr(i, d)\"") == 0);
        ExtractResult real = stream(t / "chain.zip", t / "chain");
        CHECK_THROWS_WITH(settle_streamed_zip(t / "chain.zip", t / "chain", real, "c.zip"),
                          Catch::Contains("c.zip refused: entry \"top/b\": symlink to "
                                          "\"d/a/../..\" resolves outside the install folder"));
    }
}

TEST_CASE("a streamed zip must agree with its central directory") {
    TempDir t;
    ArchiveBuilder b;
    b.dir("top/")
        .file("top/lib/libcudnn.so.9.1.0", pseudo_random_bytes(300000, 3), 0755)
        .file("top/LICENSE", "license\n");
    b.write(t / "a.zip", ArchiveBuilder::Format::Zip);
    ExtractResult streamed = stream(t / "a.zip", t / "out");
    SECTION("an entry the central directory does not list") {
        streamed.entries.push_back({"top/hidden", ExtractedEntry::Type::File, "", 1, "", 0});
        CHECK_THROWS_WITH(settle_streamed_zip(t / "a.zip", t / "out", streamed, "a.zip"),
                          Catch::Contains("\"top/hidden\" is not in the central directory"));
    }
    SECTION("an entry no local header held") {
        streamed.entries.erase(std::remove_if(streamed.entries.begin(), streamed.entries.end(),
                                              [](const ExtractedEntry& e) {
                                                  return e.path == "top/LICENSE";
                                              }),
                               streamed.entries.end());
        CHECK_THROWS_WITH(settle_streamed_zip(t / "a.zip", t / "out", streamed, "a.zip"),
                          Catch::Contains("no local header holds it"));
    }
    SECTION("a folder that is a file in the central directory") {
        for (auto& e : streamed.entries)
            if (e.path == "top/LICENSE") e.type = ExtractedEntry::Type::Directory;
        CHECK_THROWS_WITH(settle_streamed_zip(t / "a.zip", t / "out", streamed, "a.zip"),
                          Catch::Contains("is a folder, but a file in the central directory"));
    }
}
