#include "ld_cache.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

using cvm::probe::parse_ld_cache;

namespace {

void put_u32(std::vector<std::uint8_t>& b, std::size_t at, std::uint32_t v) {
    for (int i = 0; i < 4; ++i)
        b[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
}

// A cache in glibc's new format: header, entries, then the strings.
std::vector<std::uint8_t> new_cache(const std::vector<std::pair<std::string, std::string>>& libs) {
    std::vector<std::uint8_t> b(48 + 24 * libs.size(), 0);
    std::memcpy(b.data(), "glibc-ld.so.cache1.1", 20);
    put_u32(b, 20, static_cast<std::uint32_t>(libs.size()));
    std::vector<std::uint8_t> strings;
    for (std::size_t i = 0; i < libs.size(); ++i) {
        std::size_t entry = 48 + 24 * i;
        put_u32(b, entry, 0x303);
        put_u32(b, entry + 4, static_cast<std::uint32_t>(b.size() + strings.size()));
        strings.insert(strings.end(), libs[i].first.begin(), libs[i].first.end());
        strings.push_back(0);
        put_u32(b, entry + 8, static_cast<std::uint32_t>(b.size() + strings.size()));
        strings.insert(strings.end(), libs[i].second.begin(), libs[i].second.end());
        strings.push_back(0);
    }
    put_u32(b, 24, static_cast<std::uint32_t>(strings.size()));
    b.insert(b.end(), strings.begin(), strings.end());
    return b;
}

} // namespace

TEST_CASE("ld.so.cache entries are read", "[probe][ldcache]") {
    auto bytes = new_cache({{"libcudnn.so.9", "/usr/lib/x86_64-linux-gnu/libcudnn.so.9"},
                            {"libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6"}});
    auto entries = parse_ld_cache(bytes);
    REQUIRE(entries.size() == 2);
    CHECK(entries[0].name == "libcudnn.so.9");
    CHECK(entries[0].path == "/usr/lib/x86_64-linux-gnu/libcudnn.so.9");
    CHECK(entries[1].name == "libc.so.6");
}

TEST_CASE("malformed caches yield what could be read and never crash", "[probe][ldcache]") {
    CHECK(parse_ld_cache({}).empty());
    std::vector<std::uint8_t> junk(100, 0xAB);
    CHECK(parse_ld_cache(junk).empty());
    auto bytes = new_cache({{"liba.so.1", "/a/liba.so.1"}, {"libb.so.1", "/b/libb.so.1"}});
    // Claim more entries than there are.
    auto lying = bytes;
    put_u32(lying, 20, 1000000);
    CHECK(parse_ld_cache(lying).size() <= 2);
    // Cut inside the strings: the second entry's strings are gone.
    auto cut = bytes;
    cut.resize(cut.size() - 5);
    CHECK(parse_ld_cache(cut).size() == 1);
    // Offsets pointing outside.
    auto outside = bytes;
    put_u32(outside, 48 + 4, 0xFFFFFFF0u);
    CHECK(parse_ld_cache(outside).empty());
}

TEST_CASE("the old format section is skipped", "[probe][ldcache]") {
    std::vector<std::uint8_t> old(16 + 12 * 1, 0);
    std::memcpy(old.data(), "ld.so-1.7.0", 11);
    put_u32(old, 12, 1);
    old.resize(32, 0); // aligned to 8
    auto fresh = new_cache({{"libx.so.2", "/x/libx.so.2"}});
    old.insert(old.end(), fresh.begin(), fresh.end());
    auto entries = parse_ld_cache(old);
    REQUIRE(entries.size() == 1);
    CHECK(entries[0].path == "/x/libx.so.2");
}

TEST_CASE("this machine's loader cache parses", "[probe][ldcache]") {
    std::ifstream in("/etc/ld.so.cache", std::ios::binary);
    if (!in) return; // not every system has one
    std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                    std::istreambuf_iterator<char>());
    auto entries = parse_ld_cache(bytes);
    REQUIRE_FALSE(entries.empty());
    bool has_libc = false;
    for (const auto& e : entries) {
        CHECK(e.path.front() == '/');
        if (e.name == "libc.so.6") has_libc = true;
    }
    CHECK(has_libc);
}
