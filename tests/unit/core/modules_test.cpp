#include <catch2/catch.hpp>

#include "modules/modules.h"
#include "store/resolve.h"
#include "activation/view.h"
#include "entries.h"
#include "test_support.h"

using namespace cvm;
using cvm::test::read_file;
using cvm::test::TempDir;
using cvm::test::write_file;
using platform::Os;

namespace {



// A toolkit folder with the files a view links to.
fs::path fake_toolkit(const fs::path& at) {
    write_file(at / "bin" / "nvcc", "#!/bin/sh\n");
    write_file(at / "include" / "cuda.h", "#define CUDA_VERSION 11020\n");
    write_file(at / "lib64" / "libcudart.so", "");
    return at;
}

fs::path fake_cudnn(const fs::path& at) {
    write_file(at / "include" / "cudnn_version.h", "");
    write_file(at / "lib" / "libcudnn.so.8", "");
    return at;
}

size_t count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

} // namespace

TEST_CASE("module actions are compute_environment's edits") {
    std::vector<EnvChange> changes = {{"CUDA_PATH", "/v"},
                                      {"CUDNN_PATH", std::nullopt},
                                      {"PATH", "/t/bin"},
                                      {"LD_LIBRARY_PATH", "/t/lib64:/d/lib"},
                                      {"CVM_ACTIVE", "11.2.2"}};
    ModuleActions a = module_actions_of(changes, Os::Linux);
    REQUIRE(a.set.size() == 2);
    CHECK(a.set[0] == std::make_pair(std::string("CUDA_PATH"), std::string("/v")));
    CHECK(a.set[1].first == "CVM_ACTIVE");
    REQUIRE(a.prepend.size() == 2);
    CHECK(a.prepend[0].first == "PATH");
    CHECK(a.prepend[1].second == std::vector<std::string>{"/t/lib64", "/d/lib"});
}

TEST_CASE("a toolkit module sets what `cvm env` sets for it") {
    TempDir t("mod");
    Store store({t.path / "root"});
    Entry tk = cvm::test::toolkit_entry("11.2.2", fake_toolkit(t.path / "cuda-11.2"));
    ModuleFile m = toolkit_module(store, tk, Os::Linux);
    CHECK(m.name() == "cuda/11.2.2");
    REQUIRE(m.branches.size() == 1);

    Resolved r;
    r.toolkit = tk;
    auto expected = compute_environment(layout_of(r, {}, Os::Linux), std::nullopt, std::nullopt,
                                        foreign_dirs_of(store), Os::Linux);
    for (const auto& c : expected) {
        if (!c.value || is_list_variable(c.name)) continue;
        bool found = false;
        for (const auto& [name, value] : m.branches[0].set)
            if (name == c.name) found = value == *c.value;
        CHECK(found);
    }
    std::string tk_path = (t.path / "cuda-11.2").string();
    std::string lua = render_module(m, ModuleFormat::Lua);
    CHECK(lua.rfind("-- cvm-generated module cuda/11.2.2", 0) == 0);
    CHECK(count(lua, "family(\"cuda\")") == 1);
    CHECK(count(lua, "pushenv(\"CUDA_PATH\", \"" + tk_path + "\")") == 1);
    CHECK(count(lua, "pushenv(\"CUDA_PATH_V11_2\", \"" + tk_path + "\")") == 1);
    CHECK(count(lua, "pushenv(\"CVM_ACTIVE\", \"11.2.2\")") == 1);
    CHECK(count(lua, "prepend_path(\"PATH\", \"" + tk_path + "/bin\")") == 1);
    CHECK(count(lua, "prepend_path(\"LD_LIBRARY_PATH\", \"" + tk_path + "/lib64\")") == 1);
    CHECK(count(lua, "whatis(\"Version: 11.2.2\")") == 1);
    CHECK(count(lua, "help(") == 1);
    CHECK(count(lua, "CUDNN_PATH") == 0); // an unset is the module system's business

    std::string tcl = render_module(m, ModuleFormat::Tcl);
    CHECK(tcl.rfind("#%Module1.0\n## cvm-generated module cuda/11.2.2", 0) == 0);
    CHECK(count(tcl, "conflict cuda\n") == 1);
    CHECK(count(tcl, "cvm_pushenv \"CUDA_HOME\" \"" + tk_path + "\"") == 1);
    CHECK(count(tcl, "proc cvm_pushenv {name value}") == 1);
    CHECK(count(tcl, "prepend-path \"PATH\" \"" + tk_path + "/bin\"") == 1);
    CHECK(count(tcl, "proc ModulesHelp") == 1);
    CHECK(count(tcl, "module-whatis \"Name: CUDA toolkit\"") == 1);
    CHECK(module_file_name(m, ModuleFormat::Lua) == fs::path("cuda/11.2.2.lua"));
    CHECK(module_file_name(m, ModuleFormat::Tcl) == fs::path("cuda/11.2.2"));
}

