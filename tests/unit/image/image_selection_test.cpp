#include <catch2/catch.hpp>

#include "core/entries.h"
#include "store/resolve.h"
#include "activation/view.h"
#include "image/image_config.h"
#include "image/image_selection.h"
#include "install/error.h"
#include "test_support.h"

using namespace cvm;
using namespace cvm::image;

namespace {

Resolved sample(bool with_cudnn = true) {
    Resolved r;
    r.toolkit = test::toolkit_entry("12.4.1", "/home/u/.local/share/cvm/cuda/12.4.1/root");
    r.toolkit.imported = false;
    r.toolkit.platform = "linux-x86_64";
    r.toolkit.archives = {{"cuda_nvcc",
                           "https://developer.download.nvidia.com/compute/cuda/redist/x.tar.xz",
                           std::string(64, 'a'), false}};
    if (with_cudnn) r.cudnn = test::cudnn_entry("9.1.0.70-cuda12", "/opt/cudnn-9.1");
    return r;
}

std::string value(const std::vector<std::string>& env, const std::string& name) {
    auto v = env_value(env, name);
    return v ? *v : "<unset>";
}

} // namespace

TEST_CASE("an image's parts: each under the prefix as the store keeps them, the view beside them") {
    auto s =
        image_selection(sample(), "/home/u/.local/share/cvm/views/12.4.1+9.1.0.70-cuda12", false);
    REQUIRE(s.parts.size() == 2);
    CHECK(s.parts[0].layer == "opt/cvm/cuda/12.4.1");
    CHECK(s.parts[1].layer == "opt/cvm/cudnn/9.1.0.70-cuda12");
    CHECK(s.view_layer == "opt/cvm/views/12.4.1+9.1.0.70-cuda12");
    auto trees = layer_trees(s);
    CHECK(trees.size() == 3);
    CHECK(default_tag(s) == "cuda12.4.1-cudnn9.1.0.70-cuda12");
    CHECK(image_architecture(s) == "amd64");
    s.runtime = true;
    CHECK(default_tag(s) == "cuda12.4.1-cudnn9.1.0.70-cuda12-runtime");
}

TEST_CASE("a cuDNN inside the toolkit's folder is not written twice") {
    Resolved r = sample();
    r.cudnn->path = r.toolkit.path;
    auto s = image_selection(r, {}, false);
    CHECK(s.parts[1].layer == "opt/cvm/cuda/12.4.1");
    CHECK_FALSE(s.parts[1].walked);
    CHECK(layer_trees(s).size() == 1);
}

