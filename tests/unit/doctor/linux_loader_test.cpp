#include "doctor/linux_loader.h"

#include "binary/binary_test_support.h"

#include <catch2/catch.hpp>

using namespace cvm::doctor;
using namespace cvm::binary;
using namespace cvm::binary::test;

namespace {

const std::string lib_name = "libcudnn.so.8";

// A folder tree with a real libcudnn.so.8 in each of several folders.
struct Fixture {
    TempDir t;
    std::string cc;
    std::string rpath_dir, llp_dir, runpath_dir, cache_dir, default_dir;

    explicit Fixture(std::string compiler) : cc(std::move(compiler)) {
        rpath_dir = t.mkdir("rpath").string();
        llp_dir = t.mkdir("llp").string();
        runpath_dir = t.mkdir("runpath").string();
        cache_dir = t.mkdir("cached").string();
        default_dir = t.mkdir("usr/lib").string();
        // One real library, copied: the compiler is the slow part.
        const std::string proto = library(t.str("proto/") + lib_name, "-Wl,-soname," + lib_name);
        for (const auto& d : {rpath_dir, llp_dir, runpath_dir, cache_dir, default_dir})
            fs::copy_file(proto, d + "/" + lib_name);
    }

    std::string library(const std::string& path, const std::string& flags) {
        auto r = build_shared_object(cc, path, flags);
        INFO(r.output);
        REQUIRE(r.ok());
        return path;
    }

    // A requester built by the compiler, so its DT_RPATH / DT_RUNPATH come from the real linker.
    LinuxRequester requester(const std::string& path, const std::string& flags) {
        library(path, flags);
        auto elf = read_elf_file(path);
        REQUIRE(elf);
        return linux_requester(path, *elf.info);
    }

    LinuxSearchConfig config() const {
        LinuxSearchConfig c;
        c.abi = host_abi();
        c.default_dirs = {default_dir};
        c.current_dir = t.str();
        return c;
    }
};

std::vector<std::string> paths_with(const LinuxSearchResult& r, CandidateStatus s) {
    std::vector<std::string> out;
    for (const auto& c : r.candidates)
        if (c.status == s) out.push_back(c.path);
    return out;
}

} // namespace

TEST_CASE("Linux loader: DT_RPATH comes before LD_LIBRARY_PATH, which comes before the default "
          "folders",
          "[doctor][loader]") {
    auto cc = c_compiler();
    if (!cc) {
        WARN("no C compiler: skipping");
        return;
    }
    Fixture f(*cc);
    auto app =
        f.requester(f.t.str("app/libapp.so"), "-Wl,--disable-new-dtags -Wl,-rpath," + f.rpath_dir);
    REQUIRE(app.rpath);
    REQUIRE_FALSE(app.runpath);
    RealFileSystem fs;
    auto config = f.config();
    config.requesters = {app};
    config.ld_library_path = f.llp_dir;

    auto r = search_linux_library(lib_name, config, fs);
    REQUIRE(r.selected());
    CHECK(r.selected()->path == f.rpath_dir + "/" + lib_name);
    CHECK(r.selected()->mechanism == LinuxMechanism::rpath);
    CHECK(r.selected()->origin == "DT_RPATH of " + app.path);
    REQUIRE(r.shadowed().size() == 2);
    CHECK(r.shadowed()[0]->path == f.llp_dir + "/" + lib_name);
    CHECK(r.shadowed()[0]->mechanism == LinuxMechanism::ld_library_path);
    CHECK(r.shadowed()[1]->mechanism == LinuxMechanism::default_dir);

    SECTION("without the RPATH, LD_LIBRARY_PATH wins") {
        config.requesters.clear();
        auto r2 = search_linux_library(lib_name, config, fs);
        REQUIRE(r2.selected());
        CHECK(r2.selected()->mechanism == LinuxMechanism::ld_library_path);
    }
    SECTION("a set-user-ID program ignores LD_LIBRARY_PATH") {
        config.requesters.clear();
        config.secure = true;
        auto r2 = search_linux_library(lib_name, config, fs);
        REQUIRE(r2.selected());
        CHECK(r2.selected()->mechanism == LinuxMechanism::default_dir);
    }
}

