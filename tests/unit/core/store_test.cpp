#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>

#include "spec/combination_name.h"
#include "store/entry_format.h"
#include "store/resolve.h"
#include "store/store.h"
#include "entries.h"
#include "test_support.h"

using namespace cvm;
using cvm::test::TempDir;


TEST_CASE("entries round-trip through their text form") {
    Entry e = cvm::test::cudnn_entry("8.1.0.77-cuda11.2", "/opt/with space/cudnn");
    e.components = {"cudnn"};
    e.archives.push_back({"cudnn-11.2-linux-x64-v8.1.0.77.tgz", "https://example.invalid/a b.tgz", "ab12"});
    Entry back = parse_entry(serialize_entry(e), "/store/cudnn/8.1.0.77-cuda11.2", "entry");
    CHECK(back.id == e.id);
    CHECK(back.cuda.str() == "11.2");
    CHECK(back.path == e.path);
    CHECK(back.lib_dirs == e.lib_dirs);
    REQUIRE(back.archives.size() == 1);
    CHECK(back.archives[0].url == "https://example.invalid/a b.tgz");
    CHECK(back.archives[0].sha256 == "ab12");
    Entry installed = cvm::test::toolkit_entry("11.2.2", "");
    installed.imported = false;
    CHECK(parse_entry(serialize_entry(installed), "/s/cuda/11.2.2", "x").path == fs::path("/s/cuda/11.2.2/root"));
    CHECK_THROWS_WITH(parse_entry("garbage\n", "/s", "/s/entry"), Catch::Contains("/s/entry:1"));
    CHECK_THROWS(parse_entry("kind=cuda\n", "/s", "/s/entry"));
}

TEST_CASE("resolve picks the newest match, cuDNN only for its CUDA") {
    TempDir t("store");
    Store store({t.path / "root"});
    for (auto id : {"11.2.0", "11.2.2", "11.8.0", "12.4.1", "12.6.3"}) store.add_imported(cvm::test::toolkit_entry(id, t.path / id));
    for (auto id : {"8.1.0.77-cuda11.2", "8.1.1.33-cuda11.2", "8.9.7.29-cuda11", "8.9.7.29-cuda12", "9.1.0.70-cuda12"})
        store.add_imported(cvm::test::cudnn_entry(id, t.path / id));

    CHECK(resolve(store, parse_spec("11")).toolkit.id == "11.8.0");
    CHECK(resolve(store, parse_spec("11.2")).toolkit.id == "11.2.2");
    CHECK(resolve(store, parse_spec("12")).toolkit.id == "12.6.3");
    CHECK(resolve(store, parse_spec("11.2.0")).toolkit.id == "11.2.0");
    auto r = resolve(store, parse_spec("11.2+8.1"));
    CHECK(r.active() == "11.2.2+8.1.1.33-cuda11.2");
    CHECK(resolve(store, parse_spec("11.2+8.1.0")).cudnn->id == "8.1.0.77-cuda11.2");
    // 11+8.1: the newest 11.x (11.8) has no 8.1 build, so 11.2.2 is chosen.
    CHECK(resolve(store, parse_spec("11+8.1")).active() == "11.2.2+8.1.1.33-cuda11.2");
    CHECK(resolve(store, parse_spec("11.8+8")).cudnn->id == "8.9.7.29-cuda11");
    CHECK(resolve(store, parse_spec("12+8")).active() == "12.6.3+8.9.7.29-cuda12");
    CHECK(resolve(store, parse_spec("12.4+9")).active() == "12.4.1+9.1.0.70-cuda12");
    CHECK(resolve(store, parse_spec("11.2.2+8.1.0.77-cuda11.2")).active() == "11.2.2+8.1.0.77-cuda11.2");
    CHECK_THROWS_WITH(resolve(store, parse_spec("10")), Catch::Contains("cvm install 10"));
    CHECK_THROWS_WITH(resolve(store, parse_spec("11.8+9")), Catch::Contains("built for CUDA 11.8"));
    CHECK_THROWS_WITH(resolve(store, parse_spec("12+7")), Catch::Contains("no cuDNN 7"));
}

