// cvm install: archives (FILE|URL), toolkits and cuDNN builds from NVIDIA's manifests, and specs.
#include <CLI/CLI.hpp>
#include <functional>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/errors.h"
#include "cli/lock_install.h"
#include "cli/release_registry.h"
#include "cli/use_hint.h"
#include "store/resolve.h"
#include "activation/shims.h"
#include "install/error.h"
#include "install/offline_fix.h"
#include "install/installer_package.h"
#include "install/progress.h"
#include "install/reinstall.h"
#include "install/store_install.h"
#include "platform/platform.h"
#include "registry/registry.h"

namespace cvm::cli {

namespace {

struct InstallArgs {
    std::vector<std::string> what;
    std::string components;
    std::string cuda;
    std::string sha256;
    bool allow_http = false;
    bool json = false;
    bool locked = false;
    bool allow_lock_urls = false;
    bool reinstall = false;
};

bool looks_like_archive_name(const std::string& s) {
    for (const char* ext :
         {".zip", ".whl", ".tgz", ".tar.xz", ".txz", ".tar.gz", ".tar", ".xz", ".run", ".exe"})
        if (s.size() > std::strlen(ext) &&
            s.compare(s.size() - std::strlen(ext), std::strlen(ext), ext) == 0)
            return true;
    return s.find('/') != std::string::npos || s.find('\\') != std::string::npos;
}

// Whether `s` is a spec or an id `cvm install` takes (12.4, 12.4+9, 8.1.0.77-cuda11.2, nccl2.21.5-cuda12.4).
bool names_a_release(const std::string& s) {
    try {
        return parse_spec(s).name.empty(); // a toolkit's name (import --as) is no release
    } catch (const SpecError&) {
    }
    return parse_cudnn_id(s) || (s.rfind("nccl", 0) == 0 && parse_nccl_id(s.substr(4)));
}

// After an install: the command that selects what was installed.
void install_hint(const Store& store, const std::vector<install::InstallResult>& results, bool locked) {
    if (results.empty()) return;
    if (locked) return hint("cvm current", "shows what the project now selects");
    std::vector<AddedEntry> added;
    for (const auto& r : results) added.push_back({r.kind, r.id});
    use_hint(store, added);
}

nlohmann::json results_json(const std::vector<install::InstallResult>& results) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& r : results)
        list.push_back({{"kind", kind_dir(r.kind)},
                        {"id", r.id},
                        {"path", r.path.u8string()},
                        {"already_installed", r.already_installed},
                        {"components", r.components}});
    return list;
}

using Body = std::function<std::vector<install::InstallResult>(install::StoreInstaller&, Store&)>;

// Runs `body` with an installer for the store and refreshes the shims when a toolkit came.
// StoreInstaller errors keep their exit code and name (errors.h).
std::vector<install::InstallResult> with_installer(bool allow_http, const Body& body, bool reinstall = false) {
    using namespace cvm::install;
    try {
        Store store = open_store();
        fs::create_directories(store.root());
        std::optional<registry::Registry> reg;
        registry::OverlayState overlay;
        try {
            reg = release_registry(store, &overlay);
        } catch (const std::exception& e) {
            note(std::string("no release registry (") + e.what() + "); versions are tried as given");
        }
        auto progress = quiet_flag() ? std::make_unique<Progress>(false, true) : Progress::for_stderr();
        StoreInstallerOptions options;
        options.progress = progress.get();
        options.registry = reg ? &*reg : nullptr;
        options.download.allow_insecure_http = options.download.allow_insecure_http || allow_http;
        options.reinstall = reinstall;
        StoreInstaller installer(store, options);
        std::vector<InstallResult> results;
        try {
            results = body(installer, store);
        } catch (const install::InstallError& e) {
            // A release cvm does not know may be newer than its registry.
            if (e.code() == "not_found" && reg) note(registry_age_line(overlay));
            throw;
        }
        bool toolkit_added = false;
        for (const auto& r : results)
            toolkit_added |= r.kind == Kind::Cuda && !r.already_installed;
        if (toolkit_added) {
            std::error_code ec;
            fs::path shim = shim_binary();
            if (fs::exists(shim, ec)) rehash(store, shim);
        }
        return results;
    } catch (const install::UnreachableError& e) {
        // The one file that was asked for: download it elsewhere (the toolkit's manifest install
        // says more itself, and throws a plain InstallError).
        throw Failure(e.what() + install::offline_fix(e.url()), e.code());
    } catch (const install::InstallError& e) {
        if (e.exit_code() == 2) throw UsageError(e.what(), e.code());
        throw Failure(e.what(), e.code());
    } catch (const std::filesystem::filesystem_error& e) {
        throw Failure("install: " + system_error_line(e), error_code_of(e.code()));
    }
}

