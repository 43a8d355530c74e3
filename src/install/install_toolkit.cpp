// StoreInstaller::install_toolkit and install_cudnn: toolkits and cuDNN builds from NVIDIA's
// manifests, their archives fetched (archive_jobs: checked against pinned sums first) and staged.
#include "install/offline_fix.h"
#include "install/install_staging.h"
#include "install/store_install.h"

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
#include <thread>

namespace cvm::install {

namespace fs = std::filesystem;

std::vector<StreamJob> StoreInstaller::archive_jobs(const std::string& product,
                                                    const std::vector<const Artifact*>& items) {
    // Pinned sums (cvm install --locked): all of them are compared before the first download.
    if (!options_.pinned_sha256.empty()) {
        for (const Artifact* a : items) {
            std::string name = basename_of_url(a->relative_path);
            auto it = options_.pinned_sha256.find(name);
            if (it == options_.pinned_sha256.end())
                fail_operation(
                    "the mirror's " + product + " manifest names " + name +
                    ", an archive the lock does not record; nothing was downloaded. "
                    "Check CVM_MIRROR, or run `cvm lock` again where the toolchain is installed");
            if (it->second != a->sha256)
                fail_operation(
                    "the lock requires sha256 " + it->second + " for " + name +
                    ", but the mirror's manifest lists " + a->sha256 +
                    "; nothing was downloaded. Check CVM_MIRROR, or run `cvm lock` again "
                    "where the toolchain is installed");
        }
    }
    // Archives are kept in the download cache by file name: two of one name would be written
    // over each other (and the lock's sums are by name too).
    std::map<std::string, std::string> by_name;
    for (const Artifact* a : items) {
        auto [it, fresh] = by_name.emplace(basename_of_url(a->relative_path), a->relative_path);
        if (!fresh && it->second != a->relative_path)
            fail_input("the " + product + " manifest names two archives of one file name, " +
                       it->second + " and " + a->relative_path +
                       "; the manifest is wrong (check CVM_MIRROR), nothing was downloaded");
    }
    std::vector<StreamJob> jobs;
    fs::path cache = store_.cache_dir() / "downloads";
    std::vector<std::pair<std::string, const Artifact*>> to_verify; // folder mirror files
    for (const Artifact* a : items) {
        std::string url = archive_url(product, a->relative_path);
        fs::path local = file_url_path(url);
        if (!local.empty()) {
            std::error_code ec;
            if (!fs::is_regular_file(local, ec))
                fail_operation("cannot read " + local.u8string() + " (from " + url +
                               "); check CVM_MIRROR");
            to_verify.emplace_back(url, a);
            jobs.emplace_back().local = local;
            continue;
        }
        fs::create_directories(cache);
        DownloadRequest& r = jobs.emplace_back().request;
        r.url = url;
        r.destination = cache / basename_of_url(a->relative_path);
        r.sha256 = a->sha256;
        r.expected_size = a->size;
    }
    // A folder mirror: nothing to copy, but the checksum still decides (checked on all cores).
    std::vector<std::string> sums(to_verify.size());
    std::atomic<std::size_t> next{0};
    auto verify = [&] {
        for (std::size_t i; (i = next.fetch_add(1)) < to_verify.size();) {
            try {
                sums[i] = sha256_file(file_url_path(to_verify[i].first));
            } catch (const std::exception& e) {
                sums[i] = std::string("error: ") + e.what();
            }
        }
    };
    std::vector<std::thread> pool;
    for (unsigned t = 1;
         t <
         std::min<std::size_t>(to_verify.size(), std::max(1u, std::thread::hardware_concurrency()));
         ++t)
        pool.emplace_back(verify);
    verify();
    for (auto& t : pool)
        t.join();
    for (std::size_t i = 0; i < to_verify.size(); ++i)
        if (!sha256_equal(sums[i], to_verify[i].second->sha256))
            fail_operation("checksum mismatch for " + to_verify[i].first + ": expected sha256 " +
                           to_verify[i].second->sha256 + ", got " + sums[i] +
                           "; the mirror's file is damaged or not the one the manifest names");
    return jobs;
}

// The toolkit's own version.json, the lib64 link tools look for, and the entry's folders: the
// same for a toolkit from manifests and one from an installer.
void StoreInstaller::finish_toolkit_root(Staged& staged, const fs::path& root,
                                         const std::string& host,
                                         const nlohmann::json& version_json, Entry& e) {
    write_file(root / "version.json", version_json.dump(3) + "\n");
    {
        InstalledFile f;
        f.path = "version.json";
        std::string text = version_json.dump(3) + "\n";
        Sha256 hash;
        hash.update(text.data(), text.size());
        f.size = text.size();
        f.sha256 = hash.hex_digest();
        staged.files["version.json"] = f;
    }
    std::error_code ec;
    bool windows = is_windows_platform(host);
    if (fs::is_directory(root / "include")) e.include_dirs.push_back("include");
    if (windows) {
        if (fs::is_directory(root / "lib" / "x64")) e.lib_dirs.push_back("lib/x64");
    } else if (fs::is_directory(root / "lib")) {
        // Tools and build systems look for lib64 in a toolkit.
        if (!fs::exists(fs::symlink_status(root / "lib64", ec))) {
            fs::create_directory_symlink("lib", root / "lib64", ec);
            if (!ec) staged.files["lib64"] = {InstalledFile::Type::Symlink, "lib64", 0, "", "lib"};
        }
        e.lib_dirs.push_back(ec ? "lib" : "lib64");
    }
    if (fs::is_directory(root / "bin")) e.bin_dirs.push_back("bin");
}

InstallResult StoreInstaller::install_toolkit(const std::string& version_text,
                                              const std::vector<std::string>& components) {
    auto requested = parse_version(version_text, 1, 3);
    if (!requested)
        fail_input("\"" + printable(version_text) + "\" is not a CUDA version like 12.4.1");
    ToolkitChoice choice = choose_toolkit(options_.registry, *requested, options_.host_platform);
    const std::string& manifest = choice.manifest;
    const std::string id = choice.version.str();
    const std::string& host = options_.host_platform;

    auto version_lock = lock_version(store_, Kind::Cuda, id, options_.progress);
    if (auto existing = options_.reinstall ? std::nullopt : store_.find(Kind::Cuda, id)) {
        if (options_.progress) options_.progress->message("CUDA " + id + " is already installed");
        return {Kind::Cuda, id, existing->path, true, existing->components};
    }
    if (!choice.installer.empty()) return install_toolkit_installer(choice, components);
    std::string url = manifest_url("cuda", manifest);
    std::string text;
    try {
        text = fetch_text(url, options_.download);
    } catch (const UnreachableError& e) {
        fail_operation(e.what() + offline_fix_toolkit(options_.mirror, url, {}, id, host), "network");
    }
    Manifest m = parse_manifest(text, manifest);
    std::vector<std::string> keys = resolve_components(m, host, components);
    if (keys.empty()) fail_input("manifest " + manifest + " has no components for " + host);
    std::vector<const Artifact*> artifacts;
    for (const auto& key : keys)
        artifacts.push_back(&select_artifact(*m.find(key), host));
    // Each archive downloads into the cache and is extracted while it arrives.
    std::vector<StreamJob> jobs = archive_jobs("cuda", artifacts);

    fs::create_directories(store_.staging_dir());
    clean_staging();
    fs::create_directories(store_.locks_dir());
    Staged staged(store_);
    for (std::size_t i = 0; i < keys.size(); ++i) {
        jobs[i].destination = staged.dir / "x" / keys[i];
        fs::create_directories(jobs[i].destination);
    }
    int bar = -1;
    auto done = std::make_shared<std::vector<std::atomic<std::uint64_t>>>(keys.size());
    if (options_.progress) {
        std::uint64_t total = 0;
        std::error_code ec;
        for (std::size_t i = 0; i < jobs.size(); ++i)
            total += jobs[i].local.empty() ? artifacts[i]->size : fs::file_size(jobs[i].local, ec);
        bar = options_.progress->start("extracting", std::to_string(keys.size()) + " components",
                                       total);
        // Each archive reports its own bytes; the bar shows their sum.
        for (std::size_t i = 0; i < jobs.size(); ++i)
            jobs[i].progress = [this, bar, done, i](std::uint64_t now, std::uint64_t) {
                (*done)[i].store(now);
                std::uint64_t sum = 0;
                for (const auto& d : *done)
                    sum += d.load();
                options_.progress->update(bar, sum);
            };
    }
    std::vector<ExtractResult> extracted;
    std::vector<fs::path> files;
    try {
        for (auto& result : download_and_extract(jobs, options_.download, options_.parallel)) {
            extracted.push_back(std::move(result.extracted));
            files.push_back(std::move(result.archive));
        }
    } catch (const UnreachableError& e) {
        if (bar >= 0) options_.progress->finish(bar, false);
        std::vector<std::string> urls;
        for (const auto* a : artifacts)
            urls.push_back(archive_url("cuda", a->relative_path));
        fail_operation(e.what() + offline_fix_toolkit(options_.mirror, url, urls, id, host), "network");
    } catch (...) {
        if (bar >= 0) options_.progress->finish(bar, false);
        throw;
    }
    if (bar >= 0) options_.progress->finish(bar, true);

    fs::path root = staged.dir / "entry" / "root";
    fs::create_directories(root);
    std::vector<std::string> conflicts;
    nlohmann::json version_json = nlohmann::json::object();
    version_json["cuda"] = {{"name", "CUDA SDK"}, {"version", id}};
    Entry e;
    for (std::size_t i = 0; i < keys.size(); ++i) {
        RecognizeOptions ro;
        ro.host_platform = host;
        ro.archive_display = files[i].filename().u8string();
        Recognized r =
            recognize_extracted(jobs[i].destination, parse_archive_name(ro.archive_display), ro);
        if (r.kind != ProductKind::Cuda || r.component != keys[i])
            fail_input(ro.archive_display + " is not the component " + keys[i] +
                       " the manifest names for it");
        // Each component's own top-level files (LICENSE) go to licenses/<component>/.
        const std::string licenses = "licenses/" + keys[i] + "/";
        staged.record(extracted[i], jobs[i].destination, r.content_root,
                      [&licenses](const std::string& rel) {
                          return rel.find('/') == std::string::npos ? licenses + rel : rel;
                      });
        for (const auto& f : fs::directory_iterator(r.content_root)) {
            if (f.is_directory() && !f.is_symlink()) continue;
            fs::create_directories(root / "licenses" / keys[i]);
            fs::rename(f.path(), root / "licenses" / keys[i] / f.path().filename());
        }
        merge_into(r.content_root, root, conflicts, r.content_root);
        const ManifestComponent* c = m.find(keys[i]);
        version_json[keys[i]] = {{"name", c->name}, {"version", c->version}};
        e.archives.push_back({files[i].filename().u8string(),
                              archive_url("cuda", artifacts[i]->relative_path),
                              artifacts[i]->sha256});
    }
    if (!conflicts.empty() && options_.progress)
        options_.progress->message("components disagree on " + std::to_string(conflicts.size()) +
                                   " file(s), kept the first: " + conflicts.front());
    finish_toolkit_root(staged, root, host, version_json, e);
    e.kind = Kind::Cuda;
    e.id = id;
    e.version = choice.version;
    e.components = keys;
    e.platform = host;
    e.note = "installed from " + manifest;
    return commit(staged, e);
}

InstallResult StoreInstaller::install_cudnn(const std::string& version_text,
                                            const std::string& cuda) {
    auto requested = parse_version(version_text, 1, 4);
    if (!requested)
        fail_input("\"" + printable(version_text) + "\" is not a cuDNN version like 9.1.0.70");
    const std::string& host = options_.host_platform;
    if (options_.registry)
        if (const auto* rel = registry::find_cudnn_release(*options_.registry, *requested);
            rel && registry::how_fetched(*rel) == registry::Fetch::Archive)
            return install_legacy_cudnn(*rel, cuda);
    std::string manifest = choose_cudnn_manifest(options_.registry, *requested, cuda, host);
    std::string url = manifest_url("cudnn", manifest);
    Manifest m = parse_manifest(fetch_text(url, options_.download), manifest);
    const ManifestComponent* c = m.find("cudnn");
    if (c == nullptr) fail_input("manifest " + manifest + " lists no \"cudnn\" component");
    auto full = parse_version(c->version, 1, 4);
    if (!full || !full->has_prefix(*requested))
        fail_input("manifest " + manifest + " holds cuDNN " + c->version + ", not " +
                   requested->str());
    std::string cuda_wanted = cuda;
    if (cuda_wanted.empty() && c->platforms.count(host) && c->platforms.at(host).size() == 1)
        cuda_wanted = c->platforms.at(host).begin()->first.substr(4);
    std::string variant = select_variant(*c, host, cuda_wanted);
    const Artifact& artifact = c->platforms.at(host).at(variant);
    auto variant_version =
        parse_version(variant.rfind("cuda", 0) == 0 ? variant.substr(4) : variant, 1, 2);
    if (!variant_version)
        fail_input("manifest " + manifest + ": variant " + variant + " names no CUDA version");
    const std::string id = CudnnId{*full, *variant_version}.str();

    auto version_lock = lock_version(store_, Kind::Cudnn, id, options_.progress);
    if (auto existing = options_.reinstall ? std::nullopt : store_.find(Kind::Cudnn, id)) {
        if (options_.progress) options_.progress->message("cuDNN " + id + " is already installed");
        return {Kind::Cudnn, id, existing->path, true, {}};
    }
    std::vector<StreamJob> jobs = archive_jobs("cudnn", {&artifact});
    std::vector<fs::path> files = {jobs.front().local.empty() ? jobs.front().request.destination
                                                              : jobs.front().local};
    // install_file learns the id from the contents; when it is this one, the lock is ours.
    HeldInstall held;
    held.version_lock = "cudnn-" + id;
    InstallResult result =
        install_archive(files.front(), archive_url("cudnn", artifact.relative_path),
                        jobs.front().local.empty() ? &jobs.front() : nullptr, "", held);
    if (result.id != id)
        fail_input("the archive " + files.front().filename().u8string() + " holds cuDNN " +
                   result.id + ", not " + id + " as its manifest says");
    return result;
}

} // namespace cvm::install