TEST_CASE("resolve: a cuDNN installed exactly as written wins over newer ones it prefixes") {
    TempDir t("exact");
    Store store({t.path / "root"});
    store.add_imported(cvm::test::toolkit_entry("12.4.1", t.path / "12.4.1"));
    for (auto id : {"9.19.0-cuda12", "9.19.0.56-cuda12"}) store.add_imported(cvm::test::cudnn_entry(id, t.path / id));
    CHECK(resolve(store, parse_spec("12.4.1+9.19.0")).cudnn->id == "9.19.0-cuda12");
    CHECK(resolve(store, parse_spec("12.4.1+9.19")).cudnn->id == "9.19.0.56-cuda12");
    CHECK(resolve(store, parse_spec("12.4.1+9.19.0.56")).cudnn->id == "9.19.0.56-cuda12");
}

TEST_CASE("resolve: a toolkit registered under a name is selected by that name only") {
    TempDir t("named");
    Store store({t.path / "root"});
    store.add_imported(cvm::test::toolkit_entry("11.8.0", t.path / "hand-made"));
    Entry named = cvm::test::toolkit_entry("11.8.0", t.path / "debian");
    named.id = "deb-11.8";
    store.add_imported(named);
    store.add_imported(cvm::test::cudnn_entry("8.9.7.29-cuda11", t.path / "dnn"));
    store.add_imported(cvm::test::cudnn_entry("9.1.0.70-cuda12", t.path / "dnn12"));
    store.add_imported(cvm::test::nccl_entry("2.21.5-cuda11.8", t.path / "nccl"));
    // Numbers never reach a name; the name reaches its own toolkit, with cuDNN and NCCL of its CUDA.
    CHECK(resolve(store, parse_spec("11")).toolkit.path == t.path / "hand-made");
    CHECK(resolve(store, parse_spec("11.8.0")).toolkit.id == "11.8.0");
    Resolved r = resolve(store, parse_spec("deb-11.8+8.9+nccl2.21"));
    CHECK(r.toolkit.path == t.path / "debian");
    CHECK(r.toolkit.version.str() == "11.8.0");
    CHECK(r.active() == "deb-11.8+8.9.7.29-cuda11+nccl2.21.5-cuda11.8");
    // CVM_ACTIVE's full form reads back to the same combination.
    CHECK(resolve(store, parse_spec(r.active())).active() == r.active());
    CHECK_THROWS_WITH(resolve(store, parse_spec("deb-12")), Catch::Contains("no toolkit is named deb-12"));
    CHECK_THROWS_WITH(resolve(store, parse_spec("deb-11.8+9")), Catch::Contains("the toolkit deb-11.8 (CUDA 11.8.0)"));
    CHECK(kind_of_id(store, "deb-11.8") == Kind::Cuda);
    CHECK_FALSE(kind_of_id(store, "deb-12"));
    // The views of the combination are the name's; removing the named toolkit leaves the other.
    store.remove(Kind::Cuda, "deb-11.8");
    CHECK(resolve(store, parse_spec("11.8")).toolkit.path == t.path / "hand-made");
}

