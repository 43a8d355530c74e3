// The StoreInstaller's staging folder, the version locks, and the commit that moves a staged
// install into the store in one rename (install_staging.h).
#include "install/install_staging.h"

#include "store/entry_format.h"
#include "install/installed_files.h"
#include "spec/redist_platform.h"
#include "install/archive_name.h"
#include "install/error.h"
#include "install/extract.h"
#include "install/installer_package.h"
#include "install/progress.h"
#include "install/recognize.h"
#include "install/release_choice.h"
#include "install/store_install.h"
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
#include <thread>

namespace cvm::install {

namespace fs = std::filesystem;

namespace {

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

} // namespace

std::string kind_word(Kind k) {
    return kind_label(k);
}

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


void Staged::record(const ExtractResult& result, const fs::path& extracted,
                                    const fs::path& content,
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

void StoreInstaller::clean_staging() const {
    store_.clean_staging();
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

InstallResult StoreInstaller::commit(Staged& staged, Entry entry) {
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
    // The store's one writer puts it in place; a reinstall's old entry waits in the staging
    // folder until the new one is in.
    fs::path target;
    try {
        target = store_.commit_entry(entry.kind, entry.id, entry_dir, staged.dir / "old",
                                     options_.reinstall);
    } catch (const EntryCommitError& e) {
        if (e.step() == EntryCommitError::Step::Occupied)
            fail_operation(kind_word(entry.kind) + " " + entry.id +
                           " appeared in the store meanwhile");
        if (e.step() == EntryCommitError::Step::MoveAside)
            fail_operation("cannot replace " + e.target().u8string() + ": " + e.reason().message());
        fail_operation("cannot move the install into " + e.target().u8string() + ": " +
                       e.reason().message());
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

} // namespace cvm::install