TEST_CASE("Linux loader: DT_RUNPATH comes after LD_LIBRARY_PATH and disables DT_RPATH",
          "[doctor][loader]") {
    auto cc = c_compiler();
    if (!cc) {
        WARN("no C compiler: skipping");
        return;
    }
    Fixture f(*cc);
    auto app = f.requester(f.t.str("app/libapp.so"),
                           "-Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN/../runpath'");
    REQUIRE(app.runpath);
    RealFileSystem fs;
    auto config = f.config();
    config.requesters = {app};

    SECTION("RUNPATH with $ORIGIN beats the default folders") {
        auto r = search_linux_library(lib_name, config, fs);
        REQUIRE(r.selected());
        CHECK(r.selected()->mechanism == LinuxMechanism::runpath);
        // ld.so keeps the path as the entry spells it ("..": no normalisation).
        CHECK(r.selected()->path == f.t.str("app/../runpath") + "/" + lib_name);
        CHECK(r.selected()->real_path ==
              std::optional<std::string>(f.t.str("runpath/") + lib_name));
        CHECK(paths_with(r, CandidateStatus::shadowed) ==
              std::vector<std::string>{f.default_dir + "/" + lib_name});
    }
    SECTION("LD_LIBRARY_PATH beats RUNPATH") {
        config.ld_library_path = f.llp_dir;
        auto r = search_linux_library(lib_name, config, fs);
        REQUIRE(r.selected());
        CHECK(r.selected()->mechanism == LinuxMechanism::ld_library_path);
        CHECK(r.shadowed().size() == 2);
    }
    SECTION("an RPATH elsewhere in the chain is ignored when the requester has RUNPATH") {
        LinuxRequester main_program;
        main_program.path = f.t.str("bin/app");
        main_program.rpath = f.rpath_dir;
        config.requesters.push_back(main_program);
        auto r = search_linux_library(lib_name, config, fs);
        REQUIRE(r.selected());
        CHECK(r.selected()->mechanism == LinuxMechanism::runpath);
        for (const auto& c : r.candidates)
            CHECK(c.mechanism != LinuxMechanism::rpath);
    }
}

TEST_CASE("Linux loader: RUNPATH reaches direct dependencies only; RPATH is inherited",
          "[doctor][loader]") {
    auto cc = c_compiler();
    if (!cc) {
        WARN("no C compiler: skipping");
        return;
    }
    Fixture f(*cc);
    RealFileSystem fs;
    // libframework.so (no search path of its own) asks for libcudnn.so.8; the main program that
    // loaded it carries the search path.
    auto framework = f.requester(f.t.str("fw/libframework.so"), "");
    auto config = f.config();

    SECTION("the main program's RUNPATH does not apply to its dependency's dependencies") {
        auto main_program = f.requester(f.t.str("bin/libmain.so"),
                                        "-Wl,--enable-new-dtags -Wl,-rpath," + f.runpath_dir);
        config.requesters = {framework, main_program};
        auto r = search_linux_library(lib_name, config, fs);
        REQUIRE(r.selected());
        CHECK(r.selected()->mechanism == LinuxMechanism::default_dir);
        for (const auto& c : r.candidates)
            CHECK(c.mechanism != LinuxMechanism::runpath);
    }
    SECTION("the main program's RPATH applies down the chain") {
        auto main_program = f.requester(f.t.str("bin/libmain.so"),
                                        "-Wl,--disable-new-dtags -Wl,-rpath," + f.rpath_dir);
        config.requesters = {framework, main_program};
        auto r = search_linux_library(lib_name, config, fs);
        REQUIRE(r.selected());
        CHECK(r.selected()->mechanism == LinuxMechanism::rpath);
        CHECK(r.selected()->origin == "DT_RPATH of " + main_program.path);
    }
}

TEST_CASE("Linux loader: ld.so.cache uses its first entry only", "[doctor][loader]") {
    auto cc = c_compiler();
    auto ldconfig = find_ldconfig();
    if (!cc || !ldconfig) {
        WARN("no C compiler or ldconfig: skipping");
        return;
    }
    Fixture f(*cc);
    const std::string second = f.t.mkdir("cached2").string();
    fs::copy_file(f.t.str("proto/") + lib_name, second + "/" + lib_name);
    write_file(f.t.str("ld.so.conf"), f.cache_dir + "\n" + second + "\n");
    auto r = run_command(shell_quote(*ldconfig) + " -X -C " + shell_quote(f.t.str("cache")) +
                             " -f " + shell_quote(f.t.str("ld.so.conf")),
                         f.t.str());
    INFO(r.output);
    REQUIRE(r.ok());
    auto cache = read_ld_cache_file(f.t.str("cache"));
    REQUIRE(cache);
    RealFileSystem fs;
    auto config = f.config();
    config.cache = &*cache.cache;
    config.cache_path = f.t.str("cache");

    auto result = search_linux_library(lib_name, config, fs);
    REQUIRE(result.selected());
    CHECK(result.selected()->path == f.cache_dir + "/" + lib_name);
    CHECK(result.selected()->mechanism == LinuxMechanism::ld_cache);
    CHECK(paths_with(result, CandidateStatus::ignored) ==
          std::vector<std::string>{second + "/" + lib_name});
    CHECK(paths_with(result, CandidateStatus::shadowed) ==
          std::vector<std::string>{f.default_dir + "/" + lib_name});

    SECTION("a cache entry whose file is gone falls through to the default folders") {
        fs::remove(f.cache_dir + "/" + lib_name);
        auto r2 = search_linux_library(lib_name, config, fs);
        REQUIRE(r2.selected());
        CHECK(r2.selected()->mechanism == LinuxMechanism::default_dir);
        // The second cache entry is not tried even though its file exists.
        CHECK(paths_with(r2, CandidateStatus::ignored).size() == 1);
    }
    SECTION("DF_1_NODEFLIB in the requester skips the cache and the default folders") {
        auto app = f.requester(f.t.str("app/libnodeflib.so"), "-Wl,-z,nodefaultlib");
        REQUIRE(app.nodeflib);
        config.requesters = {app};
        auto r2 = search_linux_library(lib_name, config, fs);
        CHECK_FALSE(r2.selected());
        CHECK(r2.candidates.empty());
    }
}

