#include "core/lockfile.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <system_error>

#include "core/selection.h"
#include "platform/platform.h"

namespace cvm {

namespace {

// ---- a reader for the TOML a lock file needs ----

struct TomlValue {
    enum class Type { String, Integer, Boolean, Array, Table, TableArray };
    Type type = Type::Table;
    std::string str;
    long long integer = 0;
    bool boolean = false;
    std::vector<TomlValue> items;  // Array elements, or the tables of a TableArray
    std::vector<std::string> keys; // Table: keys[i] names values[i]
    std::vector<TomlValue> values;
    bool defined = false; // Table: opened by its own [header] (or is the root)
    int line = 0;

    TomlValue* find(const std::string& key) {
        for (size_t i = 0; i < keys.size(); ++i)
            if (keys[i] == key) return &values[i];
        return nullptr;
    }
    const TomlValue* find(const std::string& key) const {
        return const_cast<TomlValue*>(this)->find(key);
    }
};

const char* type_name(TomlValue::Type t) {
    switch (t) {
    case TomlValue::Type::String:
        return "a string";
    case TomlValue::Type::Integer:
        return "an integer";
    case TomlValue::Type::Boolean:
        return "a boolean";
    case TomlValue::Type::Array:
        return "an array";
    case TomlValue::Type::Table:
        return "a table";
    case TomlValue::Type::TableArray:
        return "an array of tables";
    }
    return "a value";
}

class TomlReader {
public:
    TomlReader(std::string_view text, std::string origin) : s_(text), origin_(std::move(origin)) {}

    TomlValue parse() {
        TomlValue root;
        root.defined = true;
        root.line = 1;
        TomlValue* table = &root;
        if (s_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;
        while (true) {
            skip_blank();
            if (at_end()) break;
            char c = s_[pos_];
            if (c == '\n' || c == '\r' || c == '#') {
                end_of_line();
                continue;
            }
            if (c == '[') {
                table = header(root);
            } else {
                key_value(*table);
            }
            end_of_line();
        }
        return root;
    }

private:
    std::string_view s_;
    std::string origin_;
    size_t pos_ = 0;
    int line_ = 1;

    [[noreturn]] void fail(const std::string& why) const {
        throw LockfileError(origin_ + ":" + std::to_string(line_) + ": " + why +
                            "; run `cvm lock` to write it again");
    }
    bool at_end() const { return pos_ >= s_.size(); }
    char peek() const { return at_end() ? '\0' : s_[pos_]; }
    void skip_blank() {
        while (!at_end() && (s_[pos_] == ' ' || s_[pos_] == '\t'))
            ++pos_;
    }
    // Blanks, comments and line breaks (inside arrays).
    void skip_space() {
        while (!at_end()) {
            char c = s_[pos_];
            if (c == ' ' || c == '\t') {
                ++pos_;
            } else if (c == '#') {
                comment();
            } else if (c == '\n') {
                ++pos_;
                ++line_;
            } else if (c == '\r' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '\n') {
                pos_ += 2;
                ++line_;
            } else {
                break;
            }
        }
    }
    void comment() {
        while (!at_end() && s_[pos_] != '\n') {
            unsigned char c = static_cast<unsigned char>(s_[pos_]);
            if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f)
                fail("control character in a comment");
            if (c == '\r' && !(pos_ + 1 < s_.size() && s_[pos_ + 1] == '\n'))
                fail("control character in a comment");
            ++pos_;
        }
    }
    // Blanks, an optional comment, then a line break or the end.
    void end_of_line() {
        skip_blank();
        if (peek() == '#') comment();
        if (at_end()) return;
        if (s_[pos_] == '\n') {
            ++pos_;
            ++line_;
            return;
        }
        if (s_[pos_] == '\r' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '\n') {
            pos_ += 2;
            ++line_;
            return;
        }
        fail("unexpected '" + printable(s_.substr(pos_, 1)) + "' after the value");
    }

