#include "library_checks.h"

#include "diagnose_support.h"
#include "file_system_view.h"
#include "library_loads.h"

#include "activation/environment.h"
#include "spec/spec.h"
#include "platform/platform.h"

#include <algorithm>
#include <optional>
#include <utility>

namespace cvm::doctor {

namespace {

using Os = platform::Os;

bool any_found(const std::vector<LibraryLoad>& loads) {
    return std::any_of(loads.begin(), loads.end(),
                       [](const LibraryLoad& l) { return l.path || l.failure; });
}

// "dir/libcudnn.so.8 -> libcudnn.so.8.0.5 (8.0.5)"
std::string where_loaded(const LibraryLoad& l) {
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
std::string remove_hint(const DoctorInputs& in, const LibraryLoad& l, bool through_cvm) {
    const std::string dir = path_dirname(*l.path);
    const std::string activate = through_cvm ? "" : ", or " + shell_hint(in.os, in.env);
    // A system folder stays where it is (removing it breaks the machine): the package that
    // put the file there is what goes.
    if (is_system_folder(dir, in.os) || (in.os == Os::Linux && l.mechanism == "default folder")) {
        if (in.os == Os::Windows)
            return "uninstall the program that put " + *l.path + " there (Settings > Apps)" +
                   activate;
        return "remove or replace the package that installed " + *l.path + " (`dpkg -S " + *l.path +
               "` names it; `rpm -qf` on RPM systems), never " + dir + " itself" + activate;
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

void check_set(const DoctorInputs& in, DoctorReport& report, const std::vector<LibraryLoad>& loads,
               const LibrarySet& set, bool selected) {
    if (loads.empty()) return;
    const LibraryLoad& main = loads.front();
    const std::string scope = selected ? " through cvm" : "";
    if (main.failure) {
        add_finding(report, Severity::error, "library-unloadable",
                    main.name + " cannot load" + scope + ": the loader stops at " + *main.failure,
                    "replace or remove that file");
        return;
    }
    if (!main.path) {
        if (selected)
            add_finding(report, Severity::error, "library-missing",
                        main.name + " is not found" + scope + ": the selection (" +
                            report.selection_spec + ") does not provide it",
                        "reinstall it: `cvm uninstall ID` then `cvm install " +
                            report.selection_spec + "`");
        return;
    }
    if (selected && main.from_selection == false) {
        add_finding(report, Severity::error, "library-outside-selection",
                    main.name + " loads from " + where_loaded(main) + " (" + main.origin +
                        "), not from the selected " + set.family + ", even through cvm",
                    remove_hint(in, main, true));
    }
    const std::string main_dir = path_dirname(main.real_path.value_or(*main.path));
    for (std::size_t i = 1; i < loads.size(); ++i) {
        const LibraryLoad& sub = loads[i];
        if (sub.failure) {
            add_finding(report, Severity::error, "library-unloadable",
                        sub.name + " cannot load" + scope + ": the loader stops at " + *sub.failure,
                        "replace or remove that file");
            continue;
        }
        if (!sub.path) {
            add_finding(report, Severity::error, "sublibrary-missing",
                        sub.name + " is missing: " + main.name + " (" + *main.path +
                            ") loads it on first use and the program fails with \"Could not "
                            "load library " +
                            sub.name + "\"",
                        "copy every library of the same " + set.family + " build next to " +
                            *main.path + ", or reinstall it with `cvm install`");
            continue;
        }
        const std::string sub_dir = path_dirname(sub.real_path.value_or(*sub.path));
        const bool other_dir = folded(sub_dir, in.os) != folded(main_dir, in.os);
        const bool other_version = sub.version && main.version && *sub.version != *main.version;
        if (other_dir || other_version) {
            add_finding(report, Severity::error, "sublibraries-mixed",
                        sub.name + " loads from " + where_loaded(sub) + " but " + main.name +
                            " from " + where_loaded(main) +
                            ": a process mixing cuDNN libraries of different builds fails or "
                            "computes wrongly",
                        remove_hint(in, sub, selected));
        }
    }
}

// This shell against cvm's environment, for a set the selection provides. A main library that
// does not load here at all goes into `not_loading_now`, for one finding naming them all.
void check_current_against_selected(const DoctorInputs& in, DoctorReport& report,
                                    const std::vector<LibraryLoad>& now,
                                    const std::vector<LibraryLoad>& via_cvm,
                                    std::vector<std::string>& not_loading_now) {
    if (now.empty() || via_cvm.empty()) return;
    const LibraryLoad& a = now.front();
    const LibraryLoad& b = via_cvm.front();
    if (!b.path || b.from_selection != true) return; // the selected scenario has its own finding
    if (!a.path) {
        not_loading_now.push_back(a.name);
        return;
    }
    // The same file however it is reached (a view's link, a distribution's folder the
    // selection was assembled from): the shell loads what cvm would.
    const std::string real_a = folded(a.real_path.value_or(*a.path), in.os);
    const std::string real_b = folded(b.real_path.value_or(*b.path), in.os);
    if (real_a == real_b) return;
    if (a.from_selection != true) {
        add_finding(report, Severity::warning, "library-not-selected",
                    "a program started in this shell loads " + a.name + " from " + where_loaded(a) +
                        " (" + a.origin + "), not the selected one " + *b.path,
                    shell_hint(in.os, in.env));
    }
}

} // namespace

void check_libraries(const DoctorInputs& in, DoctorReport& report) {
    Scenario current{"current", in.env};
    std::optional<Scenario> selected;
    if (in.resolved) {
        Env env = in.env;
        apply_changes(env, in.selected_changes, in.os);
        selected = Scenario{"selected", std::move(env)};
    }

    std::vector<std::string> not_loading_now;
    for (const auto& set : library_sets(in)) {
        auto now = load_set(in, current, set);
        std::vector<LibraryLoad> via_cvm;
        if (selected) via_cvm = load_set(in, *selected, set);
        if (!set.probing || any_found(now) || any_found(via_cvm)) {
            // A set the selection does not name (cuDNN beside a toolkit chosen alone) is
            // judged as the shell loads it, never as "outside the selection".
            if (selected && !set.probing) {
                check_set(in, report, via_cvm, set, true);
                check_current_against_selected(in, report, now, via_cvm, not_loading_now);
            } else {
                check_set(in, report, now, set, false);
            }
            report.libraries.insert(report.libraries.end(), now.begin(), now.end());
            report.libraries.insert(report.libraries.end(), via_cvm.begin(), via_cvm.end());
        }
    }
    if (!not_loading_now.empty()) {
        std::string names;
        for (const auto& n : not_loading_now)
            names += (names.empty() ? "" : ", ") + n;
        add_finding(report, Severity::warning, "library-not-selected",
                    names + (not_loading_now.size() == 1 ? " does" : " do") +
                        " not load in this shell; through cvm the selection provides " +
                        (not_loading_now.size() == 1 ? "it" : "them"),
                    shell_hint(in.os, in.env));
    }
}

void check_python_dll_rule(const DoctorInputs& in, DoctorReport& report) {
    if (in.os != Os::Windows || !in.python) return;
    const auto version = parse_version(in.python->version, 1, 3);
    if (!version || *version < Version{{3, 8}}) return;
    for (const auto& l : report.libraries) {
        if (!l.main || l.role != "cudnn" || !l.path || l.mechanism != "PATH") continue;
        add_finding(report, Severity::note, "python-ignores-path",
                    l.name + " is found through PATH (" + path_dirname(*l.path) +
                        "), which Python " + in.python->version +
                        " does not search for extension modules' DLLs: a framework that does "
                        "not bring its own cuDNN must add the folder itself",
                    "in Python, call os.add_dll_directory(r\"" + path_dirname(*l.path) +
                        "\") before importing the framework");
        return;
    }
}

} // namespace cvm::doctor
