#include "compat/host_compiler.h"

#include <algorithm>
#include <cctype>

#include "compat/visual_studio.h"
#include "config/config.h"
#include "config/program_trust.h"
#include "text/affixes.h"

namespace cvm::compat {

namespace fs = std::filesystem;

namespace {

std::optional<std::string> query_env(const HostCompilerQuery& q, const std::string& name) {
    for (const auto& [k, v] : q.env)
        if (platform::env_name_equal(k, name)) return v;
    return std::nullopt;
}

bool is_dir(const fs::path& p) {
    std::error_code ec;
    return fs::is_directory(p, ec);
}

// nvcc.profile's `PATH += dir:` lines (prepended to PATH for the programs nvcc runs).
std::string profile_path_prefix(const fs::path& nvcc) {
    std::error_code ec;
    fs::path real = fs::canonical(nvcc, ec);
    if (ec) return {};
    auto text = platform::read_file(real.parent_path() / "nvcc.profile", 1 << 16);
    if (!text) return {};
    std::string out;
    size_t pos = 0;
    while (pos < text->size()) {
        size_t end = text->find('\n', pos);
        std::string line = text->substr(pos, end == std::string::npos ? std::string::npos : end - pos);
        pos = end == std::string::npos ? text->size() : end + 1;
        size_t at = line.find("+=");
        if (line.compare(0, 4, "PATH") != 0 || at == std::string::npos) continue;
        std::string value = line.substr(at + 2);
        value.erase(0, value.find_first_not_of(" \t"));
        for (size_t h; (h = value.find("$(_HERE_)")) != std::string::npos;)
            value.replace(h, 9, real.parent_path().u8string());
        out += value;
        if (!out.empty() && out.back() != ':') out += ':';
    }
    return out;
}

std::string resolve_ccbin(const std::string& value, const HostCompilerQuery& q) {
    const bool windows = q.os == platform::Os::Windows;
    fs::path p = fs::u8path(value);
    if (is_dir(p)) return (p / (windows ? "cl.exe" : "gcc")).u8string();
    if (value.find_first_of(windows ? "/\\" : "/") == std::string::npos) {
        // nvcc runs a bare name from PATH after nvcc.profile's additions.
        std::string prefix = windows ? std::string() : profile_path_prefix(q.nvcc);
        fs::path found = platform::find_executable(value, prefix + query_env(q, "PATH").value_or(""));
        if (!found.empty()) return found.u8string();
    }
    return value;
}

FoundCompiler found(const std::string& path, const std::string& origin, platform::Os os) {
    FoundCompiler f;
    f.path = path;
    f.origin = origin;
    // cl.exe is judged by its toolset folder, whatever the machine running cvm thinks of it.
    f.exists = !path.empty() && (os == platform::Os::Windows ? platform::exists(path)
                                                             : platform::is_executable(fs::u8path(path)));
    if (!f.exists) return f;
    // Never run (nor handed to nvcc) a compiler another user could change.
    f.untrusted = program_doubt(fs::u8path(path));
    if (!f.untrusted.empty()) {
        note_untrusted(fs::u8path(path), "a host compiler", f.untrusted); // once a process
        return f;
    }
    f.id = identify_compiler(fs::u8path(path), os, &f.said);
    return f;
}

// The first non-blank line of a program's output, at most 200 characters.
std::string first_words(const std::string& text) {
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find_first_of("\r\n", pos);
        std::string line = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
        pos = end == std::string::npos ? text.size() : end + 1;
        size_t first = line.find_first_not_of(" \t");
        if (first == std::string::npos) continue;
        line = line.substr(first, line.find_last_not_of(" \t") - first + 1);
        return line.size() > 200 ? line.substr(0, 200) + "..." : line;
    }
    return {};
}

// g++, g++-12, clang++, clang++-14 (not x86_64-linux-gnu-g++-12 nor clang++-14.py).
bool is_cxx_compiler_name(const std::string& name) {
    for (const char* base : {"g++", "clang++"}) {
        std::string b = base;
        if (name == b) return true;
        if (starts_with(name, b + "-")) {
            std::string rest = name.substr(b.size() + 1);
            if (!rest.empty() && std::all_of(rest.begin(), rest.end(), [](char c) {
                    return std::isdigit(static_cast<unsigned char>(c)) || c == '.';
                }))
                return true;
        }
    }
    return false;
}

} // namespace

