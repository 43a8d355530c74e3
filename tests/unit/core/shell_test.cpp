// The shell renderers: names, detection, quoting (checked by running the real shells where they
// are installed), activation code, scripts, init. The cmd scripts run under wine in the hidden
// [wine] test, which tests/integration/shell_cmd_wine.sh starts.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <sstream>

#include "shells/shell.h"
#include "platform/platform.h"
#include "test_support.h"

using namespace cvm;
using cvm::test::read_file;
using cvm::test::TempDir;
using platform::Os;

namespace {

fs::path program_on_path(const std::string& name) {
    auto path = platform::get_env("PATH");
    return path ? platform::find_executable(name, *path) : fs::path();
}

// Runs `script` in a real shell; returns stdout (nullopt when the shell is not installed).
std::optional<std::string> run_in(const std::string& shell, const std::string& script,
                                  const fs::path& dir) {
    fs::path program = program_on_path(shell);
    if (program.empty()) return std::nullopt;
    fs::path file = dir / ("script." + shell);
    cvm::test::write_file(file, script);
    std::vector<std::string> args{program.u8string()};
    if (shell == "fish") args.push_back("--no-config");
    if (shell == "zsh") args.push_back("-f");
    if (shell == "bash") args.push_back("--norc");
    args.push_back(file.u8string());
    return platform::capture_output(program, args);
}

const std::vector<std::string> kHostile = {
    "plain",
    "",
    "with space",
    "it's",
    "\"double\"",
    "back\\slash\\",
    "trailing\\'",
    "$HOME ${HOME} $(echo no) `echo no`",
    "%PATH% ^&|<>() !bang! ;",
    "new\nline",
    "tab\there",
    "\xc3\xbcn\xc3\xaf \xe2\x82\xac \xf0\x9f\x98\x80", // ünï € 😀
    "-n",
    "*?[a]~ {a,b}",
    "\xe2\x80\x98"
    "curly\xe2\x80\x99", // ‘curly’
};

std::vector<EnvChange> sample_changes() {
    return {{"CUDA_PATH", std::string("/opt/my cuda/it's $x")},
            {"CUDA_HOME", std::string("/opt/my cuda/it's $x")},
            {"CUDA_PATH_V11_2", std::string("/opt/my cuda/it's $x")},
            {"CUDNN_PATH", std::nullopt},
            {"PATH", std::string("/opt/my cuda/bin:/usr/bin")},
            {"CVM_ACTIVE", std::string("11.2.2")}};
}

} // namespace

TEST_CASE("shell names", "[shell]") {
    CHECK(parse_shell("bash") == Shell::Bash);
    CHECK(parse_shell("ZSH") == Shell::Zsh);
    CHECK(parse_shell("/usr/bin/fish") == Shell::Fish);
    CHECK(parse_shell("pwsh") == Shell::Pwsh);
    CHECK(parse_shell("powershell.exe") == Shell::Pwsh);
    CHECK(parse_shell("C:\\Windows\\System32\\cmd.exe") == Shell::Cmd);
    CHECK_FALSE(parse_shell("sh"));
    CHECK_FALSE(parse_shell("tcsh"));
    CHECK_FALSE(parse_shell(""));
    for (Shell s : {Shell::Bash, Shell::Zsh, Shell::Fish, Shell::Pwsh, Shell::Cmd})
        CHECK(parse_shell(shell_name(s)) == s);
}

TEST_CASE("the shell is detected from the environment", "[shell]") {
    std::map<std::string, std::string> env;
    EnvLookup lookup = [&](const std::string& n) -> std::optional<std::string> {
        auto it = env.find(n);
        if (it == env.end()) return std::nullopt;
        return it->second;
    };
    CHECK(detect_shell(lookup, Os::Linux) == Shell::Bash);
    env["SHELL"] = "/usr/bin/zsh";
    CHECK(detect_shell(lookup, Os::Linux) == Shell::Zsh);
    env["SHELL"] = "/usr/local/bin/fish";
    CHECK(detect_shell(lookup, Os::Linux) == Shell::Fish);
    env["SHELL"] = "/bin/sh";
    CHECK(detect_shell(lookup, Os::Linux) == Shell::Bash);
    env.clear();
    CHECK(detect_shell(lookup, Os::Windows) == Shell::Cmd);
    env["ComSpec"] = "C:\\Windows\\system32\\cmd.exe";
    env["PSModulePath"] = "C:\\Program Files\\WindowsPowerShell\\Modules;C:\\Windows\\system32\\"
                          "WindowsPowerShell\\v1.0\\Modules";
    CHECK(detect_shell(lookup, Os::Windows) == Shell::Cmd);
    env["PSModulePath"] = "C:\\Users\\u\\Documents\\PowerShell\\Modules;" + env["PSModulePath"];
    CHECK(detect_shell(lookup, Os::Windows) == Shell::Pwsh);
}