    static bool bare_key_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '-';
    }
    std::string key() {
        skip_blank();
        if (peek() == '"') return basic_string();
        if (peek() == '\'') return literal_string();
        size_t start = pos_;
        while (!at_end() && bare_key_char(s_[pos_]))
            ++pos_;
        if (pos_ == start) fail("expected a key");
        return std::string(s_.substr(start, pos_ - start));
    }
    std::vector<std::string> dotted_key() {
        std::vector<std::string> parts{key()};
        skip_blank();
        while (peek() == '.') {
            ++pos_;
            parts.push_back(key());
            skip_blank();
        }
        return parts;
    }

    TomlValue* header(TomlValue& root) {
        ++pos_;
        bool array = false;
        if (peek() == '[') {
            array = true;
            ++pos_;
        }
        auto parts = dotted_key();
        if (peek() != ']') fail("expected ']' to close the table header");
        ++pos_;
        if (array) {
            if (peek() != ']') fail("expected ']]' to close the array-of-tables header");
            ++pos_;
        }
        TomlValue* t = &root;
        for (size_t i = 0; i + 1 < parts.size(); ++i)
            t = descend(*t, parts[i]);
        TomlValue* last = t->find(parts.back());
        if (array) {
            if (!last) {
                t->keys.push_back(parts.back());
                TomlValue ta;
                ta.type = TomlValue::Type::TableArray;
                ta.line = line_;
                t->values.push_back(std::move(ta));
                last = &t->values.back();
            } else if (last->type != TomlValue::Type::TableArray) {
                fail("'" + printable(parts.back()) + "' is already " + type_name(last->type));
            }
            TomlValue table;
            table.defined = true;
            table.line = line_;
            last->items.push_back(std::move(table));
            return &last->items.back();
        }
        if (!last) {
            t->keys.push_back(parts.back());
            TomlValue table;
            table.line = line_;
            t->values.push_back(std::move(table));
            last = &t->values.back();
        } else if (last->type != TomlValue::Type::Table || last->defined) {
            fail("table [" + printable(parts.back()) + "] is defined twice");
        }
        last->defined = true;
        return last;
    }
    // The table `key` names inside `t` (created implicitly; the last of an array of tables).
    TomlValue* descend(TomlValue& t, const std::string& k) {
        TomlValue* v = t.find(k);
        if (!v) {
            t.keys.push_back(k);
            TomlValue table;
            table.line = line_;
            t.values.push_back(std::move(table));
            return &t.values.back();
        }
        if (v->type == TomlValue::Type::TableArray) return &v->items.back();
        if (v->type != TomlValue::Type::Table) fail("'" + printable(k) + "' is not a table");
        return v;
    }

    void key_value(TomlValue& table) {
        auto parts = dotted_key();
        if (parts.size() != 1) fail("dotted keys are not used in cvm.lock");
        if (peek() != '=') fail("expected '=' after '" + printable(parts[0]) + "'");
        ++pos_;
        skip_blank();
        if (table.find(parts[0])) fail("'" + printable(parts[0]) + "' is given twice");
        TomlValue v = value();
        table.keys.push_back(parts[0]);
        table.values.push_back(std::move(v));
    }

    TomlValue value() {
        TomlValue v;
        v.line = line_;
        char c = peek();
        if (c == '"') {
            v.type = TomlValue::Type::String;
            v.str = basic_string();
        } else if (c == '\'') {
            v.type = TomlValue::Type::String;
            v.str = literal_string();
        } else if (c == '[') {
            v.type = TomlValue::Type::Array;
            ++pos_;
            while (true) {
                skip_space();
                if (peek() == ']') {
                    ++pos_;
                    break;
                }
                v.items.push_back(value());
                skip_space();
                if (peek() == ',') {
                    ++pos_;
                    continue;
                }
                if (peek() != ']') fail("expected ',' or ']' in an array");
                ++pos_;
                break;
            }
        } else if (s_.substr(pos_, 4) == "true" &&
                   !bare_key_char(s_.size() > pos_ + 4 ? s_[pos_ + 4] : ' ')) {
            v.type = TomlValue::Type::Boolean;
            v.boolean = true;
            pos_ += 4;
        } else if (s_.substr(pos_, 5) == "false" &&
                   !bare_key_char(s_.size() > pos_ + 5 ? s_[pos_ + 5] : ' ')) {
            v.type = TomlValue::Type::Boolean;
            pos_ += 5;
        } else if (c == '+' || c == '-' || (c >= '0' && c <= '9')) {
            v.type = TomlValue::Type::Integer;
            v.integer = integer();
        } else if (c == '{') {
            fail("inline tables are not used in cvm.lock");
        } else {
            fail("expected a value");
        }
        return v;
    }

