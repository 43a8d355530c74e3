#include "core/store.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <tuple>
#include <unordered_set>

#include "core/config.h"
#include "core/config_cache.h"
#include "core/entry_trust.h"
#include "core/folder_chain.h"
#include "core/spec_match.h"
#include "core/trust.h"
#include "core/url_credentials.h"
#include "platform/platform.h"

namespace cvm {

static std::string join_list(const std::vector<std::string>& v, char sep) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) {
        if (i) out.push_back(sep);
        out += v[i];
    }
    return out;
}

static std::vector<std::string> split_list(const std::string& s, char sep) {
    std::vector<std::string> out;
    if (s.empty()) return out;
    size_t start = 0;
    while (true) {
        size_t end = s.find(sep, start);
        out.push_back(s.substr(start, end - start));
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return out;
}

std::string serialize_entry(const Entry& e) {
    std::ostringstream out;
    out << "kind=" << kind_dir(e.kind) << "\n";
    out << "id=" << e.id << "\n";
    out << "version=" << e.version.str() << "\n";
    if (e.kind != Kind::Cuda) out << "cuda=" << e.cuda.str() << "\n";
    out << "source=" << (e.imported ? "imported" : "installed") << "\n";
    if (e.imported && !e.origin.empty()) out << "origin=" << e.origin.u8string() << "\n";
    else if (e.imported) out << "path=" << e.path.u8string() << "\n";
    out << "include=" << join_list(e.include_dirs, ';') << "\n";
    out << "lib=" << join_list(e.lib_dirs, ';') << "\n";
    out << "bin=" << join_list(e.bin_dirs, ';') << "\n";
    if (!e.platform.empty()) out << "platform=" << e.platform << "\n";
    for (const auto& c : e.components) out << "component=" << c << "\n";
    for (const auto& a : e.archives)
        out << "archive=" << a.sha256 << " " << a.name << " " << without_url_credentials(a.url)
            << "\n";
    for (const auto& a : e.archives)
        if (a.first_use) out << "first_use=" << a.name << "\n";
    if (!e.note.empty()) out << "note=" << e.note << "\n";
    if (!e.stamp.empty()) out << "stamp=" << e.stamp << "\n";
    return out.str();
}

Entry parse_entry(const std::string& text, const fs::path& dir, const std::string& source) {
    Entry e;
    e.entry_dir = dir;
    bool have_kind = false;
    std::string_view rest(text);
    int number = 0;
    auto bad = [&](const std::string& why) {
        return std::runtime_error(source + ":" + std::to_string(number) + ": " + why +
                                  "; remove the folder " + dir.u8string() + " and import or install again");
    };
    while (!rest.empty()) {
        size_t nl = rest.find('\n');
        std::string_view line = rest.substr(0, nl);
        rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
        ++number;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.empty() || line[0] == '#') continue;
        size_t eq = line.find('=');
        if (eq == std::string_view::npos) throw bad("expected key=value");
        std::string_view key = line.substr(0, eq);
        std::string value(line.substr(eq + 1));
        if (key == "kind") {
            if (auto k = kind_of_dir(value))
                e.kind = *k;
            else throw bad("unknown kind '" + printable(value) + "'");
            have_kind = true;
        } else if (key == "id") {
            e.id = value;
        } else if (key == "version") {
            auto v = parse_version(value, 1, 4);
            if (!v) throw bad("bad version '" + printable(value) + "'");
            e.version = *v;
        } else if (key == "cuda") {
            auto v = parse_version(value, 1, 2);
            if (!v) throw bad("bad cuda '" + printable(value) + "'");
            e.cuda = *v;
        } else if (key == "source") {
            e.imported = value == "imported";
        } else if (key == "path") {
            e.path = fs::u8path(value);
        } else if (key == "origin") {
            e.origin = fs::u8path(value);
        } else if (key == "include") {
            e.include_dirs = split_list(value, ';');
        } else if (key == "lib") {
            e.lib_dirs = split_list(value, ';');
        } else if (key == "bin") {
            e.bin_dirs = split_list(value, ';');
        } else if (key == "platform") {
            e.platform = value;
        } else if (key == "component") {
            e.components.push_back(value);
        } else if (key == "archive") {
            ArchiveRecord a;
            size_t s1 = value.find(' ');
            size_t s2 = s1 == std::string::npos ? s1 : value.find(' ', s1 + 1);
            a.sha256 = value.substr(0, s1);
            if (s1 != std::string::npos) a.name = value.substr(s1 + 1, s2 == std::string::npos ? std::string::npos : s2 - s1 - 1);
            if (s2 != std::string::npos) a.url = value.substr(s2 + 1);
            e.archives.push_back(a);
        } else if (key == "first_use") {
            for (auto& a : e.archives)
                if (a.name == value) a.first_use = true;
        } else if (key == "note") {
            e.note = value;
        } else if (key == "stamp") {
            e.stamp = value;
        }
        // Unknown keys are ignored, so newer cvm versions can add some.
    }
    if (!have_kind || e.id.empty() || e.version.empty()) throw bad("kind, id or version missing");
    if (!e.imported || e.path.empty()) e.path = dir / "root";
    return e;
}

