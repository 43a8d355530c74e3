// The host compiler engine: banners, limits (registry table and host_config.h), nvcc's own
// pick and the auto choice, against fake compilers that print real banners.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "compat/compiler_id.h"
#include "compat/host_compiler.h"
#include "compat/host_compiler_limits.h"
#include "compat/visual_studio.h"
#include "activation/host_compiler_choice.h"
#include "platform/platform.h"
#include "registry/registry.h"
#include "test_support.h"
#include "version_support.h"

using namespace cvm;
using namespace cvm::compat;
namespace fs = std::filesystem;
using cvm::test::TempDir;
using cvm::test::v;

namespace {

void write(const fs::path& p, const std::string& text, bool executable = false) {
    cvm::test::write_file(p, text);
    if (executable) fs::permissions(p, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec);
}

// A program that prints `banner` for --version, like the compiler it stands for.
void fake_compiler(const fs::path& p, const std::string& banner) {
    write(p, "#!/bin/sh\n[ \"$1\" = --version ] || exit 3\ncat <<'EOS'\n" + banner + "EOS\n", true);
}

const char* kGcc12 = "gcc (Debian 12.2.0-14) 12.2.0\nCopyright (C) 2022 Free Software Foundation, Inc.\n"
                     "This is free software; see the source for copying conditions.\n";
const char* kGpp11 = "g++ (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0\nCopyright (C) 2021 Free Software Foundation, Inc.\n";
const char* kClang14 = "Debian clang version 14.0.6\nTarget: x86_64-pc-linux-gnu\nThread model: posix\n"
                       "InstalledDir: /usr/bin\n";
const char* kClang17 = "Ubuntu clang version 17.0.6 (9ubuntu1)\nTarget: x86_64-pc-linux-gnu\n";

HostCompilerLimits cuda118() {
    HostCompilerLimits l;
    l.cuda = v("11.8");
    l.gcc_max = 11;
    l.clang_min = v("3.3");
    l.clang_max = 14;
    l.msc_min = 1910;
    l.msc_max = 1939;
    return l;
}

} // namespace

TEST_CASE("compiler banners name the compiler and its version") {
    auto gcc = parse_compiler_banner(kGcc12);
    REQUIRE(gcc);
    CHECK(gcc->kind == CompilerKind::Gcc);
    CHECK(gcc->version == v("12.2.0"));
    auto gpp = parse_compiler_banner(kGpp11);
    REQUIRE(gpp);
    CHECK(gpp->version == v("11.4.0"));
    auto conda = parse_compiler_banner(
        "x86_64-conda-linux-gnu-c++ (conda-forge gcc 12.3.0-3) 12.3.0\nCopyright (C) 2022 Free Software Foundation, Inc.\n");
    REQUIRE(conda);
    CHECK(conda->version == v("12.3.0"));
    auto clang = parse_compiler_banner(kClang14);
    REQUIRE(clang);
    CHECK(clang->kind == CompilerKind::Clang);
    CHECK(clang->version == v("14.0.6"));
    auto upstream = parse_compiler_banner("clang version 17.0.0 (https://github.com/llvm/llvm-project.git 88bf774c)\n");
    REQUIRE(upstream);
    CHECK(upstream->version == v("17.0.0"));
    auto apple = parse_compiler_banner("Apple clang version 15.0.0 (clang-1500.0.40.1)\n");
    REQUIRE(apple);
    CHECK(apple->version == v("15.0.0"));
    auto cl = parse_compiler_banner("Microsoft (R) C/C++ Optimizing Compiler Version 19.29.30133 for x64\n"
                                    "Copyright (C) Microsoft Corporation.  All rights reserved.\n");
    REQUIRE(cl);
    CHECK(cl->kind == CompilerKind::Msvc);
    CHECK(msc_ver(cl->version) == 1929);
    CHECK(describe(*cl) == "MSVC 19.29 (Visual Studio 2019)");
    CHECK_FALSE(parse_compiler_banner("bash: gcc: command not found\n"));
    CHECK_FALSE(parse_compiler_banner(""));
}

TEST_CASE("MSVC toolset folders give cl.exe's version") {
    CHECK(cl_version_of_toolset("14.29.30133") == v("19.29.30133"));
    CHECK(cl_version_of_toolset("14.44.35207") == v("19.44.35207"));
    CHECK_FALSE(cl_version_of_toolset("15.0"));
    CHECK_FALSE(cl_version_of_toolset("latest"));
    CHECK(visual_studio_of(1939) == "2022");
    CHECK(visual_studio_of(1916) == "2017");
}

