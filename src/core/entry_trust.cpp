#include "core/entry_trust.h"

#include "core/trust.h"
#include "platform/platform.h"

namespace cvm {

namespace {

std::string entry_name(const Entry& e) { return std::string(kind_dir(e.kind)) + " " + e.id; }

// A folder that is missing is not checked: the entry is then damaged, which list and verify say.
void check_folder(const std::string& what, const fs::path& dir) {
    if (dir.empty()) return;
    auto meta = platform::file_meta(dir);
    if (meta) check_trusted(what.c_str(), dir, *meta);
}

void check_subfolders(const std::string& what, const fs::path& root, const std::vector<std::string>& dirs) {
    for (const std::string& d : dirs)
        if (!d.empty() && d != ".") check_folder(what, root / fs::u8path(d));
}

} // namespace

void check_entry_trusted(const Entry& e) {
    const std::string name = entry_name(e);
    check_folder("the folder of " + name, e.entry_dir);
    const std::string files = "a folder of " + name;
    check_folder(files, e.path);
    check_folder(files, e.origin);
    check_subfolders(files, e.path, e.bin_dirs);
    check_subfolders(files, e.path, e.lib_dirs);
}

void check_entry_file_trusted(const Entry& e, const fs::path& file, const platform::FileMeta* known) {
    if (known && known->type != platform::FileMeta::Type::Other) {
        check_trusted(("a file of " + entry_name(e)).c_str(), file, *known);
        return;
    }
    auto meta = platform::file_meta(file);
    if (meta) check_trusted(("a file of " + entry_name(e)).c_str(), file, *meta);
}

std::string untrusted_reason(const fs::path& file) {
    auto meta = platform::file_meta(file);
    if (!meta) return {};
    switch (doubt_of(*meta)) {
    case Doubt::None: return {};
    case Doubt::Owner: return "owned by " + owner_text_of(file, *meta) + ", not by you or root: another user could change it";
    case Doubt::WorldWritable: return "writable by every user: anyone could change it";
    case Doubt::GroupWritable: return "writable by its group: another user could change it";
    }
    return {};
}

} // namespace cvm