TEST_CASE("Linux loader: files ld.so skips or stops at", "[doctor][loader]") {
    auto cc = c_compiler();
    if (!cc) {
        WARN("no C compiler: skipping");
        return;
    }
    Fixture f(*cc);
    RealFileSystem fs;
    auto config = f.config();
    const std::string odd = f.t.mkdir("odd").string();
    config.ld_library_path = odd + ":" + f.llp_dir;

    SECTION("a library of another class is skipped") {
        auto clang = find_program("clang");
        auto lld = find_program("ld.lld");
        if (!clang || !lld) {
            WARN("clang / ld.lld missing: skipping the 32-bit library");
            return;
        }
        auto r = build_shared_object(*clang, odd + "/" + lib_name,
                                     "--target=i386-linux-gnu -nostdlib -fuse-ld=lld");
        INFO(r.output);
        REQUIRE(r.ok());
        auto result = search_linux_library(lib_name, config, fs);
        REQUIRE(result.candidates.size() >= 2);
        CHECK(result.candidates[0].status == CandidateStatus::incompatible);
        CHECK(result.candidates[0].detail.find("32-bit") != std::string::npos);
        REQUIRE(result.selected());
        CHECK(result.selected()->path == f.llp_dir + "/" + lib_name);
    }
    SECTION("a file that is not ELF stops the search with an error") {
        write_file(odd + "/" + lib_name, "/* GNU ld script */\nGROUP ( libcudnn.so.8.1.0 )\n");
        auto result = search_linux_library(lib_name, config, fs);
        CHECK_FALSE(result.selected());
        REQUIRE(result.failed_at);
        CHECK(result.candidates[*result.failed_at].status == CandidateStatus::unreadable);
        CHECK(result.shadowed().size() == 2); // LD_LIBRARY_PATH's good copy and the default one
    }
    SECTION("an empty LD_LIBRARY_PATH element means the current folder") {
        config.ld_library_path = ":" + f.llp_dir;
        config.current_dir = f.default_dir;
        auto result = search_linux_library(lib_name, config, fs);
        REQUIRE(result.selected());
        CHECK(result.selected()->path == f.default_dir + "/" + lib_name);
        CHECK(result.selected()->mechanism == LinuxMechanism::ld_library_path);
    }
    SECTION("a name with a slash is opened as it is") {
        auto result = search_linux_library(f.llp_dir + "/" + lib_name, config, fs);
        REQUIRE(result.candidates.size() == 1);
        CHECK(result.selected()->mechanism == LinuxMechanism::direct_path);
    }
    SECTION("a missing library has no winner and lists where it was looked for") {
        auto result = search_linux_library("libcudnn_ops_infer.so.8", config, fs);
        CHECK_FALSE(result.selected());
        CHECK(result.candidates.size() == 3);
        for (const auto& c : result.candidates)
            CHECK(c.status == CandidateStatus::not_found);
    }
}

