#include "core/trust.h"

#ifdef _WIN32
#include "platform/windows_security.h"
#endif

namespace cvm {

namespace {

struct OwnerList {
    std::vector<std::string> names; // as the machine's config wrote them
    std::string origin;             // that file
    bool known = false;             // names set (the machine's config was read)
    bool resolved = false;
    std::vector<std::uint32_t> ids;
};

OwnerList& owner_list() {
    static OwnerList list;
    return list;
}

bool listed(std::uint32_t uid, const std::vector<std::uint32_t>& ids) {
    for (auto id : ids)
        if (id == uid) return true;
    return false;
}

} // namespace

bool is_own_uid(std::uint32_t uid) {
    if (uid == 0 || uid == platform::effective_uid()) return true;
    auto sudo = platform::sudo_uid();
    return sudo && *sudo == uid;
}

void set_trusted_owners(const std::vector<std::string>& owners, const std::string& origin) {
    OwnerList& l = owner_list();
    l.names = owners;
    l.origin = origin;
    l.known = true;
    l.resolved = false;
    l.ids.clear();
}

const std::vector<std::uint32_t>& trusted_owner_ids() {
    OwnerList& l = owner_list();
    if (!l.known) {
        // Only reached for a file that is not plainly the user's or root's: read the machine's
        // config now (which calls set_trusted_owners).
        l.known = true;
        if (auto file = machine_config_file()) read_config_file(*file, true);
    }
    if (!l.resolved) {
        l.resolved = true;
        for (const std::string& name : l.names) {
#ifdef _WIN32
            // A SID ("S-1-5-21-...") or an account name Windows resolves (LookupAccountNameW).
            if (auto id = platform::win::listed_account_uid(name)) l.ids.push_back(*id);
            continue;
#endif
            if (!name.empty() && name.find_first_not_of("0123456789") == std::string::npos &&
                name.size() <= 10) {
                l.ids.push_back(static_cast<std::uint32_t>(std::stoull(name)));
            } else if (auto id = platform::user_id(name)) {
                l.ids.push_back(*id);
            }
            // A name /etc/passwd does not know trusts nobody (a directory-service account is
            // given by its uid).
        }
    }
    return l.ids;
}

#ifdef _WIN32
namespace {

// The first account besides the owner that may change a file (FileMeta on Windows, platform.h)
// and is not listed; "" when there is none. Accounts that stand for anyone are never listed.
std::string unlisted_writer(const platform::FileMeta& meta, const std::vector<std::uint32_t>& ids) {
    auto writers = platform::win::writer_uids(meta.gid);
    if (writers.empty()) return "S-1-1-0"; // no access list: everybody
    for (auto w : writers) {
        std::string sid = platform::win::account_sid(w);
        if (!listed(w, ids) || platform::win::stands_for_anyone(sid)) return sid;
    }
    return {};
}

} // namespace
#endif

Doubt doubt_of(const platform::FileMeta& meta, const std::vector<std::uint32_t>* trusted) {
#ifdef _WIN32
    // The security descriptor, said as uid and mode (platform.h): the owner must be the user,
    // SYSTEM, Administrators, TrustedInstaller or a listed account; any account besides the
    // owner that may change it must be listed too (Windows has no group bits to weigh).
    if (meta.uid == 0 && !(meta.mode & 0002)) return Doubt::None;
    if (meta.uid == platform::FileMeta::kOtherOwner) return Doubt::Owner;
    const auto& ids = trusted ? *trusted : trusted_owner_ids();
    if (meta.uid != 0 && !listed(meta.uid, ids)) return Doubt::Owner;
    if ((meta.mode & 0002) && !unlisted_writer(meta, ids).empty()) return Doubt::WorldWritable;
    return Doubt::None;
#else
    const bool own = is_own_uid(meta.uid);
    const bool world = (meta.mode & 0002) != 0;
    const bool group = (meta.mode & 0020) != 0;
    // The common case, decided without a look-up.
    if (own && !world && !group) return Doubt::None;
    if (world) return Doubt::WorldWritable;
    const auto& ids = trusted ? *trusted : trusted_owner_ids();
    const bool is_listed = listed(meta.uid, ids);
    if (!own && !is_listed) return Doubt::Owner;
    if (group && !is_listed &&
        !(meta.uid == platform::effective_uid() && platform::is_private_group(meta.gid, meta.uid)))
        return Doubt::GroupWritable;
    return Doubt::None;
#endif
}

std::string owner_text(std::uint32_t uid) {
    std::string name = platform::user_name(uid);
    return name.empty() ? "uid " + std::to_string(uid) : name + " (uid " + std::to_string(uid) + ")";
}

std::string owner_text_of(const fs::path& path, const platform::FileMeta& meta) {
    if (platform::host_os() == platform::Os::Windows) return platform::windows_owner_writer(path).owner;
    return owner_text(meta.uid);
}

namespace {

std::string machine_config_text() {
    auto where = machine_config_file();
    if (where) return where->u8string();
    return platform::host_os() == platform::Os::Windows ? "%ProgramData%\\cvm\\config.toml"
                                                         : "/etc/cvm/config.toml";
}

// Windows: the owner and the first account that may change `path` and is not listed.
platform::OwnerWriter windows_accounts(const fs::path& path, const platform::FileMeta& meta) {
    platform::OwnerWriter ow = platform::windows_owner_writer(path);
#ifdef _WIN32
    if (ow.writer_sid.empty() || !(meta.mode & 0002)) return ow;
    std::string sid = unlisted_writer(meta, trusted_owner_ids());
    if (!sid.empty() && sid != ow.writer_sid) {
        ow.writer_sid = sid;
        ow.writer = platform::win::account_text(sid);
    }
#else
    (void)meta;
#endif
    return ow;
}

} // namespace

std::string doubt_words(Doubt doubt, const fs::path& path, const platform::FileMeta& meta) {
    const bool windows = platform::host_os() == platform::Os::Windows;
    platform::OwnerWriter ow = windows ? windows_accounts(path, meta) : platform::OwnerWriter{};
    std::string owner = windows ? ow.owner : owner_text(meta.uid);
    switch (doubt) {
    case Doubt::Owner:
        return "owned by " + owner +
               (windows ? ", not by you, SYSTEM, Administrators, TrustedInstaller or a listed owner"
                        : ", not by you or root");
    case Doubt::WorldWritable:
        if (windows)
            return "writable by " + (ow.writer.empty() ? std::string("another account") : ow.writer) +
                   " (owner " + owner + ")";
        return "writable by every user (owner " + owner + ")";
    case Doubt::GroupWritable:
        return "writable by its group (owner " + owner + ")";
    case Doubt::None:
        break;
    }
    return {};
}

std::string doubt_fix(Doubt doubt, const fs::path& path, const platform::FileMeta& meta, bool listable) {
    std::string p = path.u8string();
    if (platform::host_os() == platform::Os::Windows) {
        if (doubt == Doubt::Owner)
            return "run `takeown /f \"" + p + "\"` if it is yours" +
                   (listable ? ", or have an administrator add its owner's SID to trusted_owners in " +
                                   machine_config_text()
                             : std::string());
        platform::OwnerWriter ow = windows_accounts(path, meta);
        return ow.writer_sid.empty() ? "give it an access list (`icacls \"" + p + "\" /reset`)"
                                     : "run `icacls \"" + p + "\" /inheritance:d` and `icacls \"" + p +
                                           "\" /remove:g *" + ow.writer_sid + "`";
    }
    switch (doubt) {
    case Doubt::WorldWritable:
        return "run `chmod o-w " + p + "`";
    case Doubt::GroupWritable:
        return "run `chmod g-w " + p + "`" +
               (listable ? ", or have root list its owner in trusted_owners of " + machine_config_text()
                         : std::string());
    case Doubt::Owner: {
        std::string name = platform::user_name(meta.uid);
        return "run `chown $(id -u) " + p + "` if it is yours" +
               (listable ? ", or have root add \"" + (name.empty() ? std::to_string(meta.uid) : name) +
                               "\" to trusted_owners in " + machine_config_text()
                         : std::string());
    }
    case Doubt::None:
        break;
    }
    return {};
}

std::string distrust_message(const std::string& what, const fs::path& path,
                             const platform::FileMeta& meta, Doubt doubt, bool listable) {
    if (doubt == Doubt::None) return {};
    std::string p = path.u8string();
    const std::string kind = meta.type == platform::FileMeta::Type::Directory ? "folder" : "file";
    std::string why;
    switch (doubt) {
    case Doubt::Owner:
        why = "it is " + doubt_words(doubt, path, meta);
        break;
    case Doubt::WorldWritable:
        why = "the " + kind + " is " + doubt_words(doubt, path, meta) +
              (platform::host_os() == platform::Os::Windows ? ", so another account could change what cvm runs"
                                                            : ", so anyone could change what cvm runs");
        break;
    default:
        why = "the " + kind + " is " + doubt_words(doubt, path, meta);
        break;
    }
    return "refusing " + what + " " + p + ": " + why + "; " + doubt_fix(doubt, path, meta, listable);
}

void check_trusted_at(const char* what, std::string_view utf8_path, const platform::FileMeta& meta,
                      const std::vector<std::uint32_t>* trusted) {
    Doubt d = doubt_of(meta, trusted);
    if (d != Doubt::None)
        throw TrustError(distrust_message(what, fs::u8path(utf8_path), meta, d, trusted == nullptr));
}

} // namespace cvm
