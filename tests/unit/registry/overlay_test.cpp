// The `cvm update` overlay (registry/overlay.h) and the folder listings it is made from
// (registry/index_listing.h): real listing shapes, hostile links and names, round trips of the
// overlay file, merging, and a garbled overlay that is reported and ignored.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "registry/index_listing.h"
#include "registry/overlay.h"
#include "test_support.h"
#include "version_support.h"

namespace fs = std::filesystem;
using namespace cvm;
using namespace cvm::registry;
// A fresh temporary folder, its name this process's own: never another run's (std::rand() without
// a seed named the same folder in every run).
using cvm::test::TempDir;
using cvm::test::v;

namespace {

std::vector<std::string> names(const std::vector<ListingEntry>& entries) {
    std::vector<std::string> out;
    for (const auto& e : entries) out.push_back(e.name);
    return out;
}

const char* const kFolder = "https://developer.download.nvidia.com/compute/cuda/redist/";

} // namespace

TEST_CASE("an Apache listing gives its files, folders and dates") {
    const char* html = R"(<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 3.2 Final//EN">
<html><head><title>Index of /compute/cuda/redist</title></head><body>
<h1>Index of /compute/cuda/redist</h1>
<table><tr><th><a href="?C=N;O=D">Name</a></th><th><a href="?C=M;O=A">Last modified</a></th></tr>
<tr><td><a href="/compute/cuda/">Parent Directory</a></td></tr>
<tr><td><a href="cuda_nvcc/">cuda_nvcc/</a></td><td align="right">2025-08-01 10:12  </td></tr>
<tr><td><A HREF="redistrib_13.4.1.json">redistrib_13.4.1.json</A></td><td align="right">2026-11-20 18:15  </td></tr>
<tr><td><a href='redistrib_11.8.0.json'>redistrib_11.8.0.json</a></td><td>2022-10-03 12:00</td></tr>
</table></body></html>)";
    auto entries = listing_entries(html, kFolder);
    CHECK(names(entries) == std::vector<std::string>{"cuda_nvcc/", "redistrib_13.4.1.json", "redistrib_11.8.0.json"});
    CHECK(entries[1].month == "2026-11");
    CHECK(entries[2].month == "2022-10");
}

TEST_CASE("an nginx listing, absolute links into the folder, and links that leave it") {
    std::string html = "<html><body><pre><a href=\"../\">../</a>\n"
                       "<a href=\"v8.1.0/\">v8.1.0/</a>                26-Jan-2021 18:15       -\n"
                       "<a href=\"/compute/cuda/redist/redistrib_12.0.0.json\">x</a> 08-Dec-2022 01:00 1234\n"
                       "<a href=\"https://developer.download.nvidia.com/compute/cuda/redist/redistrib_12.1.0.json\">x</a>\n"
                       "<a href=\"https://evil.example/compute/cuda/redist/redistrib_12.2.0.json\">x</a>\n"
                       "<a href=\"/elsewhere/redistrib_12.3.0.json\">x</a>\n"
                       "<a href=\"sub/dir/redistrib_12.4.0.json\">x</a>\n"
                       "<a href=\"redistrib_12.5.0.json#top\">x</a>\n"
                       "<a href=\"..%2Fsecret\">x</a>\n"
                       "<a href=\"redistrib_12%2E6.0.json\">x</a>\n"
                       "<a href=\".hidden\">x</a>\n"
                       "<a href=\"name with space.json\">x</a>\n"
                       "<a href=\"" + std::string(300, 'a') + "\">x</a>\n"
                       "<abbr href=\"redistrib_1.0.0.json\">no</abbr><a data-href=\"redistrib_2.0.0.json\">no</a>\n"
                       "<a href=\"v8.1.0/\">twice</a></pre></body></html>";
    auto entries = listing_entries(html, kFolder);
    CHECK(names(entries) ==
          std::vector<std::string>{"v8.1.0/", "redistrib_12.0.0.json", "redistrib_12.1.0.json", "redistrib_12.6.0.json"});
    CHECK(entries[0].month == "2021-01");
    CHECK(entries[1].month == "2022-12");
}

