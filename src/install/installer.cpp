#include "install/installer.h"

#include "core/installed_files.h"
#include "core/redist_platform.h"
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
#include <functional>
#include <fstream>
#include <map>
#include <random>
#include <thread>

namespace cvm::install {

namespace fs = std::filesystem;

namespace {

std::string random_name() {
    std::random_device rd;
    char buf[17];
    std::snprintf(buf, sizeof buf, "%08x%08x", rd(), rd());
    return buf;
}

std::string kind_word(Kind k) {
    return kind_label(k);
}

// Files that are the same: sizes and bytes equal (symlinks: same target).
bool same_file(const fs::path& a, const fs::path& b) {
    std::error_code ec;
    if (fs::is_symlink(a, ec) || fs::is_symlink(b, ec))
        return fs::is_symlink(a, ec) && fs::is_symlink(b, ec) &&
               fs::read_symlink(a, ec) == fs::read_symlink(b, ec);
    if (fs::file_size(a, ec) != fs::file_size(b, ec) || ec) return false;
    std::ifstream x(a, std::ios::binary), y(b, std::ios::binary);
    std::vector<char> p(1 << 16), q(1 << 16);
    while (x && y) {
        x.read(p.data(), static_cast<std::streamsize>(p.size()));
        y.read(q.data(), static_cast<std::streamsize>(q.size()));
        if (x.gcount() != y.gcount() || !std::equal(p.begin(), p.begin() + x.gcount(), q.begin()))
            return false;
    }
    return true;
}

// Moves everything below `from` into `to`, merging folders. Entries that exist in both with
// different contents keep the first and are reported.
void merge_into(const fs::path& from, const fs::path& to, std::vector<std::string>& conflicts,
                const fs::path& top) {
    for (const auto& e : fs::directory_iterator(from)) {
        fs::path target = to / e.path().filename();
        std::error_code ec;
        auto status = fs::symlink_status(target, ec);
        if (!fs::exists(status)) {
            fs::rename(e.path(), target);
            continue;
        }
        bool src_dir = e.is_directory() && !e.is_symlink();
        if (src_dir && fs::is_directory(status)) {
            merge_into(e.path(), target, conflicts, top);
            continue;
        }
        if (!same_file(e.path(), target))
            conflicts.push_back(e.path().lexically_relative(top).generic_string());
    }
}

void write_file(const fs::path& p, const std::string& text) {
    if (int err = platform::create_file_for_writing(p))
        fail_operation("cannot write " + p.u8string() + ": " + std::strerror(err));
    std::FILE* f = std::fopen(p.u8string().c_str(), "wb");
    if (f == nullptr) fail_operation("cannot write " + p.u8string() + ": " + std::strerror(errno));
    bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0;
    int err = errno;
    if (std::fclose(f) != 0 && ok) {
        ok = false;
        err = errno;
    }
    if (!ok)
        fail_operation("cannot write " + p.u8string() + ": " + std::strerror(err) +
                       (err == ENOSPC ? "; free space and run the install again" : ""));
}

std::string basename_of_url(const std::string& url) {
    std::string path = url;
    auto q = path.find_first_of("?#");
    if (q != std::string::npos) path.resize(q);
    auto slash = path.rfind('/');
    std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
    std::string clean;
    for (char c : name)
        clean += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')
                     ? c
                     : '_';
    if (clean.empty() || clean == "." || clean == "..") clean = "download";
    return clean;
}

} // namespace

std::string default_mirror() {
    std::string base = kNvidiaDownloadBase;
    // Credentials in it are kept for requests to the mirror, and never shown or stored.
    if (auto m = platform::get_env("CVM_MIRROR"); m && !m->empty())
        base = register_url_credentials(*m);
    while (!base.empty() && base.back() == '/')
        base.pop_back();
    return base;
}

// A staging folder, locked while this process uses it; removed with everything in it, also
// when the process is interrupted.
struct Installer::Staged {
    fs::path dir;
    fs::path lock_path;
    platform::FileLock lock;
    platform::CleanupOnSignal interrupt_guard;
    // What will be root/ in the entry: path -> the record of the bytes written.
    std::map<std::string, InstalledFile> files;

