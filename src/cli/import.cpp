#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "cli/import.h"

#include "cli/commands.h"
#include "store/entry_trust.h"
#include "cli/context.h"
#include "cli/use_hint.h"
#include "cli/errors.h"
#include "config/config.h"
#include "layouts/cudnn_layouts.h"
#include "layouts/folder_facts.h"
#include "layouts/machine_search.h"
#include "layouts/nccl_layouts.h"
#include "activation/shims.h"
#include "layouts/toolkit_layouts.h"
#include "platform/platform.h"
#include "registry/registry.h"
#include "toolchain_ids.h"

namespace cvm::cli {

namespace {

std::string platform_name() {
    return platform::host_os() == platform::Os::Windows ? "windows-x86_64" : "linux-x86_64";
}

// --cuda contradicts the CUDA the cuDNN's libraries load.
class CudaContradicted : public UsageError {
public:
    using UsageError::UsageError;
};

fs::path source_of(const Entry& e) { return e.origin.empty() ? e.path : e.origin; }

// The file whose size and time tell a toolkit import has changed (cuDNN imports bring theirs).
std::string toolkit_stamp(const fs::path& dir) {
    for (const char* f : {"version.json", "version.txt", "bin/nvcc", "bin/nvcc.exe", "include/cuda.h"}) {
        std::string s = source_stamp(dir / fs::u8path(f));
        if (!s.empty()) return s;
    }
    return {};
}

// An import another user could change is registered (the user may fix its owner or mode), but
// said at once, as `cvm list` and `cvm use` will: nothing of it is run or loaded until then.
void warn_untrusted(const Store& store, Kind kind, const std::string& id) {
    try {
        if (auto e = store.find(kind, id))
            if (std::string doubt = entry_doubt_text(*e); !doubt.empty())
                note("warning: " + doubt + "; cvm runs and loads nothing of " +
                     std::string(kind_dir(kind)) + " " + id + " until then");
    } catch (const std::exception&) {
    }
}

// Two toolkits of one release (a hand-made 11.8 and Debian's): the second is kept by a name.
std::string keep_both_hint(const Entry& e, const ImportRun& run) {
    if (e.kind != Kind::Cuda) return {};
    const fs::path given = run.folder.empty() ? source_of(e) : run.folder;
    return "; to keep both, register this one under a name: `cvm import " + given.u8string() +
           " --as NAME` (then `cvm use NAME`)";
}

// Registers one entry (with the links of its assembled root, if any), or says it is already
// there. Returns true when something was added.
bool register_entry(const Store& store, Entry e, ImportRun& run, const std::vector<RootLink>& plan = {}) {
    if (e.kind == Kind::Cuda && e.stamp.empty()) e.stamp = toolkit_stamp(source_of(e));
    const std::string key = std::string(kind_dir(e.kind)) + "/" + e.id;
    const std::string where = run.found.empty() ? "" : " (" + run.found + ")";
    const std::string what = std::string(kind_dir(e.kind)) + " " + e.id;
    if (auto [it, fresh] = run.registered.emplace(key, source_of(e)); !fresh) {
        // Reached twice in one run (a wheel from <site-packages>/nvidia and from nvidia/cudnn),
        // or the same release in two places: the first one found is kept.
        std::error_code ec;
        if (!fs::equivalent(it->second, source_of(e), ec))
            note(what + " in " + source_of(e).u8string() + where + " is the same release as the one from " +
                 it->second.u8string() + ", which is kept" + keep_both_hint(e, run));
        return false;
    }
    if (e.kind == Kind::Cuda && parse_toolkit_id(e.id))
        // The same folder registered under a name (import --as) is that toolkit already.
        for (const auto& named : store.list(Kind::Cuda)) {
            std::error_code ec;
            if (named.layer == 0 && !parse_toolkit_id(named.id) &&
                fs::equivalent(source_of(named), source_of(e), ec)) {
                note(what + " from " + source_of(e).u8string() + " is already registered as " + named.id);
                run.record(named, source_of(e), "already_registered");
                return false;
            }
        }
    if (auto existing = store.find(e.kind, e.id)) {
        std::error_code ec;
        if (existing->layer != 0) {
            // A shared read-only store has it too: the user's own copy takes precedence.
            store.add_imported(e, false, plan);
            note("imported " + what + " from " + source_of(e).u8string() + where +
                 "; it hides the one in the read-only store " + store.layers()[existing->layer].u8string());
            run.record(e, source_of(e), "imported");
            return true;
        }
        if (fs::equivalent(source_of(*existing), source_of(e), ec)) {
            if (run.refresh.count(key)) {
                store.add_imported(e, true, plan);
                note("re-read " + what + " from " + source_of(e).u8string() + where + ": its files changed");
                run.record(e, source_of(e), "reread");
                return true;
            }
            note(what + " from " + source_of(e).u8string() + " is already registered");
            run.record(e, source_of(e), "already_registered");
            return false;
        }
        if (e.kind == Kind::Cuda && !parse_toolkit_id(e.id))
            throw Failure("import: a toolkit named " + e.id + " is already registered from " +
                          source_of(*existing).u8string() + "; choose another name, or run `cvm uninstall " +
                          e.id + "` first");
        if (e.kind == Kind::Cuda)
            throw Failure(what + " is already in the store from " + source_of(*existing).u8string() +
                          keep_both_hint(e, run) + ", or run `cvm uninstall " + e.id + "` first");
        throw Failure(what + " is already in the store at " + source_of(*existing).u8string() +
                      "; run `cvm uninstall " + e.id + "` first");
    }
    store.add_imported(e, false, plan);
    note("imported " + what + " from " + source_of(e).u8string() + where);
    warn_untrusted(store, e.kind, e.id);
    run.record(e, source_of(e), "imported");
    return true;
}

// The registry's releases with these three numbers, for an extracted archive that lost its name.
std::vector<KnownCudnnRelease> registry_cudnn_releases(const Version& three) {
    std::vector<KnownCudnnRelease> out;
    try {
        static const registry::Registry reg = registry::load_default_registry();
        for (const auto* r : registry::find_cudnn_releases(reg, three)) {
            KnownCudnnRelease k;
            k.version = r->version;
            for (const auto& b : r->builds) k.cuda_variants.push_back(b.cuda);
            out.push_back(std::move(k));
        }
    } catch (const std::exception&) {
        // No registry: the folder name or --cuda must say.
    }
    return out;
}

} // namespace

void ImportRun::record(const Entry& e, const fs::path& source, const char* status) {
    entries.push_back({{"kind", kind_dir(e.kind)}, {"id", e.id}, {"source", source.u8string()}, {"status", status}});
}

void ImportRun::skip(const fs::path& source, const std::string& reason) {
    skipped.push_back({{"source", source.u8string()}, {"reason", reason}});
}

// Both halves are read before anything is registered, so a folder that cannot be read leaves the
// store as it was.
FolderImport read_import_folder(const fs::path& dir, const std::optional<Version>& cuda_override) {
    std::error_code ec;
    fs::path path = fs::canonical(dir, ec);
    if (ec) throw UsageError("import: cannot read " + dir.u8string() + ": " + ec.message());
    if (path.u8string().find_first_of("\r\n") != std::string::npos)
        throw UsageError("import: the folder name contains a line break; rename the folder");
    try {
        refuse_list_separator("import: the folder", path); // its bin would split PATH
    } catch (const ConfigError& e) {
        throw UsageError(e.what());
    }
    FolderImport found;
    try {
        found.toolkit = toolkit_import_of(path, platform::host_os(), toolkit_identity);
    } catch (const std::runtime_error& e) {
        throw UsageError("import: " + error_text(e));
    }
    if (found.toolkit) found.toolkit->entry.platform = platform_name();
    try {
        found.cudnn = cudnn_import_of(path, platform::host_os(), cuda_override,
                                      found.toolkit ? std::optional<Version>(found.toolkit->entry.version)
                                                    : std::nullopt,
                                      registry_cudnn_releases);
    } catch (const CudnnCudaConflict& e) {
        throw CudaContradicted(e.what());
    } catch (const CudnnImportError& e) {
        throw UsageError(e.what());
    }
    try {
        found.nccl = nccl_import_of(path, platform::host_os(), cuda_override);
    } catch (const NcclCudaConflict& e) {
        throw CudaContradicted(e.what());
    } catch (const NcclImportError& e) {
        throw UsageError(e.what());
    }
    if (!found.toolkit && !found.cudnn && !found.nccl)
        throw NothingToImport(
            "import: " + path.u8string() +
            " holds neither a CUDA toolkit (bin/nvcc, include/cuda.h, version.json; or Debian's, "
            "conda's or pip's "
            "scattered layouts) nor a cuDNN build "
            "(include/cudnn_version.h with libcudnn*, a wheel's nvidia/cudnn, an archive's cuda/, "
            "NVIDIA's packages under usr/) nor an NCCL (lib/libnccl.so.2, a wheel's nvidia/nccl, "
            "NVIDIA's libnccl2 under usr/); point at the folder that contains include/");
    return found;
}

bool register_folder(const Store& store, const FolderImport& found, ImportRun& run) {
    fs::create_directories(store.root());
    bool added = false;
    if (found.toolkit) added |= register_entry(store, found.toolkit->entry, run, found.toolkit->plan);
    if (found.cudnn) {
        if (!found.cudnn->warning.empty()) note("warning: " + found.cudnn->warning);
        register_entry(store, found.cudnn->entry, run, found.cudnn->plan);
    }
    if (found.nccl) {
        if (!found.nccl->warning.empty()) note("warning: " + found.nccl->warning);
        register_entry(store, found.nccl->entry, run, found.nccl->plan);
    }
    return added;
}

namespace {

// Registers what `path` holds (a toolkit, a cuDNN build, an NCCL). Returns true when a toolkit
// was added (its shims are then needed).
bool import_folder(const Store& store, const fs::path& path, const std::optional<Version>& cuda_override,
                   ImportRun& run, const std::string& name = {}) {
    run.folder = path;
    FolderImport found = read_import_folder(path, cuda_override);
    if (!name.empty()) {
        if (!found.toolkit)
            throw UsageError("import: --as names a toolkit, and " + path.u8string() + " holds none (it holds " +
                             (found.cudnn ? "cuDNN " + found.cudnn->entry.id
                                          : "NCCL " + found.nccl->entry.id) +
                             "); import it without --as");
        found.toolkit->entry.id = name;
    }
    return register_folder(store, found, run);
}

std::string key_of(const Entry& e) { return std::string(kind_dir(e.kind)) + "/" + e.id; }

// --detect: re-reads imports whose files changed, reports those whose folder is gone, then
// imports every folder discovery finds. Returns true when a toolkit was added.
bool import_detected(const Store& store, ImportRun& run) {
    bool rehash_needed = false;
    std::vector<Entry> changed;
    for (Kind k : all_kinds())
        for (Entry& e : store.list(k)) {
            if (!e.imported || e.layer != 0) continue;
            SourceState st = source_state(source_of(e), e.stamp);
            if (st == SourceState::Gone) {
                note(std::string(kind_dir(k)) + " " + e.id + ": its folder " + source_of(e).u8string() +
                     " is gone; run `cvm uninstall " + e.id + "`");
                run.record(e, source_of(e), "source_gone");
            }
            else if (st == SourceState::Changed)
                changed.push_back(std::move(e));
        }
    for (const auto& e : changed) run.refresh.insert(key_of(e));
    std::vector<fs::path> done;
    for (const auto& e : changed) {
        std::error_code ec;
        done.push_back(fs::canonical(source_of(e), ec));
        run.found = "changed since it was imported";
        try {
            // A cuDNN imported with --cuda keeps the CUDA it was given, unless its libraries, changed
            // since, now load another CUDA's.
            try {
                // A toolkit imported under a name keeps it.
                const std::string name = e.kind == Kind::Cuda && !parse_toolkit_id(e.id) ? e.id : "";
                rehash_needed |= import_folder(
                    store, source_of(e),
                    e.kind != Kind::Cuda ? std::optional<Version>(e.cuda) : std::nullopt, run, name);
            } catch (const CudaContradicted&) {
                rehash_needed |= import_folder(store, source_of(e), std::nullopt, run);
            }
            if (!run.registered.count(key_of(e))) {
                store.remove(e.kind, e.id);
                note("forgot " + std::string(kind_dir(e.kind)) + " " + e.id + ": " + source_of(e).u8string() +
                     " no longer holds it");
                run.record(e, source_of(e), "forgotten");
            }
        } catch (const std::exception& x) {
            note("skipped " + source_of(e).u8string() + ": " + error_text(x));
            run.skip(source_of(e), error_text(x));
        }
    }
    auto folders = discover_folders(discover_inputs_from_environment());
    if (folders.empty() && changed.empty())
        note("found no CUDA toolkit, cuDNN or NCCL (CUDA_PATH*, default folders, /usr, conda "
             "environments, python "
             "wheels)");
    for (const auto& f : folders) {
        std::error_code ec;
        if (std::find(done.begin(), done.end(), fs::canonical(f.dir, ec)) != done.end()) continue;
        run.found = f.found;
        try {
            rehash_needed |= import_folder(store, f.dir, std::nullopt, run);
        } catch (const NothingToImport&) {
            note("nothing to import in " + f.dir.u8string() + " (" + f.found + ")");
            run.skip(f.dir, "nothing to import (" + f.found + ")");
        } catch (const std::exception& x) {
            note("skipped " + f.dir.u8string() + " (" + f.found + "): " + error_text(x));
            run.skip(f.dir, error_text(x));
        }
    }
    return rehash_needed;
}

// The spec that selects what one import registered ("12.4.1", "12+9.1.0", "11.2.2+8.1.0.77",
// "13.0+nccl2.28.9").
// What the import added, for the `cvm use` hint.
std::vector<AddedEntry> added_by(const ImportRun& run) {
    std::vector<AddedEntry> out;
    for (const auto& [key, source] : run.registered) {
        (void)source;
        const std::string kind = key.substr(0, key.find('/'));
        const std::string id = key.substr(key.find('/') + 1);
        out.push_back({kind == "cuda" ? Kind::Cuda : kind == "nccl" ? Kind::Nccl : Kind::Cudnn, id});
    }
    return out;
}

} // namespace

void register_import(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "import", "Register an existing toolkit, cuDNN or NCCL folder without copying it");
    auto dir = std::make_shared<std::string>();
    auto cuda = std::make_shared<std::string>();
    auto detect = std::make_shared<bool>(false);
    auto json = std::make_shared<bool>(false);
    auto name = std::make_shared<std::string>();
    cmd->add_option("dir", *dir, "a toolkit folder, a cuDNN folder, or a wheel's nvidia/cudnn");
    cmd->add_option("--as", *name,
                    "register the toolkit under NAME, selected by `cvm use NAME[+CUDNN]`, so that two "
                    "toolkits of one release live side by side (e.g. --as cuda11.8-debian)")
        ->type_name("NAME");
    cmd->add_option(
        "--cuda", *cuda,
        "the CUDA a cuDNN or NCCL folder was built for (e.g. 12 or 11.2), when it does not say");
    cmd->add_flag("--detect", *detect,
                  "register every toolkit and cuDNN on this machine (CUDA_PATH*, /usr/local/cuda-*, Program Files, "
                  "Debian's and NVIDIA's packages in /usr, conda environments, python's nvidia-* wheels); re-read "
                  "changed imports");
    cmd->add_flag("--json", *json, "print one JSON document");
    cmd->callback([dir, cuda, detect, json, name] {
        std::optional<Version> cuda_override;
        if (!cuda->empty()) {
            cuda_override = parse_version(*cuda, 1, 2);
            if (!cuda_override) throw UsageError("import: --cuda " + printable(*cuda) + " is not a CUDA version like 12 or 11.2");
        }
        if (!name->empty()) {
            if (std::string why = toolkit_name_problem(*name); !why.empty())
                throw UsageError("import: --as " + printable(*name) + " is not a toolkit name: " + why +
                                 "; e.g. --as cuda11.8-debian");
            if (*detect) throw UsageError("import: --as names one folder's toolkit; give DIR, not --detect");
        }
        Store store = open_store();
        bool rehash_needed = false;
        ImportRun run;
        if (*detect) {
            if (!dir->empty()) throw UsageError("import: give either DIR or --detect, not both");
            rehash_needed = import_detected(store, run);
        } else {
            if (dir->empty()) throw UsageError("import: give a folder (or --detect); e.g. cvm import /usr/local/cuda-12.4");
            std::error_code ec;
            fs::path path = fs::u8path(*dir);
            if (!fs::is_directory(path, ec))
                throw UsageError("import: " + *dir + " is not a folder; give the toolkit's folder, e.g. /usr/local/cuda-12.4");
            rehash_needed = import_folder(store, path, cuda_override, run, *name);
        }
        if (rehash_needed) {
            std::error_code e2;
            fs::path shim = shim_binary();
            if (fs::exists(shim, e2)) rehash(store, shim);
        }
        if (*json)
            print_json({{"imported", run.entries}, {"skipped", run.skipped}});
        else if (*detect)
            hint("cvm list", "shows what is registered; then `cvm use SPEC`");
        else
            use_hint(open_store(), added_by(run));
    });
}

} // namespace cvm::cli