TEST_CASE("a garbled listing gives nothing, never a crash") {
    CHECK(listing_entries("", kFolder).empty());
    CHECK(listing_entries("<a href=", kFolder).empty());
    CHECK(listing_entries("<a href=\"redistrib_1.0.0.json", kFolder).empty());
    CHECK(listing_entries("<a href=\"%zz\">", kFolder).empty());
    CHECK(listing_entries(std::string(5000, '<'), kFolder).empty());
    CHECK(listing_entries("<a href=redistrib_13.0.0.json>unquoted</a>", kFolder).size() == 1);
    std::string many;
    for (int i = 0; i < 50; ++i) many += "<a href=\"f" + std::to_string(i) + "\">";
    CHECK(listing_entries(many, kFolder, 10).size() == 10);
}

TEST_CASE("release names: manifests, legacy folders and legacy archives") {
    CHECK(manifest_version("redistrib_13.4.1.json") == v("13.4.1"));
    CHECK(manifest_version("redistrib_8.9.7.29.json") == v("8.9.7.29"));
    CHECK_FALSE(manifest_version("redistrib_13.4.json"));
    CHECK_FALSE(manifest_version("redistrib_13.4.1.json.sig"));
    CHECK_FALSE(manifest_version("redistrib_999.0.0.json"));
    CHECK_FALSE(manifest_version("redistrib_1.0.99999999.json"));
    CHECK_FALSE(manifest_version("redistrib_99999999999999999999.0.0.json"));
    CHECK_FALSE(manifest_version("redistrib_13.4.1.1.1.json"));
    CHECK(legacy_folder_version("v8.1.0/") == v("8.1.0"));
    CHECK_FALSE(legacy_folder_version("v8.1.0"));
    CHECK_FALSE(legacy_folder_version("v8.1/"));

    auto a = legacy_archive("cudnn-11.2-linux-x64-v8.1.0.77.tgz");
    REQUIRE(a);
    CHECK(a->cudnn == v("8.1.0.77"));
    CHECK(a->cuda == v("11.2"));
    CHECK_FALSE(a->windows);
    auto w = legacy_archive("cudnn-10.2-windows10-x64-v8.1.0.77.zip");
    REQUIRE(w);
    CHECK(w->windows);
    CHECK(w->cuda == v("10.2"));
    auto r = legacy_archive("cudnn-windows-x86_64-8.3.1.22_cuda11.5-archive.zip");
    REQUIRE(r);
    CHECK(r->cudnn == v("8.3.1.22"));
    CHECK(r->cuda == v("11.5"));
    CHECK(r->windows);
    CHECK_FALSE(legacy_archive("cudnn-11.2-osx-x64-v8.1.0.77.tgz"));
    CHECK_FALSE(legacy_archive("cudnn-11.2-linux-x64-v8.1.0.77.zip"));
    CHECK_FALSE(legacy_archive("cudnn-11.2-linux-x64-v8.1.tgz"));
    CHECK_FALSE(legacy_archive("cudnn-linux-x86_64-8.3.1.22-archive.tar.xz"));
    CHECK_FALSE(legacy_archive("libcudnn8_8.1.0.77-1+cuda11.2_amd64.deb"));
}

TEST_CASE("an overlay reads back what was written, and merges below the shipped registry") {
    Overlay o;
    o.updated = "2026-12-01T04:14:22Z";
    o.mirror = "http://127.0.0.1:8000";
    CudaRelease c;
    c.version = v("13.4.1");
    c.date = "2026-11-20";
    c.manifest = "redistrib_13.4.1.json";
    c.cudart = v("13.4.80");
    c.driver_linux = parse_driver_version("595.71.05");
    c.source = "cvm update: http://127.0.0.1:8000/cuda/redist/redistrib_13.4.1.json \"quoted\"";
    c.inferred = {"driver_linux"};
    o.cuda.push_back(c);
    CudaRelease shipped_one = c;
    shipped_one.version = v("11.8.0"); // the shipped registry has it: left out
    o.cuda.push_back(shipped_one);
    CudnnRelease d;
    d.version = v("8.1.0.99");
    d.source = "cvm update";
    d.inferred = {"date", "builds.supports"};
    CudnnBuild b;
    b.cuda = v("11.2");
    b.supports_min = v("11.0");
    b.supports_max = v("11.2");
    b.linux_archives = {"cudnn-11.2-linux-x64-v8.1.0.99.tgz"};
    d.builds.push_back(b);
    o.cudnn.push_back(d);

    Overlay back = parse_overlay(overlay_text(o), "overlay.toml");
    CHECK(back.updated == o.updated);
    CHECK(back.mirror == o.mirror);
    REQUIRE(back.cuda.size() == 2);
    CHECK(back.cuda[1].version == v("13.4.1"));
    CHECK(back.cuda[1].source == c.source);
    CHECK(back.cuda[1].is_inferred("driver_linux"));
    CHECK(back.cuda[1].driver_linux->text == "595.71.05");
    REQUIRE(back.cudnn.size() == 1);
    CHECK(back.cudnn[0].builds[0].linux_archives == b.linux_archives);

    Registry reg = load_registry(source_tree_registry_dir());
    auto before = reg.cuda.size();
    const CudaRelease* shipped = find_cuda_release(reg, v("11.8.0"));
    REQUIRE(shipped);
    std::string shipped_source = shipped->source;
    CHECK(merge_overlay(reg, back) == 2);
    CHECK(reg.cuda.size() == before + 1);
    CHECK(find_cuda_release(reg, v("11.8.0"))->source == shipped_source);
    CHECK(find_cuda_release(reg, v("13.4"))->version == v("13.4.1"));
    CHECK(reg.cuda.back().version == v("13.4.1")); // still sorted
    CHECK(find_cudnn_build(reg, "8.1.0.99-cuda11.2"));
}

