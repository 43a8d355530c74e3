#include "install/verify_tree.h"

#include "config/trust.h"

#include <cstdio>
#include <system_error>

namespace cvm::install {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxItems = 4u << 20; // far beyond any toolkit (a CUDA 12 one: ~10 000)
constexpr int kMaxDepth = 64;

void walk(const fs::path& dir, const std::string& rel, int depth, Tree& tree,
          std::vector<VerifyProblem>& problems) {
    if (depth > kMaxDepth) {
        problems.push_back(
            {rel, "folders nested more than " + std::to_string(kMaxDepth) + " deep"});
        return;
    }
    std::error_code ec;
    fs::directory_iterator it(dir, ec), end;
    if (ec) {
        problems.push_back({rel, "cannot be read: " + platform::error_text(ec.value())});
        return;
    }
    for (; it != end; it.increment(ec)) {
        if (tree.size() >= kMaxItems) {
            problems.push_back({rel, "holds more than " + std::to_string(kMaxItems) + " files"});
            return;
        }
        const std::string name = it->path().filename().u8string();
        const std::string child = rel == "." ? name : rel + "/" + name;
        auto item = read_item(it->path());
        if (!item) {
            problems.push_back({child, "cannot be read"});
            continue;
        }
        bool folder = item->type == TreeItem::Type::Directory;
        tree.emplace(child, std::move(*item));
        if (folder) walk(it->path(), child, depth + 1, tree, problems);
    }
    if (ec) problems.push_back({rel, "cannot be read: " + platform::error_text(ec.value())});
}

} // namespace

std::optional<TreeItem> read_item(const fs::path& p) {
    bool link = false;
    auto meta = platform::link_meta(p, link);
    if (!meta) return std::nullopt;
    TreeItem item;
    item.meta = *meta;
    std::error_code ec;
    if (link) {
        item.type = TreeItem::Type::Symlink;
        item.target = fs::read_symlink(p, ec).generic_u8string();
    } else if (meta->type == platform::FileMeta::Type::Directory) {
        item.type = TreeItem::Type::Directory;
    } else if (meta->type == platform::FileMeta::Type::Regular) {
        item.type = TreeItem::Type::File;
        item.size = fs::file_size(p, ec);
    }
    return item;
}

Tree read_tree(const fs::path& root, std::vector<VerifyProblem>& problems) {
    Tree tree;
    auto top = read_item(root);
    if (!top) {
        problems.push_back({".", "missing"});
        return tree;
    }
    bool folder = top->type == TreeItem::Type::Directory;
    tree.emplace(".", std::move(*top));
    if (folder) walk(root, ".", 0, tree, problems);
    return tree;
}

const char* type_words(TreeItem::Type type) {
    switch (type) {
    case TreeItem::Type::File:
        return "a file";
    case TreeItem::Type::Directory:
        return "a folder";
    case TreeItem::Type::Symlink:
        return "a link";
    case TreeItem::Type::Other:
        break;
    }
    return "a FIFO, socket or device";
}

std::string mode_text(std::uint32_t mode) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
    return buf;
}

std::string item_doubt(const TreeItem& item) {
    // A link's own mode means nothing: its owner alone is judged.
    platform::FileMeta meta =
        item.type == TreeItem::Type::Symlink ? platform::owner_only(item.meta) : item.meta;
    std::string out;
    switch (doubt_of(meta)) {
    case Doubt::None:
        break;
    case Doubt::Owner:
        out = "owned by " + owner_text_of(meta) +
              ", not by you or root: another user could change it";
        break;
    case Doubt::WorldWritable:
        // Windows has no mode bits: 0002 says another account may change it, as it always did.
        out = "writable by every user (mode " + mode_text(meta.mode | 0002) +
              "): anyone could change it";
        break;
    case Doubt::GroupWritable:
        out = "writable by its group (mode " + mode_text(meta.mode) +
              "): another user could change it";
        break;
    }
    if (item.type != TreeItem::Type::Symlink && platform::host_os() == platform::Os::Linux &&
        (meta.mode & 07000)) {
        std::string bits = (meta.mode & 04000)   ? "set-user-ID"
                           : (meta.mode & 02000) ? "set-group-ID"
                                                 : "sticky";
        out += (out.empty() ? "" : "; ") + std::string("mode ") + mode_text(meta.mode) + " (" +
               bits + "), which cvm never installs";
    }
    return out;
}

} // namespace cvm::install
