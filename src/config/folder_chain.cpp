#include "config/folder_chain.h"

#include "config/trust.h"

namespace cvm {

namespace {

// The doubt about a folder on the path: the trust rules, but a sticky folder's write bits let
// others add entries, not rename ours.
Doubt chain_doubt(const platform::FileMeta& meta, const std::vector<std::uint32_t>* trusted) {
    Doubt d = doubt_of(meta, trusted);
    if ((d == Doubt::WorldWritable || d == Doubt::GroupWritable) &&
        platform::is_sticky_folder(meta))
        return doubt_of(platform::owner_only(meta), trusted); // the owner still counts
    return d;
}

void check_chain(const std::string& what, const fs::path& folder,
                 const std::vector<std::uint32_t>* trusted, int hops) {
    fs::path p = folder.lexically_normal();
    if (p.has_filename() == false && p.has_parent_path() && p != p.root_path())
        p = p.parent_path(); // "a/b/"
    // The folder and each above it, up to /: the folder itself first.
    for (fs::path at = p;; at = at.parent_path()) {
        bool link = false;
        if (auto meta = platform::link_meta(at, link)) {
            if (link) {
                // Whoever may change the link was judged with the folder above; the target and its
                // own path are checked as well (a bounded number of times: a loop of links ends).
                std::error_code ec;
                fs::path target = fs::canonical(at, ec);
                if (!ec && hops < 8)
                    check_chain(what + " (through the link " + at.u8string() + ")", target, trusted,
                                hops + 1);
            } else if (meta->type == platform::FileMeta::Type::Directory) {
                if (Doubt d = chain_doubt(*meta, trusted); d != Doubt::None) {
                    const bool listable = trusted == nullptr;
                    if (at == p) throw TrustError(distrust_message(what, p, *meta, d, listable));
                    throw TrustError("refusing " + what + " " + p.u8string() + ": the folder " +
                                     at.u8string() + " above it is " + doubt_words(d, *meta) +
                                     ", so another user could put their own in its place; " +
                                     doubt_fix(d, at, *meta, listable));
                }
            }
        }
        if (!at.has_relative_path() || at == at.parent_path()) break;
    }
}

} // namespace

void check_folder_chain(const std::string& what, const fs::path& folder,
                        const std::vector<std::uint32_t>* trusted) {
    // POSIX only: on Windows the layer's own folders are checked, by their access lists.
    if (folder.empty() || platform::host_os() == platform::Os::Windows) return;
    std::error_code ec;
    check_chain(what, folder.is_absolute() ? folder : fs::absolute(folder, ec), trusted, 0);
}

void check_machine_config_folder(const fs::path& file) {
    static const std::vector<std::uint32_t> nobody_else;
    if (platform::host_os() != platform::Os::Windows) {
        check_folder_chain("the machine config folder", file.parent_path(), &nobody_else);
        return;
    }
    // %ProgramData% lets every user add folders: the folder's own access list keeps others out.
    fs::path dir = file.parent_path();
    auto meta = platform::file_meta(dir);
    if (!meta) return;
    Doubt d = doubt_of(*meta, &nobody_else);
    if (d != Doubt::None)
        throw TrustError(distrust_message("the machine config folder", dir, *meta, d, false));
}

} // namespace cvm
