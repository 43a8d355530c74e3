#include "shells/hook.h"

#include "text/ascii.h"
#include "text/path_list.h"

#include <algorithm>
#include <cstdio>

namespace cvm {

namespace {

// Fields are separated by ',' and records by ';': both, '%' and every byte outside printable
// ASCII are written as %XX, so the record is one line of plain text whatever the paths hold.
std::string escape(std::string_view v) {
    std::string out;
    for (char ch : v) {
        auto c = static_cast<unsigned char>(ch);
        if (c < 0x21 || c > 0x7e || c == '%' || c == ',' || c == ';') {
            char buf[4];
            std::snprintf(buf, sizeof buf, "%%%02X", c);
            out += buf;
        } else {
            out += ch;
        }
    }
    return out;
}

std::optional<std::string> unescape(std::string_view v) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) {
        if (v[i] != '%') {
            out += v[i];
            continue;
        }
        if (i + 2 >= v.size()) return std::nullopt;
        int hi = hex_digit(v[i + 1]), lo = hex_digit(v[i + 2]);
        if (hi < 0 || lo < 0) return std::nullopt;
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
    }
    return out;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> out;
    size_t start = 0;
    while (true) {
        size_t end = s.find(sep, start);
        if (end == std::string_view::npos) {
            out.push_back(s.substr(start));
            return out;
        }
        out.push_back(s.substr(start, end - start));
        start = end + 1;
    }
}

std::string optional_field(const std::optional<std::string>& v) {
    return v ? "1," + escape(*v) : std::string("0,");
}

std::vector<std::string> entries_of(const std::optional<std::string>& value, platform::Os os) {
    if (!value || value->empty()) return {};
    return split_path_list(*value, os);
}

} // namespace

std::string encode_hook_state(const HookState& state) {
    std::string out = "1;" + escape(state.active);
    for (const auto& v : state.vars) {
        out += ";";
        if (!v.list) {
            out += "S," + escape(v.name) + "," + optional_field(v.old_value) + "," +
                   optional_field(v.new_value);
            continue;
        }
        out += "L," + escape(v.name) + "," + (v.was_unset ? "1" : "0");
        for (const auto& a : v.added)
            out += ",a," + escape(a);
        for (const auto& [entry, anchor] : v.removed)
            out += ",r," + escape(entry) + "," + escape(anchor);
        if (v.old_text) out += ",o," + escape(*v.old_text);
        if (v.new_text) out += ",n," + escape(*v.new_text);
    }
    return out;
}

std::optional<HookState> decode_hook_state(std::string_view text) {
    auto records = split(text, ';');
    if (records.size() < 2 || records[0] != "1") return std::nullopt;
    HookState state;
    auto active = unescape(records[1]);
    if (!active) return std::nullopt;
    state.active = *active;
    for (size_t r = 2; r < records.size(); ++r) {
        auto f = split(records[r], ',');
        if (f.size() < 3) return std::nullopt;
        HookVar v;
        auto name = unescape(f[1]);
        if (!name || !is_variable_name(*name)) return std::nullopt;
        v.name = *name;
        if (f[0] == "S") {
            if (f.size() != 6) return std::nullopt;
            auto read = [&](size_t i, std::optional<std::string>& into) {
                if (f[i] == "0") return f[i + 1].empty();
                if (f[i] != "1") return false;
                auto u = unescape(f[i + 1]);
                if (!u) return false;
                into = *u;
                return true;
            };
            if (!read(2, v.old_value) || !read(4, v.new_value)) return std::nullopt;
        } else if (f[0] == "L") {
            v.list = true;
            if (f[2] != "0" && f[2] != "1") return std::nullopt;
            v.was_unset = f[2] == "1";
            for (size_t i = 3; i < f.size();) {
                if (f[i] == "a" && i + 1 < f.size()) {
                    auto e = unescape(f[i + 1]);
                    if (!e) return std::nullopt;
                    v.added.push_back(*e);
                    i += 2;
                } else if ((f[i] == "o" || f[i] == "n") && i + 1 < f.size()) {
                    auto t = unescape(f[i + 1]);
                    if (!t) return std::nullopt;
                    (f[i] == "o" ? v.old_text : v.new_text) = *t;
                    i += 2;
                } else if (f[i] == "r" && i + 2 < f.size()) {
                    auto e = unescape(f[i + 1]), anchor = unescape(f[i + 2]);
                    if (!e || !anchor) return std::nullopt;
                    v.removed.emplace_back(*e, *anchor);
                    i += 3;
                } else {
                    return std::nullopt;
                }
            }
        } else {
            return std::nullopt;
        }
        state.vars.push_back(std::move(v));
    }
    return state;
}

std::vector<EnvChange> undo_hook(const HookState& state, const EnvLookup& current,
                                 platform::Os os) {
    std::vector<EnvChange> out;
    for (const auto& v : state.vars) {
        auto now = current(v.name);
        if (!v.list) {
            if (now == v.new_value && now != v.old_value) out.push_back({v.name, v.old_value});
            continue;
        }
        if (v.new_text && now == v.new_text) { // untouched since: the old text as it was
            std::optional<std::string> value = v.was_unset ? std::nullopt : v.old_text;
            if (value != now) out.push_back({v.name, value});
            continue;
        }
        auto items = entries_of(now, os);
        for (const auto& a : v.added) {
            auto it = std::find(items.begin(), items.end(), a);
            if (it != items.end()) items.erase(it);
        }
        for (const auto& [entry, anchor] : v.removed) {
            if (std::find(items.begin(), items.end(), entry) != items.end()) continue;
            if (anchor.empty()) {
                items.insert(items.begin(), entry);
                continue;
            }
            auto it = std::find(items.begin(), items.end(), anchor);
            // The entry before it is gone too (the user took it out): put it last.
            items.insert(it == items.end() ? items.end() : it + 1, entry);
        }
        std::optional<std::string> value;
        if (!(items.empty() && v.was_unset)) value = join_path_list(items, os);
        if (value != now) out.push_back({v.name, value});
    }
    return out;
}

HookState record_hook(const std::string& active, const std::vector<EnvChange>& changes,
                      const EnvLookup& before, platform::Os os) {
    HookState state;
    state.active = active;
    for (const auto& c : changes) {
        HookVar v;
        v.name = c.name;
        auto old = before(c.name);
        if (!is_list_variable(c.name)) {
            v.old_value = old;
            v.new_value = c.value;
            state.vars.push_back(std::move(v));
            continue;
        }
        v.list = true;
        v.was_unset = !old.has_value();
        v.old_text = old;
        v.new_text = c.value;
        auto old_items = entries_of(old, os);
        auto new_items = entries_of(c.value, os);
        // A multiset difference: each old entry matches at most one new entry.
        std::vector<bool> kept(old_items.size(), false);
        for (const auto& n : new_items) {
            bool matched = false;
            for (size_t i = 0; i < old_items.size(); ++i) {
                if (!kept[i] && old_items[i] == n) {
                    kept[i] = matched = true;
                    break;
                }
            }
            if (!matched) v.added.push_back(n);
        }
        for (size_t i = 0; i < old_items.size(); ++i)
            if (!kept[i])
                v.removed.emplace_back(old_items[i], i ? old_items[i - 1] : std::string());
        state.vars.push_back(std::move(v));
    }
    return state;
}

} // namespace cvm
