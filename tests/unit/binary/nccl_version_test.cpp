#include "binary/nccl_version.h"

#include "binary/binary_test_support.h"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace cvm::binary;
using namespace cvm::binary::test;

TEST_CASE("NCCL version codes: the encoding changed after 2.8", "[doctor][nccl]") {
    using V = std::array<unsigned, 3>;
    CHECK(decode_nccl_version_code(22809) == V{2, 28, 9});
    CHECK(decode_nccl_version_code(21903) == V{2, 19, 3});
    CHECK(decode_nccl_version_code(20906) == V{2, 9, 6});
    CHECK(decode_nccl_version_code(2804) == V{2, 8, 4});
    CHECK(decode_nccl_version_code(2708) == V{2, 7, 8});
    CHECK_FALSE(decode_nccl_version_code(0));
    CHECK_FALSE(decode_nccl_version_code(-1));
    CHECK_FALSE(decode_nccl_version_code(999));
    CHECK(nccl_version_code(2, 28, 9) == 22809);
    CHECK(nccl_version_code(2, 8, 4) == 2804);
    CHECK(nccl_version_code(2, 9, 6) == 20906);
    for (long long code : {2804LL, 20906LL, 22809LL}) {
        auto v = decode_nccl_version_code(code);
        REQUIRE(v);
        CHECK(nccl_version_code((*v)[0], (*v)[1], (*v)[2]) == code);
    }
}

TEST_CASE("NCCL banner: version and CUDA from the library's text", "[doctor][nccl]") {
    auto b = find_nccl_banner(
        std::string("\0junk NCCL version mismatch %d\0NCCL version 2.28.9+cuda13.0\0more", 60));
    REQUIRE(b);
    CHECK(b->version_text() == "2.28.9");
    CHECK(b->cuda_text() == "13.0");
    CHECK(b->text == "NCCL version 2.28.9+cuda13.0");
    auto suffixed = find_nccl_banner("NCCL version 2.19.3a0+cuda12.2");
    REQUIRE(suffixed);
    CHECK(suffixed->version_text() == "2.19.3");
    CHECK(suffixed->cuda_text() == "12.2");
    auto bare = find_nccl_banner("NCCL version 2.4.8");
    REQUIRE(bare);
    CHECK(bare->cuda_text().empty());
    CHECK_FALSE(find_nccl_banner("NCCL version %s"));
    CHECK_FALSE(find_nccl_banner("NCCL version 2.28"));
    CHECK_FALSE(find_nccl_banner(""));
}

TEST_CASE("NCCL banner: read from a library file, also across the reader's pieces",
          "[doctor][nccl]") {
    TempDir t;
    // Not ELF: the whole file is read, 4 MiB at a time; the banner straddles the first boundary.
    std::string big(std::size_t(4) << 20, 'x');
    std::string banner = "NCCL version 2.21.5+cuda12.4";
    big.replace(big.size() - 10, banner.size(), banner);
    big += std::string(1000, 'y');
    write_file(t.str("libnccl.so.2"), big);
    auto b = read_nccl_banner_file(t.str("libnccl.so.2"));
    REQUIRE(b);
    CHECK(b->version_text() == "2.21.5");
    CHECK(b->cuda_text() == "12.4");
    CHECK_FALSE(read_nccl_banner_file(t.str("missing")));

    auto cc = c_compiler();
    if (!cc) {
        WARN("no C compiler: the ELF case is skipped");
        return;
    }
    // A real shared object: the banner in .rodata, as nccl.h's VERSION_STRING is.
    write_file(t.str("banner.c"), "const char v[] = \"NCCL version 2.26.2+cuda12.8\";\n");
    auto built = run_command(shell_quote(*cc) + " -shared -fPIC -o " +
                                 shell_quote(t.str("libnccl.so.2.26.2")) + " " +
                                 shell_quote(t.str("banner.c")),
                             t.str());
    INFO(built.output);
    REQUIRE(built.ok());
    auto elf = read_nccl_banner_file(t.str("libnccl.so.2.26.2"));
    REQUIRE(elf);
    CHECK(elf->version_text() == "2.26.2");
    CHECK(elf->cuda_text() == "12.8");

    // The real one, where the machine has it (the CUDA 13.0 of these machines has the wheel's).
    const std::string real = "/usr/local/cuda-13.0/lib/libnccl.so.2";
    if (std::filesystem::exists(real)) {
        auto r = read_nccl_banner_file(real);
        REQUIRE(r);
        CHECK(r->cuda_text().rfind("13.", 0) == 0);
    }
}