std::string source_stamp(const fs::path& file) {
    std::error_code ec;
    auto size = fs::file_size(file, ec);
    if (ec) return {};
    auto time = fs::last_write_time(file, ec);
    if (ec) return {};
    return std::to_string(size) + " " + std::to_string(time.time_since_epoch().count()) + " " +
           file.u8string();
}

SourceState source_state(const fs::path& source, std::string_view stamp) {
    std::error_code ec;
    if (!fs::is_directory(source, ec)) return SourceState::Gone;
    if (stamp.empty()) return SourceState::Ok;
    size_t s1 = stamp.find(' ');
    size_t s2 = s1 == std::string_view::npos ? s1 : stamp.find(' ', s1 + 1);
    if (s2 == std::string_view::npos) return SourceState::Ok; // not ours to judge
    fs::path file = fs::u8path(stamp.substr(s2 + 1));
    return source_stamp(file) == stamp ? SourceState::Ok : SourceState::Changed;
}

const char* source_state_name(SourceState s) {
    return s == SourceState::Ok ? "ok" : s == SourceState::Gone ? "gone" : "changed";
}

Store::Store(std::vector<fs::path> layers) : layers_(std::move(layers)) {
    if (layers_.empty()) layers_.push_back(default_root());
}

fs::path Store::default_root() {
    if (auto r = platform::get_env("CVM_ROOT"); r && !r->empty()) {
        fs::path root = fs::u8path(*r);
        // A relative store would be a folder of wherever cvm runs: any project holding one would
        // decide which nvcc runs there.
        if (root.is_relative())
            throw ConfigError("CVM_ROOT is the relative path '" + printable(*r) +
                              "'; set it to a whole path (e.g. CVM_ROOT=$PWD/" + printable(*r) +
                              ") or unset it");
        refuse_list_separator("CVM_ROOT", root);
        return root;
    }
    fs::path root = platform::user_data_dir() / "cvm";
    refuse_list_separator("the store folder", root);
    return root;
}

void refuse_list_separator(const std::string& what, const fs::path& folder) {
    // Its bin folders go on PATH, whose entries this character separates.
    const char sep = platform::path_list_separator();
    if (folder.u8string().find(sep) != std::string::npos)
        throw ConfigError(what + " " + printable(folder.u8string()) + " holds '" +
                          std::string(1, sep) +
                          "', which separates PATH's folders; move it to a folder without one");
}

Store Store::from_environment() {
    std::vector<fs::path> layers{default_root()};
    auto add_list = [&](const std::string& list, char sep, const std::string& from) {
        for (const auto& item : split_list(list, sep)) {
            if (item.empty()) continue;
            fs::path p = fs::u8path(item);
            if (p.is_relative())
                throw ConfigError(from + ": the store folder '" + printable(item) +
                                  "' is relative; give its whole path");
            refuse_list_separator(from + ": the store folder", p);
            if (std::find(layers.begin(), layers.end(), p) == layers.end()) layers.push_back(p);
        }
    };
    if (auto sp = platform::get_env("CVM_STORE_PATH"))
        add_list(*sp, platform::path_list_separator(), "CVM_STORE_PATH");
    // <root>/store-path: one read-only store per line. Read without iostreams: the shim runs
    // this, and an ifstream costs it the C++ locale's start-up.
    if (auto text = platform::read_file(layers.front() / "store-path")) {
        for (const auto& raw : split_list(*text, '\n')) {
            std::string line = raw;
            if (!line.empty() && line.back() == '\r') line.pop_back();
            if (line.empty() || line[0] == '#') continue;
            add_list(line, '\n', (layers.front() / "store-path").u8string());
        }
    }
    // The user's config.toml, then the machine's (see config.h), through their precompiled
    // answer when the files have not changed (config_cache.h): no TOML on the shim's path.
    for (const ConfigStores& from : config_store_paths(layers.front()))
        for (const fs::path& p : from.store_path) {
            refuse_list_separator(from.file.u8string() + ": the store folder", p);
            if (std::find(layers.begin(), layers.end(), p) == layers.end()) layers.push_back(p);
        }
    // Nobody else may swap a layer for their own (folder_chain.h): once per command or shim run.
    for (const fs::path& layer : layers) check_folder_chain("the store folder", layer);
    return Store(std::move(layers));
}

