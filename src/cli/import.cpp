#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>

#include "cli/commands.h"
#include "cli/context.h"
#include "core/detect.h"
#include "core/shims.h"
#include "platform/platform.h"
#include "toolchain_ids.h"

namespace cvm::cli {

namespace {

std::string platform_name() {
    return platform::host_os() == platform::Os::Windows ? "windows-x86_64" : "linux-x86_64";
}

// Registers one entry, or says it is already there. Returns true when something was added.
// `plan` is the assembled root of a scattered import (then e.origin says where its files are).
bool register_entry(const Store& store, Entry e, const std::vector<RootLink>& plan = {}) {
    if (auto existing = store.find(e.kind, e.id)) {
        std::error_code ec;
        if (existing->layer != 0) {
            // A shared read-only store has it too: the user's own copy takes precedence.
            store.add_imported(e, false, plan);
            note("imported " + std::string(kind_dir(e.kind)) + " " + e.id + " from " + e.path.u8string() +
                 "; it hides the one in the read-only store " + store.layers()[existing->layer].u8string());
            return true;
        }
        // An assembled entry is the same import when its files come from the same place.
        const fs::path& have = existing->origin.empty() ? existing->path : existing->origin;
        if (fs::equivalent(have, e.origin.empty() ? e.path : e.origin, ec)) {
            note(std::string(kind_dir(e.kind)) + " " + e.id + " from " + e.path.u8string() + " is already registered");
            return false;
        }
        throw Failure(std::string(kind_dir(e.kind)) + " " + e.id + " is already in the store at " +
                      existing->path.u8string() + "; run `cvm uninstall " + e.id + "` first");
    }
    store.add_imported(e, false, plan);
    note("imported " + std::string(kind_dir(e.kind)) + " " + e.id + " from " + e.path.u8string());
    return true;
}

// Registers what `path` holds (a toolkit, a cuDNN build, or both). Returns true when something
// new was added.
bool import_folder(const Store& store, fs::path path, const std::optional<Version>& cuda_override) {
    std::error_code ec;
    path = fs::canonical(path, ec);
    if (ec) throw UsageError("import: cannot read " + path.u8string() + ": " + ec.message());
    if (path.u8string().find_first_of("\r\n") != std::string::npos)
        throw UsageError("import: the folder name contains a line break; rename the folder");
    // Read before anything is registered, so a toolkit that cannot be read leaves the store as it was.
    std::optional<ToolkitImport> toolkit;
    try {
        toolkit = toolkit_import_of(path, platform::host_os(), toolkit_identity);
    } catch (const std::runtime_error& e) {
        throw UsageError(std::string("import: ") + e.what());
    }
    FolderFacts facts = detect_folder(path);
    if (!toolkit && !facts.cudnn)
        throw UsageError("import: " + path.u8string() +
                         " holds neither a CUDA toolkit (bin/nvcc, include/cuda.h, version.json; or Debian's, conda's or pip's scattered layouts) nor a cuDNN build "
                         "(include/cudnn_version.h with libcudnn*); point at the folder that contains include/");
    fs::create_directories(store.root());
    std::optional<Version> toolkit_version;
    bool added = false;
    if (toolkit) {
        Entry e = toolkit->entry;
        e.platform = platform_name();
        toolkit_version = e.version;
        added |= register_entry(store, e, toolkit->plan);
    }
    if (facts.cudnn) {
        Entry e;
        e.kind = Kind::Cudnn;
        e.version = facts.cudnn->version;
        std::optional<Version> variant = cuda_override ? cuda_override : facts.cudnn->cuda;
        if (!variant && toolkit_version) {
            // cuDNN copied into a toolkit: built for that toolkit's CUDA. Builds since 8.3 are
            // made per CUDA major, older ones per minor.
            bool per_major = e.version.major() > 8 || (e.version.major() == 8 && e.version.minor() >= 3);
            variant = per_major ? Version{{toolkit_version->major()}}
                                : Version{{toolkit_version->major(), toolkit_version->minor()}};
        }
        if (!variant)
            throw UsageError("import: cannot tell which CUDA the cuDNN " + e.version.str() + " in " + path.u8string() +
                             " was built for; rerun with --cuda 12 (or --cuda 11.2 for builds before 8.3)");
        e.cuda = *variant;
        e.id = CudnnId{e.version, e.cuda}.str();
        e.path = path;
        e.imported = true;
        e.include_dirs = facts.cudnn->include_dirs;
        e.lib_dirs = facts.cudnn->lib_dirs;
        e.bin_dirs = facts.cudnn->bin_dirs;
        e.platform = platform_name();
        e.note = "version from " + facts.cudnn->evidence;
        added |= register_entry(store, e);
    }
    return added && toolkit;
}

// Toolkits NVIDIA's installers and packages leave: CUDA_PATH and CUDA_PATH_Vx_y variables, and
// the default folders.
std::vector<fs::path> installed_toolkit_folders() {
    std::vector<fs::path> out;
    auto add = [&](const fs::path& p) {
        std::error_code ec;
        if (!fs::is_directory(p, ec)) return;
        fs::path c = fs::canonical(p, ec);
        if (ec) return;
        for (const auto& o : out)
            if (o == c) return;
        out.push_back(c);
    };
    for (const auto& [name, value] : platform::environment()) {
        std::string upper = name;
        for (auto& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
        if (upper.rfind("CUDA_PATH_V", 0) == 0 && !value.empty()) add(fs::u8path(value));
    }
    std::vector<fs::path> roots;
    if (platform::host_os() == platform::Os::Windows) {
        for (const char* var : {"ProgramFiles", "ProgramW6432"})
            if (auto pf = platform::get_env(var))
                roots.push_back(fs::u8path(*pf) / "NVIDIA GPU Computing Toolkit" / "CUDA");
    } else {
        roots = {"/usr/local", "/opt"};
    }
    for (const auto& root : roots) {
        std::error_code ec;
        std::vector<fs::path> found;
        for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
            std::string n = it->path().filename().u8string();
            bool match = platform::host_os() == platform::Os::Windows
                             ? (n.size() > 1 && (n[0] == 'v' || n[0] == 'V'))
                             : n.rfind("cuda-", 0) == 0;
            if (match) found.push_back(it->path());
        }
        std::sort(found.begin(), found.end());
        for (const auto& f : found) add(f);
    }
    if (auto cp = platform::get_env("CUDA_PATH"); cp && !cp->empty()) add(fs::u8path(*cp));
    return out;
}

} // namespace

void register_import(CLI::App& app) {
    auto* cmd = app.add_subcommand("import", "Register an existing toolkit or cuDNN folder without copying it");
    auto dir = std::make_shared<std::string>();
    auto cuda = std::make_shared<std::string>();
    auto detect = std::make_shared<bool>(false);
    cmd->add_option("dir", *dir, "a toolkit folder, a cuDNN folder, or a wheel's nvidia/cudnn");
    cmd->add_option("--cuda", *cuda, "the CUDA a cuDNN folder was built for (e.g. 12 or 11.2), when its name does not say");
    cmd->add_flag("--detect", *detect,
                  "register every toolkit NVIDIA's installers left (CUDA_PATH_V* variables, /usr/local/cuda-*, "
                  "Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v*)");
    cmd->callback([dir, cuda, detect] {
        std::optional<Version> cuda_override;
        if (!cuda->empty()) {
            cuda_override = parse_version(*cuda, 1, 2);
            if (!cuda_override) throw UsageError("import: --cuda " + printable(*cuda) + " is not a CUDA version like 12 or 11.2");
        }
        Store store = open_store();
        bool rehash_needed = false;
        if (*detect) {
            if (!dir->empty()) throw UsageError("import: give either DIR or --detect, not both");
            auto folders = installed_toolkit_folders();
            if (folders.empty()) note("found no installed CUDA toolkit (CUDA_PATH_V* variables or default folders)");
            for (const auto& f : folders) {
                try {
                    rehash_needed |= import_folder(store, f, std::nullopt);
                } catch (const std::exception& e) {
                    note(std::string("skipped: ") + e.what());
                }
            }
        } else {
            if (dir->empty()) throw UsageError("import: give a folder (or --detect); e.g. cvm import /usr/local/cuda-12.4");
            std::error_code ec;
            fs::path path = fs::u8path(*dir);
            if (!fs::is_directory(path, ec))
                throw UsageError("import: " + *dir + " is not a folder; give the toolkit's folder, e.g. /usr/local/cuda-12.4");
            rehash_needed = import_folder(store, path, cuda_override);
        }
        if (rehash_needed) {
            std::error_code e2;
            fs::path shim = shim_binary();
            if (fs::exists(shim, e2)) rehash(store, shim);
        }
    });
}

} // namespace cvm::cli