std::vector<install::InstallResult>
run_install(const InstallArgs& a, install::StoreInstaller& installer, const Store& store) {
    using namespace cvm::install;
    std::vector<InstallResult> results;
    const auto& w = a.what;
    auto only = [&](bool components_ok, bool cuda_ok) {
        if (!components_ok && !a.components.empty())
            throw UsageError("install: --components only applies to `cvm install cuda VERSION` and to "
                             "NVIDIA's installers (cuda_*_linux.run, cuda_*_win10.exe)");
        if (!cuda_ok && !a.cuda.empty())
            throw UsageError("install: --cuda only applies to `cvm install cudnn VERSION`, `cvm "
                             "install nccl VERSION` and `cvm install FILE` of a cuDNN or NCCL archive");
    };
    if (a.reinstall) {
        if (a.locked || w.size() != 1)
            throw UsageError("install --reinstall takes one installed ID, e.g. `cvm install --reinstall 12.4.1`");
        only(false, false);
        results.push_back(install::reinstall(installer, store, w[0]));
    } else if (a.locked) {
        if (!w.empty())
            throw UsageError(
                "install --locked takes no FILE, URL or SPEC: it installs what cvm.lock records");
        only(false, false);
        results = install_locked(installer, store, installer.release_registry(), a.allow_lock_urls);
    } else if (a.allow_lock_urls) {
        throw UsageError("install: --allow-lock-urls only applies to `cvm install --locked`");
    } else if (w.empty()) {
        // What the selection here names, as `mise install` does with its config.
        only(false, false);
        Selection sel = current_selection(store, std::nullopt);
        if (sel.origin == Selection::Origin::None)
            throw UsageError("install: nothing is selected here to install; say what to install "
                             "(FILE, URL, SPEC, `cuda VERSION`, `cudnn VERSION --cuda N` or `nccl "
                             "VERSION --cuda N`) or run "
                             "`cvm use SPEC` first",
                             "not_selected");
        if (sel.spec.system) {
            note("'system' is selected (" + sel.origin_text() + "): nothing to install");
        } else {
            results = installer.install_spec(sel.spec);
            if (results.empty())
                note(sel.spec.str() + " (selected by " + sel.origin_text() + ") is already installed");
        }
    } else if (w[0] == "cuda" || w[0] == "cudnn" || w[0] == "nccl") {
        if (w.size() != 2)
            throw UsageError("install: `cvm install " + w[0] + " VERSION` takes one version");
        if (w[0] == "cuda") {
            only(true, false);
            results.push_back(installer.install_toolkit(w[1], split_component_list(a.components)));
        } else if (w[0] == "nccl") {
            only(false, true);
            results.push_back(installer.install_nccl(w[1], a.cuda));
        } else {
            only(false, true);
            results.push_back(installer.install_cudnn(w[1], a.cuda));
        }
    } else {
        if (w.size() != 1)
            throw UsageError("install: one FILE, URL or SPEC at a time (got " +
                             std::to_string(w.size()) + ")");
        const std::string& x = w[0];
        std::error_code ec;
        // A folder (an extracted archive, a toolkit's folder) is imported, not installed; a folder
        // that happens to be named like a spec here (`12.4`) does not hide the spec.
        if (fs::is_directory(fs::u8path(x), ec) && (looks_like_archive_name(x) || !names_a_release(x)))
            throw UsageError("install: " + printable(x) + " is a folder, not an archive: to add what it holds, "
                             "run `cvm import " + printable(x) + "`");
        // An NVIDIA installer takes --components as `cuda VERSION` does; an archive --cuda, for a
        // cuDNN or NCCL whose name no longer says its CUDA (as `cvm import --cuda` does).
        const bool regular = x.find("://") == std::string::npos && fs::is_regular_file(fs::u8path(x), ec);
        bool installer_file = regular && install::detect_installer(fs::u8path(x));
        only(installer_file, regular && !installer_file);
        if (installer_file) {
            results.push_back(
                installer.install_installer(fs::u8path(x), split_component_list(a.components)));
        } else if (x.find("://") != std::string::npos) {
            results.push_back(installer.install_url(x, a.sha256));
        } else if (regular) {
            results.push_back(installer.install_file(fs::u8path(x), "", a.cuda));
        } else if (auto type = fs::status(fs::u8path(x), ec).type();
                   type == fs::file_type::fifo || type == fs::file_type::character ||
                   type == fs::file_type::block || type == fs::file_type::socket) {
            // Never opened (a FIFO would wait for a writer, /dev/zero never ends); named for what
            // it is rather than "does not exist" (issue 33).
            throw UsageError("install: " + printable(x) + " is " +
                             platform::file_type_text(fs::u8path(x)) +
                             ", not an archive or installer file; give the path of a downloaded "
                             "archive or installer");
        } else if (looks_like_archive_name(x)) {
            throw UsageError("install: " + printable(x) + " does not exist");
        } else if (auto nccl =
                       x.rfind("nccl", 0) == 0 ? parse_nccl_id(x.substr(4)) : std::nullopt) {
            // An NCCL id as a spec writes it: nccl2.21.5-cuda12.4
            results.push_back(installer.install_nccl(nccl->version.str(), nccl->cuda.str()));
        } else if (auto id = parse_cudnn_id(x)) {
            // A cuDNN id as `cvm list` prints it: 8.1.0.77-cuda11.2
            results.push_back(installer.install_cudnn(id->version.str(), id->cuda.str()));
        } else {
            results = installer.install_spec(spec_argument(x));
            if (results.empty()) note(printable(x) + " is already installed");
        }
    }
    return results;
}

} // namespace