    long long integer() {
        bool negative = false;
        if (peek() == '+' || peek() == '-') negative = s_[pos_++] == '-';
        size_t start = pos_;
        unsigned long long n = 0;
        bool last_digit = false;
        while (!at_end()) {
            char c = s_[pos_];
            if (c >= '0' && c <= '9') {
                if (n > 100000000000000000ULL) fail("integer too large");
                n = n * 10 + static_cast<unsigned>(c - '0');
                last_digit = true;
            } else if (c == '_' && last_digit) {
                last_digit = false;
            } else {
                break;
            }
            ++pos_;
        }
        if (pos_ == start || !last_digit) fail("malformed integer");
        if (pos_ - start > 1 && s_[start] == '0') fail("integers have no leading zeros");
        if (peek() == '.' || peek() == 'e' || peek() == 'E' || peek() == ':' || peek() == '-')
            fail("floats and dates are not used in cvm.lock");
        long long value = static_cast<long long>(n);
        return negative ? -value : value;
    }

    static void append_utf8(std::string& out, unsigned long cp) {
        if (cp < 0x80) {
            out.push_back(static_cast<char>(cp));
        } else if (cp < 0x800) {
            out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        } else if (cp < 0x10000) {
            out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        } else {
            out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        }
    }

    void check_string_char(unsigned char c) {
        if (c == '\n' || c == '\r') fail("string not closed on its line");
        if ((c < 0x20 && c != '\t') || c == 0x7f) fail("control character in a string");
    }

    std::string basic_string() {
        if (s_.substr(pos_, 3) == "\"\"\"") fail("multi-line strings are not used in cvm.lock");
        ++pos_;
        std::string out;
        while (true) {
            if (at_end()) fail("string not closed");
            unsigned char c = static_cast<unsigned char>(s_[pos_++]);
            if (c == '"') return out;
            if (c != '\\') {
                check_string_char(c);
                out.push_back(static_cast<char>(c));
                continue;
            }
            if (at_end()) fail("string not closed");
            char e = s_[pos_++];
            switch (e) {
            case 'b':
                out.push_back('\b');
                break;
            case 't':
                out.push_back('\t');
                break;
            case 'n':
                out.push_back('\n');
                break;
            case 'f':
                out.push_back('\f');
                break;
            case 'r':
                out.push_back('\r');
                break;
            case '"':
                out.push_back('"');
                break;
            case '\\':
                out.push_back('\\');
                break;
            case 'u':
            case 'U': {
                size_t digits = e == 'u' ? 4 : 8;
                if (pos_ + digits > s_.size()) fail("short \\" + std::string(1, e) + " escape");
                unsigned long cp = 0;
                for (size_t i = 0; i < digits; ++i) {
                    char h = s_[pos_++];
                    int d = h >= '0' && h <= '9'   ? h - '0'
                            : h >= 'a' && h <= 'f' ? h - 'a' + 10
                            : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                                   : -1;
                    if (d < 0) fail("bad hex digit in a \\" + std::string(1, e) + " escape");
                    cp = cp * 16 + static_cast<unsigned long>(d);
                }
                if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
                    fail("escape names no Unicode character");
                append_utf8(out, cp);
                break;
            }
            default:
                fail("unknown escape \\" + printable(std::string(1, e)));
            }
        }
    }

    std::string literal_string() {
        if (s_.substr(pos_, 3) == "'''") fail("multi-line strings are not used in cvm.lock");
        ++pos_;
        std::string out;
        while (true) {
            if (at_end()) fail("string not closed");
            unsigned char c = static_cast<unsigned char>(s_[pos_++]);
            if (c == '\'') return out;
            check_string_char(c);
            out.push_back(static_cast<char>(c));
        }
    }
};

// ---- TOML writing ----

std::string toml_string(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        switch (c) {
        case '\\':
            out += "\\\\";
            break;
        case '"':
            out += "\\\"";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\t':
            out += "\\t";
            break;
        case '\r':
            out += "\\r";
            break;
        default:
            if (c < 0x20 || c == 0x7f) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned>(c));
                out += buf;
            } else {
                out.push_back(static_cast<char>(c));
            }
        }
    }
    return out + "\"";
}