TEST_CASE("judging compilers against a toolkit's limits") {
    auto l = cuda118();
    CHECK(judge(l, *parse_compiler_banner(kGcc12)) == Verdict::TooNew);
    CHECK(judge(l, *parse_compiler_banner(kGpp11)) == Verdict::Supported);
    CHECK(judge(l, *parse_compiler_banner(kClang14)) == Verdict::Supported);
    CHECK(judge(l, *parse_compiler_banner(kClang17)) == Verdict::TooNew);
    CHECK(judge(l, CompilerId{CompilerKind::Clang, v("3.2")}) == Verdict::TooOld);
    CHECK(judge(l, CompilerId{CompilerKind::Msvc, v("19.40.33811")}) == Verdict::TooNew); // VS 2022 17.10
    CHECK(judge(l, CompilerId{CompilerKind::Msvc, v("19.39.33523")}) == Verdict::Supported);
    CHECK(judge(l, CompilerId{CompilerKind::Msvc, v("19.00.24215")}) == Verdict::TooOld);
    l.gcc_max.reset();
    CHECK(judge(l, *parse_compiler_banner(kGcc12)) == Verdict::Unknown);
    CHECK(cuda118().describe(false) == "gcc up to 11, clang 3.3 to 14");
    CHECK(cuda118().describe(true) == "MSVC 1910 to 1939 (Visual Studio 2017 to 2022)");
}

TEST_CASE("host_config.h gives the limits nvcc enforces") {
    // The shape of CUDA 11.8's checks (its #error lines shortened).
    const std::string header =
        "#if defined(__GNUC__)\n\n#if __GNUC__ > 11\n\n#error -- unsupported GNU version!\n\n#endif /* __GNUC__ > 11 */\n\n"
        "#if defined(__clang__) && !defined(__ibmxl_vrm__) && !defined(__ICC) && !defined(__HORIZON__) && !defined(__APPLE__)\n\n"
        "#if (__clang_major__ >= 15) || (__clang_major__ < 3) || ((__clang_major__ == 3) &&  (__clang_minor__ < 3))\n"
        "#error -- unsupported clang version!\n#endif\n#endif\n#endif /* __GNUC__ */\n\n"
        "#if defined(_WIN32)\n\n#if _MSC_VER < 1910 || _MSC_VER >= 1940\n\n#error -- unsupported Microsoft Visual Studio version!\n";
    auto l = limits_from_host_config(header, v("11.8"));
    REQUIRE(l);
    CHECK(l->gcc_max == 11u);
    CHECK(l->clang_max == 14u);
    CHECK(l->clang_min == v("3.3"));
    CHECK(l->msc_min == 1910u);
    CHECK(l->msc_max == 1939u);
    CHECK_FALSE(limits_from_host_config("#define NOTHING 1\n", v("11.8")));

    // The real headers where installed: CUDA 13.0 and Debian's 11.8 agree with the registry rows.
    auto table = load_host_compiler_table();
    for (auto [file, cuda] : {std::pair{"/usr/local/cuda-13.0/targets/x86_64-linux/include/crt/host_config.h", "13.0"},
                              std::pair{"/usr/include/crt/host_config.h", "11.8"}}) {
        auto text = platform::read_file(fs::path(file));
        if (!text) continue;
        auto real = limits_from_host_config(*text, v(cuda));
        REQUIRE(real);
        const auto* row = limits_for(table, v(cuda));
        REQUIRE(row);
        CHECK(real->gcc_max == row->gcc_max);
        CHECK(real->clang_max == row->clang_max);
        CHECK(real->msc_min == row->msc_min);
        CHECK(real->msc_max == row->msc_max);
    }
}