TEST_CASE("a cuDNN module has one branch per compatible toolkit, in cvm env's order") {
    TempDir t("mod");
    Store store({t.path / "root"});
    Entry tk2 = cvm::test::toolkit_entry("11.2.2", fake_toolkit(t.path / "cuda-11.2.2"));
    Entry tk1 = cvm::test::toolkit_entry("11.2.1", fake_toolkit(t.path / "cuda-11.2.1"));
    Entry dnn = cvm::test::cudnn_entry("8.1.0.77-cuda11.2", fake_cudnn(t.path / "cudnn"));
    std::vector<Resolved> asked;
    ModuleFile m = cudnn_module(
        store, dnn, {tk2, tk1},
        [&](const Resolved& r) {
            asked.push_back(r);
            return fs::path("/views") / (r.toolkit.id + "+" + r.cudnn->id);
        },
        Os::Linux);
    REQUIRE(m.branches.size() == 2);
    REQUIRE(asked.size() == 2);
    CHECK(m.branches[0].toolkit_id == "11.2.2");
    CHECK(m.branches[1].toolkit_id == "11.2.1");
    std::string lua = render_module(m, ModuleFormat::Lua);
    CHECK(count(lua, "family(\"cudnn\")") == 1);
    CHECK(count(lua, "local toolkits = { \"11.2.2\", \"11.2.1\" }") == 1);
    CHECK(count(lua, "depends_on(\"cuda/\" .. toolkit)") == 1);
    CHECK(count(lua, "pushenv(\"CUDA_PATH\", \"/views/11.2.1+8.1.0.77-cuda11.2\")") == 1);
    CHECK(count(lua, "pushenv(\"CVM_ACTIVE\", \"11.2.2+8.1.0.77-cuda11.2\")") == 1);
    CHECK(count(lua, "pushenv(\"CUDNN_PATH\", \"" + (t.path / "cudnn").string() + "\")") == 2);
    // LD_LIBRARY_PATH: as `cvm env` has it, the view's lib64, which holds the toolkit's
    // libraries and cuDNN's (on top of the cuda module's own lib64).
    CHECK(count(lua, "prepend_path(\"LD_LIBRARY_PATH\", \"/views/11.2.2+8.1.0.77-cuda11.2/lib64\")") == 1);
    CHECK(count(lua, "prepend_path(\"LD_LIBRARY_PATH\", \"/views/11.2.1+8.1.0.77-cuda11.2/lib64\")") == 1);
    CHECK(count(lua, "isloaded(\"cuda\")") == 1);
    CHECK(count(lua, "LmodError(\"cudnn/8.1.0.77-cuda11.2 is built for CUDA 11.2") == 1);

    std::string tcl = render_module(m, ModuleFormat::Tcl);
    CHECK(count(tcl, "conflict cudnn\n") == 1);
    CHECK(count(tcl, "set toolkits [list \"11.2.2\" \"11.2.1\"]") == 1);
    CHECK(count(tcl, "depends-on \"cuda/$toolkit\"") == 1);
    CHECK(count(tcl, "} elseif {$toolkit eq \"11.2.1\"} {") == 1);
}

