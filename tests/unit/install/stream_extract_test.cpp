// Extraction from bytes that arrive in pieces (extract_archive_stream) and the zip central
// directory reader (zip_streamed_test.cpp: a streamed zip settled against it).
#include "archive_builder.h"
#include "install/error.h"
#include "install/extract.h"
#include "install/zip_directory.h"
#include "install/zip_streamed.h"
#include "piece_source.h"
#include "test_util.h"

#include <algorithm>
#include <cstring>
#include <map>

using namespace cvm::install;
using namespace cvm::install::test;
namespace fs = std::filesystem;

namespace {

ArchiveBuilder plain_tree() {
    ArchiveBuilder b;
    b.dir("top/")
        .file("top/lib/libcudnn.so.9.1.0", pseudo_random_bytes(300000, 3), 0755)
        .file("top/include/cudnn_version.h", "#define CUDNN_MAJOR 9\n")
        .file("top/LICENSE", "license\n");
    return b;
}

std::map<std::string, std::string> sums(const ExtractResult& r) {
    std::map<std::string, std::string> out;
    for (const auto& e : r.entries)
        out[e.path] = e.sha256;
    return out;
}

} // namespace

TEST_CASE("an archive arriving in pieces extracts as the file does") {
    using F = ArchiveBuilder::Format;
    for (F format : {F::TarXz, F::TarGz, F::Tar, F::Zip}) {
        TempDir t;
        plain_tree().write(t / "a", format);
        fs::create_directories(t / "file");
        fs::create_directories(t / "stream");
        ExtractResult from_file = extract_archive(t / "a", t / "file");
        PieceSource source(read_file(t / "a"));
        ExtractResult streamed = extract_archive_stream(source, "a", t / "stream");
        CHECK(sums(streamed) == sums(from_file));
        CHECK(read_file(t / "stream/top/lib/libcudnn.so.9.1.0") == pseudo_random_bytes(300000, 3));
        if (format == F::Zip) {
            // libarchive writes data descriptors: the CRCs come from the bytes themselves.
            CHECK(settle_streamed_zip(t / "a", t / "stream", streamed, "a") == 0);
            auto central = read_zip_directory(t / "a");
            CHECK(std::any_of(central.begin(), central.end(), [](const ZipCentralEntry& c) {
                return c.name == "top/lib/libcudnn.so.9.1.0" && c.size == 300000 && c.crc32 != 0;
            }));
        }
    }
}

TEST_CASE("a source that stops fails the extraction") {
    TempDir t;
    plain_tree().write(t / "a.tar.xz", ArchiveBuilder::Format::TarXz);
    fs::create_directories(t / "out");
    PieceSource source(read_file(t / "a.tar.xz"), 5000);
    CHECK_THROWS_AS(extract_archive_stream(source, "a.tar.xz", t / "out"), InstallError);
}

TEST_CASE("the central directory of a zip64 file, and of damaged ones") {
    TempDir t;
    // Python writes zip64 records for whatever exceeds its limit: lowered, for every field.
    REQUIRE(shell("python3 -c \"import zipfile\n"
                  "zipfile.ZIP64_LIMIT = 1000\n"
                  "with zipfile.ZipFile('" + (t / "z.zip").string() + "', 'w') as z:\n"
                  "    z.writestr('big.bin', b'x' * 70000)\n"
                  "    z.writestr('dir/', b'')\"") == 0);
    REQUIRE(read_file(t / "z.zip").find("PK\x06\x06") != std::string::npos);
    auto entries = read_zip_directory(t / "z.zip");
    REQUIRE(entries.size() == 2);
    CHECK(entries[0].name == "big.bin");
    CHECK(entries[0].size == 70000);
    CHECK(entries[1].directory);
    std::string whole = read_file(t / "z.zip");
    write_file(t / "cut.zip", whole.substr(0, whole.size() - 30));
    CHECK_THROWS_WITH(read_zip_directory(t / "cut.zip"),
                      Catch::Contains("cut.zip is damaged: its zip central directory"));
    write_file(t / "none.zip", "PK\x03\x04 not much else");
    CHECK_THROWS_AS(read_zip_directory(t / "none.zip"), InstallError);
}
