// The store's listing: Store::list and Store::brief, kept near constant time by an index of each
// layer's entries in the writable layer's cache (store.h).
#include "store/store.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_set>
#include <vector>

#include "store/entry_format.h"
#include "store/entry_trust.h"
#include "config/trust.h"
#include "platform/platform.h"

namespace cvm {

namespace {

// `cvm list` reads every entry. To keep it near constant time with hundreds of them, the entries
// of each layer are also kept in index files in the writable layer's cache: one with the entry
// texts, and a brief one with only what `cvm list` prints. They are valid while the layer's
// <kind> folder keeps its modification time and link count (every add or remove renames into or
// out of that folder, which changes them).
//
// File times are coarse: two changes within one clock tick can leave the same time. So, as git
// does with its "racy" index, an index is only written once the folder has been still for a
// while; until then every listing reads the entries themselves.
constexpr char kRecordSeparator = '\x1e';
constexpr auto kSettleTime = std::chrono::seconds(2);

struct LayerStamp {
    std::string text; // first line of a valid index; empty when the folder is missing
    bool settled = false;
};

LayerStamp index_stamp(const fs::path& dir) {
    std::error_code ec;
    auto t = fs::last_write_time(dir, ec);
    if (ec) return {};
    // Not every system counts a folder's links (Windows says 1); the time alone then decides.
    auto links = fs::hard_link_count(dir, ec);
    if (ec) links = 0;
    LayerStamp s;
    s.text = "cvm-index 6 " + std::to_string(t.time_since_epoch().count()) + " " + std::to_string(links) + "\n";
    auto now = fs::file_time_type::clock::now();
    s.settled = t < now && now - t >= kSettleTime;
    return s;
}

fs::path index_file(const fs::path& root, const fs::path& layer, Kind kind) {
    std::uint64_t h = 1469598103934665603ull; // FNV-1a of the layer's path
    for (unsigned char c : layer.u8string()) h = (h ^ c) * 1099511628211ull;
    char name[40];
    std::snprintf(name, sizeof name, "%s-%016llx", kind_dir(kind), static_cast<unsigned long long>(h));
    return root / "cache" / "index" / name;
}

// The second line of an index file: the body's size and FNV-1a hash, so a garbled, truncated or
// hand-edited index is noticed (and rebuilt) instead of listing nothing or something made up.
std::string index_sum(std::string_view body) {
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char c : body) h = (h ^ c) * 1099511628211ull;
    char line[64];
    std::snprintf(line, sizeof line, "sum %zu %016llx\n", body.size(), static_cast<unsigned long long>(h));
    return line;
}

// The body of an index file when it is current (its first line is `stamp`), whole (its sum
// holds) and the user's own (another user could have written any list into it); else nullopt,
// and the entries are read instead.
std::optional<std::string> index_body(const fs::path& file, const std::string& stamp) {
    auto read = platform::read_file_checked(file.u8string());
    if (!read.text || read.text->compare(0, stamp.size(), stamp) != 0) return std::nullopt;
    static const std::vector<std::uint32_t> nobody_else;
    if (doubt_of(read.meta, &nobody_else) != Doubt::None) return std::nullopt;
    std::string_view rest(*read.text);
    rest.remove_prefix(stamp.size());
    size_t nl = rest.find('\n');
    if (nl == std::string_view::npos) return std::nullopt;
    std::string_view sum = rest.substr(0, nl + 1);
    rest.remove_prefix(nl + 1);
    if (sum != index_sum(rest)) return std::nullopt;
    return std::string(rest);
}

// An entry folder's problem as one line of the brief index (no tab or line break).
std::string one_field(std::string text) {
    for (char& c : text)
        if (c == '\t' || c == '\n' || c == '\r') c = ' ';
    return text;
}

// Refuses a layer's <kind> folder that someone else could have filled (trust.h).
void check_layer_folder(const fs::path& dir) {
    auto meta = platform::file_meta(dir);
    if (meta && meta->type == platform::FileMeta::Type::Directory) check_trusted("the store folder", dir, *meta);
}

} // namespace