std::optional<CompilerId> identify_compiler(const fs::path& program, platform::Os os, std::string* said) {
    if (os == platform::Os::Windows) {
        // ...\VC\Tools\MSVC\14.29.30133\bin\Hostx64\x64\cl.exe: the toolset names the version.
        fs::path p = program;
        for (int up = 0; up < 4 && p.has_parent_path(); ++up) p = p.parent_path();
        if (auto v = cl_version_of_toolset(p.filename().u8string())) return CompilerId{CompilerKind::Msvc, *v};
    }
    std::string name = program.filename().u8string();
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    // cl.exe has no --version: run alone, it prints its banner (and usage) on stderr.
    const bool cl = os == platform::Os::Windows && (name == "cl.exe" || name == "cl");
    std::vector<std::string> args{program.u8string()};
    if (!cl) args.push_back("--version");
    auto out = platform::capture_output(program, args, 10000, cl);
    std::optional<CompilerId> id = out ? parse_compiler_banner(*out) : std::nullopt;
    if (id || !said) return id;
    // Unidentified: what it printed, stderr included, tells why (Debian's gcc wrapper of its CUDA
    // says which compiler to use instead).
    if (!cl) out = platform::capture_output(program, args, 10000, true);
    if (out) *said = first_words(*out);
    return id;
}

std::optional<bool> nvcc_reads_ccbin_env(const fs::path& nvcc) {
    auto bytes = platform::read_file(nvcc, std::size_t(256) << 20);
    if (!bytes) return std::nullopt;
    return bytes->find("NVCC_CCBIN") != std::string::npos;
}

FoundCompiler find_nvcc_host_compiler(const HostCompilerQuery& q) {
    const bool windows = q.os == platform::Os::Windows;
    if (auto v = ccbin_in_args(q.nvcc_args)) return found(resolve_ccbin(*v, q), "-ccbin on the command line", q.os);
    for (const char* var : {"NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS"})
        if (auto flags = query_env(q, var))
            if (auto v = ccbin_in_args(split_flag_words(*flags))) return found(resolve_ccbin(*v, q), var, q.os);
    if (q.nvcc_reads_ccbin_env)
        if (auto v = query_env(q, "NVCC_CCBIN"); v && !v->empty())
            return found(resolve_ccbin(*v, q), "NVCC_CCBIN", q.os);
    std::string path = query_env(q, "PATH").value_or("");
    if (windows) {
        fs::path cl = platform::find_executable("cl.exe", path);
        // nvcc does not look for Visual Studio itself: without cl.exe on PATH (a Developer Command
        // Prompt's) it stops with "Cannot find compiler 'cl.exe' in PATH".
        return found(cl.u8string(), "PATH", q.os);
    }
    std::string prefix = profile_path_prefix(q.nvcc);
    fs::path gcc = platform::find_executable("gcc", prefix + path);
    bool from_profile = !prefix.empty() && !gcc.empty() &&
                        platform::find_executable("gcc", prefix) == gcc;
    return found(gcc.u8string(), from_profile ? "nvcc.profile's PATH" : "PATH", q.os);
}

