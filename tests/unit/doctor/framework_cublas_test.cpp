#include "doctor/framework_cublas.h"
#include "doctor/own_cublas.h"
#include "test_support.h"

#include <catch2/catch.hpp>

using namespace cvm;
using namespace cvm::doctor;
using cvm::test::TempDir;
using cvm::test::write_file;

namespace {

bool mentions(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// A site-packages with NVIDIA's cuBLAS 13.10 wheel (its two libraries, its dist-info), and a
// toolkit's library folder holding cuBLAS `release` under its real name, as NVIDIA's archives have it.
struct CublasMachine {
    TempDir tmp{"cublas"};
    std::string site = tmp.str("site");
    std::string own = tmp.str("site/nvidia/cu13/lib");
    std::string toolkit = tmp.str("cuda/lib64");

    explicit CublasMachine(const std::string& release) {
        write_file(tmp / "site/nvidia/cu13/lib/libcublas.so.13", "x");
        write_file(tmp / "site/nvidia/cu13/lib/libcublasLt.so.13", "x");
        tmp.mkdir("site/nvidia_cublas-13.10.0.20.dist-info");
        for (const std::string stem : {"libcublas.so", "libcublasLt.so"}) { // libcublas.so.13 -> libcublas.so.13.1.0.3
            write_file(tmp / "cuda/lib64" / (stem + "." + release), "x");
            std::filesystem::create_symlink(stem + "." + release, tmp / "cuda/lib64" / (stem + ".13"));
        }
    }
    FrameworkInstall framework(const std::string& name, const std::vector<std::string>& loaders) const {
        FrameworkInstall f;
        f.name = name;
        f.own_cublas = read_own_cublas(files, site, loaders);
        return f;
    }
    RealFileSystem files;
};

} // namespace

TEST_CASE("framework cuBLAS: the wheel's folder, release and the way each framework reaches it",
          "[doctor][framework]") {
    CublasMachine m("13.1.0.3");
    // PyTorch 2.15: libcublasLt, then libcublas, by full path.
    write_file(m.tmp / "site/torch/__init__.py",
               "    cuda_libs = [\n        (\"cublas\", \"libcublasLt.so.*[0-9]\"),\n"
               "        (\"cublas\", \"libcublas.so.*[0-9]\"),\n");
    auto torch = m.framework("pytorch", {m.tmp.str("site/torch/__init__.py"), m.tmp.str("site/torch/lib/libtorch_cuda.so")});
    REQUIRE(torch.own_cublas);
    CHECK(torch.own_cublas->dir == m.own);
    CHECK(torch.own_cublas->version == "13.10.0.20");
    CHECK(torch.own_cublas->major == "13");
    CHECK(torch.own_cublas->cublas_first);
    CHECK(torch.own_cublas->lt_first);
    CHECK(torch.own_cublas->how == "its torch/__init__.py loads libcublasLt and then libcublas from the wheel by full path");
    // JAX's plugin: libcublas first, libcublasLt after it.
    write_file(m.tmp / "site/jax_plugins/xla_cuda13/__init__.py",
               "  _load(\"cublas\", [\"libcublas.so.12\", \"libcublasLt.so.12\"])\n"
               "  _load(\"cu13\", [\"libcublas.so.13\", \"libcublasLt.so.13\"])\n");
    auto jax = m.framework("jax", {m.tmp.str("site/jax_plugins/xla_cuda13/__init__.py")});
    REQUIRE(jax.own_cublas);
    CHECK(jax.own_cublas->cublas_first);
    CHECK_FALSE(jax.own_cublas->lt_first); // its libcublas (no ELF here: no RPATH read) looks it up by name
    CHECK(jax.own_cublas->lt_later);
    // No loader known (TensorFlow): found, not reached first.
    auto tf = m.framework("tensorflow", {});
    REQUIRE(tf.own_cublas);
    CHECK(tf.own_cublas->dir == m.own);
    CHECK_FALSE(tf.own_cublas->cublas_first);
    CHECK_FALSE(judge_own_cublas(tf, "TensorFlow", {m.toolkit}, m.files));
    // No wheel: nothing.
    FrameworkInstall none;
    none.own_cublas = read_own_cublas(m.files, m.tmp.str("elsewhere"), {});
    CHECK_FALSE(none.own_cublas);
    CHECK_FALSE(judge_own_cublas(none, "PyTorch", {m.toolkit}, m.files));
}

TEST_CASE("framework cuBLAS: what loads under the selection's LD_LIBRARY_PATH", "[doctor][framework]") {
    using K = FrameworkCublasVerdict::Kind;
    CublasMachine older("13.1.0.3");
    FrameworkInstall f;
    f.name = "jax";
    f.own_cublas = OwnCublas{older.own, "13.10.0.20", "13"};
    OwnCublas& c = *f.own_cublas;

    SECTION("both reached first: its own whole, the toolkit's named with its release") {
        c.cublas_first = c.lt_first = true;
        c.how = "HOW";
        auto v = judge_own_cublas(f, "JAX", {older.toolkit}, older.files);
        REQUIRE(v);
        CHECK(v->kind == K::Own);
        CHECK(mentions(v->message, "loads its own cuBLAS 13.10.0.20 whole (" + older.own + "): HOW, ahead of LD_LIBRARY_PATH"));
        CHECK(mentions(v->message, "the libcublas.so.13 in " + older.toolkit + " (13.1.0.3) does not replace it"));
        // Nothing on the path: its own, said so.
        auto alone = judge_own_cublas(f, "JAX", {older.tmp.str("empty"), ""}, older.files);
        CHECK(alone->kind == K::Own);
        CHECK(mentions(alone->message, "nothing on cvm's LD_LIBRARY_PATH holds libcublas.so.13"));
        // Its own folder first on the path: no other.
        CHECK(mentions(judge_own_cublas(f, "JAX", {older.own + "/", older.toolkit}, older.files)->message, "nothing on"));
    }
    SECTION("neither reached first: the toolkit's, with the fix") {
        auto v = judge_own_cublas(f, "JAX", {older.toolkit}, older.files);
        CHECK(v->kind == K::Other);
        CHECK(mentions(v->message, "would load the libcublas.so.13 in " + older.toolkit + " (13.1.0.3) in place of its own"));
        CHECK(mentions(v->fix, "select a toolkit whose cuBLAS is 13.10.0.20 or later (`cvm list --available 13`)"));
    }
    SECTION("libcublas first, an older libcublasLt on the path: its libcublas fails to load with it") {
        c.cublas_first = true;
        c.how = "HOW";
        c.lt_later = true; // JAX's plugin then loads its own libcublasLt by full path
        auto v = judge_own_cublas(f, "JAX", {older.toolkit}, older.files);
        CHECK(v->kind == K::Own);
        CHECK(mentions(v->message, "after a failed first try"));
        CHECK(mentions(v->message, "the older libcublasLt.so.13 in " + older.toolkit + " (13.1.0.3)"));
        c.lt_later = false;
        auto fails = judge_own_cublas(f, "JAX", {older.toolkit}, older.files);
        CHECK(fails->kind == K::Other);
        CHECK(mentions(fails->message, "would fail to load cuBLAS under cvm"));
    }
    SECTION("libcublas first, a libcublasLt as new or newer on the path: a mixed cuBLAS") {
        CublasMachine newer("13.12.0.1");
        c.dir = newer.own;
        c.cublas_first = true;
        c.lt_later = true;
        c.how = "HOW";
        auto v = judge_own_cublas(f, "JAX", {newer.toolkit}, newer.files);
        CHECK(v->kind == K::Mixed);
        CHECK(mentions(v->message, "would load a mixed cuBLAS under cvm: its own libcublas.so.13 (cuBLAS 13.10.0.20, HOW) "
                              "with the libcublasLt.so.13 in " + newer.toolkit + " (13.12.0.1)"));
    }
}

TEST_CASE("framework cuBLAS: a toolkit's release from its dist-info or version.json", "[doctor][framework]") {
    TempDir tmp("cublas-release");
    RealFileSystem files;
    FrameworkInstall f;
    f.name = "pytorch";
    f.own_cublas = OwnCublas{tmp.str("site/nvidia/cu13/lib"), "13.4.1.3", "13"};
    f.own_cublas->cublas_first = true;
    f.own_cublas->how = "HOW";
    write_file(tmp / "site/nvidia/cu13/lib/libcublas.so.13", "x");
    // A toolkit made of NVIDIA's wheels (cvm import keeps their dist-info): 13.1.0.3, older.
    write_file(tmp / "wheels/lib64/libcublasLt.so.13", "x");
    tmp.mkdir("wheels/dist-info/nvidia_cublas-13.1.0.3.dist-info");
    CHECK(mentions(judge_own_cublas(f, "PyTorch", {tmp.str("wheels/lib64")}, files)->message, "(13.1.0.3), which lacks symbols"));
    // NVIDIA's archive with version.json: 13.6.0.2, newer: a mixed set.
    write_file(tmp / "archive/lib64/libcublasLt.so.13", "x");
    write_file(tmp / "archive/version.json",
               "{\n   \"libcublas\" : {\n      \"name\" : \"CUDA cuBLAS\",\n      \"version\" : \"13.6.0.2\"\n   }\n}\n");
    auto v = judge_own_cublas(f, "PyTorch", {tmp.str("archive/lib64")}, files);
    CHECK(v->kind == FrameworkCublasVerdict::Kind::Mixed);
    CHECK(mentions(v->message, "(13.6.0.2)"));
    // Unknown: a mixed set, named without a release.
    write_file(tmp / "bare/lib/libcublasLt.so.13", "x");
    auto bare = judge_own_cublas(f, "PyTorch", {tmp.str("bare/lib")}, files);
    CHECK(bare->kind == FrameworkCublasVerdict::Kind::Mixed);
    CHECK(mentions(bare->message, "the libcublasLt.so.13 in " + tmp.str("bare/lib") + ":"));
}
