#include <catch2/catch.hpp>

#include "blobs.h"
#include "image/oci_layout.h"
#include "install/error.h"
#include "test_support.h"

#include <unistd.h>

using namespace cvm::image;
using cvm::test::read_file;
using cvm::test::sha256_digest;
using cvm::test::TempDir;
using cvm::test::write_file;
namespace fs = std::filesystem;

namespace {

// Adds a blob to a layout and returns its descriptor.
Descriptor blob(const fs::path& layout, const std::string& media, const std::string& bytes) {
    Descriptor d{media, sha256_digest(bytes), bytes.size()};
    write_file(blob_path(layout, d.digest), bytes);
    return d;
}

// A layout with one image (one layer) tagged `tag`, for `arch`.
fs::path make_layout(const fs::path& dir, const std::string& tag,
                     const std::string& arch = "amd64") {
    write_file(dir / "oci-layout", kLayoutText);
    Descriptor layer = blob(dir, media::kLayerGzip, "not really a layer");
    nlohmann::json config = {
        {"architecture", arch},
        {"os", "linux"},
        {"config", {{"Env", {"PATH=/usr/bin:/bin"}}}},
        {"rootfs", {{"type", "layers"}, {"diff_ids", {sha256_digest("tar")}}}}};
    Descriptor c = blob(dir, media::kConfig, config.dump());
    nlohmann::json manifest = {{"schemaVersion", 2},
                               {"mediaType", media::kManifest},
                               {"config", c.to_json()},
                               {"layers", {layer.to_json()}}};
    Descriptor m = blob(dir, media::kManifest, manifest.dump());
    nlohmann::json entry = m.to_json();
    entry["annotations"] = {{kRefName, tag}};
    write_file(dir / "index.json",
               nlohmann::json{{"schemaVersion", 2}, {"manifests", {entry}}}.dump());
    return dir;
}

} // namespace

TEST_CASE("digests and tags: only what cannot become another path") {
    CHECK(is_sha256_digest("sha256:" + std::string(64, 'a')));
    CHECK_FALSE(is_sha256_digest("sha256:" + std::string(64, 'A')));
    CHECK_FALSE(is_sha256_digest("sha256:../../../../etc/passwd" + std::string(37, 'a')));
    CHECK_FALSE(is_sha256_digest("sha512:" + std::string(64, 'a')));
    CHECK_FALSE(is_sha256_digest("sha256:" + std::string(63, 'a')));
    CHECK(is_valid_tag("cuda12.4.1-cudnn9.1.0.70-cuda12"));
    CHECK(is_valid_tag("_x"));
    CHECK_FALSE(is_valid_tag(""));
    CHECK_FALSE(is_valid_tag("-x"));
    CHECK_FALSE(is_valid_tag(".x"));
    CHECK_FALSE(is_valid_tag("12.4+9"));
    CHECK_FALSE(is_valid_tag("a/b"));
    CHECK_FALSE(is_valid_tag(std::string(129, 'a')));
}

TEST_CASE("what a destination folder holds") {
    TempDir tmp("oci-folder");
    std::string why;
    CHECK(folder_state(tmp.path / "absent", why) == FolderState::Absent);
    fs::create_directories(tmp.path / "empty");
    CHECK(folder_state(tmp.path / "empty", why) == FolderState::Empty);
    write_file(tmp.path / "file", "x");
    CHECK(folder_state(tmp.path / "file", why) == FolderState::Other);
    CHECK(why == "a file");
    write_file(tmp.path / "project" / "README", "x");
    write_file(tmp.path / "project" / "src" / "a.c", "x");
    CHECK(folder_state(tmp.path / "project", why) == FolderState::Other);
    CHECK(why == "a folder holding README, src");
    make_layout(tmp.path / "layout", "base");
    CHECK(folder_state(tmp.path / "layout", why) == FolderState::Layout);
    // oci-layout alone, or one that is not the layout file, is not a layout.
    write_file(tmp.path / "half" / "oci-layout", kLayoutText);
    CHECK(folder_state(tmp.path / "half", why) == FolderState::Other);
    fs::create_symlink(tmp.path / "nowhere", tmp.path / "dangling");
    CHECK(folder_state(tmp.path / "dangling", why) == FolderState::Other);
}

