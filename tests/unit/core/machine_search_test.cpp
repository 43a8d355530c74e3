#include <catch2/catch.hpp>

#include <algorithm>

#include "layouts/machine_search.h"
#include "store/store.h"
#include "test_support.h"

using namespace cvm;
using cvm::test::TempDir;
using cvm::test::write_file;

namespace {

std::string found_for(const std::vector<DiscoveredFolder>& all, const fs::path& dir) {
    for (const auto& f : all)
        if (f.dir == dir) return f.found;
    return "(absent)";
}

} // namespace

TEST_CASE("discovery: every source, each folder once with where it was found") {
    TempDir t("discover");
    fs::path root = t.path / "machine";
    write_file(root / "usr" / "local" / "cuda-12.4" / "version.json", "{}");
    write_file(root / "usr" / "lib" / "nvidia-cuda-toolkit" / "bin" / "nvcc", "");
    write_file(root / "usr" / "lib" / "x86_64-linux-gnu" / "libcudnn.so.9.14.0", "");
    fs::path other = t.path / "elsewhere" / "cuda-11.8";
    fs::create_directories(other);
    fs::path env1 = t.path / "conda" / "envs" / "torch", env2 = t.path / "conda" / "envs" / "tf";
    fs::create_directories(env1);
    fs::create_directories(env2);
    fs::path home = t.path / "home";
    write_file(home / ".conda" / "environments.txt", env1.u8string() + "\n" + env2.u8string() + "\n/no/such/env\n");
    fs::path site = t.path / "venv" / "site-packages";
    fs::create_directories(site / "nvidia" / "cudnn");

    DiscoverInputs in;
    in.root = root;
    in.os = platform::Os::Linux;
    in.home = home;
    in.env = {{"CUDA_PATH_V11_8", other.u8string()}, {"CUDA_PATH", other.u8string()}, {"CONDA_PREFIX", env1.u8string()}};
    in.python = "/fake/python3";
    in.site_packages = [&](const std::string& py) {
        CHECK(py == "/fake/python3");
        return std::vector<fs::path>{site, site};
    };
    auto all = discover_folders(in);
    CHECK(found_for(all, other) == "CUDA_PATH_V11_8"); // not again for CUDA_PATH
    CHECK(found_for(all, root / "usr" / "local" / "cuda-12.4") == "NVIDIA's installer");
    CHECK(found_for(all, root / "usr") == "Debian package nvidia-cuda-toolkit; NVIDIA's cuDNN packages");
    CHECK(found_for(all, env1) == "conda environment $CONDA_PREFIX; conda environment in ~/.conda/environments.txt");
    CHECK(found_for(all, env2) == "conda environment in ~/.conda/environments.txt");
    CHECK(found_for(all, site / "nvidia") == "pip wheels of /fake/python3");
    CHECK(found_for(all, site / "nvidia" / "cudnn") == "pip wheel of /fake/python3");
    CHECK(all.size() == 7);
}

TEST_CASE("discovery: nothing there, no python, no crash") {
    TempDir t("discover-empty");
    DiscoverInputs in;
    in.root = t.path;
    in.os = platform::Os::Linux;
    in.home = t.path / "nohome";
    CHECK(discover_folders(in).empty());
    CHECK(python_site_packages("").empty());
    CHECK(python_site_packages((t.path / "no-python").u8string()).empty());
}

TEST_CASE("discovery: a python's site-packages, and one that hangs is given up on") {
    TempDir t("discover-py");
    fs::path py = t.path / "python3";
    write_file(py, "#!/bin/sh\necho /opt/site/purelib\necho /opt/site/platlib\necho relative/ignored\n");
    fs::permissions(py, fs::perms::owner_all);
    CHECK(python_site_packages(py.u8string()) == std::vector<fs::path>{"/opt/site/purelib", "/opt/site/platlib"});
    // It never ends by itself: a python_site_packages that waited for it would never return.
    write_file(py, "#!/bin/sh\necho /opt/site/purelib\nexec sleep 100000\n");
    CHECK(python_site_packages(py.u8string(), 300).empty());
}

TEST_CASE("source state: gone, changed, unchanged") {
    TempDir t("stamp");
    fs::path dir = t.path / "cudnn";
    write_file(dir / "include" / "cudnn_version.h", "#define CUDNN_MAJOR 9\n");
    std::string stamp = source_stamp(dir / "include" / "cudnn_version.h");
    REQUIRE_FALSE(stamp.empty());
    CHECK(source_state(dir, stamp) == SourceState::Ok);
    CHECK(source_state(dir, "") == SourceState::Ok);
    write_file(dir / "include" / "cudnn_version.h", "#define CUDNN_MAJOR 9 // a different size\n");
    CHECK(source_state(dir, stamp) == SourceState::Changed);
    fs::remove_all(dir);
    CHECK(source_state(dir, stamp) == SourceState::Gone);
}