std::vector<std::pair<std::string, size_t>> Store::ids(Kind kind) const {
    std::vector<std::pair<std::string, size_t>> out;
    std::unordered_set<std::string> seen;
    const char sep = platform::host_os() == platform::Os::Windows ? '\\' : '/';
    for (size_t i = 0; i < layers_.size(); ++i) {
        std::string dir = layers_[i].u8string();
        if (dir.empty() || dir.back() != sep) dir += sep;
        // Names only, no fs::path per entry: the shim resolves through this before every tool.
        dir += kind_dir(kind);
        platform::FileMeta meta;
        std::vector<std::string> names = platform::folder_names(dir, &meta);
        if (meta.type == platform::FileMeta::Type::Directory) check_trusted_at("the store folder", dir, meta);
        for (std::string& name : names) {
            if (name.empty() || name[0] == '.') continue;
            // An id in an earlier layer hides the same id later; with one layer there is nothing to hide.
            if (layers_.size() == 1 || seen.insert(name).second) out.emplace_back(std::move(name), i);
        }
    }
    return out;
}

std::optional<Entry> Store::find(Kind kind, const std::string& id) const {
    // Paths as strings until an entry is found: the shim calls this before every tool.
    const char sep = platform::host_os() == platform::Os::Windows ? '\\' : '/';
    for (size_t i = 0; i < layers_.size(); ++i) {
        std::string dir = layers_[i].u8string();
        if (dir.empty() || dir.back() != sep) dir += sep;
        dir += kind_dir(kind);
        dir += sep;
        dir += id;
        std::string file = dir + sep + "entry";
        auto read = platform::read_file_checked(file);
        if (read.absent()) continue;
        if (!read.text)
            throw std::runtime_error(file + (read.error ? ": " + platform::error_text(read.error)
                                                        : " is " + platform::file_type_text(fs::u8path(file))) +
                                     "; remove the folder " + dir + " and import or install again");
        check_trusted_at("the store entry", file, read.meta);
        Entry e = parse_entry(*read.text, fs::u8path(dir), file);
        e.layer = i;
        return e;
    }
    return std::nullopt;
}

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

void Store::add_imported(const Entry& e, bool replace, const std::vector<RootLink>& plan) const {
    fs::path dir = root() / kind_dir(e.kind) / fs::u8path(e.id);
    std::error_code ec;
    if (fs::exists(dir / "entry", ec) && !replace)
        throw std::runtime_error(std::string(kind_dir(e.kind)) + " " + e.id +
                                 " is already in the store; run `cvm uninstall " + e.id +
                                 "` first");
    fs::create_directories(staging_dir(), ec);
    fs::path stage = staging_dir() / ("import-" + std::to_string(platform::process_id()) + "-" + e.id);
    fs::remove_all(stage, ec);
    fs::create_directories(stage);
    {
        std::ofstream out(stage / "entry", std::ios::binary);
        out << serialize_entry(e);
        if (!out.flush()) throw std::runtime_error("cannot write " + (stage / "entry").u8string());
    }
    if (!plan.empty()) {
        try {
            build_assembled_root(stage / "root", plan);
        } catch (...) {
            fs::remove_all(stage, ec);
            throw;
        }
    }
    fs::create_directories(dir.parent_path());
    if (replace) fs::remove_all(dir, ec);
    fs::rename(stage, dir, ec);
    if (ec) {
        fs::remove_all(stage);
        throw std::runtime_error("cannot register " + e.id + " in " + dir.u8string() + ": " +
                                 ec.message());
    }
    // Views link the files the replaced entry had; they are rebuilt on next use.
    if (replace) drop_views_of(e.kind, e.id);
}