    explicit Staged(const Store& store) {
        std::string name = "install-" + std::to_string(platform::process_id()) + "-" + random_name();
        lock_path = store.locks_dir() / ("staging-" + name + ".lock");
        lock.acquire(lock_path);
        dir = store.staging_dir() / name;
        interrupt_guard.watch(dir, platform::Removal::Tree);
        fs::create_directory(dir);
    }
    ~Staged() {
        std::error_code ec;
        if (!dir.empty()) {
            // Make read-only folders writable again so they can be removed.
            for (auto it = fs::recursive_directory_iterator(dir, ec);
                 !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
                if (it->is_directory(ec) && !it->is_symlink(ec))
                    fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
            fs::remove_all(dir, ec);
        }
        interrupt_guard.release();
        lock.release();
        fs::remove(lock_path, ec);
    }

    // Records what an extraction wrote below `content` (a folder of it, `extracted` its top),
    // under the path `place` gives (empty: not installed). The first record of a path stays,
    // as merge_into keeps the first file.
    void record(const ExtractResult& result, const fs::path& extracted, const fs::path& content,
                const std::function<std::string(const std::string&)>& place) {
        std::string prefix = content.lexically_relative(extracted).generic_u8string();
        if (prefix == ".") prefix.clear();
        for (const auto& e : result.entries) {
            if (e.type == ExtractedEntry::Type::Directory) continue;
            std::string rel = e.path;
            if (!prefix.empty()) {
                if (rel.size() <= prefix.size() + 1 || rel.compare(0, prefix.size(), prefix) != 0 ||
                    rel[prefix.size()] != '/')
                    continue;
                rel = rel.substr(prefix.size() + 1);
            }
            rel = place ? place(rel) : rel;
            if (rel.empty()) continue;
            InstalledFile f;
            f.path = rel;
            if (e.type == ExtractedEntry::Type::Symlink) {
                if (e.link_target.find_first_of("\t\n") != std::string::npos) continue;
                f.type = InstalledFile::Type::Symlink;
                f.target = e.link_target;
            } else {
                f.size = e.size;
                f.sha256 = e.sha256;
            }
            files.emplace(rel, std::move(f));
        }
    }
};

Installer::Installer(const Store& store, InstallerOptions options)
    : store_(store), options_(std::move(options)) {
    if (options_.host_platform.empty()) options_.host_platform = host_redist_platform();
    if (options_.mirror.empty()) options_.mirror = default_mirror();
    if (options_.download.progress == nullptr) options_.download.progress = options_.progress;
}

void Installer::clean_staging() const {
    std::error_code ec;
    for (fs::directory_iterator it(store_.staging_dir(), ec), end; !ec && it != end;
         it.increment(ec)) {
        std::string name = it->path().filename().u8string();
        if (name.rfind("install-", 0) != 0) continue;
        fs::path lock_path = store_.locks_dir() / ("staging-" + name + ".lock");
        platform::FileLock lock;
        try {
            if (!lock.acquire(lock_path, true)) continue; // still in use
        } catch (const std::exception&) {
            continue;
        }
        std::error_code e2;
        for (auto r = fs::recursive_directory_iterator(it->path(), e2);
             !e2 && r != fs::recursive_directory_iterator(); r.increment(e2))
            if (r->is_directory(e2) && !r->is_symlink(e2))
                fs::permissions(r->path(), fs::perms::owner_all, fs::perm_options::add, e2);
        fs::remove_all(it->path(), e2);
        lock.release();
        fs::remove(lock_path, e2);
    }
}

std::string Installer::manifest_url(const std::string& product, const std::string& manifest) const {
    return options_.mirror + "/" + product + "/redist/" + manifest;
}

std::string Installer::archive_url(const std::string& product, const std::string& relative) const {
    return options_.mirror + "/" + product + "/redist/" + relative;
}

// Declared in install/version_lock.h (install_legacy.cpp takes it too).
std::unique_ptr<platform::FileLock> lock_version(const Store& store, Kind kind,
                                                 const std::string& id, Progress* progress) {
    fs::create_directories(store.locks_dir());
    auto lock = std::make_unique<platform::FileLock>();
    fs::path path = store.locks_dir() / (std::string(kind_dir(kind)) + "-" + id + ".lock");
    if (!lock->acquire(path, true)) {
        if (progress)
            progress->message("waiting for another install of " + kind_word(kind) + " " + id);
        lock->acquire(path, false);
    }
    return lock;
}

// The record of the whole tree as it stands in staging, for `cvm verify`: every folder, file and
// link with its mode; what the extraction recorded keeps its size and SHA-256 as written, and
// what it did not (a link or file cvm made itself) is read now.
static std::vector<InstalledFile> whole_tree_record(const fs::path& root,
                                                    std::map<std::string, InstalledFile>& written) {
    std::vector<InstalledFile> out;
    auto add = [&](const std::string& rel, const fs::path& p) {
        if (rel.find_first_of("\t\n\r") != std::string::npos)
            fail_input(
                "\"" + printable(rel) +
                "\": a name with a tab or line break cannot be installed; nothing was installed");
        bool link = false;
        auto meta = platform::link_meta(p, link);
        if (!meta)
            fail_operation("cannot read " + p.u8string() +
                           " in the staging folder; nothing was installed");
        InstalledFile f;
        auto it = written.find(rel);
        if (link) {
            std::error_code ec;
            std::string target = fs::read_symlink(p, ec).generic_u8string();
            if (it != written.end() && it->second.type == InstalledFile::Type::Symlink)
                f = it->second;
            else
                f = {InstalledFile::Type::Symlink, rel, 0, "", target};
            if (f.target.find_first_of("\t\n\r") != std::string::npos)
                fail_input("\"" + printable(rel) +
                           "\": a link target with a tab or line break cannot be installed");
        } else if (meta->type == platform::FileMeta::Type::Directory) {
            f = {InstalledFile::Type::Directory, rel, 0, "", ""};
        } else if (meta->type == platform::FileMeta::Type::Regular) {
            if (it != written.end() && it->second.type == InstalledFile::Type::File) {
                f = it->second;
            } else {
                std::error_code ec;
                f = {InstalledFile::Type::File, rel, fs::file_size(p, ec), sha256_file(p), ""};
            }
        } else {
            fail_operation("\"" + printable(rel) +
                           "\" in the staging folder is neither a file, a folder nor a link; "
                           "nothing was installed");
        }
        f.path = rel;
        if (!link) f.mode = meta->mode;
        out.push_back(std::move(f));
    };
    add(".", root);
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        add(it->path().lexically_relative(root).generic_u8string(), it->path());
    if (ec)
        fail_operation("cannot read the staging folder " + root.u8string() + ": " + ec.message());
    std::sort(out.begin(), out.end(),
              [](const InstalledFile& a, const InstalledFile& b) { return a.path < b.path; });
    return out;
}

InstallResult Installer::commit(Staged& staged, Entry entry) {
    entry.imported = false;
    fs::path entry_dir = staged.dir / "entry";
    // The disk must hold what was written: a size that differs now is data the disk lost.
    std::vector<InstalledFile> files;
    files.reserve(staged.files.size());
    for (auto& [path, f] : staged.files)
        files.push_back(f);
    std::vector<FileDamage> damage = check_installed_sizes(entry_dir / "root", files);
    if (!damage.empty())
        fail_operation("the disk did not keep what was written: \"" + damage.front().path +
                       "\" is " + damage.front().what + " (" + std::to_string(damage.size()) +
                       " file(s)); nothing was installed. Check the disk (free space, dmesg) and "
                       "run the install again");
    files = whole_tree_record(entry_dir / "root", staged.files);
    write_file(entry_dir / installed_files_name(), serialize_installed_files(files));
    write_file(entry_dir / "entry", serialize_entry(entry));
    fs::path target = store_.root() / kind_dir(entry.kind) / fs::u8path(entry.id);
    fs::create_directories(target.parent_path());
    std::error_code ec;
    fs::path old = staged.dir / "old";
    bool replacing = false;
    if (fs::exists(fs::symlink_status(target, ec))) {
        if (fs::exists(target / "entry", ec) && !options_.reinstall)
            fail_operation(kind_word(entry.kind) + " " + entry.id +
                           " appeared in the store meanwhile");
        // A reinstall moves the old entry aside (removed with the staging folder); a folder
        // without an entry is no install (an interrupted removal): replace it.
        if (options_.reinstall) {
            fs::rename(target, old, ec);
            if (ec)
                fail_operation("cannot replace " + target.u8string() + ": " + ec.message());
            replacing = true;
        } else {
            fs::remove_all(target, ec);
        }
    }
    fs::rename(entry_dir, target, ec);
    if (ec) {
        std::error_code back;
        if (replacing) fs::rename(old, target, back);
        fail_operation("cannot move the install into " + target.u8string() + ": " + ec.message());
    }
    InstallResult result;
    result.kind = entry.kind;
    result.id = entry.id;
    result.path = target / "root";
    result.components = entry.components;
    if (options_.progress)
        options_.progress->message("installed " + kind_word(entry.kind) + " " + entry.id + " in " +
                                   target.u8string());
    return result;
}

InstallResult Installer::install_file(const fs::path& archive, const std::string& origin) {
    return install_archive(archive, origin, nullptr);
}

InstallResult Installer::install_archive(const fs::path& archive, const std::string& origin,
                                         const StreamJob* download) {
    std::error_code ec;
    if (!download && !fs::is_regular_file(archive, ec))
        fail_input(archive.u8string() +
                   " is not a file; give an archive (.tar.xz, .tgz, .zip, .whl) or a URL");
    if (!download && detect_installer(archive)) return install_installer(archive, {}, origin);
    const std::string display = archive.filename().u8string();
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
    std::string digest, digest_error;
    std::thread hasher;
    if (!download)
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
            StreamResult streamed =
                std::move(download_and_extract({job}, options_.download, options_.parallel).front());
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
    Recognized r = recognize_extracted(x, name, ro);

    Entry e;
    e.platform = r.platform.empty() ? host : r.platform;
    e.note = "recognised from " + r.evidence + (name ? " and the file name" : "");
    if (!r.include_dir.empty()) e.include_dirs.push_back(r.include_dir);
    if (!r.lib_dir.empty()) e.lib_dirs.push_back(r.lib_dir);
    if (!r.bin_dir.empty()) e.bin_dirs.push_back(r.bin_dir);
    e.archives.push_back(
        {display, origin.empty() ? fs::absolute(archive).u8string() : origin, digest});
    e.archives.back().first_use = !first_use_archive_.empty() && display == first_use_archive_;
    if (r.kind == ProductKind::Nccl) {
        e.kind = Kind::Nccl;
        auto v = parse_version(r.version, 3, 3);
        auto c = parse_version(r.cuda_variant, 1, 2);
        if (!v || !c)
            fail_input(display + ": cannot use NCCL " + r.version + " for CUDA " + r.cuda_variant);
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
    if (held_lock_ != std::string(kind_dir(e.kind)) + "-" + e.id)
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

InstallResult Installer::install_installer(const fs::path& file,
                                           const std::vector<std::string>& components,
                                           const std::string& origin) {
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
    if (held_lock_ != "cuda-" + e.id) version_lock = lock_version(store_, Kind::Cuda, e.id, options_.progress);
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
    e.archives.push_back({display, origin.empty() ? fs::absolute(file).u8string() : origin, digest});
    e.archives.back().first_use = !first_use_archive_.empty() && display == first_use_archive_;
    return commit(staged, e);
}

InstallResult Installer::install_url(const std::string& given, const std::string& sha256) {
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
    auto ends_with = [&](const char* suffix) {
        std::size_t n = std::char_traits<char>::length(suffix);
        return name.size() > n && name.compare(name.size() - n, n, suffix) == 0;
    };
    // Without a sum nothing could vouch for a cached copy later: one whose install failed (not
    // an archive, a refused archive) is not kept.
    auto forget_download = [&] {
        if (!sha256.empty()) return;
        std::error_code ec;
        fs::remove(request.destination, ec);
    };
    try {
        if (ends_with(".run") || ends_with(".exe")) {
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

void Installer::pin_archives(const std::vector<std::pair<std::string, std::string>>& url_sums) {
    options_.pinned_sha256.clear();
    for (const auto& [url, sha256] : url_sums)
        options_.pinned_sha256[basename_of_url(url)] = sha256;
}

std::vector<StreamJob> Installer::archive_jobs(const std::string& product,
                                               const std::vector<const Artifact*>& items) {
    // Pinned sums (cvm install --locked): all of them are compared before the first download.
    if (!options_.pinned_sha256.empty()) {
        for (const Artifact* a : items) {
            std::string name = basename_of_url(a->relative_path);
            auto it = options_.pinned_sha256.find(name);
            if (it == options_.pinned_sha256.end())
                fail_operation("the mirror's " + product + " manifest names " + name +
                               ", an archive the lock does not record; nothing was downloaded. "
                               "Check CVM_MIRROR, or run `cvm lock` again where the toolchain is installed");
            if (it->second != a->sha256)
                fail_operation("the lock requires sha256 " + it->second + " for " + name +
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
void Installer::finish_toolkit_root(Staged& staged, const fs::path& root, const std::string& host,
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

InstallResult Installer::install_toolkit(const std::string& version_text,
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
    Manifest m = parse_manifest(fetch_text(url, options_.download), manifest);
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

InstallResult Installer::install_cudnn(const std::string& version_text, const std::string& cuda) {
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
    held_lock_ = "cudnn-" + id;
    InstallResult result;
    try {
        result = install_archive(files.front(), archive_url("cudnn", artifact.relative_path),
                                 jobs.front().local.empty() ? &jobs.front() : nullptr);
    } catch (...) {
        held_lock_.clear();
        throw;
    }
    held_lock_.clear();
    if (result.id != id)
        fail_input("the archive " + files.front().filename().u8string() + " holds cuDNN " +
                   result.id + ", not " + id + " as its manifest says");
    return result;
}

std::vector<InstallResult> Installer::install_spec(const Spec& spec) {
    if (spec.system) fail_input("\"system\" names nothing to install");
    // Everything the registry can decide is decided before anything is downloaded: a cuDNN that
    // does not exist for the toolkit fails before the toolkit is fetched.
    std::optional<Version> installed;
    Spec only_cuda;
    only_cuda.cuda = spec.cuda;
    try {
        installed = resolve(store_, only_cuda).toolkit.version;
    } catch (const ResolveError&) {
    }
    Version toolkit = installed ? *installed : choose_toolkit(options_.registry, spec.cuda, options_.host_platform).version;
    // A matching cuDNN may be there already, even before its toolkit.
    bool cudnn_missing = spec.cudnn.has_value();
    if (spec.cudnn)
        for (const auto& [id, layer] : store_.ids(Kind::Cudnn)) {
            (void)layer;
            auto c = parse_cudnn_id(id);
            if (c && c->version.has_prefix(*spec.cudnn) && (!spec.cudnn_cuda || c->cuda == *spec.cudnn_cuda) &&
                c->serves(toolkit))
                cudnn_missing = false;
        }
    auto cudnn = cudnn_missing ? choose_cudnn_for(options_.registry, spec, toolkit,
                                                  options_.host_platform)
                               : std::nullopt;
    if (cudnn_missing && !cudnn && spec.cudnn->parts.size() < 3)
        fail_input("no cuDNN " + spec.cudnn->str() + " for CUDA " + toolkit.str() +
                       " is in cvm's release list; give the full version (e.g. 9.1.0)",
                   "not_found");
    std::vector<InstallResult> results;
    if (!installed && spec.cuda.parts.size() < 3 && options_.progress)
        options_.progress->message("CUDA " + spec.cuda.str() + " is " + toolkit.str() + ", the newest " +
                                   spec.cuda.str() + " release cvm knows");
    // An NCCL of the spec's version built for the toolkit's CUDA major, unless one is there.
    bool nccl_missing = spec.nccl.has_value();
    if (spec.nccl)
        for (const auto& [id, layer] : store_.ids(Kind::Nccl)) {
            (void)layer;
            auto n = parse_nccl_id(id);
            if (n && n->version.has_prefix(*spec.nccl) &&
                (!spec.nccl_cuda || n->cuda.has_prefix(*spec.nccl_cuda)) && n->serves(toolkit))
                nccl_missing = false;
        }
    std::optional<NcclPlan> nccl;
    if (nccl_missing)
        nccl = plan_nccl(spec.nccl->str(),
                         spec.nccl_cuda ? spec.nccl_cuda->str() : std::to_string(toolkit.major()),
                         options_.host_platform, options_.progress);
    if (!installed) results.push_back(install_toolkit(toolkit.str(), {}));
    if (cudnn_missing) {
        if (cudnn)
            results.push_back(install_cudnn(cudnn->first, cudnn->second));
        else
            results.push_back(install_cudnn(spec.cudnn->str(),
                                            spec.cudnn_cuda ? spec.cudnn_cuda->str()
                                                            : std::to_string(toolkit.major())));
    }
    if (nccl) results.push_back(install_nccl_plan(*nccl));
    return results;
}

} // namespace cvm::install
