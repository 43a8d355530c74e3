#include <algorithm>
#include <cstdio>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/framework_warning.h"
#include "cli/install_backend.h"
#include "cli/release_registry.h"
#include "cli/use_for.h"
#include "compat/auto_host_compiler.h"
#include "project/projects.h"
#include "store/resolve.h"
#include "spec/spec_match.h"
#include "text/terminal_text.h"
#include "platform/platform.h"
#include "registry/nccl.h"
#include "registry/registry.h"

namespace cvm::cli {

namespace {

// The toolkit a spec asks for, in a line: "CUDA 12.4", or "the toolkit mine (CUDA 11.8.0)" for a
// toolkit's name (its one release in `toolkits`).
std::string asked_toolkit(const Spec& s, const std::vector<Version>& toolkits) {
    if (s.name.empty() || toolkits.empty()) return "CUDA " + s.cuda.str();
    return "the toolkit " + s.name + " (CUDA " + toolkits.front().str() + ")";
}

// Why no known NCCL build fits the spec's NCCL part for one of `toolkits` (empty when one does, or
// the spec names no NCCL). Known: registry/nccl.toml and every NCCL of every store layer.
std::string unknown_nccl_reason(const Store& store, const Spec& s,
                                const std::vector<Version>& toolkits) {
    if (!s.nccl) return {};
    std::vector<NcclId> builds;
    try {
        for (const auto& r : registry::load_nccl_releases())
            for (const auto& b : r.builds) builds.push_back({r.version, b.cuda});
    } catch (const registry::RegistryError&) {
        // Without the list, what is installed decides.
    }
    for (const auto& [id, layer] : store.ids(Kind::Nccl)) {
        (void)layer;
        if (auto n = parse_nccl_id(id)) builds.push_back(*n);
    }
    bool any = false;
    for (const auto& b : builds) {
        if (!nccl_matches(s, b)) continue;
        any = true;
        for (const auto& t : toolkits)
            if (nccl_fits(s, b, t)) return {};
    }
    if (!any)
        return "no known NCCL release is " + s.nccl->str() +
               (s.nccl_cuda ? " for CUDA " + s.nccl_cuda->str() : std::string()) +
               " (see `cvm list --available nccl`)";
    return "no known NCCL " + s.nccl->str() + " is built for " + asked_toolkit(s, toolkits) +
           " (see `cvm list --available nccl`)";
}

// Why no known release satisfies `s` (empty when one does). "Known": the shipped registry plus
// every toolkit and cuDNN build of every store layer, installed or imported.
std::string unknown_reason(const Store& store, const std::optional<registry::Registry>& reg, const Spec& s) {
    std::vector<Version> toolkits;
    if (!s.name.empty()) {
        // A toolkit's name (import --as) is known once registered; else resolve says so.
        auto named = store.find(Kind::Cuda, s.name);
        if (!named) return {};
        toolkits.push_back(named->version);
    }
    if (reg && s.name.empty())
        for (const auto* r : registry::find_cuda_releases(*reg, s.cuda)) toolkits.push_back(r->version);
    for (const auto& [id, layer] : s.name.empty() ? store.ids(Kind::Cuda) : decltype(store.ids(Kind::Cuda)){}) {
        (void)layer;
        if (auto v = parse_toolkit_id(id); v && toolkit_matches(s, id, *v)) toolkits.push_back(*v);
    }
    if (toolkits.empty())
        return "no known CUDA release is " + s.cuda.str() +
               " (see `cvm list --available cuda`; `cvm update` looks for releases newer than cvm's list)";
    if (!s.cudnn) return unknown_nccl_reason(store, s, toolkits);
    std::vector<CudnnId> builds;
    if (reg)
        for (const auto* r : registry::find_cudnn_releases(*reg, *s.cudnn))
            for (const auto& b : r->builds) builds.push_back({r->version, b.cuda});
    for (const auto& [id, layer] : store.ids(Kind::Cudnn)) {
        (void)layer;
        if (auto c = parse_cudnn_id(id)) builds.push_back(*c);
    }
    builds.erase(std::remove_if(builds.begin(), builds.end(),
                                [&s](const CudnnId& b) { return !cudnn_matches(s, b); }),
                 builds.end());
    if (builds.empty())
        return "no known cuDNN release is " + s.cudnn->str() +
               (s.cudnn_cuda ? " for CUDA " + s.cudnn_cuda->str() : std::string()) +
               " (see `cvm list --available cudnn`)";
    for (const auto& b : builds)
        for (const auto& t : toolkits)
            if (cudnn_fits(s, b, t)) return unknown_nccl_reason(store, s, toolkits);
    return "no known cuDNN " + s.cudnn->str() + " is built for " + asked_toolkit(s, toolkits) +
           " (see `cvm list --available cudnn`)";
}

// The newest installed cuDNN build for the toolkit `toolkit`, if any.
std::optional<CudnnId> installed_cudnn_for(const Store& store, const Version& toolkit) {
    std::optional<CudnnId> best;
    for (const auto& [id, layer] : store.ids(Kind::Cudnn)) {
        (void)layer;
        auto c = parse_cudnn_id(id);
        if (!c || !c->serves(toolkit)) continue;
        if (!best || best->version < c->version) best = c;
    }
    return best;
}

// {"spec": ..., "file": ..., "line": ...}: a selection as `cvm use --json` shows it.
nlohmann::json selection_json(const std::optional<Selection>& sel) {
    nlohmann::json doc;
    if (!sel || sel->origin == Selection::Origin::None) {
        doc["spec"] = nullptr;
        return doc;
    }
    doc["spec"] = sel->spec.str();
    doc["set_by"] = sel->origin_text();
    if (!sel->file.empty()) {
        doc["file"] = sel->file.u8string();
        doc["line"] = sel->line;
    }
    return doc;
}

void show_selection(const Store& store, bool global, bool json) {
    std::optional<Selection> sel;
    if (global) {
        try {
            sel = read_version_file(store.global_version_file(), Selection::Origin::Global);
        } catch (const SelectionError& e) {
            throw UsageError(e.what());
        }
    } else {
        sel = current_selection(store, std::nullopt);
    }
    if (json) return print_json(selection_json(sel));
    if (!sel || sel->origin == Selection::Origin::None) {
        note(global ? "no global CUDA version is set; run `cvm use --global SPEC` (see `cvm list`)"
                    : "no CUDA version is selected here; run `cvm use SPEC` (this folder) or `cvm use --global "
                      "SPEC` (see `cvm list`)");
        return;
    }
    std::printf("%s (set by %s)\n", sel->spec.str().c_str(),
                escape_controls(sel->origin_text()).c_str());
}

void unset_selection(const Store& store, bool global, bool json) {
    fs::path file = global ? store.global_version_file() : fs::current_path() / ".cudaversion";
    std::error_code ec;
    auto st = fs::symlink_status(file, ec);
    if (!fs::exists(st)) {
        note(std::string("no ") + (global ? "global default" : ".cudaversion here") + " (" + file.u8string() +
             "): nothing to unset");
        if (json) print_json({{"file", file.u8string()}, {"removed", false}});
        return;
    }
    if (!fs::is_regular_file(st))
        throw Failure(file.u8string() + " is not a regular file (a link or a folder), so cvm did not write " +
                      "it and leaves it alone; remove it yourself if you mean to");
    fs::remove(file);
    report("removed " + file.u8string());
    if (json) print_json({{"file", file.u8string()}, {"removed", true}});
    try {
        Selection sel = current_selection(store, std::nullopt);
        if (sel.origin == Selection::Origin::None) {
            if (!json) hint(global ? "cvm use --global SPEC" : "cvm use SPEC", "nothing is selected here now");
        } else if (!global) {
            note("the selection here is now " + sel.spec.str() + " (set by " + sel.origin_text() + ")");
        }
    } catch (const UsageError&) {
        // A bad file further up is reported by the commands that read it.
    }
}

// `cvm use --install`: installs what `s` names that is missing, before anything is written.
// Where the install code lives in cvm-install, the whole command moves there.
nlohmann::json install_first(const Spec& s, const std::string& typed, bool global, bool force, bool json) {
    if (install_backend().install_missing) return install_backend().install_missing(s);
    if (!install_backend().forward)
        throw Failure("use: this cvm was built without downloads; run `cvm install FILE` for an archive, then "
                      "`cvm use SPEC`");
    std::vector<std::string> args{"use", "--install"};
    if (global) args.emplace_back("--global");
    if (force) args.emplace_back("--force");
    if (json) args.emplace_back("--json");
    args.push_back(typed);
    forward_to_install_program(args);
}

// The spec with a cuDNN part added in its place, before an NCCL part (13.0+9.19+nccl2.28).
Spec with_cudnn(Spec s, const Version& cudnn) {
    s.cudnn = cudnn;
    s.cudnn_cuda.reset();
    return s;
}

} // namespace

void register_use(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "use", "Select CUDA[+CUDNN] for this folder (.cudaversion) or globally; without SPEC, show the selection. "
               "The selection order: CVM_VERSION (cvm shell), then the nearest .cudaversion from this folder upward, then the global default (cvm use -g); a SPEC given to a command comes first.");
    auto spec = std::make_shared<std::string>();
    auto global = std::make_shared<bool>(false);
    auto force = std::make_shared<bool>(false);
    auto unset = std::make_shared<bool>(false);
    auto install = std::make_shared<bool>(false);
    auto json = std::make_shared<bool>(false);
    auto for_what = std::make_shared<std::string>();
    cmd->add_option("spec", *spec, "e.g. 11.2, 12.4.1+9, 11.2+8.1.0.77, system");
    cmd->add_option("--for", *for_what,
                    "pick CUDA[+CUDNN] for a framework: tensorflow==2.10, torch==2.5, torch>=2.4,<2.6 or torch "
                    "(the newest this machine runs), or . or DIR (the active Python's frameworks, else the pins "
                    "of the folder's requirements*.txt, pyproject.toml, environment.yml, pixi.toml, Pipfile), "
                    "and say why")
        ->type_name("FRAMEWORK");
    cmd->add_flag("--global,-g", *global, "the global default ($CVM_ROOT/version) instead of ./.cudaversion");
    cmd->add_flag("--force", *force,
                  "write SPEC (or the choice of --for) even when it is not installed or no known release satisfies it");
    cmd->add_flag("--unset", *unset, "remove ./.cudaversion (with --global, the global default)");
    cmd->add_flag("--install", *install, "install what SPEC (or the choice of --for) names that is missing, then select it");
    cmd->add_flag("--json", *json, "print one JSON document");
    cmd->callback([spec, global, force, unset, install, json, for_what] {
        if (!for_what->empty()) {
            if (!spec->empty() || *unset)
                throw UsageError("use: --for picks the SPEC itself; run `cvm use --for " + printable(*for_what) +
                                 "` without a SPEC or --unset");
            return use_for({*for_what, *global, *install, *force, *json});
        }
        if (*unset && !spec->empty())
            throw UsageError("use: --unset takes no SPEC (got " + printable(*spec) + "); run `cvm use --unset`");
        if (*force && spec->empty()) throw UsageError("use: --force needs a SPEC; run `cvm use --force SPEC`");
        if (*install && spec->empty())
            throw UsageError("use: --install needs a SPEC; run `cvm use --install SPEC`", "usage");
        Store store = open_store();
        if (*unset) return unset_selection(store, *global, *json);
        if (spec->empty()) return show_selection(store, *global, *json);

        Spec s = spec_argument(*spec);
        std::string where;
        fs::path file;
        if (*global) {
            file = store.global_version_file();
            where = "globally";
        } else {
            file = fs::current_path() / ".cudaversion";
            where = "in " + file.u8string();
        }
        std::string unknown;
        if (!s.system) {
            std::optional<registry::Registry> reg;
            std::string reg_error;
            try {
                reg = release_registry(store);
            } catch (const registry::RegistryError& e) {
                reg_error = e.what();
            }
            unknown = unknown_reason(store, reg, s);
            // nvcc's build number, copied from `nvcc --version` (11.8.89): the release to write.
            if (!unknown.empty() && !*force && s.name.empty())
                if (auto nvcc = registry::nvcc_build_number(reg ? &*reg : nullptr, s.cuda)) {
                    const std::string whole = s.str(), cuda = s.cuda.str();
                    throw UsageError("use: " + registry::nvcc_build_line(s.cuda, *nvcc, *global ? "cvm use --global" : "cvm use",
                                                                         whole.substr(cuda.size()), "nothing written"),
                                     "invalid_input");
                }
            if (!unknown.empty() && !*force) {
                if (!reg)
                    throw UsageError("use: " + s.str() + ": " + unknown + ", and the release registry cannot be " +
                                     "read (" + reg_error + "); nothing written; `cvm use --force " + s.str() +
                                     "` writes it anyway");
                throw UsageError("use: " + s.str() + ": " + unknown + "; nothing written; `cvm use --force " +
                                 s.str() + "` writes it anyway");
            }
        }
        // As `pyenv local` and `pyenv global`: a selection nothing installed satisfies is not
        // written (a shim would only fail on it); --install installs it first, --force writes it.
        if (!s.system && unknown.empty() && !*force && !*install) {
            try {
                resolve(store, s);
            } catch (const ResolveError& e) {
                const std::string g = *global ? "--global " : "";
                throw Failure("use: nothing written: " + std::string(e.what()) + "; `cvm use " + g + "--install " +
                                  s.str() + "` installs and selects it, `cvm use " + g + "--force " + s.str() +
                                  "` writes it anyway",
                              "not_installed");
            }
        }
        nlohmann::json doc;
        if (*install && !s.system) doc["installed"] = install_first(s, *spec, *global, *force, *json);
        if (*global) fs::create_directories(store.root());
        write_version_file(file, s, unknown);
        if (!*global) remember_project(store, file);
        doc["spec"] = s.str();
        doc["file"] = file.u8string();
        doc["global"] = *global;
        doc["active"] = nullptr;
        auto done = [&] {
            if (*json) print_json(doc);
        };
        if (auto session = platform::get_env("CVM_VERSION"); session && !session->empty())
            note("CVM_VERSION=" + *session + " (a session override, `cvm shell`) still wins in this shell; " +
                 "`cvm shell --unset` drops it");
        if (s.system) {
            report("selected the system toolkit " + where);
            doc["active"] = "system";
            return done();
        }
        if (!unknown.empty()) {
            note("wrote " + s.str() + " " + where + " (--force: " + unknown + ")");
            return done();
        }
        try {
            Resolved r = resolve(store, s);
            doc["active"] = r.active();
            report("selected " + r.active() + " " + where);
            std::string compiler = compat::host_compiler_line(compat::refresh_host_compiler(store, r.toolkit));
            // Only a warning of it stays with --quiet; "host compiler: gcc-13 is handed to nvcc" is a report.
            if (compiler.rfind("warning: ", 0) == 0) note(compiler);
            else if (!compiler.empty()) report(compiler);
            warn_framework_libraries(store, r);
            auto c = s.cudnn ? std::nullopt : installed_cudnn_for(store, r.toolkit.version);
            if (c)
                hint("cuDNN " + c->str() + " is installed for this toolkit but not selected; to use it: " +
                     "cvm use " + std::string(*global ? "--global " : "") + with_cudnn(s, c->version).str());
            else
                hint("cvm exec -- nvcc --version", "runs a tool with it; or eval \"$(cvm env)\" in this shell");
        } catch (const ResolveError& e) {
            note("wrote " + s.str() + " " + where + "; " + e.what());
        }
        done();
    });
}

} // namespace cvm::cli
