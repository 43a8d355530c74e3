#include "binary/pe_reader.h"

#include "binary/binary_test_support.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <random>

using namespace cvm::binary;
using namespace cvm::binary::test;

namespace {

bool has_dll(const std::vector<std::string>& names, const std::string& name) {
    return std::any_of(names.begin(), names.end(), [&](const std::string& n) {
        if (n.size() != name.size()) return false;
        for (std::size_t i = 0; i < n.size(); ++i)
            if (std::tolower(static_cast<unsigned char>(n[i])) !=
                std::tolower(static_cast<unsigned char>(name[i])))
                return false;
        return true;
    });
}

const char* version_rc = R"(1 VERSIONINFO
FILEVERSION 8,1,0,77
PRODUCTVERSION 8,1,0,77
FILEOS 0x40004
FILETYPE 0x2
BEGIN
  BLOCK "StringFileInfo"
  BEGIN
    BLOCK "040904b0"
    BEGIN
      VALUE "CompanyName", "cvm tests"
      VALUE "FileVersion", "8.1.0.77"
      VALUE "ProductName", "cvm test cuDNN"
    END
  END
  BLOCK "VarFileInfo"
  BEGIN
    VALUE "Translation", 0x409, 1200
  END
END
)";

struct MingwDll {
    std::string path;
    std::string log;
    bool ok = false;
};

// Builds dep.dll and cudnn64_8.dll (importing dep.dll, with a VERSIONINFO resource) with the
// mingw-w64 toolchain whose tools start with `prefix` (x86_64-w64-mingw32, i686-w64-mingw32).
MingwDll build_mingw_dll(const TempDir& t, const std::string& prefix) {
    MingwDll out;
    const std::string dir = t.mkdir(prefix).string();
    write_file(dir + "/dep.c", "__declspec(dllexport) int dep_fn(void) { return 1; }\n");
    write_file(dir + "/main.c", "__declspec(dllimport) int dep_fn(void);\n"
                                "__declspec(dllexport) int cudnnGetVersion(void) {\n"
                                "  return 8100 + dep_fn(); }\n");
    write_file(dir + "/ver.rc", version_rc);
    const std::string gcc = shell_quote(prefix + "-gcc");
    const std::string q = shell_quote(dir);
    auto r = run_command("cd " + q + " && " + gcc +
                             " -shared -o dep.dll dep.c -Wl,--out-implib,libdep.a && " +
                             shell_quote(prefix + "-windres") + " ver.rc -O coff -o ver.o && " +
                             gcc + " -shared -o cudnn64_8.dll main.c ver.o -L. -ldep",
                         dir);
    out.log = r.output;
    out.ok = r.ok();
    out.path = dir + "/cudnn64_8.dll";
    return out;
}

} // namespace

TEST_CASE("PE reader: machine, imports and VS_VERSIONINFO of a mingw-w64 DLL", "[doctor][pe]") {
    if (!find_program("x86_64-w64-mingw32-gcc") || !find_program("x86_64-w64-mingw32-windres")) {
        WARN("x86_64-w64-mingw32-gcc / windres missing (apt-get install mingw-w64): skipping");
        return;
    }
    TempDir t;
    auto dll = build_mingw_dll(t, "x86_64-w64-mingw32");
    INFO(dll.log);
    REQUIRE(dll.ok);

    auto result = read_pe_file(dll.path);
    INFO(result.error);
    REQUIRE(result);
    const PeInfo& pe = *result.info;
    CHECK(pe.machine == pe::machine_amd64);
    CHECK(pe.machine_name() == "x64");
    CHECK(pe.pe32_plus);
    CHECK(pe.is_dll);
    CHECK(has_dll(pe.imports, "dep.dll"));
    CHECK(has_dll(pe.imports, "kernel32.dll"));
    REQUIRE(pe.file_version);
    CHECK(pe.file_version->str() == "8.1.0.77");
    REQUIRE(pe.product_version);
    CHECK(pe.product_version->str() == "8.1.0.77");
    CHECK(pe.version_strings.at("FileVersion") == "8.1.0.77");
    CHECK(pe.version_strings.at("ProductName") == "cvm test cuDNN");
    CHECK(pe.version_strings.at("CompanyName") == "cvm tests");

    SECTION("a DLL without a version resource") {
        auto dep = read_pe_file(t.str("x86_64-w64-mingw32/dep.dll"));
        REQUIRE(dep);
        CHECK_FALSE(dep.info->file_version);
        CHECK_FALSE(has_dll(dep.info->imports, "dep.dll"));
    }
    SECTION("from a byte buffer") {
        auto bytes = read_bytes(dll.path);
        auto again = read_pe(ByteView(bytes.data(), bytes.size()));
        REQUIRE(again);
        CHECK(again.info->imports == pe.imports);
        CHECK(again.info->file_version == pe.file_version);
    }
}

