#include <catch2/catch.hpp>

#include <map>
#include <sys/stat.h>

#include "config/trust.h"
#include "image/layer_plan.h"
#include "test_support.h"

using namespace cvm::image;
using cvm::test::TempDir;
using cvm::test::write_file;
namespace fs = std::filesystem;

namespace {

std::map<std::string, LayerEntry> by_path(const LayerPlan& plan) {
    std::map<std::string, LayerEntry> m;
    for (const auto& e : plan.entries) {
        CHECK(m.count(e.path) == 0); // each path once
        m[e.path] = e;
    }
    return m;
}

// A toolkit as imports and installs leave them, a folder outside it, and a merged view of links.
struct Machine {
    TempDir tmp{"layer-plan"};
    fs::path tk = tmp.path / "store" / "cuda" / "12.4.1" / "root";
    fs::path dnn = tmp.path / "store" / "cudnn" / "9.1.0.70-cuda12" / "root";
    fs::path view = tmp.path / "store" / "views" / "12.4.1+9.1.0.70-cuda12";
    fs::path outside = tmp.path / "usr";
    Machine() {
        write_file(tk / "bin" / "nvcc", "nvcc");
        fs::permissions(tk / "bin" / "nvcc", fs::perms::owner_all | fs::perms::group_exec,
                        fs::perm_options::replace);
        write_file(tk / "lib" / "libcudart.so.12", "cudart");
        fs::create_symlink("libcudart.so.12", tk / "lib" / "libcudart.so");
        fs::create_symlink("lib", tk / "lib64");
        write_file(tk / "lib" / "libcudart_static.a", "static");
        write_file(tk / "include" / "cuda.h", "#define CUDA_VERSION 12040");
        // An import's links into shared folders: a file and a whole folder.
        write_file(outside / "lib" / "libcublas.so.12.4.5", "cublas");
        fs::create_symlink(outside / "lib" / "libcublas.so.12.4.5", tk / "lib" / "libcublas.so.12");
        write_file(outside / "nvvm" / "libdevice" / "libdevice.10.bc", "bc");
        fs::create_symlink("libdevice.10.bc", outside / "nvvm" / "libdevice" / "current.bc");
        fs::create_directories(tk / "nvvm");
        fs::create_symlink(outside / "nvvm" / "libdevice", tk / "nvvm" / "libdevice");
        // Two names of one file.
        write_file(tk / "lib" / "libnvrtc.so.12", "nvrtc");
        fs::create_hard_link(tk / "lib" / "libnvrtc.so.12", tk / "lib" / "libnvrtc.so.12.4.127");
        // A link to nothing, and a FIFO.
        fs::create_symlink("/nonexistent/cvm-test", tk / "dangling");
        ::mkfifo((tk / "fifo").c_str(), 0644);
        write_file(dnn / "lib" / "libcudnn.so.9", "cudnn");
        write_file(dnn / "include" / "cudnn.h", "cudnn");
        // The merged view: real folders and absolute links into both.
        fs::create_directories(view / "lib64");
        fs::create_symlink(tk / "bin", view / "bin");
        fs::create_symlink(tk / "lib64" / "libcudart.so.12", view / "lib64" / "libcudart.so.12");
        fs::create_symlink(dnn / "lib" / "libcudnn.so.9", view / "lib64" / "libcudnn.so.9");
        fs::create_directories(view / "include");
        fs::create_symlink(dnn / "include" / "cudnn.h", view / "include" / "cudnn.h");
    }
    // `assembled`: the toolkit is a root cvm assembled, whose links out are followed.
    std::vector<LayerTree> trees(bool assembled = true) const {
        return {{view, "opt/cvm/views/12.4.1+9.1.0.70-cuda12", {}, true},
                {tk, "opt/cvm/cuda/12.4.1", {}, assembled},
                {dnn, "opt/cvm/cudnn/9.1.0.70-cuda12"}};
    }
};

} // namespace