TEST_CASE("a base image: by tag, alone, checked blob by blob") {
    TempDir tmp("oci-base");
    fs::path l = make_layout(tmp.path / "base", "bookworm");
    BaseImage b = read_base_image(l, std::string("bookworm"), "amd64");
    CHECK(b.tag == "bookworm");
    CHECK(b.layers.size() == 1);
    CHECK(b.config["config"]["Env"][0] == "PATH=/usr/bin:/bin");
    CHECK(read_base_image(l, std::nullopt, "amd64").tag == "bookworm");
    CHECK_THROWS_WITH(read_base_image(l, std::string("sid"), "amd64"),
                      Catch::Contains("has no image tagged 'sid' (tags: bookworm)"));
    CHECK_THROWS_WITH(
        read_base_image(l, std::nullopt, "arm64"),
        Catch::Contains("is an image for linux/amd64; the toolkit is for linux/arm64"));
    CHECK_THROWS_WITH(read_base_image(tmp.path / "nothing", std::nullopt, "amd64"),
                      Catch::Contains("is not an OCI image layout"));
}

TEST_CASE("a base image whose blobs were changed or whose digests point elsewhere is refused") {
    TempDir tmp("oci-base-bad");
    fs::path l = make_layout(tmp.path / "base", "x");
    auto index = nlohmann::json::parse(read_file(l / "index.json"));
    // The manifest's bytes changed under its name.
    fs::path manifest = blob_path(l, index["manifests"][0]["digest"]);
    std::string text = read_file(manifest);
    write_file(manifest, text + " ");
    CHECK_THROWS_WITH(read_base_image(l, std::nullopt, "amd64"),
                      Catch::Contains("does not match its digest"));
    write_file(manifest, text);
    // A digest that would leave the layout.
    index["manifests"][0]["digest"] = "sha256:../../../../../../etc/passwd";
    write_file(l / "index.json", index.dump());
    CHECK_THROWS_WITH(read_base_image(l, std::nullopt, "amd64"),
                      Catch::Contains("is not sha256:<64 hex digits>"));
    // Two images and no tag named.
    make_layout(tmp.path / "two", "a");
    auto two = nlohmann::json::parse(read_file(tmp.path / "two" / "index.json"));
    auto second = two["manifests"][0];
    second["annotations"][kRefName] = "b";
    two["manifests"].push_back(second);
    write_file(tmp.path / "two" / "index.json", two.dump());
    CHECK_THROWS_WITH(read_base_image(tmp.path / "two", std::nullopt, "amd64"),
                      Catch::Contains("holds 2 images (tags: a, b); name one"));
}

TEST_CASE("copying a blob checks it against its digest") {
    TempDir tmp("oci-copy");
    fs::path l = make_layout(tmp.path / "base", "x");
    BaseImage b = read_base_image(l, std::nullopt, "amd64");
    copy_blob(l, b.layers[0], tmp.path / "copy", tmp.path);
    CHECK(read_file(tmp.path / "copy") == "not really a layer");
    write_file(blob_path(l, b.layers[0].digest), "not really a layer, changed");
    CHECK_THROWS_AS(copy_blob(l, b.layers[0], tmp.path / "copy2", tmp.path),
                    cvm::install::InstallError);
}

TEST_CASE("JSON nesting is bounded before it is parsed (issue 33)") {
    CHECK(json_nesting_within(R"({"a":[{"b":[]}]})", 4));
    CHECK_FALSE(json_nesting_within(R"({"a":[{"b":[]}]})", 3));
    // Brackets inside strings, escaped quotes included, do not count.
    CHECK(json_nesting_within(R"({"a":"[[[[\"[[[["})", 1));
    CHECK_FALSE(json_nesting_within(std::string(100000, '[') + std::string(100000, ']'),
                                    kJsonDepthLimit));
    TempDir tmp("oci-deep");
    fs::path l = make_layout(tmp.path / "base", "x");
    write_file(l / "index.json", "{\"manifests\":[" + std::string(1000, '[') +
                                     std::string(1000, ']') + "]}");
    CHECK_THROWS_WITH(read_index(l), Catch::Contains("is nested deeper than 64 levels"));
}

TEST_CASE("a killed export's leftovers (issue 33)") {
    CHECK_FALSE(is_stale_temp(".layer.tmp" + std::to_string(::getpid())));
    CHECK_FALSE(is_stale_temp("layer.tmp4194303x"));
    CHECK_FALSE(is_stale_temp("abc"));
    TempDir tmp("oci-leftovers");
    std::string why;
    fs::create_directories(tmp.path / "e" / "blobs" / "sha256");
    CHECK(folder_state(tmp.path / "e", why) == FolderState::Empty);
    write_file(tmp.path / "e" / "blobs" / "sha256" / ("." + std::string("layer.tmp") +
                                                      std::to_string(::getpid())),
               "x");
    CHECK(folder_state(tmp.path / "e", why) == FolderState::Other); // its process runs
}