TEST_CASE("PE reader: a 32-bit (PE32) DLL", "[doctor][pe]") {
    if (!find_program("i686-w64-mingw32-gcc") || !find_program("i686-w64-mingw32-windres")) {
        WARN("i686-w64-mingw32-gcc missing: skipping the PE32 case");
        return;
    }
    TempDir t;
    auto dll = build_mingw_dll(t, "i686-w64-mingw32");
    INFO(dll.log);
    REQUIRE(dll.ok);
    auto result = read_pe_file(dll.path);
    REQUIRE(result);
    CHECK(result.info->machine == pe::machine_i386);
    CHECK_FALSE(result.info->pe32_plus);
    CHECK(has_dll(result.info->imports, "dep.dll"));
    REQUIRE(result.info->file_version);
    CHECK(result.info->file_version->str() == "8.1.0.77");
}

TEST_CASE("PE reader: delay-load imports of a DLL linked by lld-link", "[doctor][pe]") {
    auto clang = find_program("clang");
    auto lld_link = find_program("lld-link");
    auto dlltool = find_program("llvm-dlltool");
    auto rc = find_program("llvm-rc");
    if (!clang || !lld_link || !dlltool || !rc) {
        WARN("clang, lld-link, llvm-dlltool or llvm-rc missing: skipping delay imports");
        return;
    }
    TempDir t;
    const std::string dir = t.str();
    write_file(dir + "/dep.def", "LIBRARY dep.dll\nEXPORTS\ndep_fn\n");
    write_file(dir + "/late.def", "LIBRARY cudnn_ops_infer64_8.dll\nEXPORTS\nlate_fn\n");
    // lld-link wants the delay-load helper; the test only reads the tables, so a stub does.
    write_file(dir + "/main.c",
               "__declspec(dllimport) int dep_fn(void);\n"
               "__declspec(dllimport) int late_fn(void);\n"
               "__declspec(dllexport) int f(void) { return dep_fn() + late_fn(); }\n"
               "void* __delayLoadHelper2(const void* d, void** f) {\n"
               "  (void)d; return *f; }\n");
    write_file(dir + "/ver.rc", version_rc);
    auto r = run_command("cd " + shell_quote(dir) + " && " + shell_quote(*dlltool) +
                             " -m i386:x86-64 -d dep.def -l dep.lib && " + shell_quote(*dlltool) +
                             " -m i386:x86-64 -d late.def -l late.lib && " + shell_quote(*clang) +
                             " --target=x86_64-pc-windows-msvc -c main.c -o main.obj && " +
                             shell_quote(*rc) + " /FO ver.res ver.rc && " + shell_quote(*lld_link) +
                             " /dll /noentry /out:cudnn64_8.dll main.obj ver.res dep.lib late.lib"
                             " /delayload:cudnn_ops_infer64_8.dll",
                         dir);
    INFO(r.output);
    REQUIRE(r.ok());
    auto result = read_pe_file(dir + "/cudnn64_8.dll");
    INFO(result.error);
    REQUIRE(result);
    CHECK(has_dll(result.info->imports, "dep.dll"));
    CHECK_FALSE(has_dll(result.info->imports, "cudnn_ops_infer64_8.dll"));
    CHECK(result.info->delay_imports == std::vector<std::string>{"cudnn_ops_infer64_8.dll"});
    REQUIRE(result.info->file_version);
    CHECK(result.info->file_version->str() == "8.1.0.77");
}

TEST_CASE("PE reader: rejects what is not PE", "[doctor][pe]") {
    CHECK_FALSE(read_pe(ByteView()));
    std::vector<std::uint8_t> mz(64, 0);
    mz[0] = 'M', mz[1] = 'Z';
    mz[0x3c] = 0x40; // points just past the end
    auto r = read_pe(ByteView(mz.data(), mz.size()));
    CHECK_FALSE(r);
    CHECK_FALSE(r.error.empty());
    auto self = read_pe_file("/proc/self/exe"); // an ELF file
    CHECK_FALSE(self);
    CHECK(self.error.find("not a PE") != std::string::npos);
}

TEST_CASE("PE reader: truncated and corrupted copies of a real DLL never crash", "[doctor][pe]") {
    if (!find_program("x86_64-w64-mingw32-gcc") || !find_program("x86_64-w64-mingw32-windres")) {
        WARN("mingw-w64 missing: skipping");
        return;
    }
    TempDir t;
    auto dll = build_mingw_dll(t, "x86_64-w64-mingw32");
    REQUIRE(dll.ok);
    const auto original = read_bytes(dll.path);
    std::size_t with_version = 0;
    for (std::size_t n = 0; n <= original.size(); n += (n < 2048 ? 1 : 61)) {
        auto res = read_pe(ByteView(original.data(), n));
        if (res && res.info->file_version) ++with_version;
    }
    CHECK(with_version > 0);

    std::mt19937 rng(99);
    std::uniform_int_distribution<std::size_t> any_pos(0, original.size() - 1);
    std::uniform_int_distribution<std::size_t> header_pos(0, 1023);
    std::uniform_int_distribution<int> byte(0, 255);
    for (int round = 0; round < 3000; ++round) {
        auto copy = original;
        for (int i = 0; i <= round % 6; ++i)
            copy[(round % 2) ? header_pos(rng) : any_pos(rng)] =
                static_cast<std::uint8_t>(byte(rng));
        auto res = read_pe(ByteView(copy.data(), copy.size()));
        if (!res) CHECK_FALSE(res.error.empty());
    }
}