TEST_CASE("layer plan: real files, links kept inside, mapped between trees, followed out of an "
          "assembled root") {
    Machine m;
    LayerPlan plan = plan_layer(m.trees(), {});
    auto e = by_path(plan);
    using T = LayerEntry::Type;
    // Parents first, then the trees in order, each folder before what it holds.
    REQUIRE(plan.entries.size() > 4);
    CHECK(plan.entries[0].path == "opt");
    CHECK(plan.entries[1].path == "opt/cvm");
    CHECK(plan.entries[2].path == "opt/cvm/cuda");
    for (std::size_t i = 1; i < plan.entries.size(); ++i) {
        const auto& p = plan.entries[i].path;
        auto parent = p.substr(0, p.rfind('/'));
        bool seen = false;
        for (std::size_t j = 0; j < i && !seen; ++j)
            seen = plan.entries[j].path == parent;
        CHECK((seen || p.find('/') == std::string::npos));
    }
    const std::string t = "opt/cvm/cuda/12.4.1/";
    CHECK(e[t + "bin/nvcc"].type == T::File);
    CHECK(e[t + "bin/nvcc"].mode == 0755);
    CHECK(e[t + "lib/libcudart.so.12"].mode == 0644);
    CHECK(e[t + "lib/libcudart.so"].type == T::Symlink);
    CHECK(e[t + "lib/libcudart.so"].target == "libcudart.so.12");
    CHECK(e[t + "lib64"].target == "lib");
    // Out of the layer from a root cvm assembled: replaced by what it points to, and named.
    CHECK(e[t + "lib/libcublas.so.12"].type == T::File);
    CHECK(e[t + "lib/libcublas.so.12"].size == 6);
    CHECK(e[t + "nvvm/libdevice"].type == T::Directory);
    CHECK(e[t + "nvvm/libdevice/libdevice.10.bc"].type == T::File);
    CHECK(e[t + "nvvm/libdevice/current.bc"].type == T::Symlink); // inside the folder followed
    CHECK(e[t + "nvvm/libdevice/current.bc"].target == "libdevice.10.bc");
    // One file under two names.
    CHECK(e[t + "lib/libnvrtc.so.12"].type == T::File);
    CHECK(e[t + "lib/libnvrtc.so.12.4.127"].type == T::Hardlink);
    CHECK(e[t + "lib/libnvrtc.so.12.4.127"].target == t + "lib/libnvrtc.so.12");
    CHECK(e[t + "dangling"].type == T::Symlink);
    CHECK(e.count(t + "fifo") == 0);
    REQUIRE(plan.skipped.size() == 1);
    CHECK(plan.skipped[0].find("fifo (a FIFO)") != std::string::npos);
    REQUIRE(plan.outside.size() == 2);
    CHECK(plan.outside[0].layer == t + "lib/libcublas.so.12");
    CHECK(plan.outside[0].host == fs::canonical(m.outside / "lib" / "libcublas.so.12.4.5"));
    CHECK(!plan.outside[0].folder);
    CHECK(plan.outside[1].layer == t + "nvvm/libdevice");
    CHECK(plan.outside[1].folder);
    // The view's absolute links become relative links into the layer.
    const std::string v = "opt/cvm/views/12.4.1+9.1.0.70-cuda12/";
    CHECK(e[v + "bin"].target == "../../cuda/12.4.1/bin");
    CHECK(e[v + "lib64/libcudart.so.12"].target == "../../../cuda/12.4.1/lib64/libcudart.so.12");
    CHECK(e[v + "lib64/libcudnn.so.9"].target ==
          "../../../cudnn/9.1.0.70-cuda12/lib/libcudnn.so.9");
    CHECK(plan.left_out_files == 0);
}

TEST_CASE("layer plan: links out of a folder cvm did not make are left out, named, never read") {
    Machine m;
    LayerPlan plan = plan_layer(m.trees(false), {});
    auto e = by_path(plan);
    const std::string t = "opt/cvm/cuda/12.4.1/";
    CHECK(e.count(t + "lib/libcublas.so.12") == 0);
    CHECK(e.count(t + "nvvm/libdevice") == 0);
    CHECK(e.count(t + "nvvm/libdevice/libdevice.10.bc") == 0);
    CHECK(plan.outside.empty());
    REQUIRE(plan.skipped.size() == 3);
    CHECK(plan.skipped[1].find("libcublas.so.12 (a link out of its folder to ") !=
          std::string::npos);
    CHECK(plan.skipped[2].find("nvvm/libdevice (a link out of its folder to ") !=
          std::string::npos);
    // Inside the toolkit and between the layer's folders, links are as before.
    CHECK(e[t + "lib64"].target == "lib");
    CHECK(e["opt/cvm/views/12.4.1+9.1.0.70-cuda12/bin"].target == "../../cuda/12.4.1/bin");
}

TEST_CASE("layer plan: what another user could change stops the plan, naming it") {
    Machine m;
    fs::permissions(m.tk / "include", fs::perms::all, fs::perm_options::replace);
    try {
        plan_layer(m.trees(), {});
        FAIL("a folder every user can write went into the plan");
    } catch (const cvm::TrustError& e) {
        std::string what = e.what();
        CHECK(what.find((m.tk / "include").string()) != std::string::npos);
        CHECK(what.find("writable by every user") != std::string::npos);
    }
    fs::permissions(m.tk / "include", fs::perms::others_write, fs::perm_options::remove);
    // A folder an assembled root's link leads into, too.
    fs::permissions(m.outside / "lib", fs::perms::all, fs::perm_options::replace);
    CHECK_THROWS_AS(plan_layer(m.trees(), {}), cvm::TrustError);
}

