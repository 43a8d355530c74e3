#include "diagnose.h"
#include "framework_cublas.h"
#include "framework_cudnn.h"

#include "cuda_libraries.h"
#include "variable_checks.h"
#include "windows_loader.h"

#include "core/folder_facts.h"
#include "platform/platform.h"
#include "registry/registry.h"

#include <algorithm>
#include <set>

namespace cvm::doctor {

bool DoctorReport::healthy() const {
    return std::none_of(findings.begin(), findings.end(),
                        [](const Finding& f) { return f.severity != Severity::note; });
}

namespace {

using Os = platform::Os;
using Env = std::map<std::string, std::string>;

bool name_equal(const std::string& a, const std::string& b, Os os) {
    return os == Os::Windows ? iequals(a, b) : a == b;
}

std::optional<std::string> env_get(const Env& env, const std::string& name, Os os) {
    for (const auto& [k, v] : env)
        if (name_equal(k, name, os)) return v;
    return std::nullopt;
}

// Folder text compared as the OS compares paths: '\' and '/' alike and any case on Windows.
std::string folded(std::string s, Os os) {
    if (os == Os::Windows) {
        for (auto& c : s) {
            if (c == '/') c = '\\';
            if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        }
    }
    const char sep = os == Os::Windows ? '\\' : '/';
    while (s.size() > 1 && s.back() == sep)
        s.pop_back();
    return s;
}

bool is_under(const std::string& path, const std::string& dir, Os os) {
    const std::string p = folded(path, os), d = folded(dir, os);
    if (d.empty()) return false;
    if (p == d) return true;
    const char sep = os == Os::Windows ? '\\' : '/';
    return p.size() > d.size() && p.compare(0, d.size(), d) == 0 &&
           (p[d.size()] == sep || d.back() == sep);
}

// How a shell gets the selection's environment and keeps following the folder: the prompt hook
// of `cvm init` (never `cvm env`, which would pin the shell to one version across `cd`).
std::string shell_hint(Os os, const Env& env) {
    if (os == Os::Windows)
        return "add `cvm init pwsh | Out-String | Invoke-Expression` to $PROFILE and open a new "
               "shell (or "
               "start the program through `cvm exec --`)";
    std::string rc = "~/.bashrc", line = "eval \"$(cvm init bash)\"";
    if (auto sh = env_get(env, "SHELL", os)) {
        const std::string name = sh->substr(sh->find_last_of('/') + 1);
        if (name == "zsh") rc = "~/.zshrc", line = "eval \"$(cvm init zsh)\"";
        if (name == "fish") rc = "~/.config/fish/config.fish", line = "cvm init fish | source";
    }
    return "add `" + line + "` to " + rc +
           " and open a new shell, so that the environment follows the folder " +
           "(or start the program through `cvm exec --` or the shims)";
}

// "libcudnn_ops.so.9" and "cudnn_ops64_9.dll" give "cudnn_ops"; "cudnn64_9.dll" gives "cudnn".
std::string role_of(const std::string& file) {
    std::string s = file;
    if (s.rfind("lib", 0) == 0) s = s.substr(3);
    s = s.substr(0, s.find('.'));
    const auto bits = s.rfind("64_");
    if (bits != std::string::npos) s = s.substr(0, bits);
    return s;
}

struct Scenario {
    std::string name;
    Env env;
};

class Doctor {
public:
    explicit Doctor(const DoctorInputs& in) : in_(in), fs_(*in.fs) {}

    DoctorReport run() {
        report_.os = in_.os;
        report_.driver = in_.driver;
        report_.python = in_.python;
        report_.resolved = in_.resolved;
        report_.store_layers = in_.store_layers;
        if (in_.selection.origin != Selection::Origin::None) {
            report_.selection_spec = in_.selection.spec.str();
            report_.selection_origin = in_.selection.origin_text();
        }
        check_selection();

        Scenario current{"current", in_.env};
        std::optional<Scenario> selected;
        if (in_.resolved) {
            Env env = in_.env;
            apply_changes(env, in_.selected_changes, in_.os);
            selected = Scenario{"selected", std::move(env)};
        }

        const auto sets = library_sets();
        for (const auto& set : sets) {
            auto now = load_set(current, set);
            std::vector<LibraryLoad> via_cvm;
            if (selected) via_cvm = load_set(*selected, set);
            if (!set.probing || any_found(now) || any_found(via_cvm)) {
                // A set the selection does not name (cuDNN beside a toolkit chosen alone) is
                // judged as the shell loads it, never as "outside the selection".
                if (selected && !set.probing) {
                    check_set(via_cvm, set, true);
                    check_current_against_selected(now, via_cvm);
                } else {
                    check_set(now, set, false);
                }
                report_.libraries.insert(report_.libraries.end(), now.begin(), now.end());
                report_.libraries.insert(report_.libraries.end(), via_cvm.begin(), via_cvm.end());
            }
        }
        if (!not_loading_now_.empty()) {
            std::string names;
            for (const auto& n : not_loading_now_)
                names += (names.empty() ? "" : ", ") + n;
            add(Severity::warning, "library-not-selected",
                names + (not_loading_now_.size() == 1 ? " does" : " do") +
                    " not load in this shell; through cvm the selection provides " +
                    (not_loading_now_.size() == 1 ? "it" : "them"),
                shell_hint(in_.os, in_.env));
        }
        check_python_dll_rule();
        check_selection_files();
        check_cudnn_for_toolkit();
        check_driver();
        check_path();
        check_cuda_path();
        check_frameworks();
        for (auto& f : variable_findings(in_.env, in_.os))
            report_.findings.push_back(std::move(f));
        return std::move(report_);
    }

private:
    struct LibrarySet {
        std::string family;             // "cudnn", "cudart", "cublas"
        std::vector<LibraryName> names; // main first
        bool probing = false;           // not named by the selection: shown only when found
    };

