#include "core/trust.h"

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

Doubt doubt_of(const platform::FileMeta& meta, const std::vector<std::uint32_t>* trusted) {
    if (platform::host_os() == platform::Os::Windows) {
        // The security descriptor, said as uid and mode (platform.h); no groups, no listed owners.
        if (meta.uid != 0) return Doubt::Owner;
        return meta.mode & 0002 ? Doubt::WorldWritable : Doubt::None;
    }
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

// Windows' words: accounts and their SIDs, takeown and icacls.
std::string windows_distrust_message(const std::string& what, const fs::path& path, const std::string& kind,
                                     Doubt doubt) {
    std::string p = path.u8string();
    platform::OwnerWriter ow = platform::windows_owner_writer(path);
    if (doubt == Doubt::Owner)
        return "refusing " + what + " " + p + ": it is owned by " + ow.owner +
               ", not by you, SYSTEM, Administrators or TrustedInstaller; run `takeown /f \"" + p +
               "\"` if it is yours";
    std::string how = ow.writer_sid.empty()
                          ? "give it an access list (`icacls \"" + p + "\" /reset`)"
                          : "run `icacls \"" + p + "\" /inheritance:d` and `icacls \"" + p + "\" /remove:g *" +
                                ow.writer_sid + "`";
    return "refusing " + what + " " + p + ": the " + kind + " can be changed by " +
           (ow.writer.empty() ? std::string("another account") : ow.writer) + " (owner " + ow.owner +
           "), so another account could change what cvm runs; " + how;
}

} // namespace

std::string distrust_message(const std::string& what, const fs::path& path,
                             const platform::FileMeta& meta, Doubt doubt, bool listable) {
    if (platform::host_os() == platform::Os::Windows && doubt != Doubt::None)
        return windows_distrust_message(what, path,
                                        meta.type == platform::FileMeta::Type::Directory ? "folder" : "file", doubt);
    std::string p = path.u8string();
    std::string owner = owner_text(meta.uid);
    const std::string kind = meta.type == platform::FileMeta::Type::Directory ? "folder" : "file";
    auto where = machine_config_file();
    std::string machine = where ? where->u8string() : std::string("/etc/cvm/config.toml");
    switch (doubt) {
    case Doubt::WorldWritable:
        return "refusing " + what + " " + p + ": the " + kind + " is writable by every user (owner " + owner +
               "), so anyone could change what cvm runs; run `chmod o-w " + p + "`";
    case Doubt::GroupWritable:
        return "refusing " + what + " " + p + ": the " + kind + " is writable by its group (owner " + owner +
               "); run `chmod g-w " + p + "`" +
               (listable ? ", or have root list its owner in trusted_owners of " + machine : std::string());
    case Doubt::Owner: {
        std::string name = platform::user_name(meta.uid);
        return "refusing " + what + " " + p + ": it is owned by " + owner + ", not by you or root; run `chown " +
               "$(id -u) " + p + "` if it is yours" +
               (listable ? ", or have root add \"" + (name.empty() ? std::to_string(meta.uid) : name) +
                               "\" to trusted_owners in " + machine
                         : std::string());
    }
    case Doubt::None:
        break;
    }
    return {};
}

void check_trusted_at(const char* what, std::string_view utf8_path, const platform::FileMeta& meta,
                      const std::vector<std::uint32_t>* trusted) {
    Doubt d = doubt_of(meta, trusted);
    if (d != Doubt::None)
        throw TrustError(distrust_message(what, fs::u8path(utf8_path), meta, d, trusted == nullptr));
}

} // namespace cvm
