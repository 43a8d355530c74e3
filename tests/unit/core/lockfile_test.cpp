#include <catch2/catch.hpp>

#include "project/lockfile.h"
#include "store/resolve.h"
#include "test_support.h"

using namespace cvm;
using cvm::test::TempDir;
using cvm::test::write_file;

namespace {

const std::string kSumA(64, 'a');
const std::string kSumB(64, 'b');
const std::string kSumC(64, 'c');

Entry installed_toolkit() {
    Entry e;
    e.kind = Kind::Cuda;
    e.id = "11.2.2";
    e.version = *parse_version("11.2.2");
    e.path = "/store/cuda/11.2.2/root";
    e.platform = "linux-x86_64";
    e.components = {"cuda_nvcc", "cuda_cudart"};
    e.archives = {{"cuda_nvcc",
                   "https://developer.download.nvidia.com/compute/cuda/redist/cuda_nvcc/"
                   "linux-x86_64/cuda_nvcc-linux-x86_64-11.2.152-archive.tar.xz",
                   kSumA},
                  {"cuda_cudart",
                   "https://developer.download.nvidia.com/compute/cuda/redist/cuda_cudart/"
                   "linux-x86_64/cuda_cudart-linux-x86_64-11.2.152-archive.tar.xz",
                   kSumB}};
    return e;
}

Entry imported_cudnn() {
    Entry e;
    e.kind = Kind::Cudnn;
    e.id = "8.1.0.77-cuda11.2";
    e.version = *parse_version("8.1.0.77");
    e.cuda = *parse_version("11.2");
    e.path = "/opt/cudnn-8.1";
    e.imported = true;
    e.platform = "linux-x86_64";
    return e;
}

Lockfile sample() {
    Resolved r;
    r.toolkit = installed_toolkit();
    r.cudnn = imported_cudnn();
    return lockfile_of(r, "11.2+8.1");
}

} // namespace

TEST_CASE("a lock file round-trips through its TOML text") {
    Lockfile lock = sample();
    CHECK(lock.active() == "11.2.2+8.1.0.77-cuda11.2");
    // Sorted: the same installation always gives the same bytes.
    CHECK(lock.cuda.components == std::vector<std::string>{"cuda_cudart", "cuda_nvcc"});
    CHECK(lock.cuda.archives[0].name == "cuda_cudart");
    std::string text = format_lockfile(lock);
    CHECK(text.find("lock_version = 1\n") != std::string::npos);
    CHECK(text.find("[[cuda.archive]]\nname = \"cuda_nvcc\"\n") != std::string::npos);
    CHECK(text.find("sha256 = \"" + kSumA + "\"") != std::string::npos);
    CHECK(text.find("[cudnn]\nid = \"8.1.0.77-cuda11.2\"\nsource = \"imported\"") !=
          std::string::npos);
    CHECK(text.find("[[cudnn.archive]]") == std::string::npos);

    Lockfile back = parse_lockfile(text, "cvm.lock");
    CHECK(back.spec == "11.2+8.1");
    CHECK(back.cuda.id == "11.2.2");
    CHECK(!back.cuda.imported);
    CHECK(back.cuda.platform == "linux-x86_64");
    CHECK(back.cuda.components == lock.cuda.components);
    REQUIRE(back.cuda.archives.size() == 2);
    CHECK(back.cuda.archives[1].url == lock.cuda.archives[1].url);
    CHECK(back.cuda.archives[1].sha256 == kSumA);
    CHECK(back.cuda.reproducible());
    REQUIRE(back.cudnn);
    CHECK(back.cudnn->imported);
    CHECK(!back.cudnn->reproducible());
    CHECK(format_lockfile(back) == text);
}