bool is_sha256(const std::string& s) {
    return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

// ---- mapping the TOML tree to a Lockfile ----

class LockReader {
public:
    explicit LockReader(std::string origin) : origin_(std::move(origin)) {}

    [[noreturn]] void fail(const TomlValue& at, const std::string& why) const {
        throw LockfileError(origin_ + ":" + std::to_string(at.line) + ": " + why +
                            "; run `cvm lock` to write it again");
    }
    const TomlValue* get(const TomlValue& table, const std::string& key, TomlValue::Type type,
                         bool required, const std::string& where) const {
        const TomlValue* v = table.find(key);
        if (!v) {
            if (required) fail(table, where + " has no '" + key + "'");
            return nullptr;
        }
        if (v->type != type)
            fail(*v,
                 where + " " + key + " is " + type_name(v->type) + ", expected " + type_name(type));
        return v;
    }
    std::string string_of(const TomlValue& table, const std::string& key, bool required,
                          const std::string& where) const {
        const TomlValue* v = get(table, key, TomlValue::Type::String, required, where);
        return v ? v->str : std::string();
    }

    LockedToolchain toolchain(const TomlValue& t, Kind kind) const {
        std::string where = std::string("[") + kind_dir(kind) + "]";
        LockedToolchain tc;
        tc.kind = kind;
        tc.id = string_of(t, "id", true, where);
        const TomlValue* idv = t.find("id");
        if (kind == Kind::Cuda ? !parse_toolkit_id(tc.id) : !parse_cudnn_id(tc.id))
            fail(*idv, where + " id '" + printable(tc.id) + "' is not a " +
                           (kind == Kind::Cuda ? "toolkit id like 11.2.2"
                                               : "cuDNN build id like 8.1.0.77-cuda11.2"));
        std::string source = string_of(t, "source", true, where);
        if (source != "installed" && source != "imported")
            fail(*t.find("source"), where + " source must be \"installed\" or \"imported\"");
        tc.imported = source == "imported";
        tc.platform = string_of(t, "platform", false, where);
        if (const TomlValue* c = get(t, "components", TomlValue::Type::Array, false, where)) {
            for (const auto& item : c->items) {
                if (item.type != TomlValue::Type::String || item.str.empty())
                    fail(item, where + " components must be names");
                tc.components.push_back(item.str);
            }
        }
        if (const TomlValue* a = get(t, "archive", TomlValue::Type::TableArray, false, where)) {
            for (const auto& at : a->items) {
                std::string w = std::string("[[") + kind_dir(kind) + ".archive]]";
                LockedArchive la;
                la.name = string_of(at, "name", true, w);
                la.url = string_of(at, "url", false, w);
                la.sha256 = string_of(at, "sha256", true, w);
                if (!is_sha256(la.sha256))
                    fail(*at.find("sha256"), w + " sha256 of " + printable(la.name) +
                                                 " is not 64 lower-case hex digits");
                tc.archives.push_back(std::move(la));
            }
        }
        if (tc.imported && !tc.archives.empty()) fail(t, where + " is imported but lists archives");
        return tc;
    }

    Lockfile lock(const TomlValue& root) const {
        Lockfile lock;
        const TomlValue* version =
            get(root, "lock_version", TomlValue::Type::Integer, true, "cvm.lock");
        if (version->integer > kLockVersion)
            throw LockfileError(origin_ + ":" + std::to_string(version->line) + ": lock_version " +
                                std::to_string(version->integer) +
                                " was written by a newer cvm; upgrade cvm to read it");
        if (version->integer < 1) fail(*version, "lock_version must be 1");
        lock.lock_version = static_cast<int>(version->integer);
        lock.spec = string_of(root, "spec", false, "cvm.lock");
        const TomlValue* cuda = get(root, "cuda", TomlValue::Type::Table, true, "cvm.lock");
        lock.cuda = toolchain(*cuda, Kind::Cuda);
        if (const TomlValue* dnn = get(root, "cudnn", TomlValue::Type::Table, false, "cvm.lock")) {
            lock.cudnn = toolchain(*dnn, Kind::Cudnn);
            auto id = parse_cudnn_id(lock.cudnn->id);
            if (!id->serves(*parse_toolkit_id(lock.cuda.id)))
                fail(*dnn, "cuDNN " + lock.cudnn->id + " is not built for CUDA " + lock.cuda.id);
        }
        if (const TomlValue* active = root.find("active")) {
            if (active->type != TomlValue::Type::String || active->str != lock.active())
                fail(*active,
                     "active does not match the [cuda] and [cudnn] ids (" + lock.active() + ")");
        }
        return lock;
    }

private:
    std::string origin_;
};

void write_toolchain(std::ostream& out, const LockedToolchain& tc) {
    const char* kind = kind_dir(tc.kind);
    out << "\n[" << kind << "]\n";
    out << "id = " << toml_string(tc.id) << "\n";
    out << "source = " << toml_string(tc.imported ? "imported" : "installed") << "\n";
    if (!tc.platform.empty()) out << "platform = " << toml_string(tc.platform) << "\n";
    if (!tc.components.empty()) {
        out << "components = [";
        for (size_t i = 0; i < tc.components.size(); ++i)
            out << (i ? ", " : "") << toml_string(tc.components[i]);
        out << "]\n";
    }
    if (tc.imported) {
        out << "# imported from a folder: no archive is known, so `cvm install --locked` cannot\n"
               "# fetch it; import the same "
            << (tc.kind == Kind::Cuda ? "toolkit" : "cuDNN build") << " on each machine\n";
        return;
    }
    if (tc.archives.empty())
        out << "# installed without a recorded archive: `cvm install --locked` cannot fetch it\n";
    for (const auto& a : tc.archives) {
        out << "\n[[" << kind << ".archive]]\n";
        out << "name = " << toml_string(a.name) << "\n";
        if (!a.url.empty()) out << "url = " << toml_string(a.url) << "\n";
        out << "sha256 = " << toml_string(a.sha256) << "\n";
    }
}

std::string joined(const std::vector<std::string>& v) {
    if (v.empty()) return "(none)";
    std::string s;
    for (const auto& x : v)
        s += (s.empty() ? "" : ",") + x;
    return s;
}

} // namespace