void Store::remove(Kind kind, const std::string& id) const {
    auto e = find(kind, id);
    if (!e) throw std::runtime_error(std::string(kind_dir(kind)) + " " + id + " is not installed");
    if (e->layer != 0)
        throw std::runtime_error(id + " lives in the read-only store " +
                                 layers_[e->layer].u8string() + "; it cannot be removed from here");
    // Move aside first, so a crash never leaves a half-deleted entry that still lists.
    std::error_code ec;
    fs::create_directories(staging_dir(), ec);
    fs::path trash = staging_dir() / ("remove-" + std::to_string(platform::process_id()) + "-" + id);
    fs::remove_all(trash, ec);
    fs::rename(e->entry_dir, trash, ec);
    if (ec)
        throw std::runtime_error("cannot remove " + e->entry_dir.u8string() + ": " + ec.message());
    // An imported entry's files are not ours: the folder only holds the entry file. Removing
    // `trash` never follows links out of it (remove_all does not follow symlinks).
    fs::remove_all(trash, ec);
    drop_views_of(kind, id);
}

void Store::drop_views_of(Kind kind, const std::string& id) const {
    std::error_code ec;
    for (fs::directory_iterator it(views_dir(), ec), end; !ec && it != end; it.increment(ec)) {
        // A view is named as its combination is (Resolved::active): TOOLKIT[+CUDNN][+ncclNCCL];
        // one without '+' is a toolkit's own (view.h).
        CombinationParts parts = combination_parts(it->path().filename().u8string());
        const std::string& part = kind == Kind::Cuda   ? parts.cuda
                                  : kind == Kind::Nccl ? parts.nccl
                                                       : parts.cudnn;
        if (part == id) {
            std::error_code ec2;
            fs::remove_all(it->path(), ec2);
        }
    }
}

CombinationParts combination_parts(const std::string& name) {
    CombinationParts parts;
    size_t plus = name.find('+');
    parts.cuda = name.substr(0, plus);
    while (plus != std::string::npos) {
        size_t next = name.find('+', plus + 1);
        std::string part =
            name.substr(plus + 1, next == std::string::npos ? next : next - plus - 1);
        if (part.rfind("nccl", 0) == 0)
            parts.nccl = part.substr(4);
        else
            parts.cudnn = part;
        plus = next;
    }
    return parts;
}

std::string combination_name(const std::string& cuda, const std::string* cudnn,
                             const std::string* nccl) {
    std::string out = cuda;
    if (cudnn) out += "+" + *cudnn;
    if (nccl) out += "+nccl" + *nccl;
    return out;
}

std::string Resolved::active() const {
    return combination_name(toolkit.id, cudnn ? &cudnn->id : nullptr, nccl ? &nccl->id : nullptr);
}

std::vector<const Entry*> Resolved::entries() const {
    std::vector<const Entry*> out{&toolkit};
    if (cudnn) out.push_back(&*cudnn);
    if (nccl) out.push_back(&*nccl);
    return out;
}

const char* const kEntryIdForms =
    "a toolkit id (12.4.1) or name (import --as), cuDNN id (9.1.0.70-cuda12) or NCCL id (2.21.5-cuda12.4)";

std::optional<Kind> kind_of_id(const Store& store, const std::string& id) {
    if (parse_toolkit_id(id)) return Kind::Cuda;
    if (is_toolkit_name(id) && store.find(Kind::Cuda, id)) return Kind::Cuda; // import --as NAME
    if (parse_nccl_id(id) && store.find(Kind::Nccl, id)) return Kind::Nccl;
    if (parse_cudnn_id(id)) return Kind::Cudnn;
    return std::nullopt;
}

std::vector<const Entry*> Resolved::libraries() const {
    auto out = entries();
    out.erase(out.begin()); // the toolkit
    return out;
}

const Entry* Resolved::of(Kind kind) const {
    if (kind == Kind::Cuda) return &toolkit;
    const auto& e = kind == Kind::Cudnn ? cudnn : nccl;
    return e ? &*e : nullptr;
}

static std::vector<std::string> id_names(const std::vector<std::pair<std::string, size_t>>& ids) {
    std::vector<std::string> out;
    out.reserve(ids.size());
    for (const auto& p : ids) out.push_back(p.first);
    return out;
}

Resolved resolve(const Store& store, const Spec& spec) {
    if (spec.system) throw ResolveError("'system' selects no toolkit");
    return resolve_among(store, spec, id_names(store.ids(Kind::Cuda)),
                         spec.cudnn ? id_names(store.ids(Kind::Cudnn)) : std::vector<std::string>{},
                         spec.nccl ? id_names(store.ids(Kind::Nccl)) : std::vector<std::string>{});
}