    void add(Severity s, std::string code, std::string message, std::string fix = "") {
        report_.findings.push_back({s, std::move(code), std::move(message), std::move(fix)});
    }

    TargetOs target() const {
        return in_.os == Os::Windows ? TargetOs::windows : TargetOs::linux_gnu;
    }

    // ---- which libraries --------------------------------------------------------------------

    std::vector<LibrarySet> library_sets() const {
        std::vector<LibrarySet> sets;
        // cuDNN the selection does not name: whichever major a program would find.
        auto any_cudnn = [&] {
            for (unsigned m : {9u, 8u, 7u})
                sets.push_back({"cudnn", cudnn_names(m), true});
        };
        if (in_.resolved) {
            const Entry& tk = in_.resolved->toolkit;
            const int major = static_cast<int>(tk.version.major());
            const int minor = static_cast<int>(tk.version.minor());
            if (in_.resolved->cudnn)
                sets.push_back({"cudnn", cudnn_names(in_.resolved->cudnn->version.major()), false});
            else // a toolkit alone: programs still load whatever cuDNN the machine gives them
                any_cudnn();
            sets.push_back({"cudart", {cudart_library(major, minor, target())}, false});
            sets.push_back({"cublas", cublas_libraries(major, minor, target()), false});
            nccl_set(sets, in_.resolved->nccl.has_value());
            return sets;
        }
        any_cudnn();
        for (int m : {13, 12, 11})
            sets.push_back({"cudart", {cudart_library(m, 0, target())}, true});
        nccl_set(sets, false);
        return sets;
    }

    // libnccl.so.2 (Linux only: NVIDIA publishes no NCCL for Windows): the selection's, or
    // whichever a program would find, shown when found.
    void nccl_set(std::vector<LibrarySet>& sets, bool selected) const {
        if (in_.os != Os::Linux) return;
        sets.push_back({"nccl", {{"nccl", "libnccl.so.2", true}}, !selected});
    }

    std::vector<LibraryName> cudnn_names(unsigned major) const {
        auto names = cudnn_libraries(static_cast<int>(major), target());
        // The registry's library set, when it knows the major, is the reference.
        if (in_.registry) {
            auto files = registry::cudnn_library_names(
                *in_.registry, major,
                in_.os == Os::Windows ? registry::Platform::Windows : registry::Platform::Linux);
            if (!files.empty()) {
                std::vector<LibraryName> out;
                for (std::size_t i = 0; i < files.size(); ++i)
                    out.push_back({role_of(files[i]), files[i], i == 0});
                return out;
            }
        }
        return names;
    }

    // ---- loading ------------------------------------------------------------------------------

    static bool any_found(const std::vector<LibraryLoad>& loads) {
        return std::any_of(loads.begin(), loads.end(),
                           [](const LibraryLoad& l) { return l.path || l.failure; });
    }

    bool in_selection(const LibraryLoad& l) const {
        for (const auto& dir : in_.selection_dirs) {
            if (l.path && is_under(*l.path, dir, in_.os)) return true;
            if (l.real_path && is_under(*l.real_path, dir, in_.os)) return true;
        }
        return false;
    }

    std::vector<LibraryLoad> load_set(const Scenario& sc, const LibrarySet& set) const {
        std::vector<LibraryLoad> out;
        std::optional<LinuxRequester> main_requester;
        for (const auto& lib : set.names) {
            LibraryLoad l = in_.os == Os::Windows
                                ? load_windows(sc, lib, WindowsSearchMode::standard)
                                : load_linux(sc, lib, main_requester);
            l.family = set.family;
            if (lib.main && l.path && in_.os != Os::Windows) {
                // cuDNN dlopens its sub-libraries: its own RUNPATH ($ORIGIN in the wheels) counts.
                if (auto src = fs_.open(*l.path)) {
                    if (auto elf = binary::read_elf(*src))
                        main_requester = linux_requester(*l.path, *elf.info);
                }
            }
            out.push_back(std::move(l));
        }
        return out;
    }