TEST_CASE("the reader takes the TOML a person may write") {
    std::string text = "\xEF\xBB\xBF# hand-edited\r\n"
                       "lock_version = 1 # trailing comment\r\n"
                       "spec = '12.4'\r\n"
                       "\"future key\" = [1, 2,]\r\n"
                       "flag = true\r\n"
                       "[cuda]\r\n"
                       "id = \"12.4.1\"\r\n"
                       "source = \"installed\"\r\n"
                       "components = [\r\n"
                       "  \"cuda_nvcc\", # the compiler\r\n"
                       "  \"cuda_cudart\",\r\n"
                       "]\r\n"
                       "[[cuda.archive]]\r\n"
                       "name = \"cuda_nvcc\"\r\n"
                       "url = \"file:///m/caf\\u00e9/a.tar.xz\"\r\n"
                       "sha256 = \"" +
                       kSumC + "\"\r\n";
    Lockfile lock = parse_lockfile(text, "cvm.lock");
    CHECK(lock.spec == "12.4");
    CHECK(lock.active() == "12.4.1");
    CHECK(!lock.cudnn);
    CHECK(lock.cuda.components == std::vector<std::string>{"cuda_nvcc", "cuda_cudart"});
    REQUIRE(lock.cuda.archives.size() == 1);
    CHECK(lock.cuda.archives[0].url == "file:///m/caf\xC3\xA9/a.tar.xz");
}