std::vector<Entry> Store::read_layer(size_t layer, Kind kind, const std::string& stamp, bool save_index,
                                     std::string* brief_text) const {
    fs::path dir = layers_[layer] / kind_dir(kind);
    std::vector<Entry> entries;
    std::string text;
    std::string brief;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::string id = it->path().filename().u8string();
        if (id.empty() || id[0] == '.') continue;
        fs::path entry_file = it->path() / "entry";
        auto read = platform::read_file_checked(entry_file.u8string());
        if (read.error == ENOTDIR) continue; // a stray file beside the entry folders
        // A damaged entry must not hide the others, nor itself: it is listed as damaged.
        std::string problem;
        if (read.error == ENOENT) problem = "its entry file " + entry_file.u8string() + " is missing";
        else if (read.error) problem = "cannot read " + entry_file.u8string() + ": " + platform::error_text(read.error);
        else if (!read.text) problem = entry_file.u8string() + " is " + platform::file_type_text(entry_file);
        else if (read.text->find(kRecordSeparator) != std::string::npos)
            problem = entry_file.u8string() + " holds a control character";
        if (problem.empty()) {
            try {
                entries.push_back(parse_entry(*read.text, it->path(), entry_file.u8string()));
            } catch (const std::exception& e) {
                problem = e.what();
            }
        }
        if (!problem.empty()) {
            if (problem.find("; remove the folder") == std::string::npos)
                problem += "; remove the folder " + it->path().u8string() + " and import or install it again";
            if (id.find_first_of("\t\n") == std::string::npos)
                brief += id + "\t\t\td\t" + one_field(problem) + "\t\t" + one_field(entry_file.u8string()) + "\n";
            continue;
        }
        text += id + "\n" + *read.text + kRecordSeparator;
        const Entry& e = entries.back();
        // Brief line: id, version, cuda, source, stamp, doubt, path; tab separated, the path
        // last. `doubt` is what another user could change of the entry (entry_doubt_text), found
        // when the index is made: a few stats per entry then, none when `cvm list` reads it. An id
        // with a tab or a path with a line break cannot be written so; cvm never makes either
        // (ids are checked versions, `cvm import` refuses line breaks), so such an entry is not
        // listed. A stamp that cannot be written so is left out (the folder is still checked).
        // A damaged entry's line has source "d", its problem for the stamp and its entry file.
        std::string path = (e.origin.empty() ? e.path : e.origin).u8string();
        if (e.id.find_first_of("\t\n") != std::string::npos || path.find('\n') != std::string::npos)
            continue;
        std::string stamp_field = e.stamp.find_first_of("\t\n") == std::string::npos ? e.stamp : "";
        brief += e.id + "\t" + e.version.str() + "\t" + (e.kind != Kind::Cuda ? e.cuda.str() : "") +
                 "\t" + (e.imported ? "i" : "s") + "\t" + stamp_field + "\t" +
                 one_field(entry_doubt_text(e)) + "\t" + path + "\n";
    }
    // Best effort: a store we cannot write still lists, just without the index.
    auto save = [&](const fs::path& index, const std::string& content) {
        std::error_code wec;
        fs::create_directories(index.parent_path(), wec);
        fs::path tmp = index;
        tmp += ".tmp" + std::to_string(platform::process_id());
        if (std::FILE* f = std::fopen(tmp.u8string().c_str(), "wb")) {
            std::string head = stamp + index_sum(content);
            bool ok = std::fwrite(head.data(), 1, head.size(), f) == head.size() &&
                      std::fwrite(content.data(), 1, content.size(), f) == content.size();
            ok = std::fclose(f) == 0 && ok;
            if (ok) fs::rename(tmp, index, wec);
            if (!ok || wec) fs::remove(tmp, wec);
        }
    };
    if (save_index) {
        fs::path index = index_file(root(), layers_[layer], kind);
        save(index, text);
        fs::path brief_index = index;
        brief_index += ".brief";
        save(brief_index, brief);
    }
    if (brief_text) *brief_text = std::move(brief);
    return entries;
}