    LibraryLoad base_row(const Scenario& sc, const LibraryName& lib) const {
        LibraryLoad l;
        l.scenario = sc.name;
        l.role = lib.role;
        l.name = lib.file;
        l.main = lib.main;
        return l;
    }

    LibraryLoad load_linux(const Scenario& sc, const LibraryName& lib,
                           const std::optional<LinuxRequester>& requester) const {
        LinuxSearchConfig c;
        if (requester) c.requesters = {*requester};
        c.ld_library_path = env_get(sc.env, "LD_LIBRARY_PATH", in_.os);
        c.cache = in_.ld_cache;
        c.cache_path = in_.ld_cache_path;
        c.default_dirs = in_.linux_default_dirs;
        c.abi = in_.linux_abi;
        if (!in_.cwd.empty()) c.current_dir = in_.cwd;
        auto r = search_linux_library(lib.file, c, fs_);
        LibraryLoad l = base_row(sc, lib);
        for (const auto& cand : r.candidates)
            l.candidates.push_back(
                {cand.path, to_string(cand.mechanism), to_string(cand.status), cand.detail});
        if (const auto* w = r.selected()) {
            l.path = w->path;
            l.real_path = w->real_path;
            l.mechanism = to_string(w->mechanism);
            l.origin = w->origin;
            if (auto v = linux_library_version(w->path, fs_)) l.version = v->version;
        } else if (r.failed_at) {
            const auto& bad = r.candidates[*r.failed_at];
            l.failure = bad.path + ": " + bad.detail;
            l.mechanism = to_string(bad.mechanism);
        }
        // Another name for the winner or for a file already listed (/lib -> /usr/lib) is no
        // second copy.
        std::set<std::string> files;
        if (l.real_path) files.insert(*l.real_path);
        for (const auto* s : r.shadowed())
            if (files.insert(s->real_path.value_or(s->path)).second) l.shadowed.push_back(s->path);
        if (l.path) l.from_selection = in_selection(l);
        return l;
    }

    WindowsSearchConfig windows_config(const Scenario& sc, WindowsSearchMode mode) const {
        WindowsSearchConfig c;
        c.mode = mode;
        c.system32_dir = in_.windows.system32_dir;
        c.system16_dir = in_.windows.system16_dir;
        c.windows_dir = in_.windows.windows_dir;
        c.current_dir = in_.cwd;
        c.path = env_get(sc.env, "PATH", in_.os);
        c.machine = 0x8664;
        return c;
    }

    LibraryLoad load_windows(const Scenario& sc, const LibraryName& lib,
                             WindowsSearchMode mode) const {
        auto r = search_windows_dll(lib.file, windows_config(sc, mode), fs_);
        LibraryLoad l = base_row(sc, lib);
        for (const auto& cand : r.candidates)
            l.candidates.push_back(
                {cand.path, to_string(cand.mechanism), to_string(cand.status), cand.detail});
        if (const auto* w = r.selected()) {
            l.path = w->path;
            l.real_path = fs_.real_path(w->path);
            l.mechanism = to_string(w->mechanism);
            l.origin = w->origin;
            if (auto v = dll_file_version(w->path, fs_)) l.version = v->str();
        } else if (r.failed_at) {
            const auto& bad = r.candidates[*r.failed_at];
            l.failure = bad.path + ": " + bad.detail;
            l.mechanism = to_string(bad.mechanism);
        }
        for (const auto* s : r.shadowed())
            l.shadowed.push_back(s->path);
        if (l.path) l.from_selection = in_selection(l);
        return l;
    }

    // ---- checks over the libraries ------------------------------------------------------------

    // "dir/libcudnn.so.8 -> libcudnn.so.8.0.5 (8.0.5)"
    std::string where(const LibraryLoad& l) const {
        std::string s = *l.path;
        if (l.real_path && *l.real_path != *l.path)
            s += " -> " + (path_dirname(*l.real_path) == path_dirname(*l.path)
                               ? path_basename(*l.real_path)
                               : *l.real_path);
        if (l.version) s += " (" + *l.version + ")";
        return s;
    }