Resolved resolve_among(const Store& store, const Spec& spec,
                       const std::vector<std::string>& cuda_ids,
                       const std::vector<std::string>& cudnn_ids,
                       const std::vector<std::string>& nccl_ids) {
    if (spec.system) throw ResolveError("'system' selects no toolkit");
    // What matches is spec_match.h's to say; here the store's entries are read and ranked.
    struct Toolkit {
        std::string id;
        Version v;
        std::optional<Entry> entry; // read already (a name's release is in its entry)
    };
    std::vector<Toolkit> toolkits;
    // The toolkit the spec asks for, in messages: "CUDA 12.4", "the toolkit mine (CUDA 11.8.0)".
    std::string asked = "CUDA " + spec.cuda.str();
    for (const auto& id : cuda_ids) {
        if (!spec.name.empty()) {
            if (!toolkit_matches(spec, id, Version{})) continue;
            if (auto e = store.find(Kind::Cuda, id)) {
                asked = "the toolkit " + id + " (CUDA " + e->version.str() + ")";
                toolkits.push_back({id, e->version, std::move(e)});
            }
        } else if (auto v = parse_toolkit_id(id); v && toolkit_matches(spec, id, *v)) {
            toolkits.push_back({id, *v, std::nullopt});
        }
    }
    if (toolkits.empty() && !spec.name.empty())
        throw ResolveError("no toolkit is named " + spec.name + "; `cvm import DIR --as " + spec.name +
                           "` registers one under that name, or see `cvm list`");
    std::sort(toolkits.begin(), toolkits.end(), [](const Toolkit& a, const Toolkit& b) { return b.v < a.v; });
    if (toolkits.empty()) {
        throw ResolveError("CUDA " + spec.cuda.str() +
                           " is not installed; run `cvm install " + spec.str() +
                           "` or `cvm import DIR`, or see `cvm list`");
    }
    std::vector<std::pair<std::string, CudnnId>> builds;
    for (const auto& id : spec.cudnn ? cudnn_ids : std::vector<std::string>{})
        if (auto c = parse_cudnn_id(id); c && cudnn_matches(spec, *c)) builds.emplace_back(id, *c);
    std::sort(builds.begin(), builds.end(),
              [&spec](const auto& a, const auto& b) { return cudnn_before(spec, a.second, b.second); });
    std::vector<std::string> nccl_names;
    std::vector<NcclId> nccls;
    for (const auto& id : spec.nccl ? nccl_ids : std::vector<std::string>{})
        if (auto n = parse_nccl_id(id); n && nccl_matches(spec, *n)) {
            nccl_names.push_back(id);
            nccls.push_back(*n);
        }
    bool cudnn_fits_one = false;
    for (const auto& tk : toolkits) {
        const std::string* pick = nullptr;
        if (spec.cudnn) {
            for (const auto& b : builds)
                if (cudnn_fits(spec, b.second, tk.v)) {
                    pick = &b.first;
                    break;
                }
            if (!pick) continue;
        }
        cudnn_fits_one = true;
        int nccl = spec.nccl ? pick_nccl(spec, nccls, tk.v) : -1;
        if (spec.nccl && nccl < 0) continue;
        Resolved r;
        auto t = tk.entry ? tk.entry : store.find(Kind::Cuda, tk.id);
        if (!t) continue;
        r.toolkit = std::move(*t);
        if (pick) {
            auto c = store.find(Kind::Cudnn, *pick);
            if (!c) continue;
            r.cudnn = std::move(*c);
        }
        if (nccl >= 0) {
            auto n = store.find(Kind::Nccl, nccl_names[static_cast<size_t>(nccl)]);
            if (!n) continue;
            r.nccl = std::move(*n);
        }
        // What is resolved is about to be run and loaded: its folders must be trusted too.
        for (const Entry* e : r.entries())
            check_entry_trusted(*e);
        return r;
    }
    std::string what;
    if (spec.cudnn && !cudnn_fits_one)
        what = builds.empty() ? "no cuDNN " + spec.cudnn->str() + " is installed"
                              : "no installed cuDNN " + spec.cudnn->str() + " is built for " +
                                    asked + " (have " + builds.front().first + ")";
    else
        what = nccls.empty() ? "no NCCL " + spec.nccl->str() + " is installed"
                             : "no installed NCCL " + spec.nccl->str() + " is built for " + asked +
                                   " (have " + nccl_names.front() + ")";
    throw ResolveError(what + "; run `cvm install " + spec.str() + "`");
}

} // namespace cvm
