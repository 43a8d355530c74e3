// One line for a failed file operation, in cvm's words (see error_line.h).
#include "store/error_line.h"

#include <filesystem>
#include <optional>
#include <utility>

#include "store/store.h"

namespace cvm {

namespace {

namespace fs = std::filesystem;

// What was being done, from a filesystem_error's message ("filesystem error: cannot create
// directories: Permission denied [/x]"), in plainer words.
std::string operation_of(const fs::filesystem_error& error) {
    std::string text = error.what();
    const std::string head = "filesystem error: ";
    if (text.rfind(head, 0) == 0) text.erase(0, head.size());
    auto cut = text.find(": ");
    text = cut == std::string::npos ? std::string() : text.substr(0, cut);
    static const std::pair<const char*, const char*> plainer[] = {
        {"cannot create directories", "cannot create the folder"},
        {"cannot create directory", "cannot create the folder"},
        {"cannot remove all", "cannot remove"},
        {"directory iterator cannot open directory", "cannot read the folder"},
        {"cannot increment recursive directory iterator", "cannot read the folder"},
    };
    for (const auto& [from, to] : plainer)
        if (text == from) return to;
    if (text.rfind("cannot ", 0) == 0) return text;
    return "cannot use";
}

std::string reason_of(const std::error_code& code) {
    const std::error_condition c = code.default_error_condition();
    if (c == std::errc::permission_denied || c == std::errc::operation_not_permitted) return "permission denied";
    if (c == std::errc::read_only_file_system) return "the file system is read-only";
    if (c == std::errc::no_space_on_device) return "the disk is full";
    if (c == std::errc::not_a_directory) return "a part of the path is a file, not a folder";
    if (c == std::errc::file_exists) return "something else is already there";
    if (c == std::errc::no_such_file_or_directory) return "a folder on the way does not exist";
    if (c == std::errc::too_many_symbolic_link_levels) return "the path goes round in links";
    if (c == std::errc::is_a_directory) return "it is a folder";
    if (c == std::errc::directory_not_empty) return "the folder is not empty";
    std::string text = code.message();
    if (!text.empty() && text[0] >= 'A' && text[0] <= 'Z' && !(text.size() > 1 && text[1] >= 'A' && text[1] <= 'Z'))
        text[0] = static_cast<char>(text[0] - 'A' + 'a');
    return text;
}

// The store's root as the environment sets it (without reading any config file).
fs::path store_root() {
    try {
        return Store::default_root();
    } catch (const std::exception&) {
        return {};
    }
}

bool inside(const fs::path& path, const fs::path& root) {
    if (root.empty() || path.empty()) return false;
    auto p = path.lexically_normal().u8string(), r = root.lexically_normal().u8string();
    while (r.size() > 1 && (r.back() == '/' || r.back() == '\\')) r.pop_back();
    return p == r || (p.rfind(r, 0) == 0 && (p[r.size()] == '/' || p[r.size()] == '\\'));
}

std::string advice_for(const std::error_code& code, const fs::path& path) {
    const std::error_condition c = code.default_error_condition();
    fs::path root = store_root();
    bool in_store = inside(path, root);
    if (c == std::errc::no_space_on_device)
        return in_store ? "free some space (`cvm cache clean` removes downloaded archives)" : "free some space";
    if (in_store && (c == std::errc::not_a_directory || c == std::errc::file_exists))
        return "CVM_ROOT (" + root.u8string() + ") must be a folder; set it to one";
    if (in_store)
        return "check that you can write to " + root.u8string() +
               " (CVM_ROOT), or set CVM_ROOT to a folder you own";
    if (c == std::errc::no_such_file_or_directory) return "check the path";
    return "check the folder's permissions, or run the command in a folder you can write";
}

// The folder a temporary name was made in, when `p` is one (an install's or import's staging
// folder <root>/.staging/import-12-13.0.2, a download's NAME.part, a write's .NAME.tmp123):
// those names mean nothing to the user and are gone once the command ends.
std::optional<fs::path> temporary_parent(const fs::path& p) {
    fs::path before;
    for (const auto& part : p) {
        if (part == ".staging") return before;
        before /= part;
    }
    std::string name = p.filename().u8string();
    auto tmp = name.rfind(".tmp");
    bool temporary = (name.size() > 5 && name.compare(name.size() - 5, 5, ".part") == 0) ||
                     (tmp != std::string::npos && name[0] == '.' && tmp + 4 < name.size() &&
                      name.find_first_not_of("0123456789", tmp + 4) == std::string::npos);
    if (temporary) return p.parent_path();
    return std::nullopt;
}

} // namespace

std::string system_error_line(const std::system_error& error) {
    if (const auto* f = dynamic_cast<const fs::filesystem_error*>(&error)) {
        std::string line = operation_of(*f);
        // remove_all names the file inside that it could not remove as its second path.
        bool removal = line == "cannot remove" && !f->path2().empty();
        fs::path named = removal ? f->path2() : f->path1();
        bool second = !removal && !f->path2().empty(); // a rename's or copy's target
        if (auto folder = temporary_parent(named)) {
            // A temporary renamed into place: the file it was to become, else where it was.
            bool target = second && !temporary_parent(f->path2());
            line = target ? "cannot write" : "cannot write in";
            named = target ? f->path2() : *folder;
            second = false;
        }
        if (!named.empty()) line += " " + named.u8string();
        if (second) line += " (to " + f->path2().u8string() + ")";
        return line + ": " + reason_of(f->code()) + "; " + advice_for(f->code(), f->path1());
    }
    return reason_of(error.code()) + "; " + advice_for(error.code(), {});
}

std::string error_text(const std::exception& error) {
    if (const auto* s = dynamic_cast<const std::system_error*>(&error)) return system_error_line(*s);
    return error.what();
}

} // namespace cvm