    // How to get rid of a library that wins where it should not. `through_cvm`: cvm's own
    // environment already puts the selection first, so activating it would not help.
    std::string remove_hint(const LibraryLoad& l, bool through_cvm) const {
        const std::string dir = path_dirname(*l.path);
        const std::string activate = through_cvm ? "" : ", or " + shell_hint(in_.os, in_.env);
        // A system folder stays where it is (removing it breaks the machine): the package that
        // put the file there is what goes.
        if (is_system_folder(dir, in_.os) ||
            (in_.os == Os::Linux && l.mechanism == "default folder")) {
            if (in_.os == Os::Windows)
                return "uninstall the program that put " + *l.path + " there (Settings > Apps)" +
                       activate;
            return "remove or replace the package that installed " + *l.path + " (`dpkg -S " +
                   *l.path + "` names it; `rpm -qf` on RPM systems), never " + dir + " itself" +
                   activate;
        }
        if (l.mechanism == "LD_LIBRARY_PATH" || l.mechanism == "PATH")
            return "remove " + dir + " from " + l.mechanism + activate;
        if (l.mechanism == "ld.so.cache")
            return "remove " + dir + " from /etc/ld.so.conf.d/ and run `sudo ldconfig`" + activate;
        if (l.mechanism == "System32" || l.mechanism == "Windows folder" ||
            l.mechanism == "16-bit system folder")
            return "delete " + *l.path + " (a copy in a system folder shadows every PATH entry)";
        return "remove " + *l.path + " (it belongs to another build)" + activate;
    }

    void check_set(const std::vector<LibraryLoad>& loads, const LibrarySet& set, bool selected) {
        if (loads.empty()) return;
        const LibraryLoad& main = loads.front();
        const std::string scope = selected ? " through cvm" : "";
        if (main.failure) {
            add(Severity::error, "library-unloadable",
                main.name + " cannot load" + scope + ": the loader stops at " + *main.failure,
                "replace or remove that file");
            return;
        }
        if (!main.path) {
            if (selected)
                add(Severity::error, "library-missing",
                    main.name + " is not found" + scope + ": the selection (" +
                        report_.selection_spec + ") does not provide it",
                    "reinstall it: `cvm uninstall ID` then `cvm install " + report_.selection_spec +
                        "`");
            return;
        }
        if (selected && main.from_selection == false) {
            add(Severity::error, "library-outside-selection",
                main.name + " loads from " + where(main) + " (" + main.origin +
                    "), not from the selected " + set.family + ", even through cvm",
                remove_hint(main, true));
        }
        const std::string main_dir = path_dirname(main.real_path.value_or(*main.path));
        for (std::size_t i = 1; i < loads.size(); ++i) {
            const LibraryLoad& sub = loads[i];
            if (sub.failure) {
                add(Severity::error, "library-unloadable",
                    sub.name + " cannot load" + scope + ": the loader stops at " + *sub.failure,
                    "replace or remove that file");
                continue;
            }
            if (!sub.path) {
                add(Severity::error, "sublibrary-missing",
                    sub.name + " is missing: " + main.name + " (" + *main.path +
                        ") loads it on first use and the program fails with \"Could not load "
                        "library " +
                        sub.name + "\"",
                    "copy every library of the same " + set.family + " build next to " +
                        *main.path + ", or reinstall it with `cvm install`");
                continue;
            }
            const std::string sub_dir = path_dirname(sub.real_path.value_or(*sub.path));
            const bool other_dir = folded(sub_dir, in_.os) != folded(main_dir, in_.os);
            const bool other_version = sub.version && main.version && *sub.version != *main.version;
            if (other_dir || other_version) {
                add(Severity::error, "sublibraries-mixed",
                    sub.name + " loads from " + where(sub) + " but " + main.name + " from " +
                        where(main) +
                        ": a process mixing cuDNN libraries of different builds fails or "
                        "computes wrongly",
                    remove_hint(sub, selected));
            }
        }
    }

    void check_current_against_selected(const std::vector<LibraryLoad>& now,
                                        const std::vector<LibraryLoad>& via_cvm) {
        if (now.empty() || via_cvm.empty()) return;
        const LibraryLoad& a = now.front();
        const LibraryLoad& b = via_cvm.front();
        if (!b.path || b.from_selection != true)
            return; // the selected scenario has its own finding
        if (!a.path) {
            not_loading_now_.push_back(a.name);
            return;
        }
        // The same file however it is reached (a view's link, a distribution's folder the
        // selection was assembled from): the shell loads what cvm would.
        const std::string real_a = folded(a.real_path.value_or(*a.path), in_.os);
        const std::string real_b = folded(b.real_path.value_or(*b.path), in_.os);
        if (real_a == real_b) return;
        if (a.from_selection != true) {
            add(Severity::warning, "library-not-selected",
                "a program started in this shell loads " + a.name + " from " + where(a) + " (" +
                    a.origin + "), not the selected one " + *b.path,
                shell_hint(in_.os, in_.env));
        }
    }

