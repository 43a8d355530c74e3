// cmd: batch files for `cvm env`, `cvm deactivate` and `cvm script`. Its table:
// shells/shell_syntax.h.
#include <algorithm>

#include "shells/shell_common.h"
#include "shells/shell_syntax.h"

namespace cvm::shell_detail {

using platform::Os;

namespace {

// Batch files run with delayed expansion off (the default; checked at the top), so '!' is an
// ordinary character. Static values are caret-escaped `set NAME=...` lines. Values read at run
// time pass only through FOR variables (which cmd does not parse again) or through %expansions%
// inside double quotes, which is safe because nothing that reaches them holds a '"' (Windows
// file names cannot, and quotes are dropped from PATH entries first).

std::string crlf(const char* text) {
    std::string out;
    for (const char* p = text; *p; ++p) {
        if (*p == '\n') out += '\r';
        out += *p;
    }
    return out;
}

const char* const kCmdSubroutines = R"BAT(goto :eof

:cvm_save
set "_CVM_OLD_%~1="
if defined %~1 for /f "tokens=1* delims==" %%A in ('set %~1') do if /i "%%A"=="%~1" set "_CVM_OLD_%~1=%%B"
goto :eof

:cvm_restore
if not defined _CVM_SAVED goto :eof
for %%N in (%_CVM_SAVED%) do call :cvm_restore_one %%N
set "_CVM_SAVED="
goto :eof

:cvm_restore_one
set "_CVM_HAD="
if defined _CVM_OLD_%~1 for /f "tokens=1* delims==" %%A in ('set _CVM_OLD_%~1') do if /i "%%A"=="_CVM_OLD_%~1" (
    set "%~1=%%B"
    set "_CVM_HAD=1"
)
if not defined _CVM_HAD set "%~1="
set "_CVM_OLD_%~1="
set "_CVM_HAD="
goto :eof
)BAT";

void cmd_prologue(std::string& out, const std::string& header, const std::string& file_name) {
    out += "@echo off\r\n";
    out += header;
    // "!!" is empty only when delayed expansion is on, which would eat '!' in values.
    out += "if \"!!\"==\"\" (\r\n";
    out += "    echo " + file_name +
           ": delayed expansion is on; run this from a cmd started without /V:ON 1>&2\r\n";
    out += "    exit /b 1\r\n";
    out += ")\r\n";
    // The rest of the file is UTF-8; the console's code page comes back at the end.
    out += "set \"_CVM_CP=\"\r\n";
    out += "for /f \"tokens=2 delims=:.\" %%C in ('chcp') do set \"_CVM_CP=%%C\"\r\n";
    out += "chcp 65001 >nul\r\n";
}

void cmd_epilogue(std::string& out, const std::string& extra_subroutines = {}) {
    out += ":cvm_done\r\n";
    out += "if defined _CVM_CP chcp %_CVM_CP% >nul 2>nul\r\n";
    out += "set \"_CVM_CP=\"\r\n";
    out += crlf(kCmdSubroutines);
    out += extra_subroutines;
}

void cmd_save_and_set(std::string& out, const std::vector<EnvChange>& changes,
                      const std::vector<std::string>& skip) {
    auto names = names_of(changes);
    out += "call :cvm_restore\r\n";
    for (const auto& n : names)
        out += "call :cvm_save " + n + "\r\n";
    out += "set \"_CVM_SAVED=" + join(names, " ") + "\"\r\n";
    for (const auto& c : changes) {
        if (std::find(skip.begin(), skip.end(), c.name) != skip.end()) continue;
        if (c.value) {
            check_value(Shell::Cmd, c.name, *c.value);
            out += "set " + c.name + "=" + quote_cmd(*c.value) + "\r\n";
        } else {
            out += "set " + c.name + "=\r\n";
        }
    }
}

std::string cmd_header(const std::string& active, const std::string& name, bool script) {
    std::string h;
    if (script) {
        h += "rem cvm activation script for CUDA " + active + ", written by `cvm script`.\r\n";
        h += "rem It needs no cvm to run. In cmd:\r\n";
        h += "rem   call " + name + "              activates it in this window\r\n";
        h += "rem   call " + name + " deactivate   restores what was there before\r\n";
    } else {
        h += "rem cvm activation for CUDA " + active +
             " (cvm env --shell cmd); undo with the "
             "output of `cvm deactivate --shell cmd`.\r\n";
    }
    return h;
}

// A value that is compared inside double quotes: it must not hold one.
void check_cmd_quoted(const std::string& what, const std::string& value) {
    check_value(Shell::Cmd, what, value);
    if (value.find('"') != std::string::npos)
        throw ShellError(what + " " + printable(value) +
                         " contains '\"', which cmd cannot compare");
}

std::string cmd_script(const ActivationScript& s) {
    const Os os = Os::Windows;
    std::string name = s.file_name.empty() ? std::string("activate.bat") : s.file_name;
    for (char c : name)
        if (static_cast<unsigned char>(c) < 0x20 ||
            std::string("%^&|<>()\"!").find(c) != std::string::npos)
            throw ShellError("'" + printable(name) +
                             "' is not a file name a batch file can use for itself");
    std::string out;
    cmd_prologue(out, cmd_header(s.active, name, true), name);
    out += "if /i \"%~1\"==\"deactivate\" (\r\n";
    out += "    call :cvm_restore\r\n";
    out += "    goto :cvm_done\r\n";
    out += ")\r\n";
    out += "if not \"%~1\"==\"\" (\r\n";
    out += "    echo " + name + ": unknown argument; use no argument or deactivate 1>&2\r\n";
    out += "    goto :cvm_done\r\n";
    out += ")\r\n";
    cmd_save_and_set(out, s.changes, {"PATH"});
    std::string entry; // the subroutine that looks at one PATH entry
    if (find_change(s.changes, "PATH")) {
        std::vector<std::string> firsts, layers;
        for (const auto& d : s.bin_dirs)
            firsts.push_back(normalized_dir(d, os));
        for (const auto& l : s.store_layers)
            layers.push_back(normalized_dir(l, os));
        std::string shims = normalized_dir(s.shims_dir, os);
        // Fixed strings live in variables, so that the comparisons never parse them.
        for (size_t i = 0; i < firsts.size(); ++i) {
            check_cmd_quoted("the toolkit folder", firsts[i]);
            out += "set _CVM_B" + std::to_string(i) + "=" + quote_cmd(firsts[i]) + "\r\n";
        }
        for (size_t i = 0; i < layers.size(); ++i) {
            check_cmd_quoted("the store folder", layers[i]);
            out += "set _CVM_L" + std::to_string(i) + "=" + quote_cmd(layers[i]) + "\r\n";
        }
        check_cmd_quoted("the shims folder", shims);
        out += "set _CVM_SH=" + quote_cmd(shims) + "\r\n";
        // _CVM_NEW starts with '#' so that it is never empty.
        std::string joined;
        for (const auto& d : firsts)
            joined += (joined.empty() ? "" : ";") + d;
        out += "set _CVM_NEW=#" + quote_cmd(joined) + "\r\n";
        out += "set \"_CVM_P=\"\r\n";
        // Quotes inside PATH entries are dropped: cmd's own search ignores them too.
        out += "if defined PATH set \"_CVM_P=%PATH:\"=%\"\r\n";
        out += "if defined _CVM_P for %%E in (\"%_CVM_P:;=\" \"%\") do (\r\n";
        out += "    set \"_cvm_e=%%~E\"\r\n";
        out += "    call :cvm_entry\r\n";
        out += ")\r\n";
        // Without toolkit folders the list starts "#;", and both characters go.
        out += std::string("set \"PATH=%_CVM_NEW:~") + (joined.empty() ? "2" : "1") + "%\"\r\n";
        out += "set \"_CVM_NEW=\"\r\nset \"_CVM_P=\"\r\nset \"_cvm_e=\"\r\nset \"_cvm_n=\"\r\n"
               "set \"_CVM_SH=\"\r\n";
        for (size_t i = 0; i < firsts.size(); ++i)
            out += "set \"_CVM_B" + std::to_string(i) + "=\"\r\n";
        for (size_t i = 0; i < layers.size(); ++i)
            out += "set \"_CVM_L" + std::to_string(i) + "=\"\r\n";

        // Mirrors is_foreign_cuda_dir for Windows: `goto :eof` drops the entry.
        entry += "\r\n:cvm_entry\r\n";
        entry += "if not defined _cvm_e goto :eof\r\n";
        entry += "set \"_cvm_n=%_cvm_e:/=\\%\"\r\n";
        for (int k = 0; k < 2; ++k)
            entry += "if not \"%_cvm_n:~3%\"==\"\" if \"%_cvm_n:~-1%\"==\"\\\" set "
                     "\"_cvm_n=%_cvm_n:~0,-1%\"\r\n";
        for (size_t i = 0; i < firsts.size(); ++i)
            entry += "if /i \"%_cvm_n%\"==\"%_CVM_B" + std::to_string(i) + "%\" goto :eof\r\n";
        entry += "if /i \"%_cvm_n%\"==\"%_CVM_SH%\" goto :cvm_keep\r\n";
        for (size_t i = 0; i < layers.size(); ++i) {
            std::string v = "%_CVM_L" + std::to_string(i) + "%";
            entry += "if /i \"%_cvm_n%\"==\"" + v + "\" goto :eof\r\n";
            entry += "if /i \"%_cvm_n:~0," + std::to_string(utf16_length(layers[i]) + 1) +
                     "%\"==\"" + v + "\\\" goto :eof\r\n";
        }
        entry += "if /i \"%_cvm_n:~1,9%\"==\":\\Windows\" goto :cvm_keep\r\n";
        entry += "if /i not \"%_cvm_n:\\NVIDIA GPU Computing Toolkit\\CUDA\\=%\"==\"%_cvm_n%\" "
                 "goto :eof\r\n";
        for (const char* probe : windows_cuda_bin_probes())
            entry += std::string("if exist \"%_cvm_e%\\") + probe + "\" goto :eof\r\n";
        entry += ":cvm_keep\r\n";
        entry += "set \"_CVM_NEW=%_CVM_NEW%;%_cvm_e%\"\r\n";
        entry += "goto :eof\r\n";
    }
    cmd_epilogue(out, entry);
    return out;
}
std::string cmd_env(const std::vector<EnvChange>& changes) {
    std::string out;
    std::string active;
    if (auto c = find_change(changes, "CVM_ACTIVE"); c && c->value) active = *c->value;
    cmd_prologue(out, cmd_header(active, "", false), "cvm env");
    cmd_save_and_set(out, changes, {});
    cmd_epilogue(out);
    return out;
}

std::string cmd_deactivate() {
    std::string out;
    cmd_prologue(out,
                 "rem cvm: restores what the variables held before cvm activated anything.\r\n",
                 "cvm deactivate");
    out += "call :cvm_restore\r\n";
    cmd_epilogue(out);
    return out;
}

std::string cmd_assign(const std::vector<EnvChange>& changes) {
    std::string out = "@echo off\r\n";
    for (const auto& c : changes) {
        if (c.value) {
            check_value(Shell::Cmd, c.name, *c.value);
            out += "set " + c.name + "=" + quote_cmd(*c.value) + "\r\n";
        } else {
            out += "set " + c.name + "=\r\n";
        }
    }
    return out;
}

std::string cmd_init(const InitOptions& o) {
    throw ShellError("cmd has no startup file; add " + o.shims_dir +
                     " to your user PATH (System Properties > Environment Variables)");
}

} // namespace

const ShellSyntax kCmdSyntax = {Shell::Cmd, "cmd",          nullptr,    ".bat",     quote_cmd,
                                cmd_env,    cmd_deactivate, cmd_script, cmd_assign, cmd_init};

} // namespace cvm::shell_detail