TEST_CASE("values that could break out of a module's strings are escaped") {
    TempDir t("mod");
    Store store({t.path / "root"});
    fs::path odd = t.path / "a \"q\" $HOME [x] {y} back\\slash";
    Entry tk = cvm::test::toolkit_entry("12.4.1", fake_toolkit(odd));
    ModuleFile m = toolkit_module(store, tk, Os::Linux);
    std::string lua = render_module(m, ModuleFormat::Lua);
    CHECK(count(lua, "a \\\"q\\\" $HOME [x] {y} back\\\\slash") > 0);
    CHECK(count(lua, "a \"q\"") == 0);
    std::string tcl = render_module(m, ModuleFormat::Tcl);
    CHECK(count(tcl, "a \\\"q\\\" \\$HOME \\[x\\] \\{y\\} back\\\\slash") > 0);
    CHECK(count(tcl, "$HOME [x]") == 0);
}

TEST_CASE("export writes every module, skips cuDNN without a toolkit, removes stale ones") {
    TempDir t("mod");
    fs::path shared = t.path / "shared";
    fs::path root = t.path / "root";
    {
        Store writer({shared});
        writer.add_imported(cvm::test::toolkit_entry("11.2.2", fake_toolkit(t.path / "cuda-11.2.2")));
        writer.add_imported(cvm::test::cudnn_entry("8.1.0.77-cuda11.2", fake_cudnn(t.path / "cudnn81")));
    }
    Store store({root, shared});
    store.add_imported(cvm::test::toolkit_entry("12.4.1", fake_toolkit(t.path / "cuda-12.4.1")));
    store.add_imported(cvm::test::cudnn_entry("7.6.5.32-cuda10.2", fake_cudnn(t.path / "cudnn76")));
    fs::path out = t.path / "modules";
    write_file(out / "cuda" / "10.0.0.lua", "-- cvm-generated module cuda/10.0.0\n");
    write_file(out / "cuda" / "site.lua", "-- the site's own module\n");

    ExportResult r = export_modules(store, out, ModuleFormat::Lua, Os::Linux);
    CHECK(r.written.size() == 3);
    CHECK(fs::exists(out / "cuda" / "11.2.2.lua"));
    CHECK(fs::exists(out / "cuda" / "12.4.1.lua"));
    CHECK(fs::exists(out / "cudnn" / "8.1.0.77-cuda11.2.lua"));
    REQUIRE(r.skipped.size() == 1);
    CHECK_THAT(r.skipped[0],
               Catch::Contains("7.6.5.32-cuda10.2") && Catch::Contains("cvm install cuda 10.2"));
    CHECK(!fs::exists(out / "cuda" / "10.0.0.lua"));
    CHECK(fs::exists(out / "cuda" / "site.lua"));
    REQUIRE(r.removed.size() == 1);

    // The merged view lives in the writable layer, never in the shared store.
    fs::path view = root / "views" / "11.2.2+8.1.0.77-cuda11.2";
    CHECK(fs::is_directory(view));
    CHECK(fs::exists(view / "lib64" / "libcudnn.so.8"));
    CHECK(!fs::exists(shared / "views"));
    std::string lua = read_file(out / "cudnn" / "8.1.0.77-cuda11.2.lua");
    CHECK(count(lua, "pushenv(\"CUDA_PATH\", \"" + view.string() + "\")") == 1);
    CHECK(count(lua, "read-only store " + shared.string()) > 0);

    // Tcl into the same folder replaces the Lua files.
    ExportResult tcl = export_modules(store, out, ModuleFormat::Tcl, Os::Linux);
    CHECK(tcl.written.size() == 3);
    CHECK(tcl.removed.size() == 3);
    CHECK(fs::exists(out / "cudnn" / "8.1.0.77-cuda11.2"));
    CHECK(read_file(out / "cuda" / "12.4.1").rfind("#%Module1.0\n", 0) == 0);
}

