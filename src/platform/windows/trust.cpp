// The trust rules on Windows (platform.h: file_doubt, and the questions after it such as
// owned_by_own), answered from the security descriptor that was read with the file (files.cpp keeps
// its verdict in FileMeta::security): owned by the user, SYSTEM, Administrators, TrustedInstaller
// or a listed account; every other account that may change it listed, and none that stands for
// anyone.
#include "platform/platform.h"

#include <algorithm>

#include "platform/windows/security.h"

namespace cvm::platform {

namespace {

// The first account besides the owner that may change the file and is not listed; "" when there
// is none. Accounts that stand for anyone are never listed.
std::string unlisted_writer(const FileMeta& meta, const std::vector<std::uint32_t>& ids) {
    if (!meta.security || meta.security->writer_sids.empty())
        return "S-1-1-0"; // no access list: everybody
    for (const std::string& sid : meta.security->writer_sids)
        if (std::find(ids.begin(), ids.end(), win::account_uid(sid)) == ids.end() ||
            win::stands_for_anyone(sid))
            return sid;
    return {};
}

} // namespace

// A FileMeta with no verdict (made by hand, not read) counts as the user's own file that nobody
// else may change.
bool owned_by_own(const FileMeta& meta) {
    return !meta.security || (meta.security->read && meta.security->owner_trusted);
}

bool owned_by_listed(const FileMeta& meta, const std::vector<std::uint32_t>& listed) {
    const win::SecurityVerdict* v = meta.security.get();
    return v && v->read && !v->owner_trusted &&
           std::find(listed.begin(), listed.end(), win::account_uid(v->owner_sid)) != listed.end();
}

bool writable_by_others(const FileMeta& meta) {
    return meta.security && (!meta.security->read || meta.security->writable_by_others);
}

bool is_sticky_folder(const FileMeta&) {
    return false;
}

FileMeta owner_only(const FileMeta& meta) {
    FileMeta kept = meta;
    if (meta.security && meta.security->read) {
        auto verdict = std::make_shared<win::SecurityVerdict>(*meta.security);
        verdict->writable_by_others = false;
        kept.security = std::move(verdict);
    }
    return kept; // a descriptor not read stays so: its owner is not known to be anybody trusted
}

FileDoubt file_doubt(const FileMeta& meta, const std::vector<std::uint32_t>* listed,
                     const std::vector<std::uint32_t>& (*look_up)()) {
    // Windows has no group bits to weigh: an owner, and the accounts besides it that may write.
    const bool others = writable_by_others(meta);
    if (owned_by_own(meta) && !others) return FileDoubt::None;
    if (meta.security && !meta.security->read) return FileDoubt::Owner; // someone else's
    const auto& ids = listed ? *listed : look_up();
    if (!owned_by_own(meta) && !owned_by_listed(meta, ids)) return FileDoubt::Owner;
    if (others && !unlisted_writer(meta, ids).empty()) return FileDoubt::WorldWritable;
    return FileDoubt::None;
}

std::optional<std::uint32_t> listed_owner_id(const std::string& name) {
    // A SID ("S-1-5-21-...") or an account name Windows resolves (LookupAccountNameW).
    return win::listed_account_uid(name);
}

OwnerWriter owner_writer(const FileMeta& meta, const std::vector<std::uint32_t>& (*look_up)()) {
    OwnerWriter out;
    const win::SecurityVerdict* v = meta.security.get();
    if (!v || !v->read) {
        out.owner = "an owner that cannot be read";
        return out;
    }
    out.owner = win::account_text(v->owner_sid);
    out.owner_sid = v->owner_sid;
    out.writer_sid = v->writer_sid;
    if (v->writable_by_others)
        out.writer = v->writer_sid.empty() ? "Everyone (the folder or file has no access list)"
                                           : win::account_text(v->writer_sid);
    // The account to name is the first that is not listed, where another comes first.
    if (!look_up || out.writer_sid.empty() || !v->writable_by_others) return out;
    std::string sid = unlisted_writer(meta, look_up());
    if (!sid.empty() && sid != out.writer_sid) {
        out.writer_sid = sid;
        out.writer = win::account_text(sid);
    }
    return out;
}

} // namespace cvm::platform