TEST_CASE("layers: earlier layers hide later ones; removal only in the writable one") {
    TempDir t("layers");
    Store lower({t.path / "shared"});
    lower.add_imported(cvm::test::toolkit_entry("12.4.1", t.path / "a"));
    lower.add_imported(cvm::test::toolkit_entry("11.8.0", t.path / "b"));
    Store user({t.path / "user", t.path / "shared"});
    user.add_imported(cvm::test::toolkit_entry("12.4.1", t.path / "c"));
    auto list = user.list(Kind::Cuda);
    REQUIRE(list.size() == 2);
    CHECK(list[0].id == "12.4.1");
    CHECK(list[0].layer == 0);
    CHECK(list[0].path == t.path / "c");
    CHECK(list[1].layer == 1);
    CHECK(resolve(user, parse_spec("11")).toolkit.layer == 1);
    CHECK_THROWS_WITH(user.remove(Kind::Cuda, "11.8.0"), Catch::Contains("read-only"));
    user.remove(Kind::Cuda, "12.4.1");
    CHECK(user.find(Kind::Cuda, "12.4.1")->layer == 1);
    CHECK(fs::exists(t.path / "shared" / "cuda" / "11.8.0" / "entry"));
    user.add_imported(cvm::test::toolkit_entry("12.4.1", t.path / "d")); // the user layer may shadow a shared id
    CHECK_THROWS_WITH(user.add_imported(cvm::test::toolkit_entry("12.4.1", t.path / "e")), Catch::Contains("cvm uninstall"));
}

namespace {

// Backdates a folder's modification time, as if nothing had changed in it for a minute.
void settle(const fs::path& dir) {
    fs::last_write_time(dir, fs::file_time_type::clock::now() - std::chrono::minutes(1));
}

// What `cvm list` prints, from the full entries and from the brief index; they must agree.
std::vector<std::string> full_lines(const Store& s, Kind k) {
    std::vector<std::string> out;
    for (const Entry& e : s.list(k))
        out.push_back(e.id + " " + e.path.u8string() + (e.imported ? " i " : " s ") + std::to_string(e.layer));
    return out;
}
std::vector<std::string> brief_lines(const Store& s, Kind k) {
    std::vector<std::string> out;
    Listing l = s.brief(k);
    for (const ListItem& e : l.items)
        out.push_back(std::string(e.id) + " " + std::string(e.path) + (e.imported ? " i " : " s ") +
                      std::to_string(e.layer));
    return out;
}

} // namespace

