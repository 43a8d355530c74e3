#include <catch2/catch.hpp>

#include <archive.h>
#include <archive_entry.h>
#include <map>

#include "blobs.h"
#include "image/layer_writer.h"
#include "test_support.h"

using namespace cvm::image;
using cvm::test::read_file;
using cvm::test::sha256_digest;
using cvm::test::TempDir;
using cvm::test::write_file;
namespace fs = std::filesystem;

namespace {

struct Read {
    std::string type;
    std::string target;
    unsigned mode = 0;
    long long uid = -1, gid = -1, mtime = -1;
    std::string uname, gname, data;
};

// The layer as libarchive reads it back (gzip and tar), and the tar stream itself.
std::map<std::string, Read> read_layer(const std::string& blob, std::string& tar) {
    std::map<std::string, Read> out;
    struct archive* a = archive_read_new();
    archive_read_support_filter_gzip(a);
    archive_read_support_format_tar(a);
    REQUIRE(archive_read_open_memory(a, blob.data(), blob.size()) == ARCHIVE_OK);
    archive_entry* e;
    while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
        Read r;
        auto type = archive_entry_filetype(e);
        r.type = type == AE_IFDIR ? "dir" : type == AE_IFLNK ? "link" : "file";
        if (archive_entry_hardlink(e)) {
            r.type = "hardlink";
            r.target = archive_entry_hardlink(e);
        }
        if (archive_entry_symlink(e)) r.target = archive_entry_symlink(e);
        r.mode = archive_entry_perm(e);
        r.uid = archive_entry_uid(e);
        r.gid = archive_entry_gid(e);
        r.mtime = archive_entry_mtime(e);
        r.uname = archive_entry_uname(e) ? archive_entry_uname(e) : "";
        r.gname = archive_entry_gname(e) ? archive_entry_gname(e) : "";
        char buffer[4096];
        la_ssize_t n;
        while ((n = archive_read_data(a, buffer, sizeof buffer)) > 0)
            r.data.append(buffer, static_cast<size_t>(n));
        std::string name = archive_entry_pathname(e);
        if (r.type == "dir" && !name.empty() && name.back() == '/') name.pop_back();
        out[name] = r;
    }
    archive_read_free(a);
    // The tar stream alone, for its digest.
    a = archive_read_new();
    archive_read_support_filter_gzip(a);
    archive_read_support_format_raw(a);
    REQUIRE(archive_read_open_memory(a, blob.data(), blob.size()) == ARCHIVE_OK);
    REQUIRE(archive_read_next_header(a, &e) == ARCHIVE_OK);
    char buffer[4096];
    la_ssize_t n;
    tar.clear();
    while ((n = archive_read_data(a, buffer, sizeof buffer)) > 0)
        tar.append(buffer, static_cast<size_t>(n));
    archive_read_free(a);
    return out;
}

LayerPlan sample_plan(const fs::path& src) {
    write_file(src / "nvcc", "#!/bin/sh\necho nvcc\n");
    std::string big(3 << 20, 'x');
    for (std::size_t i = 0; i < big.size(); i += 4099)
        big[i] = static_cast<char>(i);
    write_file(src / "libbig.so", big);
    std::string long_name(180, 'n');
    write_file(src / long_name, "long");
    LayerPlan p;
    auto dir = [&](const std::string& path) {
        p.entries.push_back({LayerEntry::Type::Directory, path, {}, {}, 0755, 0});
    };
    dir("opt");
    dir("opt/cvm");
    p.entries.push_back({LayerEntry::Type::File,
                         "opt/cvm/nvcc",
                         src / "nvcc",
                         {},
                         0755,
                         fs::file_size(src / "nvcc")});
    p.entries.push_back(
        {LayerEntry::Type::File, "opt/cvm/libbig.so", src / "libbig.so", {}, 0644, big.size()});
    p.entries.push_back(
        {LayerEntry::Type::Symlink, "opt/cvm/libbig.so.1", {}, "libbig.so", 0777, 0});
    p.entries.push_back(
        {LayerEntry::Type::Hardlink, "opt/cvm/again.so", {}, "opt/cvm/libbig.so", 0644, 0});
    p.entries.push_back(
        {LayerEntry::Type::File, "opt/cvm/" + long_name, src / long_name, {}, 0644, 4});
    return p;
}

WrittenLayer write_to(const LayerPlan& plan, const fs::path& file, unsigned threads) {
    BlobFile out(file, file.parent_path());
    return write_layer(plan, 315532800, out, threads, {});
}

} // namespace

TEST_CASE("layer writer: a tar.gz whose digests are its bytes', owned by root, at one time") {
    TempDir tmp("layer-writer");
    LayerPlan plan = sample_plan(tmp.path / "src");
    std::uint64_t progress = 0;
    WrittenLayer w;
    {
        BlobFile out(tmp.path / "layer", tmp.path);
        w = write_layer(plan, 315532800, out, 2, [&](std::uint64_t done) { progress = done; });
    }
    CHECK(progress == (3u << 20) + 20 + 4);
    std::string blob = read_file(tmp.path / "layer");
    CHECK(w.size == blob.size());
    CHECK(w.digest == sha256_digest(blob));
    std::string tar;
    auto entries = read_layer(blob, tar);
    CHECK(w.diff_id == sha256_digest(tar));
    CHECK(w.tar_size == tar.size());
    REQUIRE(entries.size() == 7);
    for (const auto& [path, r] : entries) {
        CHECK(r.uid == 0);
        CHECK(r.gid == 0);
        CHECK(r.uname.empty());
        CHECK(r.gname.empty());
        CHECK(r.mtime == 315532800);
    }
    CHECK(entries["opt/cvm/nvcc"].mode == 0755);
    CHECK(entries["opt/cvm/nvcc"].data == "#!/bin/sh\necho nvcc\n");
    CHECK(entries["opt/cvm/libbig.so"].data.size() == (3u << 20));
    CHECK(entries["opt/cvm/libbig.so.1"].type == "link");
    CHECK(entries["opt/cvm/libbig.so.1"].target == "libbig.so");
    CHECK(entries["opt/cvm/again.so"].type == "hardlink");
    CHECK(entries["opt/cvm/" + std::string(180, 'n')].data == "long");
    CHECK(entries["opt/cvm"].type == "dir");
}

TEST_CASE("layer writer: the same plan gives the same bytes, whatever the threads") {
    TempDir tmp("layer-writer-same");
    LayerPlan plan = sample_plan(tmp.path / "src");
    auto a = write_to(plan, tmp.path / "a", 0);
    auto b = write_to(plan, tmp.path / "b", 4);
    CHECK(a.digest == b.digest);
    CHECK(a.diff_id == b.diff_id);
    CHECK(read_file(tmp.path / "a") == read_file(tmp.path / "b"));
}

TEST_CASE("layer writer: a file that changed since the plan is refused") {
    TempDir tmp("layer-writer-changed");
    LayerPlan plan = sample_plan(tmp.path / "src");
    write_file(tmp.path / "src" / "nvcc", "shorter");
    CHECK_THROWS_WITH(write_to(plan, tmp.path / "a", 0),
                      Catch::Contains("changed while it was exported"));
    write_file(tmp.path / "src" / "nvcc", std::string(100, 'l'));
    CHECK_THROWS_WITH(write_to(plan, tmp.path / "b", 0),
                      Catch::Contains("changed while it was exported"));
}
