#include <catch2/catch.hpp>

#include "core/store.h"
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