    void check_python_dll_rule() {
        if (in_.os != Os::Windows || !in_.python) return;
        const auto version = parse_version(in_.python->version, 1, 3);
        if (!version || *version < Version{{3, 8}}) return;
        for (const auto& l : report_.libraries) {
            if (!l.main || l.role != "cudnn" || !l.path || l.mechanism != "PATH") continue;
            add(Severity::note, "python-ignores-path",
                l.name + " is found through PATH (" + path_dirname(*l.path) + "), which Python " +
                    in_.python->version +
                    " does not search for extension modules' DLLs: a framework that does not "
                    "bring its own cuDNN must add the folder itself",
                "in Python, call os.add_dll_directory(r\"" + path_dirname(*l.path) +
                    "\") before importing the framework");
            return;
        }
    }

    // ---- the selection ------------------------------------------------------------------------

    void check_selection() {
        switch (in_.selection.origin) {
        case Selection::Origin::None:
            add(Severity::note, "nothing-selected",
                "no CUDA version is selected here; the report shows what programs load now",
                "`cvm use SPEC` (see `cvm list`)");
            return;
        default:
            break;
        }
        if (in_.selection.spec.system) {
            add(Severity::note, "system-selected",
                "'system' is selected (" + in_.selection.origin_text() +
                    "): cvm changes nothing and the machine's own libraries load");
            return;
        }
        if (!in_.resolved)
            add(Severity::error, "selection-unresolved",
                in_.resolve_error.empty()
                    ? "the selection " + in_.selection.spec.str() + " names nothing installed"
                    : in_.resolve_error,
                in_.selection.forced.empty()
                    ? "`cvm install " + in_.selection.spec.str() + "`, or `cvm use` another version"
                    : "`cvm use SPEC` with a release that exists (see `cvm list --available`)");
    }

    std::optional<Version>
    header_version(const Entry& e, const char* file,
                   std::optional<Version> (*reader)(std::string_view)) const {
        std::vector<std::string> dirs = e.include_dirs;
        if (dirs.empty()) dirs.push_back("include");
        for (const auto& d : dirs) {
            auto text = platform::read_file(e.path / fs::u8path(d) / file, 1 << 20);
            if (text) return reader(*text);
        }
        return std::nullopt;
    }

    // The version in the file name of `lib` inside the entry's library folders (Linux).
    std::optional<std::string> entry_library_version(const Entry& e, const std::string& lib) const {
        for (const auto& d : e.lib_dirs) {
            auto v = linux_library_version((e.path / fs::u8path(d) / lib).u8string(), fs_);
            if (v) return v->version;
        }
        return std::nullopt;
    }

    static bool same_prefix(const Version& a, const Version& b, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) {
            const unsigned x = i < a.parts.size() ? a.parts[i] : 0;
            const unsigned y = i < b.parts.size() ? b.parts[i] : 0;
            if (x != y) return false;
        }
        return true;
    }

    void check_selection_files() {
        if (!in_.resolved || in_.os == Os::Windows)
            return; // DLL names carry only the major; their file versions are NVIDIA's own
        const Resolved& r = *in_.resolved;
        if (r.cudnn) {
            const Entry& c = *r.cudnn;
            auto header = header_version(c, "cudnn_version.h", cudnn_version_from_header);
            if (!header) header = header_version(c, "cudnn.h", cudnn_version_from_header);
            const std::string lib =
                cudnn_libraries(static_cast<int>(c.version.major()), TargetOs::linux_gnu)
                    .front()
                    .file;
            auto lib_version = entry_library_version(c, lib);
            if (header && lib_version) {
                auto lv = parse_version(*lib_version, 1, 4);
                if (lv && lv->parts.size() >= 3 && !same_prefix(*header, *lv, 3))
                    add(Severity::error, "header-library-mismatch",
                        "cuDNN " + c.id + ": the headers say " + header->str() + " but " + lib +
                            " is " + *lib_version +
                            ": programs compiled against these headers load another cuDNN",
                        "reinstall the build (`cvm uninstall " + c.id +
                            "` then `cvm install "
                            "...`) so headers and "
                            "libraries come from one "
                            "archive");
            }
        }
        const Entry& t = r.toolkit;
        auto cuda_h = header_version(t, "cuda.h", toolkit_version_from_cuda_h);
        if (cuda_h && !same_prefix(*cuda_h, t.version, 2))
            add(Severity::error, "header-library-mismatch",
                "toolkit " + t.id + ": include/cuda.h says CUDA " + cuda_h->str() +
                    " but the toolkit is " + t.version.str(),
                "reinstall the toolkit: `cvm uninstall " + t.id + "` then `cvm install cuda " +
                    t.version.str() + "`");
        const std::string cudart =
            cudart_library(static_cast<int>(t.version.major()), static_cast<int>(t.version.minor()),
                           TargetOs::linux_gnu)
                .file;
        auto cudart_version = entry_library_version(t, cudart);
        if (cudart_version) {
            auto v = parse_version(*cudart_version, 1, 4);
            if (v && v->parts.size() >= 2 && !same_prefix(*v, t.version, 2))
                add(Severity::error, "header-library-mismatch",
                    "toolkit " + t.id + ": " + cudart + " is version " + *cudart_version +
                        ", not CUDA " + t.version.str(),
                    "reinstall the toolkit: `cvm uninstall " + t.id + "` then `cvm install cuda " +
                        t.version.str() + "`");
        }
    }

