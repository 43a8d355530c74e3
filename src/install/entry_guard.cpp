// The checks every archive entry passes before it is written (entry_guard.h), and the entry-path
// rules extract.h exposes.
#include "install/entry_guard.h"

#include "install/archive_handles.h"
#include "install/error.h"
#include "platform/platform.h"

#include <algorithm>
#include <cctype>

namespace cvm::install {

namespace fs = std::filesystem;

EntryGuard::Plan EntryGuard::check(archive_entry* e) {
    Plan plan;
    const char* raw = archive_entry_pathname(e);
    std::string raw_path = raw != nullptr ? raw : "";
    std::string why;
    std::string path = normalize_entry_path(raw_path, &why);
    if (path.empty()) refuse(raw_path, why);
    if (path == ".") {
        plan.skip = true;
        return plan;
    }
    plan.entry.path = path;
    through_symlink(path, raw_path);

    const char* hardlink = archive_entry_hardlink(e);
    const char* symlink = archive_entry_symlink(e);
    mode_t type = archive_entry_filetype(e);
    int perm = static_cast<int>(archive_entry_perm(e)) & 0777;
    if (hardlink != nullptr) {
        std::string target = normalize_entry_path(hardlink, &why);
        if (target.empty() || target == ".")
            refuse(raw_path, "hard link to \"" + std::string(hardlink) +
                                 "\": " + (why.empty() ? "the folder itself" : why));
        through_symlink(target, raw_path);
        if (!files_.count(target))
            refuse(raw_path,
                   "hard link to \"" + target + "\", which is not a file listed before it");
        plan.entry.type = ExtractedEntry::Type::Hardlink;
        plan.entry.link_target = target;
        plan.hardlink = root_ / fs::u8path(target);
        perm |= 0600;
    } else if (type == AE_IFLNK || symlink != nullptr) {
        std::string target = symlink != nullptr ? symlink : "";
        if (target.empty()) refuse(raw_path, "symlink without a target");
        if (resolve_link_target(path, target, &why).empty())
            refuse(raw_path, "symlink to \"" + target + "\" " + why);
        plan.entry.type = ExtractedEntry::Type::Symlink;
        plan.entry.link_target = target;
        symlinks_.insert(path);
        perm = 0777;
    } else if (type == AE_IFDIR) {
        plan.entry.type = ExtractedEntry::Type::Directory;
        perm |= 0700; // so the store can always be cleaned up
        if (symlinks_.count(path) || files_.count(path))
            refuse(raw_path, "a folder where the archive already put a file or link");
        dirs_.insert(path);
    } else if (type == AE_IFREG) {
        plan.entry.type = ExtractedEntry::Type::File;
        plan.entry.size =
            static_cast<std::uint64_t>(std::max<la_int64_t>(archive_entry_size(e), 0));
        perm |= 0600;
    } else {
        refuse(raw_path, "device files, fifos and sockets are not installed");
    }
    if (plan.entry.type != ExtractedEntry::Type::Directory) {
        if (!seen_.insert(path).second || dirs_.count(path)) refuse(raw_path, "listed twice");
        if (plan.entry.type != ExtractedEntry::Type::Symlink) files_.insert(path);
    }
    if (plan.entry.type != ExtractedEntry::Type::Symlink)
        perm = static_cast<int>(extracted_mode(static_cast<unsigned>(perm),
                                               plan.entry.type == ExtractedEntry::Type::Directory));
    plan.perm = perm;
    plan.target = root_ / fs::u8path(path);
    return plan;
}

void EntryGuard::refuse(const std::string& entry, const std::string& why) const {
    fail_input("archive " + display(archive_) + " refused: entry \"" + entry + "\": " + why);
}

void EntryGuard::through_symlink(const std::string& path, const std::string& raw) const {
    for (std::size_t slash = path.find('/'); slash != std::string::npos;
         slash = path.find('/', slash + 1))
        if (symlinks_.count(path.substr(0, slash)))
            refuse(raw, "goes through the symlink \"" + path.substr(0, slash) + "\"");
}

void apply_plan(archive_entry* e, const EntryGuard::Plan& plan) {
    set_entry_path(e, plan.target.c_str());
    if (plan.entry.type == ExtractedEntry::Type::Hardlink)
        set_entry_hardlink(e, plan.hardlink.c_str());
    if (plan.entry.type != ExtractedEntry::Type::Symlink)
        archive_entry_set_perm(e, static_cast<mode_t>(plan.perm));
}

std::string normalize_entry_path(const std::string& raw, std::string* why) {
    auto refuse = [&](const char* reason) {
        if (why != nullptr) *why = reason;
        return std::string();
    };
    if (raw.empty()) return refuse("empty name");
    // Archives made on Windows may separate with backslashes: treat both as separators.
    std::string path = raw;
    std::replace(path.begin(), path.end(), '\\', '/');
    if (path.front() == '/') return refuse("absolute path");
    if (path.size() >= 2 && path[1] == ':' && std::isalpha(static_cast<unsigned char>(path[0])))
        return refuse("absolute path (drive letter)");
    std::string out;
    std::size_t start = 0;
    while (start <= path.size()) {
        std::size_t end = path.find('/', start);
        if (end == std::string::npos) end = path.size();
        std::string part = path.substr(start, end - start);
        start = end + 1;
        if (part.empty() || part == ".") continue;
        if (part == "..") return refuse("\"..\" leaves the install folder");
        for (unsigned char c : part)
            if (c < 0x20 || c == 0x7f) return refuse("control character in the name");
        if (part.find(':') != std::string::npos && platform::host_os() == platform::Os::Windows)
            return refuse("\":\" in a name (an alternate data stream on Windows)");
        if (!out.empty()) out += '/';
        out += part;
    }
    if (out.empty()) return ".";
    if (why != nullptr) why->clear();
    return out;
}

std::string resolve_link_target(const std::string& link_path, const std::string& target,
                                std::string* why) {
    auto refuse = [&](const char* reason) {
        if (why != nullptr) *why = reason;
        return std::string();
    };
    if (target.empty()) return refuse("is empty");
    std::string t = target;
    std::replace(t.begin(), t.end(), '\\', '/');
    if (t.front() == '/' ||
        (t.size() >= 2 && t[1] == ':' && std::isalpha(static_cast<unsigned char>(t[0]))))
        return refuse("is an absolute path");
    // Start from the link's folder.
    std::vector<std::string> parts;
    {
        std::size_t start = 0;
        std::string folder = link_path;
        auto slash = folder.rfind('/');
        folder = slash == std::string::npos ? std::string() : folder.substr(0, slash);
        while (start < folder.size()) {
            std::size_t end = folder.find('/', start);
            if (end == std::string::npos) end = folder.size();
            parts.push_back(folder.substr(start, end - start));
            start = end + 1;
        }
    }
    std::size_t start = 0;
    while (start <= t.size()) {
        std::size_t end = t.find('/', start);
        if (end == std::string::npos) end = t.size();
        std::string part = t.substr(start, end - start);
        start = end + 1;
        if (part.empty() || part == ".") continue;
        if (part == "..") {
            if (parts.empty()) return refuse("leaves the install folder");
            parts.pop_back();
            continue;
        }
        parts.push_back(part);
    }
    std::string out;
    for (const auto& p : parts)
        out += (out.empty() ? "" : "/") + p;
    if (why != nullptr) why->clear();
    return out.empty() ? "." : out;
}

unsigned extracted_mode(unsigned perm, bool directory) {
    const unsigned owner = directory ? 0700 : 0600;
    // No set-user-ID, set-group-ID or sticky bit: nothing in a toolkit needs one.
    return (perm & 0777 & ~static_cast<unsigned>(platform::file_creation_mask() | 022)) | owner;
}

void verify_symlinks(const fs::path& root, const std::vector<ExtractedEntry>& entries,
                     const std::string& name) {
    for (const auto& entry : entries) {
        if (entry.type != ExtractedEntry::Type::Symlink) continue;
        std::error_code ec;
        fs::path resolved = fs::weakly_canonical(root / fs::u8path(entry.path), ec);
        auto [r, p] = std::mismatch(root.begin(), root.end(), resolved.begin(), resolved.end());
        if (ec || r != root.end())
            fail_input("archive " + name + " refused: entry \"" + entry.path + "\": symlink to \"" +
                       entry.link_target + "\" resolves outside the install folder");
    }
}

} // namespace cvm::install
