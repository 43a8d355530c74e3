// StoreInstaller::install_file, install_archive, install_installer and install_url: an archive (or
// NVIDIA's installer) from a file or a URL, recognised from its contents, staged and committed.
#include "install/install_staging.h"
#include "install/store_install.h"

#include "layouts/cudnn_layouts.h"
#include "install/installed_files.h"
#include "spec/redist_platform.h"
#include "install/archive_name.h"
#include "install/error.h"
#include "install/extract.h"
#include "install/installer_package.h"
#include "install/progress.h"
#include "install/recognize.h"
#include "install/release_choice.h"
#include "install/sha256.h"
#include "install/version_lock.h"
#include "platform/cleanup_on_signal.h"
#include "platform/platform.h"
#include "registry/registry.h"
#include "text/affixes.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <string_view>
#include <thread>

namespace cvm::install {

namespace fs = std::filesystem;

InstallResult StoreInstaller::install_file(const fs::path& archive, const std::string& origin,
                                           const std::string& cuda) {
    return install_archive(archive, origin, nullptr, cuda);
}

namespace {

// The installed entry an archive file made, known without extracting it: an entry that recorded
// an archive of this file name whose SHA-256 is this file's. The file is hashed only where some
// entry recorded its name; `digest` then keeps the sum for the install that follows.
std::optional<Entry> installed_from(const Store& store, const fs::path& archive, const std::string& display,
                                    std::string& digest) {
    std::vector<Entry> named;
    for (Kind kind : {Kind::Cudnn, Kind::Nccl, Kind::Cuda})
        for (auto& e : store.list(kind))
            for (const auto& a : e.archives)
                if (a.name == display && !a.sha256.empty()) {
                    named.push_back(e);
                    break;
                }
    if (named.empty()) return std::nullopt;
    digest = sha256_file(archive);
    for (auto& e : named)
        for (const auto& a : e.archives)
            if (a.name == display && a.sha256 == digest) return std::move(e);
    return std::nullopt;
}

// A cuDNN recognised from its contents alone (a renamed legacy archive) with the CUDA that --cuda
// gave, as `cvm import --cuda` takes it: the build number from the registry when it knows one
// release of those three numbers, and of that release the build for that CUDA (11 names its only
// build of CUDA 11); one it has no build for is refused, naming those it has.
void complete_cudnn_from_registry(const registry::Registry* reg, const std::string& display, Version& version,
                                  Version& cuda, bool legacy) {
    if (!reg) return;
    Version three = version;
    if (three.parts.size() > 3) three.parts.resize(3);
    auto known = registry::find_cudnn_releases(*reg, three);
    if (known.size() != 1 || (version.parts.size() == 4 && known.front()->version != version)) return;
    const registry::CudnnRelease& rel = *known.front();
    if (version.parts.size() == 3 && legacy) version = rel.version;
    if (rel.builds.empty()) return;
    std::vector<Version> fitting;
    std::string variants;
    for (const auto& b : rel.builds) {
        variants += (variants.empty() ? "" : " and ") + b.cuda.str();
        if (b.cuda == cuda) return;
        if (b.cuda.has_prefix(cuda) || cuda.has_prefix(b.cuda)) fitting.push_back(b.cuda);
    }
    if (fitting.size() == 1) {
        cuda = fitting.front();
        return;
    }
    fail_input(display + ": cuDNN " + rel.version.str() + " was built for CUDA " + variants + ", not " +
               cuda.str() + "; rerun with --cuda " + rel.builds.back().cuda.str() +
               (rel.builds.size() > 1 ? " (or another of those)" : ""));
}

} // namespace

InstallResult StoreInstaller::install_archive(const fs::path& archive, const std::string& origin,
                                              const StreamJob* download, const std::string& cuda,
                                              const HeldInstall& held) {
    std::error_code ec;
    if (!cuda.empty() && !parse_version(cuda, 1, 2))
        fail_input("--cuda " + printable(cuda) + " is not a CUDA version like 12 or 11.2");
    if (!download && !fs::is_regular_file(archive, ec))
        fail_input(archive.u8string() +
                   " is not a file; give an archive (.tar.xz, .tgz, .zip, .whl) or a URL");
    if (!download && detect_installer(archive))
        return install_installer_held(archive, {}, origin, held);
    const std::string display = archive.filename().u8string();
    // An archive installed before is said at once, from its name and digest: an 800 MB cuDNN is
    // not extracted again to find that out.
    std::string digest;
    if (!download && !options_.reinstall)
        if (auto e = installed_from(store_, archive, display, digest)) {
            if (options_.progress)
                options_.progress->message(kind_word(e->kind) + " " + e->id + " is already installed (" + display +
                                           ", the archive it was installed from)");
            return {e->kind, e->id, e->path, true, e->components};
        }
    auto name = parse_archive_name(display);
    const std::string& host = options_.host_platform;
    if (name && !name->platform.empty() && !host.empty() && !same_machine(name->platform, host))
        fail_input(display + " is a build for " + name->platform + "; this machine needs " + host +
                   ": get the " + host + " archive");
    fs::create_directories(store_.staging_dir());
    fs::create_directories(store_.locks_dir());
    clean_staging();

    Staged staged(store_);
    fs::path x = staged.dir / "x";
    fs::create_directory(x);

    // The archive's checksum is recorded in the entry; compute it beside the extraction (a
    // download computes it as the bytes arrive).
    std::string digest_error;
    std::thread hasher;
    if (!download && digest.empty())
        hasher = std::thread([&] {
            try {
                digest = sha256_file(archive);
            } catch (const std::exception& e) {
                digest_error = e.what();
            }
        });
    ExtractOptions eo;
    eo.threads = options_.parallel;
    int bar = -1;
    if (options_.progress) {
        bar = options_.progress->start("extracting", display,
                                       download ? download->request.expected_size
                                                : fs::file_size(archive, ec));
        eo.progress = [this, bar](std::uint64_t done, std::uint64_t total) {
            options_.progress->update(bar, done, total);
        };
    }
    ExtractResult extracted;
    try {
        if (download) {
            StreamJob job = *download;
            job.destination = x;
            job.progress = eo.progress;
            StreamResult streamed = std::move(
                download_and_extract({job}, options_.download, options_.parallel).front());
            extracted = std::move(streamed.extracted);
            digest = streamed.sha256;
        } else {
            extracted = extract_archive(archive, x, eo);
        }
    } catch (...) {
        if (hasher.joinable()) hasher.join();
        if (bar >= 0) options_.progress->finish(bar, false);
        throw;
    }
    if (hasher.joinable()) hasher.join();
    if (bar >= 0) options_.progress->finish(bar, true);
    if (!digest_error.empty()) fail_operation(digest_error);

    RecognizeOptions ro;
    ro.host_platform = host;
    ro.archive_display = display;
    ro.cuda = cuda;
    Recognized r = recognize_extracted(x, name, ro);
    if (!cuda.empty() && r.kind == ProductKind::Cuda)
        fail_input(display + " is a CUDA toolkit" + (r.component.empty() ? "" : " component") +
                   ", not a cuDNN or NCCL build: --cuda does not apply; rerun without it");

    Entry e;
    e.platform = r.platform.empty() ? host : r.platform;
    e.note = "recognised from " + r.evidence + (name ? " and the file name" : "");
    if (!r.include_dir.empty()) e.include_dirs.push_back(r.include_dir);
    if (!r.lib_dir.empty()) e.lib_dirs.push_back(r.lib_dir);
    if (!r.bin_dir.empty()) e.bin_dirs.push_back(r.bin_dir);
    e.archives.push_back(
        {display, origin.empty() ? fs::absolute(archive).u8string() : origin, digest});
    e.archives.back().first_use =
        !held.first_use_archive.empty() && display == held.first_use_archive;
    if (r.kind == ProductKind::Nccl) {
        e.kind = Kind::Nccl;
        auto v = parse_version(r.version, 3, 3);
        auto c = parse_version(r.cuda_variant, 1, 2);
        if (!v || !c)
            fail_input(display + ": cannot use NCCL " + r.version + " for CUDA " + r.cuda_variant);
        if (r.cuda_from_option) e.note += ", CUDA " + c->str() + " from --cuda";
        e.version = *v;
        e.cuda = *c;
        e.id = NcclId{*v, *c}.str();
    } else if (r.kind == ProductKind::Cudnn) {
        e.kind = Kind::Cudnn;
        auto v = parse_version(r.version, 1, 4);
        auto c = parse_version(r.cuda_variant, 1, 2);
        if (!v || !c)
            fail_input(display + ": cannot use version " + r.version + " for CUDA " +
                       r.cuda_variant);
        // The CUDA came from --cuda alone: its variant for this release, as an import makes it.
        if (r.cuda_from_option) {
            *c = cudnn_variant_for(*v, *c);
            complete_cudnn_from_registry(options_.registry, display, *v, *c,
                                         r.family == ArchiveFamily::LegacyCudnn && !name);
            e.note += ", CUDA " + c->str() + " from --cuda";
        }
        e.version = *v;
        e.cuda = *c;
        e.id = CudnnId{*v, *c}.str();
    } else {
        e.kind = Kind::Cuda;
        std::optional<Version> toolkit;
        if (r.component.empty()) {
            toolkit = parse_toolkit_id(r.version);
            if (!toolkit)
                fail_input(display + ": the toolkit version " + r.version +
                           " is not a full release version (three numbers)");
        } else {
            auto cv = parse_version(r.version, 1, 4);
            // The runtime is "cuda_cudart" in NVIDIA's archives and "cuda_runtime" in wheels.
            bool cudart = r.component == "cuda_cudart" || r.component == "cuda_runtime";
            if (options_.registry && cv && (cudart || r.component == "cuda_nvcc")) {
                auto found = registry::find_cuda_by_components(
                    *options_.registry, cudart ? cv : std::nullopt,
                    r.component == "cuda_nvcc" ? cv : std::nullopt);
                if (!found.empty()) toolkit = found.back()->version;
            }
            if (!toolkit)
                fail_input(display + " is the single component " + r.component + " " + r.version +
                           ", which makes no toolkit by itself; install the toolkit with `cvm "
                           "install cuda " +
                           (r.cuda_release.empty() ? "VERSION" : r.cuda_release) + "`");
            e.components.push_back(r.component);
        }
        e.version = *toolkit;
        e.id = toolkit->str();
    }
    std::unique_ptr<platform::FileLock> version_lock;
    if (held.version_lock != std::string(kind_dir(e.kind)) + "-" + e.id)
        version_lock = lock_version(store_, e.kind, e.id, options_.progress);
    if (auto existing = options_.reinstall ? std::nullopt : store_.find(e.kind, e.id)) {
        if (options_.progress)
            options_.progress->message(kind_word(e.kind) + " " + e.id + " is already installed");
        return {e.kind, e.id, existing->path, true, existing->components};
    }
    fs::create_directory(staged.dir / "entry");
    staged.record(extracted, x, r.content_root, nullptr);
    fs::rename(r.content_root, staged.dir / "entry" / "root");
    return commit(staged, e);
}

InstallResult StoreInstaller::install_installer(const fs::path& file,
                                                const std::vector<std::string>& components,
                                                const std::string& origin) {
    return install_installer_held(file, components, origin, {});
}

InstallResult StoreInstaller::install_installer_held(const fs::path& file,
                                                     const std::vector<std::string>& components,
                                                     const std::string& origin,
                                                     const HeldInstall& held) {
    std::error_code ec;
    const std::string display = file.filename().u8string();
    auto family = fs::is_regular_file(file, ec) ? detect_installer(file) : std::nullopt;
    if (!family)
        fail_input(file.u8string() + " is not an NVIDIA installer (a cuda_*_linux.run runfile or a "
                                     "cuda_*_win10.exe local installer)");
    const std::string& host = options_.host_platform;
    check_installer_name(file, *family, host);
    // What the name promises is looked up before the long read.
    auto name = parse_installer_name(display);
    if (name && !options_.reinstall)
        if (auto id = parse_toolkit_id(name->version))
            if (auto existing = store_.find(Kind::Cuda, id->str())) {
                if (options_.progress)
                    options_.progress->message("CUDA " + id->str() + " is already installed");
                return {Kind::Cuda, id->str(), existing->path, true, existing->components};
            }
    fs::create_directories(store_.staging_dir());
    fs::create_directories(store_.locks_dir());
    clean_staging();
    Staged staged(store_);
    fs::path work = staged.dir / "x";
    fs::path root = staged.dir / "entry" / "root";
    fs::create_directories(work);
    fs::create_directories(root);

    std::string digest, digest_error;
    std::thread hasher([&] {
        try {
            digest = sha256_file(file);
        } catch (const std::exception& e) {
            digest_error = e.what();
        }
    });
    UnpackOptions uo;
    uo.host_platform = host;
    uo.components = components;
    uo.extract.threads = options_.parallel;
    int bar = -1;
    if (options_.progress) {
        bar = options_.progress->start("extracting", display, fs::file_size(file, ec));
        uo.extract.progress = [this, bar](std::uint64_t done, std::uint64_t total) {
            options_.progress->update(bar, done, total);
        };
    }
    UnpackedToolkit t;
    try {
        t = unpack_installer(file, *family, work, root, uo);
    } catch (...) {
        hasher.join();
        if (bar >= 0) options_.progress->finish(bar, false);
        throw;
    }
    hasher.join();
    if (bar >= 0) options_.progress->finish(bar, true);
    if (!digest_error.empty()) fail_operation(digest_error);
    if (!t.conflicts.empty() && options_.progress)
        options_.progress->message("components disagree on " + std::to_string(t.conflicts.size()) +
                                   " file(s), kept the first: " + t.conflicts.front());

    Entry e;
    e.kind = Kind::Cuda;
    e.version = *parse_toolkit_id(t.version);
    e.id = e.version.str();
    std::unique_ptr<platform::FileLock> version_lock;
    if (held.version_lock != "cuda-" + e.id)
        version_lock = lock_version(store_, Kind::Cuda, e.id, options_.progress);
    if (auto existing = options_.reinstall ? std::nullopt : store_.find(Kind::Cuda, e.id)) {
        if (options_.progress) options_.progress->message("CUDA " + e.id + " is already installed");
        return {Kind::Cuda, e.id, existing->path, true, existing->components};
    }
    for (auto& f : t.files)
        staged.files.emplace(f.path, std::move(f));
    nlohmann::json version_json = nlohmann::json::object();
    version_json["cuda"] = {{"name", "CUDA SDK"}, {"version", e.id}};
    for (const auto& [key, nv] : t.component_versions)
        version_json[key] = {{"name", nv.first}, {"version", nv.second}};
    finish_toolkit_root(staged, root, host, version_json, e);
    e.components = t.components;
    e.platform = host;
    e.note = "installed from the installer " + display;
    e.archives.push_back(
        {display, origin.empty() ? fs::absolute(file).u8string() : origin, digest});
    e.archives.back().first_use =
        !held.first_use_archive.empty() && display == held.first_use_archive;
    return commit(staged, e);
}

InstallResult StoreInstaller::install_url(const std::string& given, const std::string& sha256) {
    const std::string url = register_url_credentials(given); // what the entry records
    fs::path local = file_url_path(url);
    if (!local.empty()) {
        if (!sha256.empty() && !sha256_equal(sha256_file(local), sha256))
            fail_operation("checksum mismatch for " + url + ": expected sha256 " + sha256);
        return install_file(local, url);
    }
    std::string why;
    if (!url_allowed(url, options_.download, &why))
        fail_input("cannot download " + url + ": " + why);
    fs::path cache = store_.cache_dir() / "downloads";
    fs::create_directories(cache);
    DownloadRequest request;
    request.url = url;
    request.destination = cache / basename_of_url(url);
    request.sha256 = sha256;
    if (sha256.empty()) fs::remove(request.destination); // nothing to check a cached copy against
    // An installer cannot be read while it arrives (a 7-Zip archive keeps its index at its end,
    // a runfile's payload offset is in its header): it is downloaded whole, then installed.
    const std::string name = request.destination.filename().u8string();
    // A name that is more than the extension alone (".run" names no installer).
    auto named_with_extension = [&](std::string_view extension) {
        return name.size() > extension.size() && ends_with(name, extension);
    };
    // Without a sum nothing could vouch for a cached copy later: one whose install failed (not
    // an archive, a refused archive) is not kept.
    auto forget_download = [&] {
        if (!sha256.empty()) return;
        std::error_code ec;
        fs::remove(request.destination, ec);
    };
    try {
        if (named_with_extension(".run") || named_with_extension(".exe")) {
            download_all({request}, options_.download);
            return install_file(request.destination, url);
        }
        StreamJob job;
        job.request = request;
        return install_archive(request.destination, url, &job);
    } catch (...) {
        forget_download();
        throw;
    }
}

} // namespace cvm::install