    void check_cudnn_for_toolkit() {
        if (!in_.resolved || !in_.resolved->cudnn) return;
        const Entry& t = in_.resolved->toolkit;
        const Entry& c = *in_.resolved->cudnn;
        bool supported = true;
        std::string range;
        bool known = false;
        if (in_.registry) {
            if (auto span = registry::cudnn_supported_cuda(*in_.registry, c.id)) {
                known = true;
                const Version tk{{t.version.major(), t.version.minor()}};
                supported = !(tk < span->first) && !(span->second < tk);
                range = span->first.str() + " to " + span->second.str();
            }
        }
        if (!known) {
            if (auto id = c.cudnn_id()) {
                supported = id->serves(t.version);
                range = "CUDA " + id->cuda.str();
            }
        }
        if (!supported)
            add(Severity::error, "cudnn-cuda-mismatch",
                "cuDNN " + c.id + " supports " + range + ", not the selected toolkit " + t.id,
                "`cvm install cudnn " + c.version.str() + " --cuda " +
                    std::to_string(t.version.major()) + "." + std::to_string(t.version.minor()) +
                    "`, or select a toolkit it supports");
    }

    // ---- driver ---------------------------------------------------------------------------

    void check_driver() {
        const DriverInfo& d = in_.driver;
        if (!d.version) {
            std::string why = d.notes.empty() ? "" : " (" + d.notes.front() + ")";
            add(Severity::note, "no-driver",
                "no NVIDIA driver or GPU found" + why +
                    ": fine on a build machine, but programs cannot use a GPU here");
            return;
        }
        if (d.user_space_only)
            add(Severity::note, "driver-library-only",
                "the NVIDIA driver's user-space library is version " + *d.version + " (" +
                    d.source +
                    ") but no kernel module or nvidia-smi answers: no GPU here, or the driver's "
                    "kernel "
                    "module is not loaded");
        else if (d.smi_ran && d.gpus.empty())
            add(Severity::note, "no-gpu",
                "driver " + *d.version + " is installed but nvidia-smi lists no GPU");
        if (!in_.resolved || !in_.registry) return;
        auto have = registry::parse_driver_version(*d.version);
        if (!have) return;
        const Entry& t = in_.resolved->toolkit;
        const auto platform =
            in_.os == Os::Windows ? registry::Platform::Windows : registry::Platform::Linux;
        auto need = registry::minimum_driver(*in_.registry, t.version, platform,
                                             registry::DriverRule::Toolkit);
        if (!need || !(have->value < need->driver.value)) return;
        auto floor = registry::minimum_driver(*in_.registry, t.version, platform,
                                              registry::DriverRule::MinorCompat);
        const std::string fix = "install NVIDIA driver " + need->driver.text +
                                " or newer, or select an older toolkit (`cvm use`)";
        if (floor && !(have->value < floor->driver.value)) {
            add(Severity::warning, "driver-minor-compat",
                "driver " + *d.version + " is older than CUDA " + t.version.str() + " asks for (" +
                    need->driver.text + "); it runs through minor-version compatibility (from " +
                    floor->driver.text + "), without features that need the newer driver",
                fix);
        } else {
            add_driver_too_old(d, t, need->driver.text, fix);
        }
    }

    // Where no kernel module answers (driver-library-only) nothing runs on a GPU here anyway: a
    // build machine, so the old library is a warning; with a GPU, programs fail, an error.
    void add_driver_too_old(const DriverInfo& d, const Entry& t, const std::string& need,
                            const std::string& fix) {
        const std::string too_old =
            "driver " + *d.version + " is too old for CUDA " + t.version.str() + " (needs " + need;
        if (d.user_space_only)
            add(Severity::warning, "driver-too-old",
                too_old + "): no kernel module answers here, so nothing runs on a GPU now, but "
                          "with this driver library programs would fail with \"CUDA driver version "
                          "is insufficient for CUDA runtime version\"",
                fix);
        else
            add(Severity::error, "driver-too-old",
                too_old + "): programs fail with \"CUDA driver version is insufficient for CUDA "
                          "runtime version\"",
                fix);
    }

    // ---- variables ----------------------------------------------------------------------------