TEST_CASE("variable names", "[shell]") {
    CHECK(is_variable_name("CUDA_PATH_V11_2"));
    CHECK(is_variable_name("_x"));
    CHECK_FALSE(is_variable_name("1A"));
    CHECK_FALSE(is_variable_name("A-B"));
    CHECK_FALSE(is_variable_name(""));
    CHECK_FALSE(is_variable_name("A B"));
    CHECK_THROWS_AS(render_env(Shell::Bash, {{"BAD NAME", std::string("x")}}), ShellError);
    CHECK_THROWS_AS(render_env(Shell::Fish, {{"$(x)", std::string("x")}}), ShellError);
}

TEST_CASE("quoting spells values exactly", "[shell]") {
    CHECK(shell_quote(Shell::Bash, "it's") == "'it'\\''s'");
    CHECK(shell_quote(Shell::Zsh, "$HOME") == "'$HOME'");
    CHECK(shell_quote(Shell::Fish, "a\\b'c") == "'a\\\\b\\'c'");
    CHECK(shell_quote(Shell::Pwsh, "it's") == "'it''s'");
    CHECK(shell_quote(Shell::Pwsh, "\xc3\xbc") == "(''+[char]0x00FC+'')");
    CHECK(shell_quote(Shell::Pwsh, "a\xf0\x9f\x98\x80z") == "('a'+[char]0xD83D+[char]0xDE00+'z')");
    CHECK(shell_quote(Shell::Cmd, "%PATH% ^&|<>()\"!") == "%%PATH%% ^^^&^|^<^>^(^)^\"!");
    CHECK_THROWS_AS(shell_quote(Shell::Cmd, "a\nb"), ShellError);
    CHECK_THROWS_AS(shell_quote(Shell::Cmd, "a\rb"), ShellError);
    CHECK_THROWS_AS(shell_quote(Shell::Pwsh, "bad \xff utf-8"), ShellError);
    for (Shell s : {Shell::Bash, Shell::Zsh, Shell::Fish, Shell::Pwsh, Shell::Cmd})
        CHECK_THROWS_AS(shell_quote(s, std::string("nul\0here", 8)), ShellError);
}

TEST_CASE("quoted values survive the real bash, zsh and fish", "[shell]") {
    TempDir tmp("shell-quote");
    // The output folder itself has a hostile name, quoted the same way.
    fs::path out = tmp.path / "out 'q' \"d\" $x %P% ^&! \xc3\xbc";
    for (const std::string shell : {"bash", "zsh", "fish"}) {
        Shell s = *parse_shell(shell);
        fs::remove_all(out);
        fs::create_directories(out);
        std::string script;
        for (size_t i = 0; i < kHostile.size(); ++i)
            script += "printf '%s' " + shell_quote(s, kHostile[i]) + " > " +
                      shell_quote(s, (out / std::to_string(i)).u8string()) + "\n";
        auto result = run_in(shell, script, tmp.path);
        if (!result) {
            WARN(shell << " is not installed; its quoting is not checked here");
            continue;
        }
        for (size_t i = 0; i < kHostile.size(); ++i) {
            INFO(shell << " value " << i);
            CHECK(read_file(out / std::to_string(i)) == kHostile[i]);
        }
    }
}