TEST_CASE("registry/host_compilers.toml covers every CUDA release, with sources") {
    auto table = load_host_compiler_table();
    auto reg = registry::load_default_registry();
    for (const auto& release : reg.cuda) {
        INFO(release.version.str());
        const auto* row = limits_for(table, release.version);
        REQUIRE(row);
        CHECK(row->gcc_max);
        CHECK(row->clang_max);
        CHECK(row->msc_min);
        CHECK(row->msc_max);
        CHECK_FALSE(row->visual_studio.empty());
        CHECK_FALSE(row->source.empty());
    }
    // Newer releases never accept less than older ones.
    for (size_t i = 1; i < table.rows.size(); ++i) {
        CHECK(*table.rows[i].gcc_max >= *table.rows[i - 1].gcc_max);
        CHECK(*table.rows[i].clang_max >= *table.rows[i - 1].clang_max);
    }
    CHECK(table.nvcc_ccbin_env == v("12.0"));
    CHECK(table.nvcc_ccbin_inferred);
    // The examples of the sources: CUDA 11.8 refuses gcc 12 and takes clang 14; 13.0 refuses VS 2017.
    CHECK(judge(*limits_for(table, v("11.8.0")), *parse_compiler_banner(kGcc12)) == Verdict::TooNew);
    CHECK(judge(*limits_for(table, v("11.8.0")), *parse_compiler_banner(kClang14)) == Verdict::Supported);
    CHECK(judge(*limits_for(table, v("13.0.2")), CompilerId{CompilerKind::Msvc, v("19.16.27045")}) == Verdict::TooOld);
}

TEST_CASE("a malformed host compiler table is refused with its line") {
    CHECK_THROWS_AS(parse_host_compiler_table("schema = 1\n", "t.toml"), registry::RegistryError);
    try {
        parse_host_compiler_table("schema = 1\n[[toolkit]]\ncuda = \"11.8\"\ngcc_max = \"eleven\"\nsource = \"x\"\n", "t.toml");
        FAIL("no error");
    } catch (const registry::RegistryError& e) {
        CHECK(std::string(e.what()).find("t.toml:4: gcc_max") != std::string::npos);
    }
    CHECK_THROWS_AS(parse_host_compiler_table("[[toolkit]]\ncuda = \"11\"\nsource = \"x\"\n", "t.toml"),
                    registry::RegistryError);
    CHECK_THROWS_AS(parse_host_compiler_table("[[toolkit]]\ncuda = \"11.8\"\nsource = \"x\"\ngcc = 1\n", "t.toml"),
                    registry::RegistryError);
}

TEST_CASE("-ccbin on the command line and in NVCC_*_FLAGS is the user's choice") {
    CHECK(ccbin_in_args({"-c", "x.cu", "-ccbin", "g++-11"}) == std::optional<std::string>("g++-11"));
    CHECK(ccbin_in_args({"-ccbin=/opt/gcc"}) == std::optional<std::string>("/opt/gcc"));
    CHECK(ccbin_in_args({"--compiler-bindir", "/opt/gcc/bin"}) == std::optional<std::string>("/opt/gcc/bin"));
    CHECK(ccbin_in_args({"--compiler-bindir=clang-14"}) == std::optional<std::string>("clang-14"));
    CHECK_FALSE(ccbin_in_args({"-c", "-ccbinx", "x.cu"}));
    CHECK(split_flag_words(" -ccbin  '/opt/my gcc/bin' -O2") ==
          std::vector<std::string>{"-ccbin", "/opt/my gcc/bin", "-O2"});
    CHECK(user_chose_host_compiler({"nvcc", "-ccbin", "g++"}, std::nullopt, std::nullopt, std::nullopt));
    CHECK_FALSE(user_chose_host_compiler({"-ccbin"}, std::nullopt, std::nullopt, std::nullopt)); // argv[0] only
    CHECK(user_chose_host_compiler({"nvcc"}, std::string("-O2 -ccbin g++"), std::nullopt, std::nullopt));
    CHECK(user_chose_host_compiler({"nvcc"}, std::nullopt, std::string("--compiler-bindir=/x"), std::nullopt));
    CHECK(user_chose_host_compiler({"nvcc"}, std::nullopt, std::nullopt, std::string("clang++")));
    CHECK_FALSE(user_chose_host_compiler({"nvcc", "-c", "x.cu"}, std::string("-O2"), std::string(""), std::string("")));
}

