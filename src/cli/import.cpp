#include <CLI/CLI.hpp>
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
bool register_entry(const Store& store, Entry e) {
    if (auto existing = store.find(e.kind, e.id)) {
        std::error_code ec;
        if (fs::equivalent(existing->path, e.path, ec)) {
            note(std::string(kind_dir(e.kind)) + " " + e.id + " from " + e.path.u8string() + " is already registered");
            return false;
        }
        throw Failure(std::string(kind_dir(e.kind)) + " " + e.id + " is already in the store at " +
                      existing->path.u8string() + "; run `cvm uninstall " + e.id + "` first");
    }
    store.add_imported(e);
    note("imported " + std::string(kind_dir(e.kind)) + " " + e.id + " from " + e.path.u8string());
    return true;
}

} // namespace

void register_import(CLI::App& app) {
    auto* cmd = app.add_subcommand("import", "Register an existing toolkit or cuDNN folder without copying it");
    auto dir = std::make_shared<std::string>();
    auto cuda = std::make_shared<std::string>();
    cmd->add_option("dir", *dir, "a toolkit folder, a cuDNN folder, or a wheel's nvidia/cudnn")->required();
    cmd->add_option("--cuda", *cuda, "the CUDA a cuDNN folder was built for (e.g. 12 or 11.2), when its name does not say");
    cmd->callback([dir, cuda] {
        if (dir->find('\n') != std::string::npos || dir->find('\r') != std::string::npos)
            throw UsageError("import: the folder name contains a line break; rename the folder");
        std::error_code ec;
        fs::path path = fs::u8path(*dir);
        if (!fs::is_directory(path, ec))
            throw UsageError("import: " + *dir + " is not a folder; give the toolkit's folder, e.g. /usr/local/cuda-12.4");
        path = fs::canonical(path, ec);
        if (ec) throw UsageError("import: cannot read " + *dir + ": " + ec.message());
        std::optional<Version> cuda_override;
        if (!cuda->empty()) {
            cuda_override = parse_version(*cuda, 1, 2);
            if (!cuda_override) throw UsageError("import: --cuda " + printable(*cuda) + " is not a CUDA version like 12 or 11.2");
        }
        FolderFacts facts = detect_folder(path);
        if (!facts.toolkit && !facts.cudnn)
            throw UsageError("import: " + path.u8string() +
                             " holds neither a CUDA toolkit (bin/nvcc, include/cuda.h, version.json) nor a cuDNN build "
                             "(include/cudnn_version.h with libcudnn*); point at the folder that contains include/");
        Store store = open_store();
        fs::create_directories(store.root());
        std::optional<Version> toolkit_version;
        bool added = false;
        if (facts.toolkit) {
            ToolkitIdentity id = toolkit_identity(*facts.toolkit);
            if (!id.version)
                throw UsageError("import: cannot tell the CUDA version of " + path.u8string() +
                                 " (no version.json, version.txt, include/cuda.h or working bin/nvcc)");
            Entry e;
            e.kind = Kind::Cuda;
            e.version = *id.version;
            e.id = e.version.str();
            e.path = path;
            e.imported = true;
            e.include_dirs = facts.toolkit->include_dirs;
            e.lib_dirs = facts.toolkit->lib_dirs;
            e.bin_dirs = facts.toolkit->bin_dirs;
            e.platform = platform_name();
            e.note = id.how;
            toolkit_version = e.version;
            added |= register_entry(store, e);
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
        if (added && facts.toolkit) {
            std::error_code e2;
            fs::path shim = shim_binary();
            if (fs::exists(shim, e2)) rehash(store, shim);
        }
    });
}

} // namespace cvm::cli
