#include "binary/elf_reader.h"

#include "binary/binary_test_support.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

using namespace cvm::binary;
using namespace cvm::binary::test;

namespace {

bool contains(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

} // namespace

TEST_CASE("ELF reader: SONAME, DT_NEEDED and DT_RUNPATH of a library built by the compiler",
          "[doctor][elf]") {
    auto cc = c_compiler();
    if (!cc) {
        WARN("no C compiler on PATH: skipping");
        return;
    }
    TempDir t;
    const std::string dep = t.str("dep/libdep.so.1");
    auto r1 = build_shared_object(*cc, dep, "-Wl,-soname,libdep.so.1", "dep_fn");
    INFO(r1.output);
    REQUIRE(r1.ok());

    const std::string lib = t.str("lib/libcudnn.so.8.1.0");
    auto r2 = build_shared_object(*cc, lib,
                                  "-Wl,--no-as-needed -Wl,-soname,libcudnn.so.8 "
                                  "-Wl,--enable-new-dtags "
                                  "-Wl,-rpath,'$ORIGIN/../dep:/opt/none' " +
                                      shell_quote(dep));
    INFO(r2.output);
    REQUIRE(r2.ok());

    auto result = read_elf_file(lib);
    INFO(result.error);
    REQUIRE(result);
    const ElfInfo& e = *result.info;
    const ElfInfo host = host_abi();
    CHECK(e.bits == host.bits);
    CHECK(e.endian == host.endian);
    CHECK(e.machine == host.machine);
    CHECK(e.type == elf::et_dyn);
    CHECK(e.has_dynamic);
    REQUIRE(e.soname);
    CHECK(*e.soname == "libcudnn.so.8");
    CHECK(contains(e.needed, "libdep.so.1"));
    CHECK(contains(e.needed, "libc.so.6"));
    REQUIRE(e.runpath);
    CHECK(*e.runpath == "$ORIGIN/../dep:/opt/none");
    CHECK_FALSE(e.rpath);
    CHECK(e.runpath_entries() == std::vector<std::string>{"$ORIGIN/../dep", "/opt/none"});
    CHECK(e.warnings.empty());

    SECTION("the same facts from a byte buffer") {
        auto bytes = read_bytes(lib);
        auto from_buffer = read_elf(ByteView(bytes.data(), bytes.size()));
        REQUIRE(from_buffer);
        CHECK(from_buffer.info->soname == e.soname);
        CHECK(from_buffer.info->needed == e.needed);
        CHECK(from_buffer.info->runpath == e.runpath);
    }
}

TEST_CASE("ELF reader: DT_RPATH written with --disable-new-dtags", "[doctor][elf]") {
    auto cc = c_compiler();
    if (!cc) {
        WARN("no C compiler on PATH: skipping");
        return;
    }
    TempDir t;
    const std::string lib = t.str("libold.so");
    auto r = build_shared_object(*cc, lib,
                                 "-Wl,-soname,libold.so.7 -Wl,--disable-new-dtags "
                                 "-Wl,-rpath,/usr/local/cuda/lib64:/opt/cudnn/lib");
    INFO(r.output);
    REQUIRE(r.ok());
    auto result = read_elf_file(lib);
    REQUIRE(result);
    REQUIRE(result.info->rpath);
    CHECK(*result.info->rpath == "/usr/local/cuda/lib64:/opt/cudnn/lib");
    CHECK_FALSE(result.info->runpath);
    CHECK(*result.info->soname == "libold.so.7");
}

TEST_CASE("ELF reader: an executable's interpreter and a library without a SONAME",
          "[doctor][elf]") {
    auto cc = c_compiler();
    if (!cc) {
        WARN("no C compiler on PATH: skipping");
        return;
    }
    TempDir t;
    const std::string lib = t.str("libnosoname.so");
    auto r = build_shared_object(*cc, lib, "");
    REQUIRE(r.ok());
    auto result = read_elf_file(lib);
    REQUIRE(result);
    CHECK_FALSE(result.info->soname);
    CHECK_FALSE(result.info->runpath);

    auto self = read_elf_file("/proc/self/exe");
    REQUIRE(self);
    CHECK(self.info->interpreter.has_value());
}

TEST_CASE("ELF reader: 32-bit and big-endian objects linked for other machines", "[doctor][elf]") {
    auto clang = find_program("clang");
    auto lld = find_program("ld.lld");
    if (!clang || !lld) {
        WARN("clang or ld.lld missing: skipping the cross-architecture ELF objects");
        return;
    }
    struct Target {
        const char* triple;
        int bits;
        Endian endian;
        std::uint16_t machine;
    };
    const Target targets[] = {
        {"i386-linux-gnu", 32, Endian::little, elf::em_386},
        {"powerpc64-linux-gnu", 64, Endian::big, elf::em_ppc64},
        {"powerpc-linux-gnu", 32, Endian::big, elf::em_ppc},
        {"aarch64-linux-gnu", 64, Endian::little, elf::em_aarch64},
        {"armv7a-linux-gnueabihf", 32, Endian::little, elf::em_arm},
    };
    TempDir t;
    for (const auto& target : targets) {
        DYNAMIC_SECTION(target.triple) {
            const std::string out = t.str(std::string(target.triple) + "/libx.so");
            // Build a dependency for this target, then the library that needs it.
            const std::string dep = t.str(std::string(target.triple) + "/libneeded.so.2");
            auto d = build_shared_object(*clang, dep,
                                         std::string("--target=") + target.triple +
                                             " -nostdlib -fuse-ld=lld -Wl,-soname,libneeded.so.2",
                                         "needed_fn");
            INFO(d.output);
            REQUIRE(d.ok());
            auto b = build_shared_object(*clang, out,
                                         std::string("--target=") + target.triple +
                                             " -nostdlib -fuse-ld=lld -Wl,-soname,libcross.so.3 "
                                             "-Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN' " +
                                             shell_quote(dep));
            INFO(b.output);
            REQUIRE(b.ok());
            auto result = read_elf_file(out);
            INFO(result.error);
            REQUIRE(result);
            CHECK(result.info->bits == target.bits);
            CHECK(result.info->endian == target.endian);
            CHECK(result.info->machine == target.machine);
            CHECK(result.info->soname == std::optional<std::string>("libcross.so.3"));
            CHECK(result.info->runpath == std::optional<std::string>("$ORIGIN"));
            CHECK(result.info->needed == std::vector<std::string>{"libneeded.so.2"});
        }
    }
}

TEST_CASE("ELF reader: rejects what is not ELF", "[doctor][elf]") {
    // A linker script, as libc.so is on glibc systems.
    const std::string text = "/* GNU ld script */\nGROUP ( /lib/libc.so.6 )\n";
    auto r = read_elf(ByteView(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
    CHECK_FALSE(r);
    CHECK(r.error.find("not an ELF") != std::string::npos);
    CHECK_FALSE(read_elf(ByteView()));
    const std::uint8_t short_magic[] = {0x7f, 'E', 'L', 'F', 2, 1};
    CHECK_FALSE(read_elf(ByteView(short_magic, sizeof short_magic)));
    std::vector<std::uint8_t> bad_class(64, 0);
    bad_class[0] = 0x7f, bad_class[1] = 'E', bad_class[2] = 'L', bad_class[3] = 'F';
    bad_class[4] = 9;
    auto r2 = read_elf(ByteView(bad_class.data(), bad_class.size()));
    CHECK_FALSE(r2);
    CHECK(r2.error.find("class") != std::string::npos);
    CHECK_FALSE(read_elf_file("/nonexistent/libcudnn.so.8"));
}

TEST_CASE("ELF reader: truncated and corrupted copies of a real library never crash",
          "[doctor][elf]") {
    auto cc = c_compiler();
    if (!cc) {
        WARN("no C compiler on PATH: skipping");
        return;
    }
    TempDir t;
    const std::string lib = t.str("libfuzzme.so");
    auto r = build_shared_object(*cc, lib,
                                 "-Wl,-soname,libfuzzme.so.1 -Wl,--enable-new-dtags "
                                 "-Wl,-rpath,/a:/b");
    REQUIRE(r.ok());
    const auto original = read_bytes(lib);
    REQUIRE(original.size() > 1000);

    // Every prefix length up to the headers, then coarser steps: each must parse or fail cleanly.
    std::size_t complete = 0;
    for (std::size_t n = 0; n <= original.size(); n += (n < 4096 ? 1 : 97)) {
        auto res = read_elf(ByteView(original.data(), n));
        if (res && res.info->soname) ++complete;
    }
    CHECK(complete > 0);

    std::mt19937 rng(1234);
    std::uniform_int_distribution<std::size_t> header_pos(0, 255);
    std::uniform_int_distribution<std::size_t> any_pos(0, original.size() - 1);
    std::uniform_int_distribution<int> byte(0, 255);
    for (int round = 0; round < 3000; ++round) {
        auto copy = original;
        const int flips = 1 + round % 8;
        for (int i = 0; i < flips; ++i) {
            const std::size_t at = (round % 2) ? header_pos(rng) : any_pos(rng);
            copy[at] = static_cast<std::uint8_t>(byte(rng));
        }
        auto res = read_elf(ByteView(copy.data(), copy.size()));
        if (res) {
            CHECK(res.info->needed.size() <= 4096);
        } else {
            CHECK_FALSE(res.error.empty());
        }
    }
}

TEST_CASE("ELF reader: the real cuDNN of /usr/local/cuda-13.0", "[doctor][elf][real]") {
    const std::string lib = "/usr/local/cuda-13.0/lib/libcudnn.so.9";
    if (!fs::exists(lib)) {
        WARN(lib + " is absent: skipping");
        return;
    }
    auto result = read_elf_file(lib);
    INFO(result.error);
    REQUIRE(result);
    CHECK(result.info->soname == std::optional<std::string>("libcudnn.so.9"));
    CHECK(result.info->bits == 64);
}

TEST_CASE("split_search_path keeps empty elements", "[doctor][elf]") {
    CHECK(split_search_path("/a::/b") == std::vector<std::string>{"/a", "", "/b"});
    CHECK(split_search_path("/a;/b", true) == std::vector<std::string>{"/a", "/b"});
    CHECK(split_search_path("/a;/b", false) == std::vector<std::string>{"/a;/b"});
    CHECK(split_search_path("") == std::vector<std::string>{""});
}