TEST_CASE("the shim's cache file round-trips and refuses other text") {
    HostCompilerChoice c{"/usr/bin/clang++-14", false, "gcc 12.2.0 is newer than CUDA 11.8 supports", "host compiler: ..."};
    auto back = parse_host_compiler_choice(format_host_compiler_choice(c));
    REQUIRE(back);
    CHECK(back->ccbin == c.ccbin);
    CHECK(back->via_env == false);
    CHECK(back->why == c.why);
    CHECK(back->line == c.line);
    c.via_env = true;
    CHECK(parse_host_compiler_choice(format_host_compiler_choice(c))->via_env);
    CHECK_FALSE(parse_host_compiler_choice("ccbin /x\nvia maybe\n"));
    CHECK_FALSE(parse_host_compiler_choice("garbage"));
    CHECK_FALSE(parse_host_compiler_choice("via arg\n"));            // a choice without its compiler
    CHECK_FALSE(parse_host_compiler_choice("ccbin /x\nvia none\n")); // "none" with a compiler
    HostCompilerChoice none{"", false, "", "warning: no installed compiler fits"};
    auto kept = parse_host_compiler_choice(format_host_compiler_choice(none));
    REQUIRE(kept);
    CHECK(kept->ccbin.empty());
    CHECK(kept->line == none.line);
    CHECK(host_compiler_cache_file("/r", "11.8.0") == fs::path("/r/cache/host-compiler/11.8.0"));
    CHECK(host_compiler_cache_file("/r", "../x").empty());
    CHECK(host_compiler_cache_file("/r", "..").empty());
}

#ifndef _WIN32
TEST_CASE("nvcc's own compiler and the auto choice, with fake compilers") {
    TempDir t;
    fs::path bin = t.path / "bin", shims = t.path / "shims";
    fake_compiler(bin / "gcc", kGcc12);
    fake_compiler(bin / "g++-12", kGcc12);
    fs::create_symlink("g++-12", bin / "g++"); // one compiler under two names: listed once
    fake_compiler(bin / "g++-11", kGpp11);
    fake_compiler(bin / "clang++-14", kClang14);
    fake_compiler(bin / "clang++-17", kClang17);
    fake_compiler(shims / "g++-10", kGpp11); // a shim folder is never a compiler
    write(bin / "x86_64-linux-gnu-g++-11", "#!/bin/sh\nexit 1\n", true);
    write(t.path / "tk" / "bin" / "nvcc", "#!/bin/sh\n", true);

    HostCompilerQuery q;
    q.os = platform::Os::Linux;
    q.env["PATH"] = shims.u8string() + ":" + bin.u8string();
    q.nvcc = t.path / "tk" / "bin" / "nvcc";
    q.skip_dir = shims;

    auto installed = installed_host_compilers(q);
    std::vector<std::string> names;
    for (const auto& c : installed) names.push_back(fs::u8path(c.path).filename().u8string());
    CHECK(names == std::vector<std::string>{"g++-12", "g++-11", "clang++-17", "clang++-14"});

    auto l = cuda118();
    auto s = host_compiler_status(q, &l);
    CHECK(s.nvcc_default.path == (bin / "gcc").u8string());
    CHECK(s.nvcc_default.origin == "PATH");
    CHECK(s.verdict == Verdict::TooNew);
    CHECK(s.problem.find("gcc 12.2.0") != std::string::npos);
    REQUIRE(s.choice);
    CHECK(s.choice->ccbin == (bin / "g++-11").u8string());

    // Without a supported gcc, the newest supported clang.
    fs::remove(bin / "g++-11");
    s = host_compiler_status(q, &l);
    REQUIRE(s.choice);
    CHECK(s.choice->ccbin == (bin / "clang++-14").u8string());

    // A compiler the user named is judged, not replaced.
    q.nvcc_args = {"-ccbin", "clang++-17", "-c", "x.cu"};
    s = host_compiler_status(q, &l);
    CHECK(s.nvcc_default.origin == "-ccbin on the command line");
    CHECK(s.nvcc_default.path == (bin / "clang++-17").u8string());
    CHECK(s.verdict == Verdict::TooNew);
    CHECK_FALSE(s.choice);
    q.nvcc_args = {"-ccbin", bin.u8string()}; // a folder: its gcc
    CHECK(find_nvcc_host_compiler(q).path == (bin / "gcc").u8string());
    q.nvcc_args.clear();
    q.env["NVCC_APPEND_FLAGS"] = "-O2 -ccbin=" + (bin / "clang++-14").u8string();
    CHECK(find_nvcc_host_compiler(q).origin == "NVCC_APPEND_FLAGS");
    q.env.erase("NVCC_APPEND_FLAGS");
    q.env["NVCC_CCBIN"] = "clang++-14";
    CHECK(find_nvcc_host_compiler(q).origin == "PATH"); // this nvcc does not read it
    q.nvcc_reads_ccbin_env = true;
    CHECK(find_nvcc_host_compiler(q).origin == "NVCC_CCBIN");
    q.env.erase("NVCC_CCBIN");

    // nvcc.profile's PATH comes first (Debian's nvcc puts its gcc wrapper there).
    write(t.path / "tk" / "bin" / "nvcc.profile", "PATH += $(_HERE_)/wrap:\n");
    write(t.path / "tk" / "bin" / "wrap" / "gcc", "#!/bin/sh\necho 'ERROR: No supported gcc/g++ host compiler found' >&2\nexit 1\n", true);
    s = host_compiler_status(q, &l);
    CHECK(s.nvcc_default.origin == "nvcc.profile's PATH");
    CHECK_FALSE(s.nvcc_default.id);
    CHECK(s.problem.find("does not say which compiler it is") != std::string::npos);
    // What it printed on stderr says why.
    CHECK(s.problem.find("it says \"ERROR: No supported gcc/g++ host compiler found\"") != std::string::npos);
    REQUIRE(s.choice);
    CHECK(s.choice->ccbin == (bin / "clang++-14").u8string());

    // A supported default: nothing to hand over.
    fake_compiler(t.path / "tk" / "bin" / "wrap" / "gcc", kGpp11);
    s = host_compiler_status(q, &l);
    CHECK(s.verdict == Verdict::Supported);
    CHECK(s.problem.empty());
    CHECK_FALSE(s.choice);

    // Nothing fits at all.
    fake_compiler(t.path / "tk" / "bin" / "wrap" / "gcc", kGcc12);
    fs::remove(bin / "clang++-14");
    s = host_compiler_status(q, &l);
    CHECK_FALSE(s.problem.empty());
    CHECK_FALSE(s.choice);
}