TEST_CASE("a garbled overlay is named and ignored") {
    const char* bad[] = {
        "not toml at all",
        "schema = 2\nupdated = \"2026-12-01T04:14:22Z\"\nmirror = \"x\"\n",
        "schema = 1\nupdated = \"yesterday\"\nmirror = \"x\"\n",
        "schema = 1\nupdated = \"2026-12-01T04:14:22Z\"\n",
        "schema = 1\nupdated = \"2026-12-01T04:14:22Z\"\nmirror = \"x\"\nextra = 1\n",
        "schema = 1\nupdated = \"2026-12-01T04:14:22Z\"\nmirror = \"x\"\n[[cuda.release]]\nversion = \"13\"\nsource = \"s\"\n",
        "schema = 1\nupdated = \"2026-12-01T04:14:22Z\"\nmirror = \"x\"\n[cuda]\nminor_compat = []\n",
    };
    for (const char* text : bad) {
        INFO(text);
        CHECK_THROWS_AS(parse_overlay(text, "/c/registry-overlay.toml"), RegistryError);
        try {
            parse_overlay(text, "/c/registry-overlay.toml");
        } catch (const RegistryError& e) {
            CHECK(std::string(e.what()).rfind("/c/registry-overlay.toml:", 0) == 0);
        }
    }
    TempDir dir;
    {
        std::ofstream(overlay_file(dir.path)) << "schema = 1\nupdated = \"2026-12"; // cut short
    }
    OverlayState state;
    Registry reg = load_registry_with_overlay(dir.path, &state);
    CHECK_FALSE(state.present);
    CHECK(state.problem.find(overlay_file(dir.path).u8string()) != std::string::npos);
    CHECK(reg.cuda.size() == load_default_registry().cuda.size());

    fs::remove(overlay_file(dir.path));
    OverlayState none;
    load_registry_with_overlay(dir.path, &none);
    CHECK_FALSE(none.present);
    CHECK(none.problem.empty());

    fs::create_directory(overlay_file(dir.path)); // a folder where the file should be
    OverlayState folder;
    load_registry_with_overlay(dir.path, &folder);
    CHECK_FALSE(folder.present);
    CHECK(folder.problem.find("folder") != std::string::npos);
}

TEST_CASE("the overlay's age in words") {
    using namespace std::chrono;
    system_clock::time_point t0{seconds{1764562462}}; // 2025-12-01T04:14:22Z
    CHECK(utc_timestamp(t0) == "2025-12-01T04:14:22Z");
    CHECK(utc_timestamp(system_clock::time_point{seconds{951782400}}) == "2000-02-29T00:00:00Z");
    CHECK(age_text("2025-12-01T04:14:22Z", t0 + seconds{5}) == "just now");
    CHECK(age_text("2025-12-01T04:14:22Z", t0 + minutes{1}) == "1 minute ago");
    CHECK(age_text("2025-12-01T04:14:22Z", t0 + hours{5}) == "5 hours ago");
    CHECK(age_text("2025-12-01T04:14:22Z", t0 + hours{72}) == "3 days ago");
    CHECK(age_text("2025-12-01T04:14:22Z", t0 - hours{1}).find("future") != std::string::npos);
    CHECK(age_text("garbage", t0).empty());
    CHECK(age_text("2025-13-01T04:14:22Z", t0).empty());
}