TEST_CASE("env code saves once, sets and unsets", "[shell]") {
    auto changes = sample_changes();
    std::string bash = render_env(Shell::Bash, changes);
    CHECK(bash.find("cvm_deactivate() {") != std::string::npos);
    CHECK(bash.find("cvm_deactivate nondestructive\n") != std::string::npos);
    CHECK(bash.find("export _CVM_SAVED='CUDA_PATH CUDA_HOME CUDA_PATH_V11_2 CUDNN_PATH PATH "
                    "CVM_ACTIVE'\n") != std::string::npos);
    CHECK(bash.find("export CUDA_PATH='/opt/my cuda/it'\\''s $x'\n") != std::string::npos);
    CHECK(bash.find("unset CUDNN_PATH\n") != std::string::npos);
    CHECK(render_env(Shell::Zsh, changes) == bash);

    std::string fish = render_env(Shell::Fish, changes);
    CHECK(fish.find("set -gx CUDA_PATH '/opt/my cuda/it\\'s $x'\n") != std::string::npos);
    CHECK(fish.find("set -e CUDNN_PATH\n") != std::string::npos);
    CHECK(fish.find("set -q PATH; and set -gx _CVM_OLD_PATH $PATH\n") != std::string::npos);

    std::string pwsh = render_env(Shell::Pwsh, changes);
    CHECK(pwsh.find("function global:cvm_deactivate") != std::string::npos);
    CHECK(pwsh.find("$env:CUDA_PATH = '/opt/my cuda/it''s $x'\n") != std::string::npos);
    CHECK(pwsh.find("$env:CUDNN_PATH = $null\n") != std::string::npos);

    std::string cmd = render_env(Shell::Cmd, changes);
    CHECK(cmd.find("set CUDA_PATH=/opt/my cuda/it's $x\r\n") != std::string::npos);
    CHECK(cmd.find("set CUDNN_PATH=\r\n") != std::string::npos);
    CHECK(cmd.find("call :cvm_save PATH\r\n") != std::string::npos);
    CHECK(cmd.find("chcp 65001 >nul\r\n") != std::string::npos);
    // Every line of a batch file ends in CRLF (cmd misreads labels in LF-only files).
    for (size_t i = 0; i < cmd.size(); ++i)
        if (cmd[i] == '\n') REQUIRE((i > 0 && cmd[i - 1] == '\r'));

    CHECK_THROWS_AS(render_env(Shell::Cmd, {{"X", std::string("two\nlines")}}), ShellError);
    CHECK_NOTHROW(render_env(Shell::Bash, {{"X", std::string("two\nlines")}}));
}

TEST_CASE("activation and deactivation in a real bash", "[shell]") {
    TempDir tmp("shell-env");
    auto changes = sample_changes();
    std::string script = "export PATH='/usr/bin:/bin'\n"
                         "export CUDNN_PATH='old cudnn'\n"
                         "unset CUDA_PATH CUDA_HOME CVM_ACTIVE\n"
                         "before=$(env | sort)\n" +
                         render_env(Shell::Bash, changes) + render_env(Shell::Bash, changes) +
                         "printf '%s|%s|%s|%s|%s\\n' \"$CUDA_PATH\" \"$PATH\" "
                         "\"${CUDNN_PATH-unset}\" \"$CVM_ACTIVE\" \"$_CVM_OLD_PATH\"\n" +
                         "cvm_deactivate\n"
                         "after=$(env | sort)\n"
                         "[ \"$before\" = \"$after\" ] && echo restored\n"
                         "type cvm_deactivate >/dev/null 2>&1 || echo gone\n" +
                         render_deactivate(Shell::Bash) + "echo again-ok\n";
    auto out = run_in("bash", script, tmp.path);
    if (!out) {
        WARN("bash is not installed");
        return;
    }
    CHECK(*out == "/opt/my cuda/it's $x|/opt/my cuda/bin:/usr/bin|unset|11.2.2|/usr/bin:/bin\n"
                  "restored\ngone\nagain-ok\n");
}

TEST_CASE("script file names", "[shell]") {
    Version v1122{{11, 2, 2}}, v124{{12, 4}}, v100{{10, 0, 130}};
    CHECK(script_file_name(Shell::Cmd, v1122) == "activate_cuda112.bat");
    CHECK(script_file_name(Shell::Pwsh, v1122) == "activate_cuda112.ps1");
    CHECK(script_file_name(Shell::Cmd, v124) == "activate_cuda124.bat");
    CHECK(script_file_name(Shell::Cmd, v100) == "activate_cuda100.bat");
    CHECK(script_file_name(Shell::Bash, v1122) == "activate_cuda112.sh");
    CHECK(script_file_name(Shell::Fish, v1122) == "activate_cuda112.fish");
}