TEST_CASE("nvcc reads NVCC_CCBIN when its program holds the name") {
    TempDir t;
    write(t.path / "new", std::string("\x7f" "ELF....NVCC_PREPEND_FLAGS\0NVCC_CCBIN\0", 38));
    write(t.path / "old", std::string("\x7f" "ELF....NVCC_PREPEND_FLAGS\0NVCC_APPEND_FLAGS\0", 44));
    CHECK(nvcc_reads_ccbin_env(t.path / "new") == std::optional<bool>(true));
    CHECK(nvcc_reads_ccbin_env(t.path / "old") == std::optional<bool>(false));
    CHECK_FALSE(nvcc_reads_ccbin_env(t.path / "absent"));
    if (platform::exists("/usr/lib/nvidia-cuda-toolkit/bin/nvcc"))
        CHECK(nvcc_reads_ccbin_env("/usr/lib/nvidia-cuda-toolkit/bin/nvcc") == std::optional<bool>(false));
    if (platform::exists("/usr/local/cuda-13.0/bin/nvcc"))
        CHECK(nvcc_reads_ccbin_env("/usr/local/cuda-13.0/bin/nvcc") == std::optional<bool>(true));
}
#endif

TEST_CASE("Visual Studio installs: cl.exe of every MSVC toolset, newest first") {
    TempDir t;
    fs::path vs = t.path / "Microsoft Visual Studio";
    for (const char* where : {"2019/BuildTools/VC/Tools/MSVC/14.29.30133", "2022/Community/VC/Tools/MSVC/14.44.35207",
                              "2022/Community/VC/Tools/MSVC/14.38.33130"})
        write(vs / where / "bin" / "Hostx64" / "x64" / "cl.exe", "MZ");
    HostCompilerQuery q;
    q.os = platform::Os::Windows;
    q.visual_studio_roots = {vs};
    auto all = installed_host_compilers(q);
    REQUIRE(all.size() == 3);
    CHECK(describe(*all[0].id) == "MSVC 19.44 (Visual Studio 2022)");
    CHECK(describe(*all[2].id) == "MSVC 19.29 (Visual Studio 2019)");
    // Without cl.exe on PATH nvcc finds no compiler (it looks for no Visual Studio); the newest
    // one CUDA 11.8 takes is handed over: 17.14 (1944) is too new for it.
    auto l = cuda118();
    auto s = host_compiler_status(q, &l);
    CHECK(s.nvcc_default.origin == "PATH");
    CHECK(s.nvcc_default.path.empty());
    CHECK(s.problem.find("nvcc finds no host compiler (cl.exe is not on PATH)") != std::string::npos);
    REQUIRE(s.choice);
    CHECK(s.choice->ccbin.find("14.38.33130") != std::string::npos);
}

