// SharedFile on Windows (src/platform/windows/shared_file.cpp), what streaming installs need of
// a download's part file: read through one handle while written through another, renamed into
// place and deleted while both are open, and made anew under the same name at once. A handle
// from the C runtime (_wfopen, as std::fstream uses) must block the rename: that shows Windows
// (or Wine) enforces the sharing rules here, so the cases that pass are not passing by default.
// Run by tests/integration/windows_install_streaming.sh under Wine; prints one line per failed
// case, then "N failed", and exits 1 if any failed.
#include "platform/shared_file.h"

#include <windows.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using cvm::platform::SharedFile;
using Mode = cvm::platform::SharedFile::Mode;

namespace {

int failures = 0;

void check(bool ok, const char* what) {
    if (ok) return;
    std::printf("FAIL %s\n", what);
    ++failures;
}

std::string read_some(SharedFile& f, std::size_t n) {
    std::string buf(n, '\0');
    int err = 0;
    buf.resize(f.read(buf.data(), n, &err));
    if (err != 0) std::printf("read error %d\n", err);
    return buf;
}

bool name_exists(const fs::path& p) {
    return GetFileAttributesW(p.wstring().c_str()) != INVALID_FILE_ATTRIBUTES;
}

// The names in `dir`, sorted, joined by spaces.
std::string names_in(const fs::path& dir) {
    std::string out;
    std::error_code ec;
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir, ec))
        names.push_back(e.path().filename().u8string());
    std::sort(names.begin(), names.end());
    for (const auto& n : names)
        out += (out.empty() ? "" : " ") + n;
    return out;
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::printf("usage: shared_file_test EMPTY_FOLDER\n");
        return 2;
    }
    fs::path dir = fs::u8path(argv[1]);
    fs::path part = dir / "a.zip.part", done = dir / "a.zip";
    std::error_code ec;

    // Written and read at once; the reader sees each write at once (no buffer in between).
    SharedFile writer, reader;
    check(writer.open(part, Mode::Truncate) == 0, "open the part for writing");
    check(writer.write_all("abc", 3) == 0, "write");
    check(reader.open(part, Mode::Read) == 0, "open the part for reading while it is written");
    check(read_some(reader, 10) == "abc", "read what was written");
    check(writer.write_all("def", 3) == 0, "write more");
    check(read_some(reader, 10) == "def", "read what was written since");
    check(read_some(reader, 10).empty(), "the end of the bytes");

    // A handle of the C runtime (no FILE_SHARE_DELETE) blocks a rename.
    if (FILE* crt = _wfopen(part.wstring().c_str(), L"rb")) {
        cvm::platform::rename_shared_file(part, done, ec);
        check(static_cast<bool>(ec),
              "a rename refused while _wfopen holds the file (sharing enforced)");
        std::fclose(crt);
    } else {
        check(false, "_wfopen of the part");
    }
    if (!name_exists(part) && name_exists(done)) cvm::platform::rename_shared_file(done, part, ec);

    // Renamed into place while both handles are open, over an older file of that name.
    {
        SharedFile old;
        check(old.open(done, Mode::Truncate) == 0 && old.write_all("old", 3) == 0, "an older file");
    }
    cvm::platform::rename_shared_file(part, done, ec);
    check(!ec, "rename while the reader and the writer hold the file");
    check(!name_exists(part) && name_exists(done), "the file has its new name");
    check(writer.write_all("ghi", 3) == 0, "write after the rename");
    check(read_some(reader, 10) == "ghi", "read after the rename");
    writer.close();

    // Deleted while the reader holds it: the name is free at once, the reader reads on.
    cvm::platform::remove_shared_file(done, ec);
    check(!ec, "delete while the reader holds the file");
    check(!name_exists(done), "the deleted file's name is gone");
    SharedFile again;
    check(again.open(done, Mode::Truncate) == 0, "a new file of the deleted one's name");
    check(again.write_all("new", 3) == 0, "write the new file");
    again.close();
    reader.close();
    check(names_in(dir) == "a.zip", "only the new file is left once the reader closed");

    // Appending; reading the whole file.
    check(again.open(done, Mode::Append) == 0 && again.write_all("+", 1) == 0, "append");
    again.close();
    check(reader.open(done, Mode::Read) == 0 && read_some(reader, 10) == "new+",
          "appended at the end");
    reader.close();

    // What is not there, or not a file.
    check(reader.open(dir / "missing", Mode::Read) == ENOENT, "a missing file: ENOENT");
    check(reader.open(dir, Mode::Read) != 0, "a folder is refused");
    cvm::platform::remove_shared_file(dir / "missing", ec);
    check(!ec, "removing a missing file is no error");

    std::printf("%d failed\n", failures);
    return failures == 0 ? 0 : 1;
}