std::vector<FoundCompiler> installed_host_compilers(const HostCompilerQuery& q) {
    std::vector<FoundCompiler> out;
    if (q.os == platform::Os::Windows) {
        for (const auto& cl : visual_studio_cl_programs(q.visual_studio_roots, q.visual_studio_instances)) {
            FoundCompiler f = found(cl.u8string(), "Visual Studio", q.os);
            if (f.id) out.push_back(std::move(f));
        }
        return out;
    }
    std::vector<std::string> seen_names;
    std::vector<platform::FileId> seen_files;
    std::string path = query_env(q, "PATH").value_or("");
    size_t pos = 0;
    while (pos <= path.size()) {
        size_t end = path.find(':', pos);
        std::string dir = path.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
        pos = end == std::string::npos ? path.size() + 1 : end + 1;
        if (dir.empty() || (!q.skip_dir.empty() && fs::u8path(dir) == q.skip_dir)) continue;
        auto names = platform::folder_names(dir);
        // clang++-14 before clang++ (the same file through a link): the versioned name stays
        // right when the unversioned one is switched to another release.
        std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
            bool va = a.find('-') != std::string::npos, vb = b.find('-') != std::string::npos;
            return va != vb ? va : a < b;
        });
        for (const auto& name : names) {
            if (!is_cxx_compiler_name(name)) continue;
            if (std::find(seen_names.begin(), seen_names.end(), name) != seen_names.end()) continue;
            fs::path p = fs::u8path(dir) / name;
            auto id = platform::executable_id(p);
            if (!id || std::find(seen_files.begin(), seen_files.end(), *id) != seen_files.end()) continue;
            FoundCompiler f = found(p.u8string(), "PATH", q.os);
            if (!f.untrusted.empty()) continue; // skipped with a note: the name stays free
            seen_names.push_back(name);
            seen_files.push_back(*id);
            if (f.id) out.push_back(std::move(f));
        }
    }
    // gcc before clang, newest first; keyed up front (every entry here is identified).
    std::vector<std::pair<std::pair<int, Version>, size_t>> order;
    for (size_t i = 0; i < out.size(); ++i)
        order.push_back({{static_cast<int>(out[i].id ? out[i].id->kind : CompilerKind::Msvc),
                          out[i].id ? out[i].id->version : Version{}},
                         i});
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
        if (a.first.first != b.first.first) return a.first.first < b.first.first;
        return a.first.second > b.first.second;
    });
    std::vector<FoundCompiler> sorted;
    for (const auto& o : order) sorted.push_back(std::move(out[o.second]));
    return sorted;
}

HostCompilerStatus host_compiler_status(const HostCompilerQuery& q, const HostCompilerLimits* limits) {
    HostCompilerStatus s;
    s.nvcc_default = find_nvcc_host_compiler(q);
    if (!limits) return s;
    s.limits = *limits;
    const bool windows = q.os == platform::Os::Windows;
    const std::string range = limits->describe(windows);
    const std::string cuda = "CUDA " + limits->cuda.str();
    const auto& d = s.nvcc_default;
    if (!d.exists) {
        s.problem = d.path.empty()
                        ? std::string("nvcc finds no host compiler (") + (windows ? "cl.exe" : "gcc") +
                              " is not on PATH); " + cuda + " supports " + range
                        : "nvcc's host compiler " + d.path + " (" + d.origin + ") does not exist";
    } else if (!d.untrusted.empty()) {
        s.problem = "nvcc's host compiler " + d.path + " (" + d.origin + ") is not run by cvm: " +
                    d.untrusted + ", so another user could change it; " + cuda + " supports " + range;
    } else if (!d.id) {
        s.problem = "nvcc's host compiler " + d.path + " (" + d.origin + ") does not say which compiler it is (" +
                    (d.said.empty() ? std::string("its --version failed") : "it says \"" + d.said + "\"") +
                    "); " + cuda + " supports " + range;
    } else {
        s.verdict = judge(*limits, *d.id);
        if (s.verdict == Verdict::TooNew)
            s.problem = describe(*d.id) + " (" + d.path + ", " + d.origin + ") is newer than " + cuda +
                        " supports (" + range + ")";
        else if (s.verdict == Verdict::TooOld)
            s.problem = describe(*d.id) + " (" + d.path + ", " + d.origin + ") is older than " + cuda +
                        " supports (" + range + ")";
    }
    if (s.problem.empty()) return s;
    // A compiler the user named is theirs to change; auto only replaces nvcc's own pick.
    if (!d.chosen_by_nvcc()) return s;
    for (const auto& c : installed_host_compilers(q)) {
        if (judge(*limits, *c.id) != Verdict::Supported) continue;
        s.choice = HostCompilerChoice{c.path, q.nvcc_reads_ccbin_env,
                                      s.problem + "; nvcc gets " + describe(*c.id) + " (" + c.path + ")"};
        break;
    }
    return s;
}

std::string host_compiler_mode() {
    if (auto v = platform::get_env("CVM_HOST_COMPILER"); v && (*v == "auto" || *v == "off")) return *v;
    for (const auto& file : config_files()) {
        Config c = read_config_file(file);
        if (!c.host_compiler.empty()) return c.host_compiler;
    }
    return "auto";
}

} // namespace cvm::compat
