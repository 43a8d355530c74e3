#include "install/verify.h"

#include "spec/combination_name.h"
#include "store/entry_trust.h"
#include "install/installed_files.h"
#include "store/resolve.h"
#include "config/trust.h"
#include "activation/view.h"
#include "install/owner_records.h"
#include "install/sha256.h"
#include "install/verify_tree.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>

namespace cvm::install {

namespace fs = std::filesystem;

namespace {

// Runs `job(i)` for i in [0, n) on a few threads (hashing is what verify spends its time on).
template <typename Job> void for_each_index(std::size_t n, Job job) {
    std::atomic<std::size_t> next{0};
    auto work = [&] {
        for (std::size_t i; (i = next.fetch_add(1)) < n;)
            job(i);
    };
    unsigned threads = std::max(1u, std::min(4u, std::thread::hardware_concurrency()));
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads && t < n; ++t)
        pool.emplace_back(work);
    work();
    for (auto& t : pool)
        t.join();
}

std::string digest_or_error(const fs::path& p, Sha256::Algorithm algorithm, bool* ok) {
    try {
        *ok = true;
        return file_digest(p, algorithm);
    } catch (const std::exception& e) {
        *ok = false;
        return e.what();
    }
}

TreeItem::Type tree_type(InstalledFile::Type t) {
    switch (t) {
    case InstalledFile::Type::File:
        return TreeItem::Type::File;
    case InstalledFile::Type::Directory:
        return TreeItem::Type::Directory;
    case InstalledFile::Type::Symlink:
        break;
    }
    return TreeItem::Type::Symlink;
}

// The entry's own folder, its entry file and its record: cvm's, which nobody else may change (a
// record another user can rewrite proves nothing), and never links.
void check_record_files(const Entry& e, std::vector<VerifyProblem>& problems) {
    for (const char* name : {".", "entry", installed_files_name()}) {
        fs::path p = std::string(name) == "." ? e.entry_dir : e.entry_dir / name;
        // The item itself: its folder's tree (root/, the whole install) is read once, below.
        auto item = read_item(p);
        if (!item) continue; // a missing record is said below
        const bool folder = std::string(name) == ".";
        std::string what;
        if (item->type != (folder ? TreeItem::Type::Directory : TreeItem::Type::File))
            what = std::string("is ") + type_words(item->type) + ", not " +
                   (folder ? "a folder" : "a file") + " of cvm's own";
        else
            what = item_doubt(*item);
        if (!what.empty())
            problems.push_back(
                {p.u8string(), what + (folder ? "" : " (cvm's record of the install)")});
    }
}

EntryCheck verify_installed(const Entry& e, const VerifyProgress& progress) {
    EntryCheck c;
    fs::path record = e.entry_dir / installed_files_name();
    c.record = record.u8string();
    c.repair = "cvm install --reinstall " + e.id;
    check_record_files(e, c.problems);
    InstalledRecord rec;
    try {
        auto read = read_installed_record(e.entry_dir);
        if (!read) {
            if (!fs::exists(fs::symlink_status(record))) {
                c.state =
                    c.problems.empty() ? EntryCheck::State::Unrecorded : EntryCheck::State::Damaged;
                return c;
            }
            throw std::runtime_error(record.u8string() + " cannot be read");
        }
        rec = std::move(*read);
    } catch (const std::exception& ex) {
        c.state = EntryCheck::State::Damaged;
        c.problems.push_back(
            {installed_files_name(), std::string("the record is damaged: ") + ex.what()});
        return c;
    }
    const std::vector<InstalledFile>& files = rec.files;
    // The whole tree: what the record lists must be there as it was written, and nothing else
    // (a library added to root/lib is loaded by everything cvm starts).
    Tree tree = read_tree(e.path, c.problems);
    std::set<std::string> recorded, implied;
    for (const auto& f : files) {
        recorded.insert(f.path);
        for (auto slash = f.path.find('/'); slash != std::string::npos;
             slash = f.path.find('/', slash + 1))
            implied.insert(f.path.substr(0, slash)); // version 1 lists no folders
    }
    implied.insert(".");
    std::vector<const InstalledFile*> to_hash;
    for (const auto& f : files) {
        auto it = tree.find(f.path);
        if (it == tree.end()) {
            c.problems.push_back({f.path, "missing"});
            continue;
        }
        const TreeItem& d = it->second;
        if (d.type != tree_type(f.type)) {
            c.problems.push_back({f.path, std::string("is ") + type_words(d.type) +
                                              " now, installed as " +
                                              type_words(tree_type(f.type))});
            continue;
        }
        if (f.type == InstalledFile::Type::Symlink) {
            if (d.target != f.target)
                c.problems.push_back(
                    {f.path, "link points to \"" + d.target + "\", not \"" + f.target + "\""});
            continue;
        }
        if (rec.version >= 2 && (d.meta.mode & 07777) != (f.mode & 07777) &&
            platform::host_os() == platform::Os::Linux)
            c.problems.push_back(
                {f.path, "mode " + mode_text(d.meta.mode) + ", installed " + mode_text(f.mode)});
        if (f.type == InstalledFile::Type::File) {
            if (d.size != f.size)
                c.problems.push_back({f.path, std::to_string(d.size) + " bytes, " +
                                                  std::to_string(f.size) + " written at install"});
            else
                to_hash.push_back(&f);
        }
    }
    for (const auto& [path, d] : tree) {
        const bool listed =
            recorded.count(path) ||
            (rec.version < 2 && d.type == TreeItem::Type::Directory && implied.count(path));
        if (!listed)
            c.problems.push_back(
                {path, std::string("added: ") + type_words(d.type) + " cvm did not install"});
        // Right bytes in a file another user may rewrite are not safe either.
        if (std::string why = item_doubt(d); !why.empty()) c.problems.push_back({path, why});
    }
    std::mutex mutex;
    std::uint64_t total = 0;
    for (const auto* f : to_hash)
        total += f->size;
    std::atomic<std::uint64_t> hashed{0};
    if (progress) progress(0, total);
    for_each_index(to_hash.size(), [&](std::size_t i) {
        const InstalledFile& f = *to_hash[i];
        bool ok = false;
        std::string got =
            digest_or_error(e.path / fs::u8path(f.path), Sha256::Algorithm::Sha256, &ok);
        if (progress) {
            const std::uint64_t done = hashed.fetch_add(f.size) + f.size;
            std::lock_guard<std::mutex> lock(mutex);
            progress(done, total);
        }
        if (ok && got == f.sha256) return;
        std::lock_guard<std::mutex> lock(mutex);
        c.problems.push_back(
            {f.path,
             ok ? "content differs (sha256 " + got + ", installed " + f.sha256 + ")" : got});
    });
    std::sort(c.problems.begin(), c.problems.end(),
              [](const VerifyProblem& a, const VerifyProblem& b) { return a.path < b.path; });
    c.checked = files.size();
    c.state = c.problems.empty() ? EntryCheck::State::Intact : EntryCheck::State::Damaged;
    if (c.state == EntryCheck::State::Intact) c.repair.clear();
    return c;
}

// Compares a merged view with the one cvm would make now (fill_view): the same links to the
// same targets, real folders where it has folders, nothing else.
void compare_view(const fs::path& actual_root, const fs::path& expected_root,
                  std::vector<VerifyProblem>& problems) {
    Tree actual = read_tree(actual_root, problems);
    std::vector<VerifyProblem> ignored;
    Tree expected = read_tree(expected_root, ignored);
    for (const auto& [path, want] : expected) {
        auto it = actual.find(path);
        if (it == actual.end()) {
            problems.push_back({path, "missing"});
            continue;
        }
        const TreeItem& got = it->second;
        if (got.type != want.type) {
            problems.push_back({path, std::string("is ") + type_words(got.type) + ", not " +
                                          type_words(want.type)});
        } else if (got.type == TreeItem::Type::Symlink && got.target != want.target) {
            problems.push_back({path, "link to " + got.target + ", not " + want.target});
        } else if (got.type == TreeItem::Type::File) {
            // Windows' hard links: the same file as the toolkit's or cuDNN's; a file cvm writes
            // itself (the view's mark): the same bytes.
            const fs::path got_file = actual_root / fs::u8path(path);
            const fs::path want_file = expected_root / fs::u8path(path);
            if (platform::file_id(got_file) != platform::file_id(want_file) &&
                !platform::same_bytes(got_file, want_file))
                problems.push_back({path, "is not the file cvm puts there"});
        }
    }
    for (const auto& [path, got] : actual) {
        if (!expected.count(path)) {
            std::error_code ec;
            if (got.type == TreeItem::Type::Symlink &&
                !fs::exists(actual_root / fs::u8path(path), ec))
                problems.push_back({path, "link to " + got.target + " leads nowhere"});
            else
                problems.push_back({path, std::string("added: ") + type_words(got.type) +
                                              " cvm did not put there"});
        }
        if (std::string why = item_doubt(got); !why.empty()) problems.push_back({path, why});
    }
}

// What the fix is for a folder or file another user could change ("run `chmod o-w PATH`").
std::string untrusted_fix(const fs::path& p) {
    auto meta = platform::file_meta(p);
    if (!meta) return {};
    Doubt d = doubt_of(*meta);
    return d == Doubt::None ? std::string() : doubt_fix(d, p, *meta, false);
}

// The files of an import as the loader reaches them (links followed), into `files` (real path
// -> path shown). A link to a folder is followed only where cvm made it (an assembled root's
// own links); any other (another user's `extras/root -> /root`) is not walked: one inside the
// import is walked there anyway. Folders and files another user could change go
// to `c.untrusted`; links that lead nowhere to `c.problems`.
void walk_imported(const fs::path& dir, bool made_by_cvm, EntryCheck& c,
                   std::map<fs::path, std::string>& files, std::set<fs::path>& walked) {
    std::error_code ec;
    fs::path real_dir = fs::canonical(dir, ec);
    if (ec || !walked.insert(real_dir).second) return; // a cycle of folder links
    if (std::string why = untrusted_reason(dir); !why.empty())
        c.untrusted.push_back({dir.u8string() + "/", why});
    std::vector<fs::path> children;
    for (fs::directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
         !ec && it != end; it.increment(ec))
        children.push_back(it->path());
    std::sort(children.begin(), children.end());
    for (const auto& p : children) {
        std::error_code e2;
        auto link = fs::symlink_status(p, e2);
        auto st = fs::status(p, e2);
        if (fs::is_symlink(link) && !fs::exists(st)) {
            c.problems.push_back({p.u8string(), "link leads nowhere"});
            continue;
        }
        if (fs::is_directory(st)) {
            if (!fs::is_symlink(link)) {
                walk_imported(p, made_by_cvm, c, files, walked);
            } else if (made_by_cvm) {
                // cvm's link to a folder of the import: its own links are the import's.
                fs::path target = fs::canonical(p, e2);
                if (!e2) walk_imported(target, false, c, files, walked);
            }
            continue;
        }
        if (!fs::is_regular_file(st)) continue;
        fs::path real = fs::canonical(p, e2);
        if (e2) continue;
        if (std::string why = untrusted_reason(p); !why.empty())
            c.untrusted.push_back({p.u8string(), why});
        files.emplace(real, p.u8string());
    }
}

EntryCheck verify_imported(const Entry& e, const fs::path& dpkg_info) {
    EntryCheck c;
    c.imported = true;
    // The import's files, as the loader would reach them (links followed). An assembled root
    // (<entry dir>/root) is cvm's: its links lead to the import's scattered files.
    std::map<fs::path, std::string> files; // real path -> path shown
    std::set<fs::path> walked;
    std::error_code ec;
    bool assembled = !e.origin.empty() && e.path.lexically_normal() ==
                                              (e.entry_dir / "root").lexically_normal();
    walk_imported(e.path, assembled, c, files, walked);
    std::map<fs::path, OwnerRecord> records;
    read_wheel_records(files, records);
    read_assembled_wheel_records(e.path, files, records); // /usr/local/cuda-13.0 made of wheels
    // An assembled root of links into such a folder (the NCCL inside it): its RECORDs too.
    if (!e.origin.empty()) read_assembled_wheel_records(e.origin, files, records);
    if (!dpkg_info.empty() && fs::is_directory(dpkg_info, ec))
        read_dpkg_records(files, dpkg_info, records);
    std::vector<std::pair<fs::path, const OwnerRecord*>> todo(records.size());
    std::transform(records.begin(), records.end(), todo.begin(),
                   [](const auto& kv) { return std::make_pair(kv.first, &kv.second); });
    std::mutex mutex;
    std::set<std::string> owners, record_files;
    for_each_index(todo.size(), [&](std::size_t i) {
        const auto& [path, rec] = todo[i];
        std::string problem;
        std::error_code e2;
        auto size = fs::file_size(path, e2);
        if (!rec->size.empty() && !e2 && std::to_string(size) != rec->size) {
            problem =
                std::to_string(size) + " bytes, " + rec->size + " in " + rec->owner + "'s record";
        } else {
            bool ok = false;
            bool wheel = rec->kind == OwnerRecord::Kind::Wheel;
            std::string got = digest_or_error(
                path, wheel ? Sha256::Algorithm::Sha256 : Sha256::Algorithm::Md5, &ok);
            if (!ok)
                problem = got;
            else if ((wheel ? hex_to_urlsafe_base64(got) : got) != rec->digest)
                problem = std::string("content differs from ") + rec->owner + "'s record (" +
                          (wheel ? "sha256" : "md5") + ")";
        }
        std::lock_guard<std::mutex> lock(mutex);
        record_files.insert(rec->file);
        if (problem.empty()) return;
        c.problems.push_back({path.u8string(), problem});
        if (rec->kind == OwnerRecord::Kind::Wheel) {
            std::string dist = rec->owner.substr(0, rec->owner.size() - 10);
            auto dash = dist.find('-');
            owners.insert("pip install --force-reinstall " +
                          (dash == std::string::npos
                               ? dist
                               : dist.substr(0, dash) + "==" + dist.substr(dash + 1)));
        } else {
            owners.insert("apt-get install --reinstall " + rec->owner);
        }
    });
    std::sort(c.problems.begin(), c.problems.end(),
              [](const VerifyProblem& a, const VerifyProblem& b) { return a.path < b.path; });
    c.checked = records.size();
    c.uncovered = files.size() - records.size();
    // Many RECORDs in one folder (a toolkit assembled from wheels keeps 19): named by the folder.
    std::set<fs::path> record_dirs;
    for (const auto& r : record_files)
        record_dirs.insert(fs::u8path(r).parent_path().parent_path());
    if (record_files.size() > 2 && record_dirs.size() == 1)
        c.record = std::to_string(record_files.size()) + " wheel RECORDs in " +
                   record_dirs.begin()->u8string() + "/";
    else
        for (const auto& r : record_files)
            c.record += (c.record.empty() ? "" : ", ") + r;
    std::sort(c.untrusted.begin(), c.untrusted.end(),
              [](const VerifyProblem& a, const VerifyProblem& b) { return a.path < b.path; });
    if (!c.problems.empty()) {
        c.state = EntryCheck::State::Damaged;
        for (const auto& o : owners)
            c.repair += (c.repair.empty() ? "" : "; ") + o;
        if (c.repair.empty())
            c.repair = "cvm import " + (e.origin.empty() ? e.path : e.origin).u8string() + " again";
    } else {
        c.state = c.checked == 0 ? EntryCheck::State::NoRecord : EntryCheck::State::Intact;
    }
    // Another user could change it: not damage (import again fixes nothing), a fix of its own.
    if (!c.untrusted.empty()) {
        if (c.state != EntryCheck::State::Damaged) c.state = EntryCheck::State::Untrusted;
        constexpr std::size_t kFixes = 3;
        for (std::size_t i = 0; i < c.untrusted.size() && i < kFixes; ++i) {
            std::string path = c.untrusted[i].path;
            if (path.size() > 1 && path.back() == '/') path.pop_back();
            if (std::string fix = untrusted_fix(fs::u8path(path)); !fix.empty())
                c.repair += (c.repair.empty() ? "" : "; ") + fix;
        }
        if (c.untrusted.size() > kFixes)
            c.repair += "; the same for the " + std::to_string(c.untrusted.size() - kFixes) +
                        " others";
    }
    return c;
}

} // namespace