    void check_path() {
        auto path = env_get(in_.env, "PATH", in_.os);
        if (!path) return;
        ForeignDirs rules;
        rules.probe_filesystem = true;
        // cvm's own shims (an nvcc each) are no toolkit.
        if (!in_.store_layers.empty())
            rules.shims_dir = std::filesystem::u8path(in_.store_layers.front()) / "shims";
        std::vector<std::string> toolkits;
        std::set<std::string> seen;
        for (const auto& dir : split_path_list(*path, in_.os)) {
            if (dir.empty() || !is_foreign_cuda_dir(dir, rules, in_.os, false)) continue;
            auto real = fs_.real_path(dir);
            std::string key = folded(real.value_or(dir), in_.os);
            if (in_.os == Os::Linux) {
                // A toolkit is where its programs really are: a merged view's bin (a folder of
                // links, its nvcc maybe cvm's shim) is the toolkit's, whose bin an Lmod cuda module
                // leaves behind the cudnn module's view.
                for (const char* program : {"ptxas", "nvcc"})
                    if (auto file = fs_.real_path(dir + "/" + program)) {
                        key = folded(path_dirname(*file), in_.os);
                        break;
                    }
            }
            if (in_.os == Os::Windows) {
                // One toolkit however many of its folders are on PATH (NVIDIA's installer adds
                // bin and libnvvp); a folder of cuDNN DLLs without nvcc.exe (cvm puts cuDNN's bin
                // on PATH) is no toolkit.
                const std::string marker = "\\nvidia gpu computing toolkit\\cuda\\";
                const auto at = key.find(marker);
                if (at != std::string::npos)
                    key = key.substr(0, key.find('\\', at + marker.size()));
                else if (fs_.is_file(dir + "\\nvcc.exe"))
                    key = key.substr(0, key.find_last_of('\\'));
                else
                    continue;
            }
            if (seen.insert(key).second) toolkits.push_back(dir);
        }
        if (toolkits.size() < 2) return;
        std::string list;
        for (const auto& t : toolkits)
            list += (list.empty() ? "" : ", ") + t;
        add(Severity::warning, "several-cuda-on-path",
            std::to_string(toolkits.size()) + " CUDA toolkits' folders are on PATH (" + list +
                "): the first one's tools run, whatever the project needs",
            "keep one (cvm's environment removes the others: " + shell_hint(in_.os, in_.env) + ")");
    }

    void check_cuda_path() {
        if (!in_.resolved) return;
        std::optional<std::string> wanted;
        for (const auto& c : in_.selected_changes)
            if (c.name == "CUDA_PATH") wanted = c.value;
        if (!wanted) return;
        std::vector<std::string> wrong;
        std::string shown;
        for (const char* name : {"CUDA_PATH", "CUDA_HOME"}) {
            auto value = env_get(in_.env, name, in_.os);
            if (!value || value->empty()) continue;
            auto a = fs_.real_path(*value), b = fs_.real_path(*wanted);
            if (folded(a.value_or(*value), in_.os) == folded(b.value_or(*wanted), in_.os)) continue;
            wrong.push_back(name);
            shown += (shown.empty() ? "" : ", ") + std::string(name) + "=" + *value;
        }
        if (wrong.empty()) return;
        add(Severity::warning, "cuda-path-elsewhere",
            shown + " in this shell, not the selection's " + *wanted +
                ": build systems (CMake, setup.py, MSBuild) use the toolkit it names",
            shell_hint(in_.os, in_.env));
    }

    // ---- frameworks -------------------------------------------------------------------------

    void check_frameworks() {
        if (!in_.python) {
            if (!in_.python_failure.empty())
                add(Severity::warning, "python-unanswered",
                    in_.python_failure + ": what its frameworks load was not checked",
                    "check that it runs (`PY -I -c 'import sys'`), or set CVM_PYTHON to the Python you use");
            return;
        }
        for (const auto& f : in_.python->frameworks) {
            const std::string label = framework_title(f.name) + (f.version.empty() ? "" : " " + f.version);
            if (!f.damaged.empty()) {
                add(Severity::error, "framework-damaged",
                    label + " in " + in_.python->executable + " is half-installed: " + f.damaged +
                        ", so importing it fails",
                    reinstall_fix(f, in_.python->executable));
                continue;
            }
            if (!f.cuda) {
                add(Severity::note, "framework-cpu-only",
                    label + " in " + in_.python->executable + " is a CPU-only build");
                continue;
            }
            auto built = parse_version(*f.cuda, 1, 3);
            if (f.own_cudnn_dir) check_own_cudnn(f, label);
            if (f.own_cublas && in_.os == Os::Linux) check_own_cublas(f, label);
            if (!in_.resolved || !built) continue;
            const Entry& t = in_.resolved->toolkit;
            const std::string want = built->str() + (f.cudnn ? "+" + *f.cudnn : std::string());
            if (built->major() != t.version.major()) {
                const bool uses_system = !f.own_cudnn_dir && f.name == "tensorflow";
                add(uses_system ? Severity::error : Severity::warning, "framework-cuda-mismatch",
                    label + " was built with CUDA " + *f.cuda + " but the selection is CUDA " +
                        t.version.str() +
                        (uses_system ? ": it will not find the CUDA libraries it needs"
                                     : ": CUDA extensions compiled with the selected toolkit "
                                       "will not load into it"),
                    "`cvm use " + want + "` (install it with `cvm install " + want +
                        "`), or install a build of the framework for CUDA " + t.version.str());
                continue;
            }
            if (f.cudnn && !f.own_cudnn_dir && in_.resolved->cudnn) {
                auto expected = parse_version(*f.cudnn, 1, 4);
                const Entry& c = *in_.resolved->cudnn;
                if (expected && expected->major() != c.version.major())
                    add(Severity::error, "framework-cudnn-mismatch",
                        label + " was built with cuDNN " + *f.cudnn + " but the selection has " +
                            "cuDNN " + c.version.str() + ": it fails to load libcudnn",
                        "`cvm use " + t.version.str() + "+" + *f.cudnn + "`");
            }
        }
    }

