#include "binary/ld_cache.h"

#include "binary/binary_test_support.h"

#include <catch2/catch.hpp>

#include <random>
#include <sstream>

using namespace cvm::binary;
using namespace cvm::binary::test;

namespace {

struct Listed {
    std::string name, abi, path;
};

// `ldconfig -p -C FILE` lines: "\tNAME (libc6,x86-64) => PATH" (glibc's own reading of the cache).
std::vector<Listed> ldconfig_listing(const std::string& ldconfig, const std::string& cache,
                                     const std::string& dir) {
    auto r = run_command(shell_quote(ldconfig) + " -C " + shell_quote(cache) + " -p", dir);
    std::vector<Listed> out;
    std::istringstream in(r.output);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] != '\t') continue;
        const auto open = line.find(" (");
        const auto close = line.find(") => ");
        if (open == std::string::npos || close == std::string::npos) continue;
        out.push_back({line.substr(1, open - 1), line.substr(open + 2, close - open - 2),
                       line.substr(close + 5)});
    }
    return out;
}

} // namespace

TEST_CASE("ld.so.cache reader: a cache written by ldconfig over temporary folders",
          "[doctor][ldcache]") {
    auto cc = c_compiler();
    auto ldconfig = find_ldconfig();
    if (!cc || !ldconfig) {
        WARN("no C compiler or ldconfig: skipping");
        return;
    }
    TempDir t;
    for (const char* d : {"first", "second"}) {
        auto r = build_shared_object(*cc, t.str(std::string(d) + "/libcvmfake.so.8.1.0"),
                                     "-Wl,-soname,libcvmfake.so.8");
        INFO(r.output);
        REQUIRE(r.ok());
    }
    fs::create_symlink("libcvmfake.so.8.1.0", t.str("first/libcvmfake.so.8"));
    write_file(t.str("ld.so.conf"), t.str("first") + "\n" + t.str("second") + "\n");
    const std::string cache_path = t.str("ld.so.cache");
    // -X: leave the folders' links alone (ldconfig would otherwise also touch system folders).
    auto r = run_command(shell_quote(*ldconfig) + " -X -C " + shell_quote(cache_path) + " -f " +
                             shell_quote(t.str("ld.so.conf")),
                         t.str());
    INFO(r.output);
    REQUIRE(r.ok());

    auto read = read_ld_cache_file(cache_path);
    INFO(read.error);
    REQUIRE(read);
    const LdCache& cache = *read.cache;
    CHECK(cache.warnings.empty());

    auto ours = cache.find("libcvmfake.so.8");
    REQUIRE(ours.size() == 2);
    CHECK(ours[0]->path == t.str("first/libcvmfake.so.8"));
    CHECK(ours[1]->path == t.str("second/libcvmfake.so.8")); // recorded even without the link
    CHECK(ours[0]->hwcap == 0);

    auto self = read_elf_file("/proc/self/exe");
    REQUIRE(self);
    CHECK(ours[0]->matches(*self.info));

    SECTION("every entry agrees with glibc's own listing, in order") {
        auto listed = ldconfig_listing(*ldconfig, cache_path, t.str());
        REQUIRE(listed.size() == cache.entries.size());
        for (std::size_t i = 0; i < listed.size(); ++i) {
            INFO("entry " << i);
            CHECK(cache.entries[i].name == listed[i].name);
            CHECK(cache.entries[i].path == listed[i].path);
        }
    }
    SECTION("a 32-bit requester does not accept the x86-64 entries") {
        ElfInfo i386;
        i386.bits = 32;
        i386.machine = elf::em_386;
        CHECK_FALSE(ours[0]->matches(i386));
        CHECK(ours[0]->abi_name() == "x86-64");
    }
    SECTION("truncated and corrupted copies never crash") {
        const auto bytes = read_bytes(cache_path);
        for (std::size_t n = 0; n < bytes.size(); n += (n < 512 ? 1 : 211)) {
            auto res = read_ld_cache(ByteView(bytes.data(), n));
            if (!res) CHECK_FALSE(res.error.empty());
        }
        std::mt19937 rng(7);
        std::uniform_int_distribution<std::size_t> pos(0, bytes.size() - 1);
        for (int round = 0; round < 500; ++round) {
            auto copy = bytes;
            copy[pos(rng) % 4096] ^= static_cast<std::uint8_t>(1u << (round % 8));
            (void)read_ld_cache(ByteView(copy.data(), copy.size()));
        }
    }
}

TEST_CASE("ld.so.cache reader: the machine's own /etc/ld.so.cache", "[doctor][ldcache]") {
    if (!fs::exists("/etc/ld.so.cache")) {
        WARN("/etc/ld.so.cache is absent: skipping");
        return;
    }
    auto read = read_ld_cache_file("/etc/ld.so.cache");
    INFO(read.error);
    REQUIRE(read);
    CHECK_FALSE(read.cache->find("libc.so.6").empty());
}

TEST_CASE("ld.so.cache reader: rejects other files", "[doctor][ldcache]") {
    const std::string text = "not a cache at all, just text";
    auto r =
        read_ld_cache(ByteView(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
    CHECK_FALSE(r);
    CHECK(r.error.find("unknown format") != std::string::npos);
    CHECK_FALSE(read_ld_cache_file("/nonexistent/ld.so.cache"));

    // A header that claims more entries than the file holds.
    std::string header = "glibc-ld.so.cache1.1";
    header.resize(48, '\0');
    header[20] = '\x10'; // 16 entries, none present
    auto r2 = read_ld_cache(
        ByteView(reinterpret_cast<const std::uint8_t*>(header.data()), header.size()));
    CHECK_FALSE(r2);
}