TEST_CASE("list index: brief and full listings agree, follow changes, and are only written once settled") {
    TempDir t("index");
    Store shared({t.path / "shared"});
    shared.add_imported(cvm::test::toolkit_entry("11.8.0", t.path / "s118"));
    shared.add_imported(cvm::test::toolkit_entry("12.4.1", t.path / "s124"));
    shared.add_imported(cvm::test::cudnn_entry("8.9.7.29-cuda11", t.path / "d11"));
    Store user({t.path / "user", t.path / "shared"});
    for (auto id : {"12.4.1", "11.2.2", "12.10.0", "12.9.1"}) user.add_imported(cvm::test::toolkit_entry(id, t.path / id));
    for (auto id : {"8.9.7.29-cuda12", "8.1.0.77-cuda11.2", "9.1.0.70-cuda12", "9.1.0.70-cuda13"})
        user.add_imported(cvm::test::cudnn_entry(id, t.path / id));
    // An installed toolkit: its files are in <entry>/root.
    {
        Entry e = cvm::test::toolkit_entry("10.2.89", "");
        e.imported = false;
        fs::create_directories(t.path / "user" / "cuda" / "10.2.89" / "root");
        std::ofstream(t.path / "user" / "cuda" / "10.2.89" / "entry") << serialize_entry(e);
    }
    fs::path index_dir = t.path / "user" / "cache" / "index";

    // Just changed: listings read the entries and write no index.
    auto expected_cuda = std::vector<std::string>{
        "12.10.0 " + (t.path / "12.10.0").u8string() + " i 0", "12.9.1 " + (t.path / "12.9.1").u8string() + " i 0",
        "12.4.1 " + (t.path / "12.4.1").u8string() + " i 0",   "11.8.0 " + (t.path / "s118").u8string() + " i 1",
        "11.2.2 " + (t.path / "11.2.2").u8string() + " i 0",
        "10.2.89 " + (t.path / "user" / "cuda" / "10.2.89" / "root").u8string() + " s 0"};
    CHECK(full_lines(user, Kind::Cuda) == expected_cuda);
    CHECK(brief_lines(user, Kind::Cuda) == expected_cuda);
    CHECK(brief_lines(user, Kind::Cudnn) == full_lines(user, Kind::Cudnn));
    CHECK_FALSE(fs::exists(index_dir));

    // Settled: the first listing writes the index files, later ones read them.
    for (auto d : {"user/cuda", "user/cudnn", "shared/cuda", "shared/cudnn"}) settle(t.path / d);
    CHECK(brief_lines(user, Kind::Cuda) == expected_cuda);
    CHECK(full_lines(user, Kind::Cudnn) == brief_lines(user, Kind::Cudnn));
    size_t files = 0;
    for ([[maybe_unused]] auto& f : fs::directory_iterator(index_dir)) ++files;
    CHECK(files == 8); // full + brief, per kind, per layer
    auto cudnn = brief_lines(user, Kind::Cudnn);
    REQUIRE(cudnn.size() == 5);
    CHECK(cudnn[0].rfind("9.1.0.70-cuda13 ", 0) == 0);
    CHECK(cudnn[1].rfind("9.1.0.70-cuda12 ", 0) == 0);
    CHECK(cudnn[2].rfind("8.9.7.29-cuda12 ", 0) == 0);
    CHECK(cudnn[3].rfind("8.9.7.29-cuda11 ", 0) == 0);
    CHECK(cudnn[3].substr(cudnn[3].size() - 2) == " 1");

    // The index is really what is read: an entry edited in place (which no cvm command does,
    // and which leaves its folder's time alone) is not seen until the folder changes.
    {
        Entry moved = cvm::test::toolkit_entry("11.2.2", t.path / "elsewhere");
        std::ofstream(t.path / "user" / "cuda" / "11.2.2" / "entry") << serialize_entry(moved);
    }
    CHECK(brief_lines(user, Kind::Cuda) == expected_cuda);
    CHECK(full_lines(user, Kind::Cuda) == expected_cuda);

    // Adding and removing change the folder, so both listings follow at once.
    user.add_imported(cvm::test::toolkit_entry("13.0.2", t.path / "13.0.2"));
    auto after_add = brief_lines(user, Kind::Cuda);
    REQUIRE(after_add.size() == 7);
    CHECK(after_add[0] == "13.0.2 " + (t.path / "13.0.2").u8string() + " i 0");
    CHECK(after_add[5] == "11.2.2 " + (t.path / "elsewhere").u8string() + " i 0");
    CHECK(full_lines(user, Kind::Cuda) == after_add);
    user.remove(Kind::Cuda, "12.4.1"); // uncovers the shared layer's 12.4.1
    auto after_remove = brief_lines(user, Kind::Cuda);
    REQUIRE(after_remove.size() == 7);
    CHECK(after_remove[3] == "12.4.1 " + (t.path / "s124").u8string() + " i 1");
    CHECK(full_lines(user, Kind::Cuda) == after_remove);
    // A change in a lower layer is seen too.
    settle(t.path / "user" / "cuda");
    CHECK(brief_lines(user, Kind::Cuda) == after_remove);
    shared.remove(Kind::Cuda, "11.8.0");
    CHECK(brief_lines(user, Kind::Cuda).size() == 6);
    CHECK(full_lines(user, Kind::Cuda).size() == 6);
}