const char* state_name(EntryCheck::State s) {
    switch (s) {
    case EntryCheck::State::Intact:
        return "intact";
    case EntryCheck::State::Damaged:
        return "damaged";
    case EntryCheck::State::Unrecorded:
        return "unrecorded";
    case EntryCheck::State::NoRecord:
        return "no-record";
    case EntryCheck::State::Untrusted:
        return "untrusted";
    }
    return "unknown";
}

EntryCheck verify_entry(const Entry& e, const fs::path& dpkg_info, const VerifyProgress& progress) {
    EntryCheck c = e.imported ? verify_imported(e, dpkg_info) : verify_installed(e, progress);
    c.kind = e.kind;
    c.id = e.id;
    c.imported = e.imported;
    return c;
}

std::vector<ViewCheck> verify_views(const Store& store, const std::string& id) {
    std::vector<ViewCheck> out;
    std::error_code ec;
    for (fs::directory_iterator it(store.views_dir(), ec), end; !ec && it != end;
         it.increment(ec)) {
        std::string name = it->path().filename().u8string();
        // A merged view is named as CVM_ACTIVE: TOOLKIT+CUDNN, TOOLKIT+ncclNCCL, or both.
        if (name.find('+') == std::string::npos) continue; // a toolkit's own (its host compiler)
        const CombinationParts parts = combination_parts(name);
        const std::string &toolkit_id = parts.cuda, &cudnn_id = parts.cudnn, &nccl_id = parts.nccl;
        if (!id.empty() && toolkit_id != id && cudnn_id != id && nccl_id != id) continue;
        ViewCheck v;
        v.name = name;
        v.path = it->path();
        auto tk = store.find(Kind::Cuda, toolkit_id);
        std::optional<Entry> dnn, nccl;
        if (!cudnn_id.empty()) dnn = store.find(Kind::Cudnn, cudnn_id);
        if (!nccl_id.empty()) nccl = store.find(Kind::Nccl, nccl_id);
        std::string missing = !tk ? "toolkit " + toolkit_id
                              : !cudnn_id.empty() && !dnn ? "cuDNN build " + cudnn_id
                              : !nccl_id.empty() && !nccl ? "NCCL " + nccl_id
                                                          : std::string();
        if (!missing.empty() || (cudnn_id.empty() && nccl_id.empty())) {
            v.problems.push_back({".", missing.empty()
                                           ? std::string("its name names no cuDNN or NCCL: a "
                                                         "view nothing uses")
                                           : "its " + missing +
                                                 " is not installed: a view nothing uses"});
        } else {
            // The view cvm would make now, beside the store's views, to compare with.
            Resolved r;
            r.toolkit = *tk;
            r.cudnn = dnn;
            r.nccl = nccl;
            fs::path expected =
                store.staging_dir() /
                fs::u8path("verify-" + std::to_string(platform::process_id()) + "-" + name);
            std::error_code e2;
            fs::remove_all(expected, e2);
            try {
                fill_view(store, r, expected);
                compare_view(it->path(), expected, v.problems);
            } catch (const std::exception& ex) {
                v.problems.push_back({".", std::string("cannot be compared: ") + ex.what()});
            }
            fs::remove_all(expected, e2);
        }
        out.push_back(std::move(v));
    }
    std::sort(out.begin(), out.end(),
              [](const ViewCheck& a, const ViewCheck& b) { return a.name < b.name; });
    return out;
}

} // namespace cvm::install