bool LockedToolchain::reproducible() const {
    if (imported || archives.empty()) return false;
    return std::all_of(archives.begin(), archives.end(),
                       [](const LockedArchive& a) { return !a.url.empty(); });
}

std::string Lockfile::active() const {
    return cudnn ? cuda.id + "+" + cudnn->id : cuda.id;
}

LockedToolchain locked_toolchain_of(const Entry& e) {
    LockedToolchain tc;
    tc.kind = e.kind;
    tc.id = e.id;
    tc.imported = e.imported;
    tc.platform = e.platform;
    tc.components = e.components;
    std::sort(tc.components.begin(), tc.components.end());
    tc.components.erase(std::unique(tc.components.begin(), tc.components.end()),
                        tc.components.end());
    for (const auto& a : e.archives)
        tc.archives.push_back({a.name, a.url, a.sha256});
    std::sort(tc.archives.begin(), tc.archives.end(),
              [](const LockedArchive& a, const LockedArchive& b) {
                  return a.name != b.name ? a.name < b.name : a.sha256 < b.sha256;
              });
    return tc;
}

Lockfile lockfile_of(const Resolved& r, const std::string& spec) {
    Lockfile lock;
    lock.spec = spec;
    lock.cuda = locked_toolchain_of(r.toolkit);
    if (r.cudnn) lock.cudnn = locked_toolchain_of(*r.cudnn);
    return lock;
}

std::string format_lockfile(const Lockfile& lock) {
    std::ostringstream out;
    out << "# cvm.lock: this project's exact CUDA toolchain, written by `cvm lock`.\n"
           "# `cvm install --locked` installs exactly this, checking every SHA-256, and refuses\n"
           "# any difference. Commit it beside .cudaversion.\n";
    out << "lock_version = " << lock.lock_version << "\n";
    if (!lock.spec.empty()) out << "spec = " << toml_string(lock.spec) << "\n";
    out << "active = " << toml_string(lock.active()) << "\n";
    write_toolchain(out, lock.cuda);
    if (lock.cudnn) write_toolchain(out, *lock.cudnn);
    return out.str();
}