TEST_CASE("layer plan: --runtime leaves out the compiler, headers and static libraries, and counts "
          "them") {
    Machine m;
    LayerPlan plan = plan_layer(m.trees(), PlanOptions{true});
    auto e = by_path(plan);
    const std::string t = "opt/cvm/cuda/12.4.1/", v = "opt/cvm/views/12.4.1+9.1.0.70-cuda12/";
    for (const auto& gone :
         {t + "bin", t + "bin/nvcc", t + "include", t + "lib/libcudart_static.a", t + "nvvm",
          v + "bin", v + "include/cudnn.h", std::string("opt/cvm/cudnn/9.1.0.70-cuda12/include")})
        CHECK(e.count(gone) == 0);
    CHECK(e.count(t + "lib/libcudart.so.12") == 1);
    CHECK(e.count(v + "lib64/libcudnn.so.9") == 1);
    // nvcc, cuda.h, the static library, cudnn.h (nvvm is a link out, counted as nothing).
    CHECK(plan.left_out_files == 4);
    CHECK(plan.left_out_bytes == 4 + 26 + 6 + 5);
}

TEST_CASE("layer plan: the same trees give the same plan, whatever order they come in") {
    Machine m;
    auto trees = m.trees();
    LayerPlan a = plan_layer(trees, {});
    std::reverse(trees.begin(), trees.end());
    LayerPlan b = plan_layer(trees, {});
    REQUIRE(a.entries.size() == b.entries.size());
    for (std::size_t i = 0; i < a.entries.size(); ++i)
        CHECK(a.entries[i].path == b.entries[i].path);
}

TEST_CASE("layer plan: cvm's link out to a folder above it is not followed round in circles") {
    TempDir tmp("layer-loop");
    write_file(tmp.path / "a" / "tk" / "f", "x");
    fs::create_symlink(tmp.path / "a", tmp.path / "a" / "tk" / "up");
    LayerPlan plan = plan_layer({{tmp.path / "a" / "tk", "opt/cvm/cuda/1.0.0", {}, true}}, {});
    auto e = by_path(plan);
    CHECK(e["opt/cvm/cuda/1.0.0/up"].type == LayerEntry::Type::Directory);
    CHECK(e["opt/cvm/cuda/1.0.0/up/tk/f"].type == LayerEntry::Type::Hardlink); // seen before
    // Inside the copy of `a` (not cvm's folder), the way back up is a link out: left out.
    CHECK(e.count("opt/cvm/cuda/1.0.0/up/tk/up") == 0);
    REQUIRE(plan.skipped.size() == 1);
    CHECK(plan.skipped[0].find("up (a link out of its folder") != std::string::npos);
}

TEST_CASE("layer plan: a folder that cannot be read is an error naming it") {
    TempDir tmp("layer-missing");
    CHECK_THROWS_AS(plan_layer({{tmp.path / "absent", "opt/cvm/cuda/1.0.0"}}, {}),
                    fs::filesystem_error);
}

TEST_CASE("layer plan: a view's nvcc that is cvm's shim becomes a link to the toolkit's nvcc; the "
          "view's mark stays out") {
    Machine m;
    TempDir bin("layer-shim");
    write_file(bin.path / "cvm-shim", "the shim");
    fs::remove(m.view / "bin");
    fs::create_directories(m.view / "bin");
    fs::create_symlink(bin.path / "cvm-shim", m.view / "bin" / "nvcc");
    write_file(m.view / ".cvm-view", "2\n");
    auto trees = m.trees();
    trees[0].leave_out = {".cvm-view"};
    PlanOptions o;
    o.redirects = {{bin.path / "cvm-shim", "opt/cvm/cuda/12.4.1/bin/nvcc"}};
    auto e = by_path(plan_layer(trees, o));
    const std::string v = "opt/cvm/views/12.4.1+9.1.0.70-cuda12/";
    CHECK(e[v + "bin/nvcc"].type == LayerEntry::Type::Symlink);
    CHECK(e[v + "bin/nvcc"].target == "../../../cuda/12.4.1/bin/nvcc");
    CHECK(e.count(v + ".cvm-view") == 0);
    // Without the redirect the shim would be copied in: a program that needs this machine's store.
    auto plain = by_path(plan_layer(m.trees(), {}));
    CHECK(plain[v + "bin/nvcc"].type == LayerEntry::Type::File);
}