TEST_CASE("scripts filter PATH at run time", "[shell]") {
    ActivationScript s;
    s.active = "11.2.2";
    s.file_name = "activate_cuda112.bat";
    s.changes = sample_changes();
    s.bin_dirs = {"C:\\CUDA %x%\\v11.2\\bin\\"};
    s.store_layers = {"C:\\Users\\\xc3\xbc\\cvm"};
    s.shims_dir = "C:\\Users\\\xc3\xbc\\cvm\\shims";
    s.os = Os::Windows;
    std::string bat = render_script(Shell::Cmd, s);
    CHECK(bat.rfind("@echo off\r\n", 0) == 0);
    CHECK(bat.find("if /i \"%~1\"==\"deactivate\"") != std::string::npos);
    CHECK(bat.find("set _CVM_B0=C:\\CUDA %%x%%\\v11.2\\bin\r\n") != std::string::npos);
    // The layer prefix length counts UTF-16 units: "C:\Users\ü\cvm" is 14, plus the backslash.
    CHECK(bat.find("%_cvm_n:~0,15%") != std::string::npos);
    CHECK(bat.find("\\NVIDIA GPU Computing Toolkit\\CUDA\\") != std::string::npos);
    CHECK(bat.find("set PATH=") == std::string::npos); // PATH is computed when it runs
    s.file_name = "bad&name.bat";
    CHECK_THROWS_AS(render_script(Shell::Cmd, s), ShellError);

    s.os = Os::Windows;
    s.file_name = "activate_cuda112.ps1";
    std::string ps = render_script(Shell::Pwsh, s);
    CHECK(ps.find("param([string]$Action)") != std::string::npos);
    CHECK(ps.find("'nvcc.exe'") != std::string::npos);
    CHECK(std::all_of(ps.begin(), ps.end(),
                      [](char c) { return static_cast<unsigned char>(c) < 0x80; }));

    s.os = Os::Linux;
    s.bin_dirs = {"/opt/cuda-11.2/bin/"};
    s.lib_dirs = {"/opt/cuda-11.2/lib64"};
    s.store_layers = {"/home/u/.local/share/cvm"};
    s.shims_dir = "/home/u/.local/share/cvm/shims";
    s.changes.push_back({"LD_LIBRARY_PATH", std::string("ignored")});
    std::string sh = render_script(Shell::Bash, s);
    CHECK(sh.find("'/opt/cuda-11.2/bin'|'/opt/cuda-11.2/lib64') return 1 ;;") != std::string::npos);
    CHECK(sh.find("'/home/u/.local/share/cvm/shims') return 0 ;;") != std::string::npos);
    CHECK(sh.find("_cvm_filter \"${LD_LIBRARY_PATH}\" 1") != std::string::npos);
    CHECK(sh.find("ignored") == std::string::npos);
}

TEST_CASE("a bash script removes other toolkits at run time", "[shell]") {
    TempDir tmp("shell-script");
    fs::path base = tmp.path / "d 'q' $x \xc3\xbc";
    fs::path mine = base / "cuda-11.2", other = base / "elsewhere" / "toolkit",
             keep = base / "keep";
    cvm::test::write_file(mine / "bin" / "nvcc", "");
    cvm::test::write_file(other / "bin" / "nvcc", "");
    cvm::test::write_file(other / "lib64" / "libcudart.so", "");
    fs::create_directories(keep);
    fs::path store = base / "store";
    ActivationScript s;
    s.active = "11.2.2";
    s.changes = sample_changes();
    s.changes.push_back({"LD_LIBRARY_PATH", std::string()});
    s.bin_dirs = {(mine / "bin").u8string()};
    s.lib_dirs = {(mine / "lib64").u8string()};
    s.store_layers = {store.u8string()};
    s.shims_dir = (store / "shims").u8string();
    s.os = Os::Linux;
    std::string path =
        (store / "shims").u8string() + ":" + (other / "bin").u8string() +
        "/:" + (store / "views" / "x" / "bin").u8string() + ":" + keep.u8string() +
        ":/opt/cuda-9.0/bin:/usr/lib/x86_64-linux-gnu:/usr/bin:" + (mine / "bin").u8string() +
        "::/bin";
    std::string ld =
        (other / "lib64").u8string() + ":/usr/local/cuda/lib64:/usr/lib/x86_64-linux-gnu";
    std::string script = "export PATH=" + shell_quote(Shell::Bash, path) + "\n" +
                         "export LD_LIBRARY_PATH=" + shell_quote(Shell::Bash, ld) + "\n" +
                         render_script(Shell::Bash, s) +
                         "printf '%s\\n%s\\n' \"$PATH\" \"$LD_LIBRARY_PATH\"\n" +
                         "cvm_deactivate\nprintf '%s\\n%s\\n' \"$PATH\" \"$LD_LIBRARY_PATH\"\n";
    std::string expected = (mine / "bin").u8string() + ":" + (store / "shims").u8string() + ":" +
                           keep.u8string() + ":/usr/lib/x86_64-linux-gnu:/usr/bin:/bin\n" +
                           (mine / "lib64").u8string() + ":/usr/lib/x86_64-linux-gnu\n" + path +
                           "\n" + ld + "\n";
    for (const std::string shell : {"bash", "zsh"}) {
        auto out = run_in(shell, script, tmp.path);
        if (!out) {
            WARN(shell << " is not installed");
            continue;
        }
        INFO(shell);
        CHECK(*out == expected);
    }
    std::string fish = "set -gx PATH " + shell_quote(Shell::Fish, path) + "\n" +
                       "set -gx LD_LIBRARY_PATH " + shell_quote(Shell::Fish, ld) + "\n" +
                       render_script(Shell::Fish, s) +
                       "printf '%s\\n%s\\n' \"$PATH\" \"$LD_LIBRARY_PATH\"\n"
                       "cvm_deactivate\nprintf '%s\\n%s\\n' \"$PATH\" \"$LD_LIBRARY_PATH\"\n";
    if (auto out = run_in("fish", fish, tmp.path)) {
        // fish turns the empty PATH entry into "." as soon as PATH is set.
        std::string fish_path = path;
        fish_path.replace(fish_path.find("::"), 2, ":.:");
        std::string fish_expected =
            (mine / "bin").u8string() + ":" + (store / "shims").u8string() + ":" + keep.u8string() +
            ":/usr/lib/x86_64-linux-gnu:/usr/bin:.:/bin\n" + (mine / "lib64").u8string() +
            ":/usr/lib/x86_64-linux-gnu\n" + fish_path + "\n" + ld + "\n";
        CHECK(*out == fish_expected);
    }
}

