#include "project/selection.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <system_error>

#include "config/trust.h"
#include "platform/platform.h"

namespace cvm {

std::string Selection::origin_text() const {
    switch (origin) {
    case Origin::Variable:
        return "CVM_VERSION";
    case Origin::ProjectFile:
        return file.u8string() + ":" + std::to_string(line);
    case Origin::Global:
        return "global (" + file.u8string() + ")";
    case Origin::Argument:
        return "the command line";
    case Origin::None:
        break;
    }
    return "none";
}

std::string Selection::not_installed_text(const std::string& resolve_error) const {
    if (forced.empty()) return resolve_error + " (selected by " + origin_text() + ")";
    return spec.str() + " (selected by " + origin_text() +
           ") was written with `cvm use --force` and no known release satisfies it (" + forced +
           "), so nothing can install it; run `cvm use SPEC` with one that exists (see `cvm list "
           "--available`)";
}

static bool is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

std::optional<std::string> spec_text_of(std::string_view content, int* line) {
    if (content.size() >= 3 && static_cast<unsigned char>(content[0]) == 0xEF &&
        static_cast<unsigned char>(content[1]) == 0xBB &&
        static_cast<unsigned char>(content[2]) == 0xBF)
        content.remove_prefix(3);
    int number = 0;
    size_t pos = 0;
    while (pos < content.size()) {
        size_t end = content.find('\n', pos);
        if (end == std::string_view::npos) end = content.size();
        std::string_view text = content.substr(pos, end - pos);
        pos = end + 1;
        ++number;
        // A comment starts at '#' at the line start or after a blank.
        for (size_t i = 0; i < text.size(); ++i) {
            if (text[i] == '#' && (i == 0 || is_blank(text[i - 1]))) {
                text = text.substr(0, i);
                break;
            }
        }
        while (!text.empty() && is_blank(text.front()))
            text.remove_prefix(1);
        while (!text.empty() && is_blank(text.back()))
            text.remove_suffix(1);
        if (text.empty()) continue;
        if (line) *line = number;
        return std::string(text);
    }
    return std::nullopt;
}

// True when a version file's text may be quoted in a message: the file itself is a regular file
// (read_file_checked saw to that, and to its size), not a link. A link's target (a cloned
// project's `.cudaversion -> ~/.git-credentials`) is never shown, on stderr or in --json.
static bool text_may_be_shown(const fs::path& file) {
    std::error_code ec;
    auto st = fs::symlink_status(file, ec);
    return !ec && fs::is_regular_file(st);
}

// The selection a version file's text holds (nullopt when it holds no spec).
static std::optional<Selection> selection_of_text(const std::string& content, const fs::path& file,
                                                  Selection::Origin origin) {
    Selection sel;
    sel.origin = origin;
    sel.file = file;
    auto text = spec_text_of(content, &sel.line);
    if (!text) return std::nullopt;
    // `cvm use --force` leaves why no known release satisfied the spec in a comment on its line.
    size_t at = 0;
    for (int n = 1; n < sel.line && at != std::string::npos; ++n) {
        at = content.find('\n', at);
        if (at != std::string::npos) ++at;
    }
    if (at != std::string::npos) {
        std::string_view spec_line(content);
        spec_line = spec_line.substr(at, spec_line.find('\n', at) - at);
        const std::string mark = "# " + std::string(kForcedMark) + " ";
        if (auto m = spec_line.find(mark); m != std::string_view::npos) {
            std::string_view why = spec_line.substr(m + mark.size());
            while (!why.empty() && (why.back() == '\r' || is_blank(why.back())))
                why.remove_suffix(1);
            sel.forced = printable(why);
        }
    }
    try {
        sel.spec = parse_spec(*text);
    } catch (const SpecError& e) {
        const std::string where = file.u8string() + ":" + std::to_string(sel.line) + ": ";
        if (text_may_be_shown(file))
            throw SelectionError(where + e.what() +
                                 "; fix or delete the file, or run `cvm use SPEC` there");
        throw SelectionError(where + "its text is " + e.reason() +
                             "; the file is a link, so its text is not shown; remove the link, or "
                             "run `cvm use SPEC` there");
    }
    return sel;
}

// A version file's text; nullopt when there is none. One that cannot be read, or is a folder or a
// FIFO, is reported rather than skipped: the user meant it to select something. `meta` gets the
// open file's stat.
static std::optional<std::string> version_file_text(const std::string& file,
                                                    platform::FileMeta* meta,
                                                    const char* use = "cvm use SPEC` there") {
    // Read whole or not at all: a part could end inside a long comment and miss the spec.
    auto read = platform::read_whole_file(file, kVersionFileLimit);
    if (read.absent()) return std::nullopt;
    if (read.error)
        throw SelectionError("cannot read " + file + ": " + platform::error_text(read.error) +
                             "; fix or delete it, or run `" + use);
    if (read.too_large)
        throw SelectionError(file + " is larger than " + std::to_string(kVersionFileLimit >> 10) +
                             " KiB, not a version file; remove it, then run `" + use);
    if (!read.text)
        throw SelectionError(file + " is " + platform::file_type_text(fs::u8path(file)) +
                             ", not a version file; remove it, then run `" + use);
    *meta = read.meta;
    return std::move(read.text);
}

std::optional<Selection> read_version_file(const fs::path& file, Selection::Origin origin) {
    platform::FileMeta meta;
    auto text = version_file_text(file.u8string(), &meta,
                                  origin == Selection::Origin::Global ? "cvm use --global SPEC`"
                                                                      : "cvm use SPEC` there");
    if (!text) return std::nullopt;
    // The global default lives in the store: only its user's, root's or a trusted owner's.
    if (origin == Selection::Origin::Global) check_trusted("the global version file", file, meta);
    return selection_of_text(*text, file, origin);
}

// True when a .cudaversion owned by someone else (not trusted) lies in a folder everybody may
// write to (/tmp): anybody could have put it there, so it is skipped with a warning. Only a file
// that is not the user's or root's costs a look at its folder.
static bool planted(const std::string& file, const platform::FileMeta& meta,
                    std::vector<std::string>& warnings) {
    if (platform::owned_by_own(meta)) return false;
    fs::path folder = fs::u8path(file).parent_path();
    auto dir = platform::file_meta(folder);
    if (!dir || !platform::writable_by_others(*dir)) return false;
    if (platform::owned_by_listed(meta, trusted_owner_ids())) return false;
    warnings.push_back("ignoring " + file + ": it is owned by " + owner_text_of(meta) + " in " +
                       folder.u8string() +
                       ", which every user may write to; run `cvm use SPEC` to write your own");
    return true;
}

std::optional<fs::path> find_project_file(const fs::path& start) {
    fs::path dir = start;
    std::error_code ec;
    while (true) {
        fs::path candidate = dir / ".cudaversion";
        if (fs::is_regular_file(candidate, ec)) return candidate;
        fs::path parent = dir.parent_path();
        if (parent == dir || parent.empty()) return std::nullopt;
        dir = parent;
    }
}

Selection find_selection(const fs::path& cwd, const std::optional<std::string>& cvm_version,
                         const fs::path& global_file) {
    if (cvm_version && !cvm_version->empty()) {
        Selection sel;
        sel.origin = Selection::Origin::Variable;
        try {
            sel.spec = parse_spec(*cvm_version);
        } catch (const SpecError& e) {
            throw SelectionError(std::string("CVM_VERSION: ") + e.what() +
                                 "; unset it or set it to a spec");
        }
        return sel;
    }
    // A .cudaversion that holds no spec is skipped, like an absent one. Each folder costs one
    // open attempt (no separate stat) and the walk is done on the string, not on fs::path
    // values (each of which parses its components): the shim walks this before every nvcc.
    std::vector<std::string> warnings;
    if (!cwd.empty()) {
        const bool win = platform::host_os() == platform::Os::Windows;
        const char* seps = win ? "/\\" : "/";
        std::string dir = cwd.u8string();
        // The root (/, C:\, \\server\share\) is the last folder looked at.
        const size_t root = std::max<size_t>(cwd.root_path().u8string().size(), 1);
        while (true) {
            std::string file = dir;
            if (std::strchr(seps, file.back()) == nullptr) file += win ? '\\' : '/';
            file += ".cudaversion";
            platform::FileMeta meta;
            if (auto text = version_file_text(file, &meta); text && !planted(file, meta, warnings))
                if (auto sel = selection_of_text(*text, fs::u8path(file),
                                                 Selection::Origin::ProjectFile)) {
                    sel->warnings = std::move(warnings);
                    return *sel;
                }
            if (dir.size() <= root) break;
            size_t cut = dir.find_last_of(seps);
            if (cut == std::string::npos) break;
            // Keep the separator of a root ("/usr" -> "/"), drop any other ("/a/b" -> "/a").
            dir.resize(std::max(cut, root));
        }
    }
    Selection none;
    if (auto sel = read_version_file(global_file, Selection::Origin::Global))
        none = std::move(*sel);
    none.warnings = std::move(warnings);
    return none;
}

void write_version_file(const fs::path& file, const Spec& spec, const std::string& forced) {
    // Never over a folder or a FIFO (a link to a regular file is replaced, as before): say so
    // instead of a rename error.
    std::error_code ec;
    auto st = fs::status(file, ec);
    if (fs::exists(st) && !fs::is_regular_file(st))
        throw std::runtime_error("cannot write " + file.u8string() + ": it is " +
                                 platform::file_type_text(file) +
                                 ", not a version file; remove it and run the command again");
    std::string line = spec.str();
    // One line: what comes after '#' is a comment to every reader of version files.
    if (!forced.empty() && forced.find_first_of("\r\n") == std::string::npos)
        line += "  # " + std::string(kForcedMark) + " " + forced;
    platform::write_file_atomically(file, line + "\n");
}

} // namespace cvm