std::vector<Entry> Store::list(Kind kind) const {
    std::vector<Entry> out;
    std::unordered_set<std::string> seen;
    for (size_t i = 0; i < layers_.size(); ++i) {
        fs::path dir = layers_[i] / kind_dir(kind);
        LayerStamp ls = index_stamp(dir);
        const std::string& stamp = ls.text;
        if (stamp.empty()) continue;
        check_layer_folder(dir);
        std::vector<Entry> layer_entries;
        if (auto cached = index_body(index_file(root(), layers_[i], kind), stamp)) {
            std::string_view rest(*cached);
            while (!rest.empty()) {
                size_t end = rest.find(kRecordSeparator);
                std::string_view record = rest.substr(0, end);
                rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
                size_t nl = record.find('\n');
                if (nl == std::string_view::npos) continue;
                try {
                    // The file name for error messages is left out since a cached entry
                    // already parsed once.
                    layer_entries.push_back(parse_entry(std::string(record.substr(nl + 1)),
                                                        dir / fs::u8path(record.substr(0, nl)), "index"));
                } catch (const std::exception&) {
                }
            }
        } else {
            layer_entries = read_layer(i, kind, stamp, ls.settled, nullptr);
        }
        for (auto& e : layer_entries) {
            if (!seen.insert(e.id).second) continue;
            e.layer = i;
            out.push_back(std::move(e));
        }
    }
    std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) {
        if (a.version != b.version) return b.version < a.version;
        return b.cuda < a.cuda;
    });
    return out;
}

bool ListItem::version_has_prefix(const Version& prefix) const {
    if (prefix.parts.size() > version_parts) return false;
    for (size_t i = 0; i < prefix.parts.size(); ++i)
        if (version[i] != prefix.parts[i]) return false;
    return true;
}

namespace {

// Numeric order of two number lists; a shorter one sorts before a longer one with its prefix
// (as Version's operator<).
bool parts_less(const unsigned* a, unsigned na, const unsigned* b, unsigned nb) {
    return std::lexicographical_compare(a, a + na, b, b + nb);
}

} // namespace

Listing Store::brief(Kind kind) const {
    Listing out;
    std::unordered_set<std::string_view> seen;
    for (size_t i = 0; i < layers_.size(); ++i) {
        LayerStamp ls = index_stamp(layers_[i] / kind_dir(kind));
        const std::string& stamp = ls.text;
        if (stamp.empty()) continue;
        check_layer_folder(layers_[i] / kind_dir(kind));
        fs::path index = index_file(root(), layers_[i], kind);
        index += ".brief";
        if (auto cached = index_body(index, stamp)) {
            out.texts.push_back(std::move(*cached));
        } else {
            out.texts.emplace_back();
            read_layer(i, kind, stamp, ls.settled, &out.texts.back());
        }
        std::string_view rest(out.texts.back());
        while (!rest.empty()) {
            size_t nl = rest.find('\n');
            std::string_view line = rest.substr(0, nl);
            rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
            std::string_view field[7];
            size_t n = 0;
            while (n < 6) {
                size_t tab = line.find('\t');
                if (tab == std::string_view::npos) break;
                field[n++] = line.substr(0, tab);
                line.remove_prefix(tab + 1);
            }
            if (n != 6) continue;
            field[6] = line;
            ListItem item;
            item.kind = kind;
            item.id = field[0];
            item.path = field[6];
            item.doubt = field[5];
            item.imported = field[3] == "i";
            item.damaged = field[3] == "d";
            item.stamp = field[4];
            item.layer = i;
            if (item.damaged) {
                // Sorted by what its folder's name says, where it says anything.
                std::string_view version = item.id.substr(0, item.id.find("-cuda"));
                item.version_parts = static_cast<unsigned>(parse_version_parts(version, item.version, 4));
                if (!seen.insert(item.id).second) continue;
                out.items.push_back(item);
                continue;
            }
            item.version_parts = static_cast<unsigned>(parse_version_parts(field[1], item.version, 4));
            item.cuda_parts = static_cast<unsigned>(parse_version_parts(field[2], item.cuda, 2));
            if (item.version_parts == 0 || (item.cuda_parts == 0 && !field[2].empty())) continue;
            if (!seen.insert(item.id).second) continue;
            out.items.push_back(item);
        }
    }
    // The order of Store::list: version, then CUDA, newest first.
    std::sort(out.items.begin(), out.items.end(), [](const ListItem& a, const ListItem& b) {
        if (parts_less(b.version, b.version_parts, a.version, a.version_parts)) return true;
        if (parts_less(a.version, a.version_parts, b.version, b.version_parts)) return false;
        return parts_less(b.cuda, b.cuda_parts, a.cuda, a.cuda_parts);
    });
    return out;
}

} // namespace cvm
