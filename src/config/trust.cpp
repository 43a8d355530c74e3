#include "config/trust.h"

#include "config/config_files.h"

namespace cvm {

namespace {

// The machine config's answer, once this process has it: handed over by whoever read it already
// (use_trusted_owners), else asked for the first time a file is not plainly the user's or root's.
struct OwnerList {
    std::vector<std::string> names; // as the machine's config wrote them
    bool known = false;             // names set
    bool resolved = false;
    std::vector<std::uint32_t> ids;
};

OwnerList& owner_list() {
    static OwnerList list;
    return list;
}

} // namespace

void use_trusted_owners(const std::vector<std::string>& owners) {
    OwnerList& l = owner_list();
    l.names = owners;
    l.known = true;
    l.resolved = false;
    l.ids.clear();
}

const std::vector<std::uint32_t>& trusted_owner_ids() {
    OwnerList& l = owner_list();
    if (!l.known) {
        // Only reached for a file that is not plainly the user's or root's: ask the machine's
        // config now. Known first: its own checks trust nobody else, so they never come back here.
        l.known = true;
        l.names = machine_trusted_owners();
    }
    if (!l.resolved) {
        l.resolved = true;
        // Numbers and /etc/passwd's names; on Windows SIDs and the names Windows resolves. A name
        // not known there trusts nobody.
        for (const std::string& name : l.names)
            if (auto id = platform::listed_owner_id(name)) l.ids.push_back(*id);
    }
    return l.ids;
}

Doubt doubt_of(const platform::FileMeta& meta, const std::vector<std::uint32_t>* trusted) {
    // The OS's rules (platform.h): the stat's bits, or Windows' security descriptor read with it.
    switch (platform::file_doubt(meta, trusted, trusted_owner_ids)) {
    case platform::FileDoubt::None:
        return Doubt::None;
    case platform::FileDoubt::Owner:
        return Doubt::Owner;
    case platform::FileDoubt::WorldWritable:
        return Doubt::WorldWritable;
    case platform::FileDoubt::GroupWritable:
        return Doubt::GroupWritable;
    }
    return Doubt::Owner;
}

std::string owner_text(std::uint32_t uid) {
    std::string name = platform::user_name(uid);
    return name.empty() ? "uid " + std::to_string(uid)
                        : name + " (uid " + std::to_string(uid) + ")";
}

std::string owner_text_of(const platform::FileMeta& meta) {
    if (platform::host_os() == platform::Os::Windows)
        return platform::owner_writer(meta, nullptr).owner;
    return owner_text(meta.uid);
}

namespace {

std::string machine_config_text() {
    auto where = machine_config_file();
    if (where) return where->u8string();
    return platform::host_os() == platform::Os::Windows ? "%ProgramData%\\cvm\\config.toml"
                                                        : "/etc/cvm/config.toml";
}

// Windows: the owner and the first account that may change the file and is not listed, from the
// verdict read with it.
platform::OwnerWriter windows_accounts(const platform::FileMeta& meta) {
    return platform::owner_writer(meta, trusted_owner_ids);
}

} // namespace

std::string doubt_words(Doubt doubt, const platform::FileMeta& meta) {
    const bool windows = platform::host_os() == platform::Os::Windows;
    platform::OwnerWriter ow = windows ? windows_accounts(meta) : platform::OwnerWriter{};
    std::string owner = windows ? ow.owner : owner_text(meta.uid);
    switch (doubt) {
    case Doubt::Owner:
        return "owned by " + owner +
               (windows ? ", not by you, SYSTEM, Administrators, TrustedInstaller or a listed owner"
                        : ", not by you or root");
    case Doubt::WorldWritable:
        if (windows)
            return "writable by " +
                   (ow.writer.empty() ? std::string("another account") : ow.writer) + " (owner " +
                   owner + ")";
        return "writable by every user (owner " + owner + ")";
    case Doubt::GroupWritable:
        return "writable by its group (owner " + owner + ")";
    case Doubt::None:
        break;
    }
    return {};
}

std::string doubt_fix(Doubt doubt, const fs::path& path, const platform::FileMeta& meta,
                      bool listable) {
    std::string p = path.u8string();
    if (platform::host_os() == platform::Os::Windows) {
        if (doubt == Doubt::Owner)
            return "run `takeown /f \"" + p + "\"` if it is yours" +
                   (listable
                        ? ", or have an administrator add its owner's SID to trusted_owners in " +
                              machine_config_text()
                        : std::string());
        platform::OwnerWriter ow = windows_accounts(meta);
        return ow.writer_sid.empty() ? "give it an access list (`icacls \"" + p + "\" /reset`)"
                                     : "run `icacls \"" + p + "\" /inheritance:d` and `icacls \"" +
                                           p + "\" /remove:g *" + ow.writer_sid + "`";
    }
    switch (doubt) {
    case Doubt::WorldWritable:
        return "run `chmod o-w " + p + "`";
    case Doubt::GroupWritable:
        return "run `chmod g-w " + p + "`" +
               (listable
                    ? ", or have root list its owner in trusted_owners of " + machine_config_text()
                    : std::string());
    case Doubt::Owner: {
        std::string name = platform::user_name(meta.uid);
        return "run `chown $(id -u) " + p + "` if it is yours" +
               (listable
                    ? ", or have root add \"" + (name.empty() ? std::to_string(meta.uid) : name) +
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
        why = "it is " + doubt_words(doubt, meta);
        break;
    case Doubt::WorldWritable:
        why = "the " + kind + " is " + doubt_words(doubt, meta) +
              (platform::host_os() == platform::Os::Windows
                   ? ", so another account could change what cvm runs"
                   : ", so anyone could change what cvm runs");
        break;
    default:
        why = "the " + kind + " is " + doubt_words(doubt, meta);
        break;
    }
    return "refusing " + what + " " + p + ": " + why + "; " +
           doubt_fix(doubt, path, meta, listable);
}

void check_trusted_at(const char* what, std::string_view utf8_path, const platform::FileMeta& meta,
                      const std::vector<std::uint32_t>* trusted) {
    Doubt d = doubt_of(meta, trusted);
    if (d != Doubt::None)
        throw TrustError(
            distrust_message(what, fs::u8path(utf8_path), meta, d, trusted == nullptr));
}

std::vector<fs::path> link_chain_folders(const fs::path& file) {
    std::vector<fs::path> out;
    fs::path p = file;
    for (int hop = 0; hop < 40; ++hop) {
        bool link = false;
        if (!platform::link_meta(p, link) || !link) break;
        std::error_code ec;
        fs::path target = fs::read_symlink(p, ec);
        if (ec) break;
        p = target.is_absolute() ? target : p.parent_path() / target;
        out.push_back(p.parent_path());
    }
    return out;
}

} // namespace cvm
