#include "store/entry_trust.h"

#include "config/trust.h"
#include "platform/platform.h"

namespace cvm {

namespace {

std::string entry_name(const Entry& e) {
    return std::string(kind_dir(e.kind)) + " " + e.id;
}

// A folder that is missing is not checked: the entry is then damaged, which list and verify say.
void check_folder(const std::string& what, const fs::path& dir) {
    if (dir.empty()) return;
    auto meta = platform::file_meta(dir);
    if (meta) check_trusted(what.c_str(), dir, *meta);
}

} // namespace

std::vector<fs::path> entry_folders(const Entry& e) {
    std::vector<fs::path> out;
    auto add = [&out](const fs::path& p) {
        if (!p.empty()) out.push_back(p);
    };
    add(e.path);
    add(e.origin);
    for (const auto* dirs : {&e.bin_dirs, &e.lib_dirs})
        for (const std::string& d : *dirs)
            if (!d.empty() && d != ".") add(e.path / fs::u8path(d));
    return out;
}

void check_entry_trusted(const Entry& e) {
    const std::string name = entry_name(e);
    check_folder("the folder of " + name, e.entry_dir);
    const std::string files = "a folder of " + name;
    for (const fs::path& dir : entry_folders(e))
        check_folder(files, dir);
}

std::string entry_doubt_text(const Entry& e) {
    // A stat each; words only for the first one that fails.
    auto doubt = [](const fs::path& p) -> std::string {
        auto meta = platform::file_meta(p);
        if (!meta) return {};
        Doubt d = doubt_of(*meta);
        if (d == Doubt::None) return {};
        return p.u8string() + " is " + doubt_words(d, *meta) + "; " + doubt_fix(d, p, *meta);
    };
    for (const fs::path& p : {e.entry_dir, e.entry_dir / "entry"})
        if (std::string why = doubt(p); !why.empty()) return why;
    for (const fs::path& p : entry_folders(e))
        if (std::string why = doubt(p); !why.empty()) return why;
    return {};
}

// A program that is a link (bin/nvcc -> /home/other/tools/nvcc) is only as safe as each folder
// its links lead through (link_chain_folders), though the final file is trusted.
static void check_link_chain(const Entry& e, const fs::path& file) {
    for (const fs::path& folder : link_chain_folders(file))
        check_folder("a folder that " + file.u8string() + " of " + entry_name(e) + " leads through",
                     folder);
}

void check_entry_file_trusted(const Entry& e, const fs::path& file,
                              const platform::FileMeta* known) {
    check_link_chain(e, file);
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
    case Doubt::None:
        return {};
    case Doubt::Owner:
        return "owned by " + owner_text_of(*meta) +
               ", not by you or root: another user could change it";
    case Doubt::WorldWritable:
        return "writable by every user: anyone could change it";
    case Doubt::GroupWritable:
        return "writable by its group: another user could change it";
    }
    return {};
}

} // namespace cvm