TEST_CASE("export ignores an entry whose id is not a safe file name") {
    TempDir t("mod");
    Store store({t.path / "root"});
    write_file(t.path / "root" / "cuda" / "evil" / "entry",
               "kind=cuda\nid=../../../escape\nversion=11.2.2\nsource=imported\npath=/x\n");
    ExportResult r = export_modules(store, t.path / "out", ModuleFormat::Lua, Os::Linux);
    CHECK(r.written.empty());
    REQUIRE(r.skipped.size() == 1);
    CHECK(!fs::exists(t.path / "escape.lua"));
}

TEST_CASE("an NCCL module sets NCCL_HOME and NCCL_ROOT and its library folder, for a toolkit of "
          "its major") {
    TempDir t("mod");
    Store store({t.path / "root"});
    Entry tk = cvm::test::toolkit_entry("12.4.1", fake_toolkit(t.path / "cuda-12.4.1"));
    Entry n = cvm::test::nccl_entry("2.21.5-cuda12.4", t.path / "nccl");
    ModuleFile m = nccl_module(store, n, {tk}, Os::Linux);
    CHECK(m.name() == "nccl/2.21.5-cuda12.4");
    REQUIRE(m.branches.size() == 1);
    std::string lua = render_module(m, ModuleFormat::Lua);
    CHECK(count(lua, "family(\"nccl\")") == 1);
    CHECK(count(lua, "pushenv(\"NCCL_HOME\", \"" + (t.path / "nccl").string() + "\")") == 1);
    CHECK(count(lua, "pushenv(\"NCCL_ROOT\", \"" + (t.path / "nccl").string() + "\")") == 1);
    CHECK(count(lua, "pushenv(\"NCCL_LIB_DIR\", \"" + (t.path / "nccl" / "lib").string() + "\")") ==
          1);
    CHECK(count(lua, "pushenv(\"NCCL_INCLUDE_DIR\", \"" + (t.path / "nccl" / "include").string() +
                         "\")") == 1);
    CHECK(count(lua, "prepend_path(\"LD_LIBRARY_PATH\", \"" + (t.path / "nccl" / "lib").string() +
                         "\")") == 1);
    CHECK(count(lua, "prepend_path(\"LIBRARY_PATH\", \"" + (t.path / "nccl" / "lib").string() +
                         "\")") == 1);
    CHECK(count(lua, "prepend_path(\"CPATH\", \"" + (t.path / "nccl" / "include").string() +
                         "\")") == 1);
    CHECK(count(lua, "depends_on(\"cuda/\" .. toolkit)") == 1);
    CHECK(count(lua, "nccl/2.21.5-cuda12.4 is built for CUDA 12.4") == 1);
    std::string tcl = render_module(m, ModuleFormat::Tcl);
    CHECK(count(tcl, "conflict nccl\n") == 1);
    CHECK(count(tcl, "cvm_pushenv \"NCCL_LIB_DIR\" \"" + (t.path / "nccl" / "lib").string() +
                         "\"\n") == 1);
    CHECK(module_file_name(m, ModuleFormat::Lua) == fs::path("nccl/2.21.5-cuda12.4.lua"));
    // Exported beside the toolkit; one of another major is skipped with the reason.
    store.add_imported(tk);
    store.add_imported(n);
    store.add_imported(cvm::test::nccl_entry("2.28.9-cuda13.0", t.path / "nccl13"));
    ExportResult r = export_modules(store, t.path / "out", ModuleFormat::Lua, Os::Linux);
    CHECK(fs::exists(t.path / "out" / "nccl" / "2.21.5-cuda12.4.lua"));
    CHECK_FALSE(fs::exists(t.path / "out" / "nccl" / "2.28.9-cuda13.0.lua"));
    REQUIRE(r.skipped.size() == 1);
    CHECK(r.skipped[0].find("nccl 2.28.9-cuda13.0: no installed toolkit is CUDA 13") !=
          std::string::npos);
}