void register_install(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "install", "Install a CUDA toolkit, cuDNN or NCCL build: FILE|URL, "
                   "`cuda VERSION`, `cudnn VERSION --cuda N`, `nccl VERSION --cuda N`, "
                   "or SPEC");
    auto a = std::make_shared<InstallArgs>();
    cmd->add_option(
        "what", a->what,
        "nothing: what the selection here names (.cudaversion); an archive (.tar.xz, .txz, .tgz, "
        ".zip, .whl) or its URL; an NVIDIA installer (.run, .exe); `cuda 12.4.1`; `cudnn "
        "9.1.0 --cuda 12`; `nccl 2.21.5 --cuda 12.4`; or a spec like 12.4+9 or 13.0+nccl2.28");
    cmd->add_option("--components", a->components,
                    "toolkit components, comma-separated (default: compiler, runtime, headers, "
                    "math libraries)");
    cmd->add_option("--cuda", a->cuda,
                    "the CUDA a cuDNN or NCCL build is for (12, 11.8, 12.4); with FILE, for an archive "
                    "whose name no longer says it (a renamed legacy cuDNN)");
    cmd->add_option("--sha256", a->sha256, "expected checksum of an archive given by URL");
    cmd->add_flag("--allow-http", a->allow_http,
                  "allow plain http:// downloads from other machines");
    cmd->add_flag("--json", a->json, "print the result as JSON");
    cmd->add_flag("--locked", a->locked, "install exactly what the project's cvm.lock records");
    cmd->add_flag("--allow-lock-urls", a->allow_lock_urls,
                  "with --locked: also download from URLs other than NVIDIA's or CVM_MIRROR's, "
                  "and releases cvm's registry does not know");
    cmd->add_flag("--reinstall", a->reinstall,
                  "install an installed ID again, replacing it once the new copy is whole (repairs "
                  "what `cvm verify` reports damaged)");
    cmd->callback([a] {
        auto results = with_installer(
            a->allow_http,
            [&a](install::StoreInstaller& installer, Store& store) {
                return run_install(*a, installer, store);
            },
            a->reinstall);
        if (a->json)
            print_json({{"installed", results_json(results)}});
        else
            install_hint(open_store(), results, a->locked);
    });
}

nlohmann::json install_missing(const Spec& spec) {
    return results_json(with_installer(false, [&spec](install::StoreInstaller& installer, Store&) {
        auto results = installer.install_spec(spec);
        if (results.empty()) note(spec.str() + " is already installed");
        return results;
    }));
}

} // namespace cvm::cli
