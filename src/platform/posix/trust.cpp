// The trust rules on POSIX (platform.h: file_doubt, and the questions after it such as
// owned_by_own), answered from the stat's owner and mode bits: owned by the user, root or (for
// root) SUDO_UID's user, or a listed owner; not writable by everybody; writable by the group only
// for a listed owner or the user's own private group.
#include "platform/platform.h"

#include <algorithm>

namespace cvm::platform {

FileDoubt file_doubt(const FileMeta& meta, const std::vector<std::uint32_t>* listed,
                     const std::vector<std::uint32_t>& (*look_up)()) {
    const bool own = is_own_uid(meta.uid);
    const bool world = (meta.mode & 0002) != 0;
    const bool group = (meta.mode & 0020) != 0;
    // The common case, decided without a look-up.
    if (own && !world && !group) return FileDoubt::None;
    if (world) return FileDoubt::WorldWritable;
    const auto& ids = listed ? *listed : look_up();
    const bool is_listed = std::find(ids.begin(), ids.end(), meta.uid) != ids.end();
    if (!own && !is_listed) return FileDoubt::Owner;
    if (group && !is_listed &&
        !(meta.uid == effective_uid() && is_private_group(meta.gid, meta.uid)))
        return FileDoubt::GroupWritable;
    return FileDoubt::None;
}

std::optional<std::uint32_t> listed_owner_id(const std::string& name) {
    if (!name.empty() && name.find_first_not_of("0123456789") == std::string::npos &&
        name.size() <= 10)
        return static_cast<std::uint32_t>(std::stoull(name));
    // A name /etc/passwd does not know trusts nobody (a directory-service account is given by its
    // uid).
    return user_id(name);
}

OwnerWriter owner_writer(const FileMeta&, const std::vector<std::uint32_t>& (*)()) {
    return {};
}

bool owned_by_own(const FileMeta& meta) {
    return is_own_uid(meta.uid);
}

bool owned_by_listed(const FileMeta& meta, const std::vector<std::uint32_t>& listed) {
    return std::find(listed.begin(), listed.end(), meta.uid) != listed.end();
}

bool writable_by_others(const FileMeta& meta) {
    return (meta.mode & 0002) != 0;
}

bool is_sticky_folder(const FileMeta& meta) {
    return (meta.mode & 01000) != 0;
}

FileMeta owner_only(const FileMeta& meta) {
    FileMeta kept = meta;
    kept.mode &= ~07022u;
    return kept;
}

} // namespace cvm::platform
