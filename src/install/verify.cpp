#include "install/verify.h"

#include "core/entry_trust.h"
#include "core/installed_files.h"
#include "install/owner_records.h"
#include "install/sha256.h"

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
template <typename Job>
void for_each_index(std::size_t n, Job job) {
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

EntryCheck verify_installed(const Entry& e) {
    EntryCheck c;
    fs::path record = e.entry_dir / installed_files_name();
    c.record = record.u8string();
    c.repair = "cvm install --reinstall " + e.id;
    std::vector<InstalledFile> files;
    try {
        auto read = read_installed_files(e.entry_dir);
        if (!read) {
            c.state = EntryCheck::State::Unrecorded;
            return c;
        }
        files = std::move(*read);
    } catch (const std::exception& ex) {
        c.state = EntryCheck::State::Damaged;
        c.problems.push_back({installed_files_name(), std::string("the record is damaged: ") + ex.what()});
        return c;
    }
    for (auto& d : check_installed_sizes(e.path, files))
        c.problems.push_back({d.path, d.what});
    std::set<std::string> already;
    for (const auto& p : c.problems)
        already.insert(p.path);
    // Right bytes in a file another user may rewrite are not safe either.
    for (const auto& f : files)
        if (f.type == InstalledFile::Type::File && !already.count(f.path))
            if (std::string why = untrusted_reason(e.path / fs::u8path(f.path)); !why.empty())
                c.problems.push_back({f.path, why});
    std::vector<const InstalledFile*> to_hash;
    for (const auto& f : files)
        if (f.type == InstalledFile::Type::File && !already.count(f.path)) to_hash.push_back(&f);
    std::mutex mutex;
    for_each_index(to_hash.size(), [&](std::size_t i) {
        const InstalledFile& f = *to_hash[i];
        bool ok = false;
        std::string got = digest_or_error(e.path / fs::u8path(f.path), Sha256::Algorithm::Sha256, &ok);
        if (ok && got == f.sha256) return;
        std::lock_guard<std::mutex> lock(mutex);
        c.problems.push_back({f.path, ok ? "content differs (sha256 " + got + ", installed " +
                                               f.sha256 + ")"
                                         : got});
    });
    std::sort(c.problems.begin(), c.problems.end(),
              [](const VerifyProblem& a, const VerifyProblem& b) { return a.path < b.path; });
    c.checked = files.size();
    c.state = c.problems.empty() ? EntryCheck::State::Intact : EntryCheck::State::Damaged;
    if (c.state == EntryCheck::State::Intact) c.repair.clear();
    return c;
}

EntryCheck verify_imported(const Entry& e, const fs::path& dpkg_info) {
    EntryCheck c;
    c.imported = true;
    // The import's files, as the loader would reach them (links followed).
    std::map<fs::path, std::string> files; // real path -> path shown
    std::error_code ec;
    auto options = fs::directory_options::follow_directory_symlink |
                   fs::directory_options::skip_permission_denied;
    for (auto it = fs::recursive_directory_iterator(e.path, options, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        std::error_code e2;
        if (it.depth() > 24) it.disable_recursion_pending(); // a cycle of folder links
        if (it->is_symlink(e2) && !fs::exists(it->path(), e2)) {
            c.problems.push_back({it->path().u8string(), "link leads nowhere"});
            continue;
        }
        if (!it->is_regular_file(e2)) continue;
        if (std::string why = untrusted_reason(it->path()); !why.empty())
            c.problems.push_back({it->path().u8string(), why});
        fs::path real = fs::canonical(it->path(), e2);
        if (!e2) files.emplace(real, it->path().u8string());
    }
    std::map<fs::path, OwnerRecord> records;
    read_wheel_records(files, records);
    if (!dpkg_info.empty() && fs::is_directory(dpkg_info, ec)) read_dpkg_records(files, dpkg_info, records);
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
            problem = std::to_string(size) + " bytes, " + rec->size + " in " + rec->owner + "'s record";
        } else {
            bool ok = false;
            bool wheel = rec->kind == OwnerRecord::Kind::Wheel;
            std::string got = digest_or_error(path, wheel ? Sha256::Algorithm::Sha256 : Sha256::Algorithm::Md5, &ok);
            if (!ok) problem = got;
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
                          (dash == std::string::npos ? dist
                                                     : dist.substr(0, dash) + "==" + dist.substr(dash + 1)));
        } else {
            owners.insert("apt-get install --reinstall " + rec->owner);
        }
    });
    std::sort(c.problems.begin(), c.problems.end(),
              [](const VerifyProblem& a, const VerifyProblem& b) { return a.path < b.path; });
    c.checked = records.size();
    c.uncovered = files.size() - records.size();
    for (const auto& r : record_files)
        c.record += (c.record.empty() ? "" : ", ") + r;
    if (!c.problems.empty()) {
        c.state = EntryCheck::State::Damaged;
        for (const auto& o : owners)
            c.repair += (c.repair.empty() ? "" : "; ") + o;
        if (c.repair.empty()) c.repair = "cvm import " + (e.origin.empty() ? e.path : e.origin).u8string() + " again";
    } else {
        c.state = c.checked == 0 ? EntryCheck::State::NoRecord : EntryCheck::State::Intact;
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
    }
    return "unknown";
}

EntryCheck verify_entry(const Entry& e, const fs::path& dpkg_info) {
    EntryCheck c = e.imported ? verify_imported(e, dpkg_info) : verify_installed(e);
    c.kind = e.kind;
    c.id = e.id;
    c.imported = e.imported;
    return c;
}

std::vector<ViewCheck> verify_views(const Store& store, const std::string& id) {
    std::vector<ViewCheck> out;
    std::error_code ec;
    for (fs::directory_iterator it(store.views_dir(), ec), end; !ec && it != end; it.increment(ec)) {
        std::string name = it->path().filename().u8string();
        auto plus = name.find('+');
        if (plus == std::string::npos) continue;
        if (!id.empty() && name.substr(0, plus) != id && name.substr(plus + 1) != id) continue;
        ViewCheck v;
        v.name = name;
        v.path = it->path();
        std::error_code e2;
        for (auto r = fs::recursive_directory_iterator(it->path(), e2);
             !e2 && r != fs::recursive_directory_iterator(); r.increment(e2)) {
            std::error_code e3;
            if (!r->is_symlink(e3) || fs::exists(r->path(), e3)) continue;
            v.problems.push_back({r->path().lexically_relative(it->path()).generic_u8string(),
                                  "link to " + fs::read_symlink(r->path(), e3).u8string() +
                                      " leads nowhere"});
        }
        out.push_back(std::move(v));
    }
    std::sort(out.begin(), out.end(), [](const ViewCheck& a, const ViewCheck& b) { return a.name < b.name; });
    return out;
}

} // namespace cvm::install
