// SharedFile (platform/shared_file.h) on POSIX; the Windows side is run under Wine by
// tests/integration/windows_install_streaming.sh (tests/windows/shared_file_test.cpp).
#include <catch2/catch.hpp>

#include "platform/shared_file.h"
#include "test_support.h"

#include <cerrno>
#include <string>

#ifndef _WIN32
#include <sys/stat.h>
#include <unistd.h>
#endif

using cvm::platform::SharedFile;
using cvm::test::TempDir;
using cvm::test::write_file;
using Mode = SharedFile::Mode;
namespace fs = std::filesystem;

namespace {

std::string read_some(SharedFile& f, std::size_t n) {
    std::string buf(n, '\0');
    int err = 0;
    buf.resize(f.read(buf.data(), n, &err));
    CHECK(err == 0);
    return buf;
}

} // namespace

TEST_CASE("SharedFile: read while written, renamed and deleted while open") {
    TempDir tmp("shared");
    fs::path part = tmp.path / "a.zip.part", done = tmp.path / "a.zip";
    SharedFile writer, reader;
    REQUIRE(writer.open(part, Mode::Truncate) == 0);
    REQUIRE(writer.write_all("abc", 3) == 0);
    REQUIRE(reader.open(part, Mode::Read) == 0);
    CHECK(read_some(reader, 10) == "abc");
    REQUIRE(writer.write_all("def", 3) == 0);
    CHECK(read_some(reader, 10) == "def"); // unbuffered: each write is there at once
    CHECK(read_some(reader, 10).empty());

    write_file(done, "older");
    std::error_code ec;
    cvm::platform::rename_shared_file(part, done, ec);
    REQUIRE(!ec);
    CHECK(!fs::exists(part));
    REQUIRE(writer.write_all("ghi", 3) == 0);
    CHECK(read_some(reader, 10) == "ghi");
    writer.close();

    cvm::platform::remove_shared_file(done, ec);
    CHECK(!ec);
    CHECK(!fs::exists(done));
    SharedFile again;
    REQUIRE(again.open(done, Mode::Truncate) == 0);
    REQUIRE(again.write_all("new", 3) == 0);
    again.close();
    REQUIRE(again.open(done, Mode::Append) == 0);
    REQUIRE(again.write_all("+", 1) == 0);
    again.close();
    reader.close();
    REQUIRE(reader.open(done, Mode::Read) == 0);
    CHECK(read_some(reader, 10) == "new+");

    // Moved: the handle goes with it.
    SharedFile moved(std::move(reader));
    CHECK(!reader.is_open());
    CHECK(moved.is_open());
    reader = std::move(moved);
    CHECK(reader.is_open());

    cvm::platform::remove_shared_file(tmp.path / "missing", ec);
    CHECK(!ec);
    CHECK(reader.open(tmp.path / "missing", Mode::Read) == ENOENT);
    CHECK(!reader.is_open());
    CHECK(writer.write_all("x", 1) == EBADF);
}

#ifndef _WIN32
TEST_CASE("SharedFile: what is not a regular file is refused, links are not followed") {
    TempDir tmp("shared-odd");
    SharedFile f;
    CHECK(f.open(tmp.path, Mode::Read) != 0);
    REQUIRE(mkfifo((tmp.path / "fifo").c_str(), 0600) == 0);
    CHECK(f.open(tmp.path / "fifo", Mode::Append) != 0); // no wait for a reader
    CHECK(f.open(tmp.path / "fifo", Mode::Read) == EINVAL);
    write_file(tmp.path / "target", "secret");
    fs::create_symlink(tmp.path / "target", tmp.path / "link.part");
    CHECK(f.open(tmp.path / "link.part", Mode::Truncate) == ELOOP);
    CHECK(fs::file_size(tmp.path / "target") == 6); // not emptied through the link
    CHECK(!f.is_open());

    SharedFile w;
    REQUIRE(w.open(tmp.path / "new.part", Mode::Append) == 0);
    struct stat st;
    REQUIRE(stat((tmp.path / "new.part").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
}
#endif