TEST_CASE("Visual Studio installs the Installer records, anywhere, each toolset once") {
    TempDir t;
    fs::path vs = t.path / "Program Files" / "Microsoft Visual Studio";
    write(vs / "2022/Community/VC/Tools/MSVC/14.44.35207/bin/Hostx64/x64/cl.exe", "MZ");
    fs::path tools = t.path / "D" / "BuildTools";
    write(tools / "VC/Tools/MSVC/14.29.30133/bin/Hostx64/x64/cl.exe", "MZ");
    fs::path instances = t.path / "ProgramData" / "_Instances";
    // state.json as the Visual Studio Installer writes it (abridged), BOM included.
    auto state = [](const fs::path& install) {
        nlohmann::json j = {{"installationName", "VisualStudio/17.14.4+36203.30"},
                            {"installationPath", install.u8string()},
                            {"launchParams", {{"fileName", "Common7\\IDE\\devenv.exe"}}},
                            {"installationVersion", "17.14.36203.30"}};
        return "\xEF\xBB\xBF" + j.dump();
    };
    write(instances / "1a2b3c4d" / "state.json", state(tools));
    write(instances / "5e6f7a8b" / "state.json", state(vs / "2022" / "Community")); // also under the root
    write(instances / "9c0d1e2f" / "state.json", "{ not json");
    write(instances / "0a0b0c0d" / "state.json", R"({"installationPath": 7})");
    CHECK(installation_path_of_state(state(tools)) == tools);
    CHECK_FALSE(installation_path_of_state("{ not json"));
    CHECK_FALSE(installation_path_of_state(R"({"installationName": "x"})"));

    auto cls = visual_studio_cl_programs({vs}, instances);
    REQUIRE(cls.size() == 2);
    CHECK(cls[0].u8string().find("14.44.35207") != std::string::npos);
    CHECK(cls[1].u8string().find("BuildTools") != std::string::npos);
    // Without the records, only what lies under the roots.
    CHECK(visual_studio_cl_programs({vs}, t.path / "absent").size() == 1);

    HostCompilerQuery q;
    q.os = platform::Os::Windows;
    q.visual_studio_roots = {vs};
    q.visual_studio_instances = instances;
    auto l = cuda118();
    auto s = host_compiler_status(q, &l);
    CHECK(s.nvcc_default.path.empty());
    REQUIRE(s.choice);
    CHECK(s.choice->ccbin == (tools / "VC/Tools/MSVC/14.29.30133/bin/Hostx64/x64/cl.exe").u8string());
}

#ifndef _WIN32
TEST_CASE("a cl.exe outside a toolset folder is known by the banner it prints on stderr") {
    TempDir t;
    // As cl.exe run alone: the banner and the usage on stderr, nothing on stdout.
    write(t.path / "wrappers" / "cl.exe",
          "#!/bin/sh\n[ $# = 0 ] || exit 2\n"
          "echo 'Microsoft (R) C/C++ Optimizing Compiler Version 19.44.35211 for x64' >&2\n"
          "echo 'Copyright (C) Microsoft Corporation.  All rights reserved.' >&2\n"
          "echo '' >&2\necho 'usage: cl [ option... ] filename... [ /link linkoption... ]' >&2\n",
          true);
    auto id = identify_compiler(t.path / "wrappers" / "cl.exe", platform::Os::Windows);
    REQUIRE(id);
    CHECK(describe(*id) == "MSVC 19.44 (Visual Studio 2022)");
    HostCompilerQuery q;
    q.os = platform::Os::Windows;
    q.env["PATH"] = (t.path / "wrappers").u8string();
    auto l = cuda118();
    auto s = host_compiler_status(q, &l);
    CHECK(s.nvcc_default.origin == "PATH");
    CHECK(s.verdict == Verdict::TooNew);
    CHECK(s.problem.find("MSVC 19.44 (Visual Studio 2022) (" + (t.path / "wrappers" / "cl.exe").u8string() +
                         ", PATH) is newer than CUDA 11.8 supports") != std::string::npos);
}
#endif