Lockfile parse_lockfile(std::string_view text, const std::string& origin) {
    TomlValue root = TomlReader(text, origin).parse();
    return LockReader(origin).lock(root);
}

Lockfile read_lockfile(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in)
        throw LockfileError("cannot read " + file.u8string() +
                            "; run `cvm lock` in the project to write it");
    std::ostringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    if (text.size() > (1u << 20))
        throw LockfileError(file.u8string() + " is larger than 1 MiB; it is not a cvm.lock");
    return parse_lockfile(text, file.u8string());
}

void write_lockfile(const fs::path& file, const Lockfile& lock) {
    fs::path tmp = file.parent_path() / fs::u8path("." + file.filename().u8string() + ".tmp" +
                                                   std::to_string(platform::process_id()));
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << format_lockfile(lock);
        if (!out.flush())
            throw std::runtime_error("cannot write " + tmp.u8string() +
                                     "; check that the folder is writable");
    }
    std::error_code ec;
    fs::rename(tmp, file, ec);
    if (ec) {
        fs::remove(tmp, ec);
        throw std::runtime_error("cannot write " + file.u8string() + ": " + ec.message());
    }
}

fs::path lockfile_path_for(const fs::path& version_file) {
    return version_file.parent_path() / kLockFileName;
}

std::optional<fs::path> find_lockfile(const fs::path& cwd) {
    auto project = find_project_file(cwd);
    if (!project) return std::nullopt;
    return lockfile_path_for(*project);
}

std::vector<std::string> lock_differences(const LockedToolchain& locked, const Entry& installed) {
    std::vector<std::string> out;
    LockedToolchain here = locked_toolchain_of(installed);
    std::string what = std::string(kind_dir(locked.kind)) + " " + locked.id;
    if (here.kind != locked.kind || here.id != locked.id)
        out.push_back(what + ": locked, but " + kind_dir(here.kind) + " " + here.id + " is here");
    if (!locked.platform.empty() && !here.platform.empty() && locked.platform != here.platform)
        out.push_back(what + ": locked for " + locked.platform + ", here for " + here.platform);
    if (locked.imported) return out; // nothing else is known about a locked import
    if (here.imported) {
        out.push_back(what + ": locked as installed from archives, here imported from " +
                      installed.path.u8string() +
                      " (its files cannot be checked against the "
                      "locked SHA-256 sums)");
        return out;
    }
    std::vector<std::string> lc = locked.components;
    std::sort(lc.begin(), lc.end());
    lc.erase(std::unique(lc.begin(), lc.end()), lc.end());
    if (lc != here.components)
        out.push_back(what + ": components locked " + joined(lc) + ", here " +
                      joined(here.components));
    for (const auto& a : locked.archives) {
        auto it = std::find_if(here.archives.begin(), here.archives.end(),
                               [&](const LockedArchive& h) { return h.name == a.name; });
        if (it == here.archives.end())
            out.push_back(what + ": archive " + a.name + " is locked but not installed here");
        else if (it->sha256 != a.sha256)
            out.push_back(what + ": archive " + a.name + " locked with sha256 " + a.sha256 +
                          ", installed here from sha256 " + it->sha256);
    }
    for (const auto& h : here.archives) {
        bool locked_too = std::any_of(locked.archives.begin(), locked.archives.end(),
                                      [&](const LockedArchive& a) { return a.name == h.name; });
        if (!locked_too)
            out.push_back(what + ": archive " + h.name + " is installed here but not locked");
    }
    return out;
}

std::string mirrored_url(const std::string& url, const std::optional<std::string>& mirror) {
    if (!mirror || mirror->empty()) return url;
    // <base>/<product>/redist/<relative path>: the shape of NVIDIA's site and of every mirror.
    size_t at = std::string::npos;
    for (const char* product : {"/cuda/redist/", "/cudnn/redist/"}) {
        size_t p = url.find(product);
        if (p != std::string::npos && p < at) at = p;
    }
    if (at == std::string::npos || url.find("://") == std::string::npos) return url;
    std::string base = *mirror;
    while (!base.empty() && base.back() == '/')
        base.pop_back();
    return base + url.substr(at);
}

} // namespace cvm
