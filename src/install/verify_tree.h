#pragma once
// The tree below a folder as lstat sees it (links are not followed): what `cvm verify` compares
// with an install's record of its files and with the merged view cvm would make.
#include "install/verify_problem.h"
#include "platform/platform.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cvm::install {

struct TreeItem {
    enum class Type { File, Directory, Symlink, Other };
    Type type = Type::Other;
    platform::FileMeta meta; // lstat: the link's own for a link
    std::string target;      // links
    std::uint64_t size = 0;  // files
};
// "." for the folder itself, then '/'-separated paths relative to it.
using Tree = std::map<std::string, TreeItem>;

// One item as lstat sees it; nullopt when it cannot be (missing, or its folder unreadable).
std::optional<TreeItem> read_item(const std::filesystem::path& path);

// Reads the whole tree below `root`. A folder that cannot be read is a problem ("cannot be read:
// Permission denied"), as is a tree too deep or too large to be an install.
Tree read_tree(const std::filesystem::path& root, std::vector<VerifyProblem>& problems);

// "a file", "a folder", "a link", "a FIFO, socket or device".
const char* type_words(TreeItem::Type type);

// Why another user could change the item ("owned by nobody (uid 65534), not by you or root",
// "writable by every user", "writable by its group"), with what it allows; a link is judged by
// its owner only. Set-user-ID, set-group-ID and sticky bits, which cvm never installs, are named
// too. Empty when nothing is wrong.
std::string item_doubt(const TreeItem& item);

// "0755"
std::string mode_text(std::uint32_t mode);

} // namespace cvm::install