TEST_CASE("malformed lock files are refused with the file and line") {
    auto error_of = [](const std::string& text) {
        try {
            parse_lockfile(text, "/p/cvm.lock");
        } catch (const LockfileError& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    const std::string head = "lock_version = 1\n[cuda]\nid = \"11.2.2\"\nsource = \"installed\"\n";
    CHECK(error_of(head) == "accepted");
    CHECK_THAT(error_of(""), Catch::Contains("/p/cvm.lock:1") && Catch::Contains("lock_version"));
    CHECK_THAT(error_of("lock_version = 2\n" + head.substr(17)),
               Catch::Contains("newer cvm") && Catch::Contains("/p/cvm.lock:1"));
    CHECK_THAT(error_of(head + "id = \"x\"\n"),
               Catch::Contains("/p/cvm.lock:5") && Catch::Contains("redefine"));
    CHECK_THAT(error_of(head + "[cuda]\n"),
               Catch::Contains(":5") && Catch::Contains("redefine"));
    CHECK_THAT(error_of(head + "platform = {a = 1}\n"),
               Catch::Contains(":5") && Catch::Contains("platform is a table, expected a string"));
    CHECK_THAT(error_of(head + "x = \"a\\q\"\n"),
               Catch::Contains(":5") && Catch::Contains("escape"));
    CHECK_THAT(error_of(head + "x = \"open\n"), Catch::Contains(":5"));
    CHECK_THAT(error_of(head + "components = 1.5\n"),
               Catch::Contains(":5") && Catch::Contains("components is a number, expected an array"));
    CHECK_THAT(error_of(head + "x = 1 2\n"), Catch::Contains(":5"));
    CHECK_THAT(error_of(head + "archive = [1]\n"),
               Catch::Contains(":5") && Catch::Contains("expected [[cuda.archive]] tables"));
    CHECK_THAT(error_of(head + "[[cuda.archive]]\nname = 1\n"),
               Catch::Contains(":6") && Catch::Contains("name is an integer, expected a string"));
    // Settings a newer cvm may add are left alone.
    CHECK(error_of(head + "x = 1.5\nmirror = {a = 1}\n") == "accepted");
    CHECK_THAT(error_of(head + "[[cuda.archive]]\nname = \"n\"\nsha256 = \"ABC\"\n"),
               Catch::Contains(":7") && Catch::Contains("64 lower-case hex"));
    CHECK_THAT(error_of("lock_version = 1\n[cuda]\nid = \"11.2\"\nsource = \"installed\"\n"),
               Catch::Contains(":3") && Catch::Contains("toolkit id"));
    CHECK_THAT(error_of(head + "[cudnn]\nid = \"8.9.7.29-cuda12\"\nsource = \"imported\"\n"),
               Catch::Contains("not built for CUDA 11.2.2"));
    CHECK_THAT(error_of("lock_version = 1\nactive = \"12.4.1\"\n" + head.substr(17)),
               Catch::Contains(":2") && Catch::Contains("active"));
    CHECK_THAT(error_of("lock_version = 1\n[cuda]\nid = \"11.2.2\"\nsource = \"copied\"\n"),
               Catch::Contains("source"));
    CHECK_THAT(error_of("lock_version = \"1\"\n"), Catch::Contains("expected an integer"));
    CHECK_THAT(error_of(head + "x = \"\x01\"\n"), Catch::Contains("control character"));
    // What fuzz_lockfile found toml++ 3.3 to mishandle is refused before it gets there.
    CHECK_THAT(error_of("\n\xEF\xBB\xBE"), Catch::Contains("/p/cvm.lock:2") && Catch::Contains("non-ASCII"));
}

TEST_CASE("lock_differences names every difference and nothing else") {
    Lockfile lock = sample();
    Entry same = installed_toolkit();
    CHECK(lock_differences(lock.cuda, same).empty());
    // A mirror's URL is not a difference: the sums are.
    same.archives[0].url = "http://127.0.0.1:8000/cuda/redist/x.tar.xz";
    CHECK(lock_differences(lock.cuda, same).empty());

    Entry other = installed_toolkit();
    other.archives[0].sha256 = kSumC;
    other.components.push_back("libcublas");
    other.archives.push_back({"libcublas", "", kSumA});
    auto d = lock_differences(lock.cuda, other);
    REQUIRE(d.size() == 3);
    CHECK_THAT(
        d[0], Catch::Contains(
                  "components locked cuda_cudart,cuda_nvcc, here cuda_cudart,cuda_nvcc,libcublas"));
    CHECK_THAT(d[1], Catch::Contains("archive cuda_nvcc locked with sha256 " + kSumA));
    CHECK_THAT(d[2], Catch::Contains("libcublas is installed here but not locked"));

    Entry imported = installed_toolkit();
    imported.imported = true;
    imported.archives.clear();
    auto di = lock_differences(lock.cuda, imported);
    REQUIRE(di.size() == 1);
    CHECK_THAT(di[0], Catch::Contains("here imported from"));

    // A locked import is only known by its id and platform.
    Entry dnn = imported_cudnn();
    CHECK(lock_differences(*lock.cudnn, dnn).empty());
    dnn.platform = "windows-x86_64";
    CHECK(lock_differences(*lock.cudnn, dnn).size() == 1);
}

TEST_CASE("locked redist URLs go through CVM_MIRROR") {
    std::string url = "https://developer.download.nvidia.com/compute/cudnn/redist/cudnn/a.tar.xz";
    CHECK(mirrored_url(url, std::nullopt) == url);
    CHECK(mirrored_url(url, std::string("")) == url);
    CHECK(mirrored_url(url, std::string("http://127.0.0.1:9/m/")) ==
          "http://127.0.0.1:9/m/cudnn/redist/cudnn/a.tar.xz");
    // A lock written on a machine with another mirror.
    CHECK(mirrored_url("http://10.0.0.1:8080/nv/cuda/redist/cuda_nvcc/x.tar.xz",
                       std::string("file:///srv/m")) ==
          "file:///srv/m/cuda/redist/cuda_nvcc/x.tar.xz");
    CHECK(mirrored_url("https://example.org/a.tgz", std::string("file:///m")) ==
          "https://example.org/a.tgz");
    CHECK(mirrored_url("/local/cuda/redist/a.tgz", std::string("file:///m")) ==
          "/local/cuda/redist/a.tgz");
}

TEST_CASE("a lock records sources, never local paths") {
    std::string https = "https://developer.download.nvidia.com/compute/cuda/redist/cuda_nvcc/x.tar.xz";
    CHECK(lockable_source(https) == https);
    CHECK(lockable_source("http://10.0.0.1/nv/cudnn/redist/cudnn/a.tar.xz") ==
          "http://10.0.0.1/nv/cudnn/redist/cudnn/a.tar.xz");
    // A folder mirror stands for NVIDIA's site.
    CHECK(lockable_source("file:///srv/mirror/cuda/redist/cuda_nvcc/x.tar.xz") == https);
    // Anything else local means nothing elsewhere.
    CHECK(lockable_source("file:///home/me/dl/cudnn-9.tar.xz").empty());
    CHECK(lockable_source("/home/me/dl/cudnn-9.tar.xz").empty());
    CHECK(lockable_source("C:\\Users\\me\\cudnn.zip").empty());
    CHECK(lockable_source("").empty());

    Entry e;
    e.kind = Kind::Cudnn;
    e.id = "9.1.0.70-cuda12";
    e.archives.push_back({"cudnn-9.tar.xz", "/home/me/dl/cudnn-9.tar.xz", std::string(64, 'a')});
    LockedToolchain tc = locked_toolchain_of(e);
    REQUIRE(tc.archives.size() == 1);
    CHECK(tc.archives[0].name == "cudnn-9.tar.xz");
    CHECK(tc.archives[0].url.empty());
    CHECK(tc.archives[0].sha256 == std::string(64, 'a'));
    CHECK(format_lockfile({kLockVersion, "12+9", {}, tc}).find("/home/me") == std::string::npos);
}

TEST_CASE("cvm.lock lives beside the nearest .cudaversion") {
    TempDir t("lock");
    CHECK(!find_lockfile(t.path / "none"));
    write_file(t.path / "proj" / ".cudaversion", "11.2\n");
    fs::create_directories(t.path / "proj" / "src" / "deep");
    CHECK(find_lockfile(t.path / "proj" / "src" / "deep") == t.path / "proj" / "cvm.lock");
    write_lockfile(t.path / "proj" / "cvm.lock", sample());
    CHECK(read_lockfile(t.path / "proj" / "cvm.lock").active() == "11.2.2+8.1.0.77-cuda11.2");
    CHECK_THROWS_WITH(read_lockfile(t.path / "missing.lock"), Catch::Contains("cvm lock"));
}

TEST_CASE("NCCL in cvm.lock: its own table, in active, checked against the toolkit") {
    Lockfile lock = sample();
    LockedToolchain n;
    n.kind = Kind::Nccl;
    n.id = "2.8.4-cuda11.2";
    n.platform = "linux-x86_64";
    n.archives.push_back({"nccl_2.8.4-1+cuda11.2_x86_64.txz",
                          "https://developer.download.nvidia.com/compute/redist/nccl/v2.8.4/"
                          "nccl_2.8.4-1+cuda11.2_x86_64.txz",
                          kSumC, true});
    lock.nccl = n;
    CHECK(lock.active() == "11.2.2+8.1.0.77-cuda11.2+nccl2.8.4-cuda11.2");
    CHECK(lock.toolchains().size() == 3);
    std::string text = format_lockfile(lock);
    CHECK(text.find("[nccl]\nid = \"2.8.4-cuda11.2\"") != std::string::npos);
    CHECK(text.find("[[nccl.archive]]") != std::string::npos);
    Lockfile back = parse_lockfile(text, "cvm.lock");
    REQUIRE(back.nccl);
    CHECK(back.nccl->id == "2.8.4-cuda11.2");
    CHECK(back.nccl->archives.at(0).first_use);
    CHECK(back.nccl->reproducible());
    CHECK(format_lockfile(back) == text);
    // An NCCL of another CUDA major than the toolkit, or an id that is none, is refused.
    std::string other = text;
    other.replace(other.find("id = \"2.8.4-cuda11.2\""), 21, "id = \"2.8.4-cuda12.2\"");
    CHECK_THROWS_WITH(parse_lockfile(other, "cvm.lock"),
                      Catch::Contains("is not built for CUDA 11.2.2"));
    std::string bad = text;
    bad.replace(bad.find("id = \"2.8.4-cuda11.2\""), 21, "id = \"2.8-cuda11.2\"  ");
    CHECK_THROWS_WITH(parse_lockfile(bad, "cvm.lock"),
                      Catch::Contains("NCCL build id like 2.21.5-cuda12.4"));
    // NCCL's public folder goes through the mirror like cuDNN's.
    CHECK(mirrored_url(n.archives[0].url, std::string("http://m")) ==
          "http://m/redist/nccl/v2.8.4/nccl_2.8.4-1+cuda11.2_x86_64.txz");
}