    // A framework with its own cuDNN wheel: what it loads under cvm's LD_LIBRARY_PATH, judged
    // from files (framework_cudnn.h), with the one way out.
    void check_own_cudnn(const FrameworkInstall& f, const std::string& label) {
        std::optional<Version> selected;
        if (in_.resolved && in_.resolved->cudnn) selected = in_.resolved->cudnn->version;
        auto own = f.own_cudnn_version ? parse_version(*f.own_cudnn_version, 1, 4) : std::nullopt;
        const std::string where = " (" + *f.own_cudnn_dir + ")";
        if (!own || in_.os == platform::Os::Windows) {
            // Windows' PyTorch loads torch/lib's DLLs skipping PATH; an unknown release is not judged.
            add(Severity::note, "framework-own-cudnn",
                label + " brings its own cuDNN" + (f.own_cudnn_version ? " " + *f.own_cudnn_version : std::string()) +
                    " in " + *f.own_cudnn_dir);
            return;
        }
        if (f.name == "tensorflow") {
            // TensorFlow's XLA opens libcudnn.so.9 by name: the selection's may come first.
            if (selected && selected->str() != own->str())
                add(Severity::warning, "framework-cudnn-other",
                    label + " brings its own cuDNN " + own->str() + where + ", but it opens cuDNN by name and cvm puts "
                        "the selected " + selected->str() + " first on LD_LIBRARY_PATH: it may load that one",
                    select_own_cudnn_fix(*f.own_cudnn_dir, *own, toolkit_or_placeholder()));
            else
                add(Severity::note, "framework-own-cudnn", label + " brings its own cuDNN " + own->str() + where);
            return;
        }
        auto v = judge_own_cudnn(f, label, selected, toolkit_or_placeholder());
        if (!v) return;
        switch (v->kind) {
        case FrameworkCudnnVerdict::Kind::Own:
            add(Severity::note, "framework-own-cudnn", v->message + where);
            break;
        case FrameworkCudnnVerdict::Kind::Mixed:
            add(Severity::warning, "framework-cudnn-mixed", v->message, v->fix);
            break;
        case FrameworkCudnnVerdict::Kind::Refused:
            add(Severity::error, "framework-cudnn-refused", v->message, v->fix);
            break;
        }
    }

    // A framework with its own cuBLAS wheel: which libcublas and libcublasLt it loads under the
    // selection's LD_LIBRARY_PATH (this shell's without one), judged from files (framework_cublas.h).
    void check_own_cublas(const FrameworkInstall& f, const std::string& label) {
        Env env = in_.env;
        if (in_.resolved) apply_changes(env, in_.selected_changes, in_.os);
        std::vector<std::string> library_path;
        if (auto it = env.find("LD_LIBRARY_PATH"); it != env.end())
            library_path = split_path_list(it->second, in_.os);
        auto v = judge_own_cublas(f, label, library_path, fs_);
        if (!v) return;
        switch (v->kind) {
        case FrameworkCublasVerdict::Kind::Own:
            add(Severity::note, "framework-own-cublas", v->message);
            break;
        case FrameworkCublasVerdict::Kind::Mixed:
            add(Severity::warning, "framework-cublas-mixed", v->message, v->fix);
            break;
        case FrameworkCublasVerdict::Kind::Other:
            add(Severity::warning, "framework-cublas-other", v->message, v->fix);
            break;
        }
    }

    std::string toolkit_or_placeholder() const {
        return in_.resolved ? in_.resolved->toolkit.version.str() : std::string("CUDA");
    }

    const DoctorInputs& in_;
    const FileSystemView& fs_;
    DoctorReport report_;
    std::vector<std::string> not_loading_now_;
};

} // namespace

DoctorReport diagnose(const DoctorInputs& inputs) {
    RealFileSystem real;
    DoctorInputs copy = inputs;
    if (!copy.fs) copy.fs = &real;
    return Doctor(copy).run();
}

} // namespace cvm::doctor