TEST_CASE("Linux loader: agrees with the real ld.so", "[doctor][loader][real]") {
    auto cc = c_compiler();
    if (!cc) {
        WARN("no C compiler: skipping");
        return;
    }
    TempDir t;
    // A program that dlopens a name and prints the path ld.so chose.
    const std::string src = t.str("which.c");
    write_file(src,
               "#define _GNU_SOURCE\n#include <dlfcn.h>\n#include <link.h>\n#include <stdio.h>\n"
               "int main(int argc, char** argv) {\n"
               "  void* h = dlopen(argv[1], RTLD_NOW);\n"
               "  if (!h) { printf(\"ERROR %s\\n\", dlerror()); return 1; }\n"
               "  struct link_map* m = 0; dlinfo(h, RTLD_DI_LINKMAP, &m);\n"
               "  printf(\"%s\\n\", m->l_name); return 0; }\n");
    const std::string name = "libcvmdoctorprobe.so.3";
    const std::string a = t.mkdir("a").string(), b = t.mkdir("b").string(),
                      c = t.mkdir("c").string();
    for (const auto& d : {a, b, c}) {
        auto r = build_shared_object(*cc, d + "/" + name, "-Wl,-soname," + name);
        REQUIRE(r.ok());
    }
    auto ldcache = read_ld_cache_file("/etc/ld.so.cache");
    RealFileSystem fs;

    struct Case {
        const char* label;
        std::string link_flags;
        std::string ld_library_path;
    };
    const Case cases[] = {
        {"RPATH beats LD_LIBRARY_PATH", "-Wl,--disable-new-dtags -Wl,-rpath," + a, b},
        {"LD_LIBRARY_PATH beats RUNPATH", "-Wl,--enable-new-dtags -Wl,-rpath," + a, b},
        {"RUNPATH with $ORIGIN", "-Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN/c'", ""},
        {"LD_LIBRARY_PATH order", "", c + ":" + b},
    };
    int index = 0;
    for (const auto& k : cases) {
        DYNAMIC_SECTION(k.label) {
            const std::string exe = t.str("which" + std::to_string(index++));
            auto built = run_command(shell_quote(*cc) + " -o " + shell_quote(exe) + " " +
                                         shell_quote(src) + " " + k.link_flags + " -ldl",
                                     t.str());
            INFO(built.output);
            REQUIRE(built.ok());
            // ld.so's choice.
            const std::string env =
                k.ld_library_path.empty()
                    ? "env -u LD_LIBRARY_PATH "
                    : "env LD_LIBRARY_PATH=" + shell_quote(k.ld_library_path) + " ";
            auto ran = run_command(env + shell_quote(exe) + " " + name, t.str());
            INFO(ran.output);
            REQUIRE(ran.ok());
            std::string real_choice = ran.output.substr(ran.output.find('\n') + 1);
            while (!real_choice.empty() && real_choice.back() == '\n')
                real_choice.pop_back();

            // Ours: the program is the requester (dlopen from the main program).
            auto exe_elf = read_elf_file(exe);
            REQUIRE(exe_elf);
            LinuxSearchConfig config;
            config.requesters = {linux_requester(exe, *exe_elf.info)};
            if (!k.ld_library_path.empty()) config.ld_library_path = k.ld_library_path;
            if (ldcache) config.cache = &*ldcache.cache;
            config.abi = *exe_elf.info;
            config.default_dirs = default_linux_library_dirs(*exe_elf.info, fs);
            auto ours = search_linux_library(name, config, fs);
            REQUIRE(ours.selected());
            CHECK(ours.selected()->path == real_choice);
        }
    }
}

TEST_CASE("Linux loader: dynamic string tokens", "[doctor][loader]") {
    CHECK(expand_dynamic_string_tokens("$ORIGIN/../lib", "/opt/app/bin", "lib64", "x86_64") ==
          std::optional<std::string>("/opt/app/bin/../lib"));
    CHECK(expand_dynamic_string_tokens("${ORIGIN}/x:$LIB/$PLATFORM", "/o", "lib64", "x86_64") ==
          std::optional<std::string>("/o/x:lib64/x86_64"));
    CHECK(expand_dynamic_string_tokens("$ORIGINAL/x", "/o", "l", "p") ==
          std::optional<std::string>("$ORIGINAL/x"));
    CHECK(expand_dynamic_string_tokens("/cost$5", "/o", "l", "p") ==
          std::optional<std::string>("/cost$5"));
    CHECK_FALSE(expand_dynamic_string_tokens("$ORIGIN/x", "", "l", "p"));
    CHECK(expand_dynamic_string_tokens("${ORIGIN", "/o", "l", "p") ==
          std::optional<std::string>("${ORIGIN"));
}

TEST_CASE("Linux loader: default folders follow the distribution's layout", "[doctor][loader]") {
    RealFileSystem fs;
    ElfInfo x64;
    x64.bits = 64;
    x64.machine = elf::em_x86_64;
    auto dirs = default_linux_library_dirs(x64, fs);
    REQUIRE_FALSE(dirs.empty());
    if (fs::is_directory("/lib/x86_64-linux-gnu") || fs::is_directory("/usr/lib/x86_64-linux-gnu"))
        CHECK(dirs.front() == "/lib/x86_64-linux-gnu");
    else
        CHECK(dirs.front() == "/lib64");
    CHECK(multiarch_triplet(x64) == "x86_64-linux-gnu");
}