TEST_CASE("an assembled import gets a root of links inside its entry and keeps its origin") {
    TempDir t("assembled");
    // A scattered install: programs among others in a shared bin, headers and libraries apart.
    fs::path usr = t.path / "usr";
    cvm::test::write_file(usr / "bin" / "nvcc", "#!/bin/sh\n");
    cvm::test::write_file(usr / "bin" / "ls", "#!/bin/sh\n");
    cvm::test::write_file(usr / "include" / "cuda_runtime.h", "");
    cvm::test::write_file(usr / "lib" / "libcudart.so.11.0", "");
    cvm::test::write_file(usr / "lib" / "libcurl.so.4", "");
    std::vector<RootLink> plan;
    CHECK(plan_files(plan, "bin", usr / "bin", [](const std::string& n) { return n == "nvcc"; }) == 1);
    plan_link(plan, "include", usr / "include");
    plan_link(plan, "include", usr / "elsewhere"); // the first link of a name wins
    plan_link(plan, "nvvm/libdevice", usr / "missing"); // a missing target adds nothing
    CHECK(plan_files(plan, "lib64", usr / "lib", [](const std::string& n) { return n.rfind("libcudart", 0) == 0; }) == 1);
    CHECK(plan.size() == 3);

    Store store({t.path / "root"});
    Entry e = cvm::test::toolkit_entry("11.8.89", usr);
    e.origin = usr;
    store.add_imported(e, false, plan);
    auto back = store.find(Kind::Cuda, "11.8.89");
    REQUIRE(back);
    CHECK(back->imported);
    CHECK(back->origin == usr);
    CHECK(back->path == t.path / "root" / "cuda" / "11.8.89" / "root");
    CHECK(fs::is_symlink(back->path / "bin" / "nvcc"));
    CHECK(!fs::exists(back->path / "bin" / "ls"));
    CHECK(fs::exists(back->path / "include" / "cuda_runtime.h"));
    CHECK(fs::exists(back->path / "lib64" / "libcudart.so.11.0"));
    CHECK(!fs::exists(back->path / "lib64" / "libcurl.so.4"));
    // Listing shows where the files are; forgetting it removes the links, never their targets.
    auto listed = store.brief(Kind::Cuda);
    REQUIRE(listed.items.size() == 1);
    CHECK(listed.items[0].path == usr.u8string());
    store.remove(Kind::Cuda, "11.8.89");
    CHECK(fs::exists(usr / "bin" / "nvcc"));
    CHECK(fs::exists(usr / "include" / "cuda_runtime.h"));
}

TEST_CASE("NCCL: entries round-trip, specs resolve to a build of the toolkit's CUDA major") {
    TempDir t("store");
    Store store({t.path / "root"});
    Entry n = cvm::test::nccl_entry("2.21.5-cuda12.4", t.path / "nccl");
    Entry back = parse_entry(serialize_entry(n), "/store/nccl/2.21.5-cuda12.4", "entry");
    CHECK(back.kind == Kind::Nccl);
    CHECK(back.cuda.str() == "12.4");
    CHECK(back.nccl_id()->str() == "2.21.5-cuda12.4");
    CHECK_FALSE(back.cudnn_id());
    for (auto id : {"12.2.2", "12.4.1", "13.0.1"})
        store.add_imported(cvm::test::toolkit_entry(id, t.path / id));
    store.add_imported(cvm::test::cudnn_entry("9.1.0.70-cuda12", t.path / "cudnn"));
    for (auto id : {"2.21.5-cuda12.4", "2.21.5-cuda12.2", "2.20.3-cuda12.2", "2.28.9-cuda13.0",
                    "2.28.9-cuda12.9"})
        store.add_imported(cvm::test::nccl_entry(id, t.path / id));

    // Only the ids a spec names are read, as for cuDNN.
    Resolved r = resolve(store, parse_spec("12.4+9.1+nccl2.21"));
    CHECK(r.toolkit.id == "12.4.1");
    REQUIRE(r.cudnn);
    REQUIRE(r.nccl);
    CHECK(r.nccl->id == "2.21.5-cuda12.4");
    CHECK(r.active() == "12.4.1+9.1.0.70-cuda12+nccl2.21.5-cuda12.4");
    CHECK(r.entries().size() == 3);
    CHECK(r.of(Kind::Nccl) == &*r.nccl);
    // Of one release, the build for the toolkit's own minor, else the newest older one.
    CHECK(resolve(store, parse_spec("12.2+nccl2.21")).nccl->id == "2.21.5-cuda12.2");
    CHECK(resolve(store, parse_spec("12.4+nccl2")).nccl->id == "2.21.5-cuda12.4");
    CHECK(resolve(store, parse_spec("13+nccl2")).nccl->id == "2.28.9-cuda13.0");
    CHECK(resolve(store, parse_spec("12.4+nccl2.21-cuda12.2")).nccl->id == "2.21.5-cuda12.2");
    // A build serves its CUDA major only: 2.28.9 for 12 is the 12.9 one.
    CHECK(resolve(store, parse_spec("12.2+nccl2.28")).nccl->id == "2.28.9-cuda12.9");
    // The full form names exactly one.
    CHECK(resolve(store, parse_spec(r.active())).active() == r.active());
    CHECK_THROWS_WITH(resolve(store, parse_spec("13+nccl2.21")),
                      Catch::Contains("no installed NCCL 2.21 is built for CUDA 13"));
    CHECK_THROWS_WITH(resolve(store, parse_spec("12+nccl2.99")),
                      Catch::Contains("no NCCL 2.99 is installed"));
    CHECK_THROWS_WITH(resolve(store, parse_spec("12+nccl2.99")),
                      Catch::Contains("cvm install 12+nccl2.99"));
    // Without +nccl, no NCCL.
    CHECK_FALSE(resolve(store, parse_spec("12.4")).nccl);
    CHECK(kind_of_dir("nccl") == Kind::Nccl);
    CHECK(std::string(kind_label(Kind::Nccl)) == "NCCL");
    CHECK(store.list(Kind::Nccl).size() == 5);
    CHECK(store.brief(Kind::Nccl).items.front().cuda_parts == 2);
}