TEST_CASE("init puts the shims first once", "[shell]") {
    TempDir tmp("shell-init");
    std::string shims = "/tmp/it's $x/sh ims";
    std::string init = render_init(Shell::Bash, shims, Os::Linux);
    CHECK_THROWS_AS(render_init(Shell::Cmd, shims, Os::Windows), ShellError);
    std::string script = "export PATH='/usr/bin:/tmp/it'\\''s $x/sh ims:/bin'\n" + init + init +
                         "printf '%s\\n' \"$PATH\"\n";
    for (const std::string shell : {"bash", "zsh"}) {
        auto out = run_in(shell, script, tmp.path);
        if (!out) continue;
        INFO(shell);
        CHECK(*out == shims + ":/usr/bin:/bin\n");
    }
    std::string fish = "set -gx PATH /usr/bin '/tmp/it\\'s $x/sh ims' /bin\n" +
                       render_init(Shell::Fish, shims, Os::Linux) +
                       render_init(Shell::Fish, shims, Os::Linux) + "printf '%s\\n' \"$PATH\"\n";
    if (auto out = run_in("fish", fish, tmp.path)) CHECK(*out == shims + ":/usr/bin:/bin\n");
}

namespace {

std::string wine_path(const fs::path& p) {
    std::string s = "Z:" + p.u8string();
    std::replace(s.begin(), s.end(), '/', '\\');
    return s;
}

// `set > file` output: NAME=VALUE lines.
std::map<std::string, std::string> read_set_dump(const fs::path& file) {
    std::map<std::string, std::string> vars;
    std::istringstream in(read_file(file));
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        size_t eq = line.find('=', 1);
        if (eq == std::string::npos) continue;
        vars[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return vars;
}

} // namespace

// Hidden: needs wine (tests/integration/shell_cmd_wine.sh runs it when wine is installed).
TEST_CASE("cmd activation scripts run in wine's cmd", "[.wine]") {
    fs::path wine = program_on_path("wine");
    if (wine.empty()) wine = program_on_path("wine64");
    REQUIRE_FALSE(wine.empty());
    TempDir tmp("shell-wine");
    // wine's cmd (8.0) expands %...% again inside expanded values and reads batch files in the
    // console's code page whatever chcp says, so the folder names here keep to what it handles
    // like Windows does; '%' and non-ASCII letters are checked in CUDA_PATH's old value.
    fs::path base = tmp.path / "my dir 'q' ^&! `t` (x) [y]";
    fs::path tk = base / "CUDA" / "v11.2";
    fs::path other_nv = base / "NVIDIA GPU Computing Toolkit" / "CUDA" / "v10.0" / "bin";
    fs::path other_probe = base / "old" / "bin";
    fs::path cudnn_probe = base / "cudnn" / "bin";
    fs::path keep = base / "keep me";
    fs::path root = base / "root";
    cvm::test::write_file(tk / "bin" / "nvcc.exe", "");
    cvm::test::write_file(other_probe / "nvcc.exe", "");
    cvm::test::write_file(cudnn_probe / "cudnn64_8.dll", "");
    fs::create_directories(keep);
    fs::create_directories(root / "shims");
    fs::create_directories(root / "views" / "x" / "bin");

    ActivationScript s;
    s.active = "11.2.2";
    s.file_name = "activate_cuda112.bat";
    s.changes = {{"CUDA_PATH", wine_path(tk)},       {"CUDA_HOME", wine_path(tk)},
                 {"CUDA_PATH_V11_2", wine_path(tk)}, {"CUDNN_PATH", std::nullopt},
                 {"PATH", std::string("computed")},  {"CVM_ACTIVE", std::string("11.2.2")}};
    s.bin_dirs = {wine_path(tk / "bin")};
    s.store_layers = {wine_path(root)};
    s.shims_dir = wine_path(root / "shims");
    s.os = Os::Windows;
    cvm::test::write_file(tmp.path / "activate_cuda112.bat", render_script(Shell::Cmd, s));

    const std::string sys = "C:\\windows\\system32;C:\\windows";
    std::string orig_path = sys + ";" + wine_path(root / "shims") + ";" + wine_path(other_nv) +
                            ";" + wine_path(other_probe) + "\\;" +
                            wine_path(root / "views" / "x" / "bin") + ";" + wine_path(cudnn_probe) +
                            ";\"" + wine_path(keep) + "\";;" + wine_path(keep / "sub") + ";" +
                            wine_path(tk / "bin");
    std::string expected_path = wine_path(tk / "bin") + ";" + sys + ";" +
                                wine_path(root / "shims") + ";" + wine_path(keep) + ";" +
                                wine_path(keep / "sub");
    std::string orig_cuda = "orig %PATH% ^&! 'q' \"d\" (x)";
    std::string orig_cudnn = wine_path(base / "orig cudnn");
    std::string dir = wine_path(tmp.path);
    std::string driver = "@echo off\r\nchcp 65001 >nul\r\n";
    driver += "set PATH=" + shell_quote(Shell::Cmd, orig_path) + "\r\n";
    driver += "set CUDA_PATH=" + shell_quote(Shell::Cmd, orig_cuda) + "\r\n";
    driver += "set CUDNN_PATH=" + shell_quote(Shell::Cmd, orig_cudnn) + "\r\n";
    driver += "set CUDA_HOME=\r\nset CVM_ACTIVE=\r\n";
    driver += "set > \"" + dir + "\\before.txt\"\r\n";
    driver += "call \"" + dir + "\\activate_cuda112.bat\"\r\n";
    driver += "set > \"" + dir + "\\a1.txt\"\r\n";
    driver += "call \"" + dir + "\\activate_cuda112.bat\"\r\n";
    driver += "set > \"" + dir + "\\a2.txt\"\r\n";
    driver += "call \"" + dir + "\\activate_cuda112.bat\" deactivate\r\n";
    driver += "set > \"" + dir + "\\after.txt\"\r\n";
    // `cvm env --shell cmd` and `cvm deactivate --shell cmd` output, after the script.
    driver += "call \"" + dir + "\\activate_cuda112.bat\"\r\n";
    driver += "call \"" + dir + "\\env.bat\"\r\n";
    driver += "set > \"" + dir + "\\e1.txt\"\r\n";
    driver += "call \"" + dir + "\\deactivate.bat\"\r\n";
    driver += "set > \"" + dir + "\\e2.txt\"\r\n";
    std::string env_path = wine_path(tk / "bin") + ";\"C:\\quoted (x) ^&!\";" + sys;
    std::vector<EnvChange> env_changes = {{"CUDA_PATH", wine_path(tk)},
                                          {"CUDA_PATH_V11_2", wine_path(tk)},
                                          {"CUDNN_PATH", std::string("C:\\cudnn 'q' ^&!")},
                                          {"PATH", env_path},
                                          {"CVM_ACTIVE", std::string("11.2.2+9.1.0.70-cuda12")}};
    cvm::test::write_file(tmp.path / "env.bat", render_env(Shell::Cmd, env_changes));
    cvm::test::write_file(tmp.path / "deactivate.bat", render_deactivate(Shell::Cmd));
    cvm::test::write_file(tmp.path / "driver.bat", driver);
    auto out = platform::capture_output(wine, {wine.u8string(), "cmd", "/c", dir + "\\driver.bat"});
    REQUIRE(out);
    INFO("wine output: " << *out);
    if (auto copy_to = platform::get_env("CVM_TEST_KEEP"))
        fs::copy(tmp.path, fs::u8path(*copy_to),
                 fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    REQUIRE(fs::exists(tmp.path / "after.txt"));

    auto before = read_set_dump(tmp.path / "before.txt");
    auto a1 = read_set_dump(tmp.path / "a1.txt");
    auto a2 = read_set_dump(tmp.path / "a2.txt");
    auto after = read_set_dump(tmp.path / "after.txt");
    CHECK(before["PATH"] == orig_path);
    CHECK(before["CUDA_PATH"] == orig_cuda);
    CHECK(a1["CUDA_PATH"] == wine_path(tk));
    CHECK(a1["CUDA_HOME"] == wine_path(tk));
    CHECK(a1["CUDA_PATH_V11_2"] == wine_path(tk));
    CHECK(a1.count("CUDNN_PATH") == 0);
    CHECK(a1["CVM_ACTIVE"] == "11.2.2");
    CHECK(a1["PATH"] == expected_path);
    CHECK(a1["_CVM_OLD_PATH"] == orig_path);
    CHECK(a1["_CVM_OLD_CUDA_PATH"] == orig_cuda);
    CHECK(a1.count("_CVM_CP") == 0);
    CHECK(a2 == a1);
    CHECK(after == before);

    auto e1 = read_set_dump(tmp.path / "e1.txt");
    auto e2 = read_set_dump(tmp.path / "e2.txt");
    CHECK(e1["PATH"] == env_path);
    CHECK(e1["CUDNN_PATH"] == "C:\\cudnn 'q' ^&!");
    CHECK(e1["CVM_ACTIVE"] == "11.2.2+9.1.0.70-cuda12");
    CHECK(e1.count("CUDA_HOME") == 0); // the script set it; env's activation undid that first
    CHECK(e1["_CVM_OLD_PATH"] == orig_path);
    CHECK(e2 == before);
}

TEST_CASE("the shell running cvm wins over $SHELL", "[shell]") {
    auto lookup = [](const std::string& n) -> std::optional<std::string> {
        if (n == "SHELL") return std::string("/bin/bash");
        return std::nullopt;
    };
    CHECK(detect_shell(lookup, Os::Linux, std::string("fish")) == Shell::Fish);
    CHECK(detect_shell(lookup, Os::Linux, std::string("-zsh")) == Shell::Zsh);
    CHECK(detect_shell(lookup, Os::Linux, std::string("python3")) == Shell::Bash);
    CHECK(detect_shell(lookup, Os::Linux, std::nullopt) == Shell::Bash);
}

TEST_CASE("assignments set and unset exactly what they name", "[shell]") {
    std::vector<EnvChange> changes = {{"CUDA_PATH", std::string("/a 'b' $c")},
                                      {"PATH", std::string("/x y:/z")},
                                      {"CVM_ACTIVE", std::nullopt}};
    CHECK(render_assignments(Shell::Bash, changes) ==
          "export CUDA_PATH='/a '\\''b'\\'' $c'\nexport PATH='/x y:/z'\nunset CVM_ACTIVE\n");
    CHECK(render_assignments(Shell::Fish, changes) ==
          "set -gx CUDA_PATH '/a \\'b\\' $c'\nset -gx PATH (string split -- : '/x y:/z')\n"
          "set -e CVM_ACTIVE\n");
    CHECK(render_assignments(Shell::Pwsh, changes) ==
          "$env:CUDA_PATH = '/a ''b'' $c'\n$env:PATH = '/x y:/z'\n$env:CVM_ACTIVE = $null\n");
    CHECK_THROWS_AS(render_assignments(Shell::Bash, {{"A-B", std::string("x")}}), ShellError);
    TempDir tmp("shell-assign");
    std::string script = "export CVM_ACTIVE=1\n" + render_assignments(Shell::Bash, changes) +
                         "printf '%s|%s|%s\\n' \"$CUDA_PATH\" \"$PATH\" \"${CVM_ACTIVE-unset}\"\n";
    for (const std::string shell : {"bash", "zsh"})
        if (auto out = run_in(shell, script, tmp.path)) CHECK(*out == "/a 'b' $c|/x y:/z|unset\n");
    std::string fish = "set -gx CVM_ACTIVE 1\n" + render_assignments(Shell::Fish, changes) +
                       "printf '%s|%s|%s\\n' \"$CUDA_PATH\" \"$PATH\" (set -q CVM_ACTIVE; and echo set; or echo unset)\n";
    if (auto out = run_in("fish", fish, tmp.path)) CHECK(*out == "/a 'b' $c|/x y:/z|unset\n");
}

TEST_CASE("init installs the prompt hook and the cvm function unless told not to", "[shell]") {
    InitOptions o;
    o.shims_dir = "/r/shims";
    o.exe = "/opt/it's/cvm";
    o.global_file = "/r/version";
    o.watched = {"/r/cuda", "/r/cudnn"};
    o.stamp_dir = "/r/cache/hook";
    o.os = Os::Linux;
    auto bash = render_init(Shell::Bash, o);
    CHECK(bash.find("PROMPT_COMMAND=\"_cvm_hook") != std::string::npos);
    CHECK(bash.find("command '/opt/it'\\''s/cvm' hook-env --shell bash --pid $$") != std::string::npos);
    CHECK(bash.find("'/r/cuda' -ot ${_cvm_stamp}") != std::string::npos);
    CHECK(bash.find("_cvm_stamp='/r/cache/hook'/$$") != std::string::npos);
    auto zsh = render_init(Shell::Zsh, o);
    CHECK(zsh.find("add-zsh-hook chpwd _cvm_hook") != std::string::npos);
    CHECK(zsh.find("add-zsh-hook precmd _cvm_hook") != std::string::npos);
    auto fish = render_init(Shell::Fish, o);
    CHECK(fish.find("function _cvm_hook --on-variable PWD --on-event fish_prompt") != std::string::npos);
    // The function tells cvm whether the hook is on (`cvm deactivate` turns it off, `cvm shell` on).
    CHECK(bash.find("--shell bash --prompt-hook \"${_cvm_h}\")") != std::string::npos);
    CHECK(zsh.find("--shell zsh --prompt-hook \"${_cvm_h}\")") != std::string::npos);
    CHECK(fish.find("--shell fish --prompt-hook (set -q _cvm_off; and echo off; or echo on)); or return") !=
          std::string::npos);
    CHECK(fish.find("command '/opt/it\\'s/cvm' hook-env --shell fish --pid $fish_pid | source") !=
          std::string::npos);

    // PowerShell cannot run here: its text is checked piece by piece.
    o.os = Os::Windows;
    o.exe = "C:\\Program Files\\cvm\\cvm.exe";
    o.global_file = "C:\\Users\\me\\cvm\\version";
    o.watched = {"C:\\Users\\me\\cvm\\cuda"};
    o.stamp_dir = "C:\\Users\\me\\cvm\\cache\\hook";
    auto pwsh = render_init(Shell::Pwsh, o);
    CHECK(pwsh.find("$global:_cvm_exe = 'C:\\Program Files\\cvm\\cvm.exe'") != std::string::npos);
    CHECK(pwsh.find("function global:cvm {") != std::string::npos);
    CHECK(pwsh.find("& $global:_cvm_exe @args --shell pwsh") != std::string::npos);
    CHECK(pwsh.find("$code = & $global:_cvm_exe hook-env --shell pwsh --pid $PID") != std::string::npos);
    CHECK(pwsh.find("$global:_cvm_stamp = Join-Path 'C:\\Users\\me\\cvm\\cache\\hook' $PID") !=
          std::string::npos);
    CHECK(pwsh.find("foreach ($x in @($f, 'C:\\Users\\me\\cvm\\cuda'))") != std::string::npos);
    CHECK(pwsh.find("if (-not $f) { $f = 'C:\\Users\\me\\cvm\\version' }") != std::string::npos);
    CHECK(pwsh.find("function global:prompt { _cvm_hook; & $global:_cvm_prompt }") != std::string::npos);
    CHECK(pwsh.find("$global:LASTEXITCODE = $exit") != std::string::npos);
    // `cvm deactivate` turns the hook off, `cvm shell` on again.
    CHECK(pwsh.find("if ($global:_cvm_off) { return }") != std::string::npos);
    CHECK(pwsh.find("$global:_cvm_off = $null; $global:_cvm_key = $null; _cvm_hook") != std::string::npos);
    // ... and cvm is told the hook's state, to say what the function does to it.
    CHECK(pwsh.find("@args --shell pwsh --prompt-hook $(if ($global:_cvm_off) { 'off' } else { 'on' })") !=
          std::string::npos);
    // Braces and parentheses pair up (a cheap check that the text parses as blocks).
    long braces = 0, parens = 0;
    for (char c : pwsh) {
        braces += c == '{' ? 1 : c == '}' ? -1 : 0;
        parens += c == '(' ? 1 : c == ')' ? -1 : 0;
        CHECK(braces >= 0);
    }
    CHECK(braces == 0);
    CHECK(parens == 0);

    o.hook = false;
    for (Shell sh : {Shell::Bash, Shell::Zsh, Shell::Fish, Shell::Pwsh}) {
        auto text = render_init(sh, o);
        INFO(shell_name(sh));
        CHECK(text.find("_cvm_hook") == std::string::npos);
        CHECK(text.find("hook-env") == std::string::npos);
        CHECK(text.find("--prompt-hook") == std::string::npos);
        CHECK(text.find("cvm") != std::string::npos);
    }
}