TEST_CASE("the image's environment is cvm env's, for the image's folders") {
    test::TempDir tmp("image-env");
    Resolved r = sample();
    r.toolkit.path = tmp.path / "store" / "cuda" / "12.4.1" / "root";
    r.cudnn->path = tmp.path / "opt" / "cudnn-9.1";
    test::write_file(r.toolkit.path / "bin" / "nvcc", "nvcc");
    test::write_file(r.toolkit.path / "lib64" / "libcudart.so.12", "");
    test::write_file(r.cudnn->path / "lib" / "libcudnn.so.9", "");
    auto s = image_selection(r, tmp.path / "store" / "views" / "12.4.1+9.1.0.70-cuda12", false);
    auto env = image_env(s, {});
    const std::string view = "/opt/cvm/views/12.4.1+9.1.0.70-cuda12";
    CHECK(value(env, "CUDA_PATH") == view);
    CHECK(value(env, "CUDA_HOME") == view);
    CHECK(value(env, "CUDACXX") == view + "/bin/nvcc");
    CHECK(value(env, "CUDNN_PATH") == "/opt/cvm/cudnn/9.1.0.70-cuda12");
    CHECK(value(env, "PATH") ==
          view + "/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
    CHECK(value(env, "LD_LIBRARY_PATH") == view + "/lib64");
    CHECK(value(env, "CVM_ACTIVE") == "12.4.1+9.1.0.70-cuda12");
    CHECK(value(env, "NVIDIA_REQUIRE_CUDA") == "cuda>=12.4");
    // Nothing of this machine: no folder of it, no host compiler.
    for (const auto& item : env)
        CHECK(item.find(tmp.path.native()) == std::string::npos);
    CHECK(value(env, "CUDAHOSTCXX") == "<unset>");
    CHECK(value(env, "NVCC_CCBIN") == "<unset>");
    // On a base image: its variables kept in place, an earlier cvm export's toolkit replaced.
    auto based = image_env(
        s, {"HOSTNAME=x", "PATH=/opt/cvm/cuda/11.8.0/bin:/usr/bin:/bin",
            "LD_LIBRARY_PATH=/opt/cvm/views/11.8.0+8.9.7.29-cuda11/lib64:/usr/local/nvidia/lib64",
            "NVIDIA_REQUIRE_CUDA=cuda>=11.8"});
    CHECK(based[0] == "HOSTNAME=x");
    CHECK(value(based, "PATH") == view + "/bin:/usr/bin:/bin");
    CHECK(value(based, "LD_LIBRARY_PATH") == view + "/lib64:/usr/local/nvidia/lib64");
    CHECK(value(based, "NVIDIA_REQUIRE_CUDA") == "cuda>=12.4");
    // --runtime: no bin or include folders named (they are left out).
    s.runtime = true;
    auto rt = image_env(s, {"PATH=/usr/bin:/bin"});
    CHECK(value(rt, "PATH") == "/usr/bin:/bin");
    CHECK(value(rt, "CUDACXX") == "<unset>");
    CHECK(value(rt, "CPATH").find("include") == std::string::npos);
    CHECK(value(rt, "LD_LIBRARY_PATH") == view + "/lib64");
}

TEST_CASE("an NCCL is a part of its own, and its variables name the image's folders") {
    test::TempDir tmp("image-nccl");
    Resolved r = sample(false);
    r.toolkit.path = tmp.path / "store" / "cuda" / "12.4.1" / "root";
    r.nccl = test::nccl_entry("2.21.5-cuda12.4", tmp.path / "store" / "nccl" / "2.21.5-cuda12.4");
    test::write_file(r.toolkit.path / "bin" / "nvcc", "nvcc");
    test::write_file(r.toolkit.path / "lib64" / "libcudart.so.12", "");
    test::write_file(r.nccl->path / "lib" / "libnccl.so.2", "");
    CHECK(needs_merged_view(r));
    const fs::path view = tmp.path / "store" / "views" / "12.4.1+nccl2.21.5-cuda12.4";
    auto s = image_selection(r, view, false);
    REQUIRE(s.parts.size() == 2);
    CHECK(s.parts[1].layer == "opt/cvm/nccl/2.21.5-cuda12.4");
    CHECK(layer_trees(s).size() == 3);
    CHECK(default_tag(s) == "cuda12.4.1-nccl2.21.5-cuda12.4");
    CHECK(image_labels(s)["cvm.nccl"] == "2.21.5-cuda12.4");
    auto env = image_env(s, {});
    const std::string v = "/opt/cvm/views/12.4.1+nccl2.21.5-cuda12.4";
    CHECK(value(env, "NCCL_HOME") == "/opt/cvm/nccl/2.21.5-cuda12.4");
    CHECK(value(env, "NCCL_ROOT") == "/opt/cvm/nccl/2.21.5-cuda12.4");
    CHECK(value(env, "NCCL_INCLUDE_DIR") == v + "/include");
    CHECK(value(env, "NCCL_LIB_DIR") == v + "/lib64");
    CHECK(value(env, "LD_LIBRARY_PATH") == v + "/lib64");
    for (const auto& item : env)
        CHECK(item.find(tmp.path.native()) == std::string::npos);
    s.runtime = true;
    auto rt = image_env(s, {});
    CHECK(value(rt, "NCCL_INCLUDE_DIR") == "<unset>");
    CHECK(value(rt, "NCCL_LIB_DIR") == v + "/lib64");
    // An NCCL inside the toolkit's folder needs no view.
    r.nccl->path = r.toolkit.path;
    CHECK_FALSE(needs_merged_view(r));
}

TEST_CASE("a toolkit's own view (made to hand over this machine's host compiler) stays out") {
    Resolved r = sample(false);
    CHECK_FALSE(needs_merged_view(r));
    auto s = image_selection(r, "/store/views/12.4.1", false);
    CHECK(s.view.empty());
    CHECK(layer_trees(s).size() == 1);
    r = sample();
    CHECK(needs_merged_view(r));
    r.cudnn->path = r.toolkit.path;
    CHECK_FALSE(needs_merged_view(r));
}

TEST_CASE("the plan options: a view's nvcc that is cvm's shim is redirected to the toolkit's") {
    auto old = platform::get_env("CVM_SHIM_BINARY");
    platform::set_env("CVM_SHIM_BINARY", std::string("/somewhere/cvm-shim"));
    auto s = image_selection(sample(), "/store/views/v", true);
    auto o = plan_options(s);
    CHECK(o.runtime);
    REQUIRE(o.redirects.size() == 1);
    CHECK(o.redirects[0].file == "/somewhere/cvm-shim");
    CHECK(o.redirects[0].layer == "opt/cvm/cuda/12.4.1/bin/nvcc");
    CHECK(layer_trees(s).back().leave_out == std::vector<std::string>{".cvm-view"});
    platform::set_env("CVM_SHIM_BINARY", old);
}

TEST_CASE("labels name each part, where it came from, and the licence") {
    auto s = image_selection(sample(), "/store/views/v", false);
    auto l = image_labels(s);
    CHECK(l["cvm.selection"] == "12.4.1+9.1.0.70-cuda12");
    CHECK(l["cvm.cuda"] == "12.4.1");
    CHECK(l["cvm.cuda.source"] == "installed from 1 archive");
    CHECK(l["cvm.cuda.archive.cuda_nvcc"] ==
          "https://developer.download.nvidia.com/compute/cuda/redist/x.tar.xz sha256:" +
              std::string(64, 'a'));
    CHECK(l["cvm.cudnn"] == "9.1.0.70-cuda12");
    CHECK(l["cvm.cudnn.source"] == "imported from a folder");
    CHECK(l["cvm.cudnn.path"] == "/opt/cvm/cudnn/9.1.0.70-cuda12");
    CHECK(l["cvm.licence"].find("private registry") != std::string::npos);
    CHECK(l["cvm.variant"] == "devel");
}

TEST_CASE(
    "labels hold no path of this machine: an archive by name, URL and sum, an import in words") {
    Resolved r = sample();
    const std::string sum(64, 'b');
    r.toolkit.archives = {
        {"cudnn-9.tar.xz", "/home/me/dl/cudnn-9.tar.xz", sum, false},
        {"cuda_nvcc.tar.xz", "file:///home/me/mirror/cuda/redist/cuda_nvcc/x.tar.xz", sum, false},
        {"cuda_cudart.tar.xz", "file:///home/me/cuda_cudart.tar.xz", sum, true},
        {"cuda_cccl.tar.xz", "https://user:secret@mirror.example/cuda_cccl.tar.xz", sum, false}};
    r.cudnn->note = "version from /home/me/conda-stuff/include/cudnn_version.h";
    auto l = image_labels(image_selection(r, "/store/views/v", false));
    CHECK(l["cvm.cuda.archive.cudnn-9.tar.xz"] == "a local file sha256:" + sum);
    CHECK(l["cvm.cuda.archive.cuda_nvcc.tar.xz"] ==
          "https://developer.download.nvidia.com/compute/cuda/redist/cuda_nvcc/x.tar.xz sha256:" +
              sum);
    CHECK(l["cvm.cuda.archive.cuda_cudart.tar.xz"] ==
          "a local file sha256:" + sum + " (trusted on first use)");
    CHECK(l["cvm.cuda.archive.cuda_cccl.tar.xz"] ==
          "https://mirror.example/cuda_cccl.tar.xz sha256:" + sum);
    CHECK(l["cvm.cudnn.source"] == "imported from a folder"); // a path's words say nothing
    for (const auto& [key, text] : l)
        CHECK(text.find("/home/me") == std::string::npos);
}

TEST_CASE("an import's label says what it was imported from, never where") {
    Resolved r = sample();
    auto source = [&]() {
        return image_labels(image_selection(r, "/store/views/v", false))["cvm.cudnn.source"];
    };
    r.cudnn->path = "/home/me/venv/lib/python3.12/site-packages/nvidia/cudnn";
    CHECK(source() == "imported from NVIDIA's wheels");
    r.cudnn->path = "/home/me/machine/usr";
    r.cudnn->note = "version from dpkg's package libcudnn9-cuda-12 and libcudnn.so.9";
    CHECK(source() == "imported from Debian's packages");
    r.cudnn->note = "version from include/cuda.h; assembled from conda environment at /home/me/env";
    CHECK(source() == "imported from a conda environment");
    r.cudnn->note = "version from x; assembled from a shared prefix at /usr/local";
    CHECK(source() == "imported from a shared prefix");
    r.cudnn->note = "version from /home/me/dl/cudnn/include/cudnn_version.h";
    CHECK(source() == "imported from a folder");
    // A machine's usr whose packages dpkg records, though the note names no package.
    test::TempDir tmp("image-dpkg");
    test::write_file(tmp / "var/lib/dpkg/status", "Package: libnccl2\n");
    r.cudnn->origin = tmp.mkdir("usr");
    CHECK(source() == "imported from Debian's packages");
}

TEST_CASE("a part of another system is refused") {
    Resolved r = sample();
    r.toolkit.platform = "windows-x86_64";
    auto s = image_selection(r, {}, false);
    CHECK_THROWS_WITH(image_architecture(s), Catch::Contains("is for windows-x86_64"));
    r.toolkit.platform = "linux-sbsa";
    CHECK(image_architecture(image_selection(r, {}, false)) == "arm64");
}

TEST_CASE("the config: the base's, with the environment, labels, layer and history added") {
    nlohmann::json base = {{"architecture", "amd64"},
                           {"os", "linux"},
                           {"config", {{"Cmd", {"bash"}}, {"Labels", {{"maintainer", "x"}}}}},
                           {"rootfs", {{"type", "layers"}, {"diff_ids", {"sha256:1"}}}},
                           {"history", {{{"created_by", "debootstrap"}}}}};
    ConfigInput in;
    in.base = &base;
    in.env = {"PATH=/bin"};
    in.labels = {{"cvm.cuda", "12.4.1"}};
    in.diff_id = "sha256:2";
    in.created = rfc3339(kDefaultEpoch);
    in.architecture = "amd64";
    in.created_by = "cvm export --oci 12.4.1";
    auto c = image_config(in);
    CHECK(c["created"] == "1980-01-01T00:00:00Z");
    CHECK(c["config"]["Cmd"][0] == "bash");
    CHECK(c["config"]["Labels"]["maintainer"] == "x");
    CHECK(c["config"]["Labels"]["cvm.cuda"] == "12.4.1");
    CHECK(c["rootfs"]["diff_ids"] == nlohmann::json({"sha256:1", "sha256:2"}));
    CHECK(c["history"].size() == 2);
    // Without a base: the toolchain alone.
    in.base = nullptr;
    auto alone = image_config(in);
    CHECK(alone["rootfs"]["diff_ids"] == nlohmann::json({"sha256:2"}));
    CHECK(alone["os"] == "linux");
}

TEST_CASE("env edits keep the order of the variables") {
    auto env =
        apply_env({"A=1", "PATH=/bin", "B=2"},
                  {{"PATH", std::string("/x:/bin")}, {"B", std::nullopt}, {"C", std::string("3")}});
    CHECK(env == std::vector<std::string>{"A=1", "PATH=/x:/bin", "C=3"});
}

TEST_CASE("the files' time: SOURCE_DATE_EPOCH, else 1980") {
    auto old = platform::get_env("SOURCE_DATE_EPOCH");
    platform::set_env("SOURCE_DATE_EPOCH", std::nullopt);
    CHECK(source_date_epoch() == 315532800);
    platform::set_env("SOURCE_DATE_EPOCH", std::string(""));
    CHECK(source_date_epoch() == 315532800);
    platform::set_env("SOURCE_DATE_EPOCH", std::string("1700000000"));
    CHECK(source_date_epoch() == 1700000000);
    for (const char* bad : {"-1", "1.5", "yesterday", "123456789012"}) {
        platform::set_env("SOURCE_DATE_EPOCH", std::string(bad));
        CHECK_THROWS_AS(source_date_epoch(), install::InstallError);
    }
    platform::set_env("SOURCE_DATE_EPOCH", old);
    CHECK(rfc3339(1700000000) == "2023-11-14T22:13:20Z");
}