TEST_CASE("NCCL: removing an entry drops the merged views that use it, and only those") {
    TempDir t("store");
    Store store({t.path / "root"});
    store.add_imported(cvm::test::nccl_entry("2.21.5-cuda12.4", t.path / "nccl"));
    for (const char* v :
         {"12.4.1+nccl2.21.5-cuda12.4", "12.4.1+9.1.0.70-cuda12+nccl2.21.5-cuda12.4",
          "12.4.1+9.1.0.70-cuda12", "12.4.1+nccl2.20.3-cuda12.2"})
        fs::create_directories(store.views_dir() / v);
    store.remove(Kind::Nccl, "2.21.5-cuda12.4");
    std::vector<std::string> left;
    for (const auto& d : fs::directory_iterator(store.views_dir()))
        left.push_back(d.path().filename().string());
    std::sort(left.begin(), left.end());
    CHECK(left == std::vector<std::string>{"12.4.1+9.1.0.70-cuda12", "12.4.1+nccl2.20.3-cuda12.2"});
}

TEST_CASE("combination_parts reads every shape of a combination's name back") {
    const std::string cudnn = "9.19.0.56-cuda13", nccl = "2.28.9-cuda13.0";
    struct Row {
        const std::string* cudnn;
        const std::string* nccl;
    };
    for (Row row :
         {Row{nullptr, nullptr}, Row{&cudnn, nullptr}, Row{nullptr, &nccl}, Row{&cudnn, &nccl}}) {
        const std::string name = combination_name("13.0.2", row.cudnn, row.nccl);
        INFO(name);
        CombinationParts parts = combination_parts(name);
        CHECK(parts.cuda == "13.0.2");
        CHECK(parts.cudnn == (row.cudnn ? cudnn : ""));
        CHECK(parts.nccl == (row.nccl ? nccl : ""));
    }
    // The view: the NCCL part is never read as part of the cuDNN id.
    CombinationParts both = combination_parts("13.0.2+9.19.0.56-cuda13+nccl2.28.9-cuda13.0");
    CHECK(both.cudnn == "9.19.0.56-cuda13");
    CHECK(both.nccl == "2.28.9-cuda13.0");
}
