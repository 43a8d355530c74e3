// Folder listings and the release names in them (see index_listing.h).
#include "registry/index_listing.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace cvm::registry {

namespace {

char lower_char(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

// Position of `needle` (lower case) in `hay` from `from`, ignoring case; npos when absent.
std::size_t find_nocase(std::string_view hay, std::string_view needle, std::size_t from) {
    if (needle.size() > hay.size()) return std::string_view::npos;
    for (std::size_t i = from; i + needle.size() <= hay.size(); ++i) {
        std::size_t k = 0;
        while (k < needle.size() && lower_char(hay[i + k]) == needle[k]) ++k;
        if (k == needle.size()) return i;
    }
    return std::string_view::npos;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

// The value of the href attribute in the tag text `tag` (between "<a" and ">"); nullopt when none.
std::optional<std::string> href_of(std::string_view tag) {
    for (std::size_t at = find_nocase(tag, "href", 0); at != std::string_view::npos;
         at = find_nocase(tag, "href", at + 4)) {
        if (at > 0 && !is_space(tag[at - 1])) continue; // "data-href" and the like
        std::size_t i = at + 4;
        while (i < tag.size() && is_space(tag[i])) ++i;
        if (i >= tag.size() || tag[i] != '=') continue;
        ++i;
        while (i < tag.size() && is_space(tag[i])) ++i;
        if (i >= tag.size()) return std::nullopt;
        if (tag[i] == '"' || tag[i] == '\'') {
            char q = tag[i];
            std::size_t end = tag.find(q, i + 1);
            if (end == std::string_view::npos) return std::nullopt;
            return std::string(tag.substr(i + 1, end - i - 1));
        }
        std::size_t end = i;
        while (end < tag.size() && !is_space(tag[end])) ++end;
        return std::string(tag.substr(i, end - i));
    }
    return std::nullopt;
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    c = lower_char(c);
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

// Percent-decodes `s` and turns the HTML entity &amp; back into "&"; nullopt for a broken escape.
std::optional<std::string> decode(const std::string& s) {
    std::string amp;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s.compare(i, 5, "&amp;") == 0) {
            amp += '&';
            i += 4;
        } else {
            amp += s[i];
        }
    }
    std::string out;
    for (std::size_t i = 0; i < amp.size(); ++i) {
        if (amp[i] != '%') {
            out += amp[i];
            continue;
        }
        if (i + 2 >= amp.size()) return std::nullopt;
        int hi = hex_digit(amp[i + 1]), lo = hex_digit(amp[i + 2]);
        if (hi < 0 || lo < 0) return std::nullopt;
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
    }
    return out;
}

// The path part of a URL ("http://h:1/a/b/" -> "/a/b/"); the URL itself when it has no scheme.
std::string_view url_path(std::string_view url) {
    auto scheme = url.find("://");
    if (scheme == std::string_view::npos) return url;
    auto slash = url.find('/', scheme + 3);
    return slash == std::string_view::npos ? std::string_view("/") : url.substr(slash);
}

bool allowed_name(const std::string& name) {
    std::string_view n = name;
    if (!n.empty() && n.back() == '/') n.remove_suffix(1);
    if (n.empty() || n.size() > 200 || n.front() == '.') return false;
    return std::all_of(n.begin(), n.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '+' || c == '-';
    });
}

// The entry name a link's target gives inside `folder_url`; empty when it leads elsewhere.
std::string entry_name(const std::string& href, std::string_view folder_url) {
    if (href.find_first_of("?#") != std::string::npos) return {};
    auto decoded = decode(href);
    if (!decoded) return {};
    std::string rest = *decoded;
    if (rest.find("://") != std::string::npos) {
        if (rest.compare(0, folder_url.size(), folder_url) != 0) return {};
        rest.erase(0, folder_url.size());
    } else if (!rest.empty() && rest.front() == '/') {
        std::string_view path = url_path(folder_url);
        if (path.empty() || rest.compare(0, path.size(), path) != 0) return {};
        rest.erase(0, path.size());
    } else if (rest.rfind("./", 0) == 0) {
        rest.erase(0, 2);
    }
    auto slash = rest.find('/');
    if (slash != std::string::npos && slash + 1 != rest.size()) return {};
    return allowed_name(rest) ? rest : std::string();
}

// "2021-01" from the first date in `text`: 2021-01-26 (Apache) or 26-Jan-2021 (nginx).
std::string month_in(std::string_view text) {
    static const char* const months[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                         "jul", "aug", "sep", "oct", "nov", "dec"};
    auto digits = [&](std::size_t at, std::size_t n) {
        if (at + n > text.size()) return false;
        for (std::size_t k = 0; k < n; ++k)
            if (!std::isdigit(static_cast<unsigned char>(text[at + k]))) return false;
        return true;
    };
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (i > 0 && std::isdigit(static_cast<unsigned char>(text[i - 1]))) continue;
        if (digits(i, 4) && i + 7 < text.size() && text[i + 4] == '-' && digits(i + 5, 2) && text[i + 7] == '-') {
            int month = (text[i + 5] - '0') * 10 + (text[i + 6] - '0');
            if (month >= 1 && month <= 12) return std::string(text.substr(i, 7));
        }
        if (digits(i, 2) && i + 10 < text.size() && text[i + 2] == '-' && text[i + 6] == '-' && digits(i + 7, 4)) {
            std::string mon{lower_char(text[i + 3]), lower_char(text[i + 4]), lower_char(text[i + 5])};
            for (int m = 0; m < 12; ++m)
                if (mon == months[m]) {
                    char buf[3] = {static_cast<char>('0' + (m + 1) / 10), static_cast<char>('0' + (m + 1) % 10), 0};
                    return std::string(text.substr(i + 7, 4)) + "-" + buf;
                }
        }
    }
    return {};
}

// Version of 3 or 4 numbers with the first at most 99 and each at most 99999.
std::optional<Version> plausible_version(std::string_view text, std::size_t min_parts, std::size_t max_parts) {
    auto v = parse_version(text, min_parts, max_parts);
    if (!v || v->parts[0] > 99) return std::nullopt;
    for (unsigned p : v->parts)
        if (p > 99999) return std::nullopt;
    return v;
}

bool take_prefix(std::string_view& s, std::string_view prefix) {
    if (s.substr(0, prefix.size()) != prefix) return false;
    s.remove_prefix(prefix.size());
    return true;
}

bool take_suffix(std::string_view& s, std::string_view suffix) {
    if (s.size() < suffix.size() || s.substr(s.size() - suffix.size()) != suffix) return false;
    s.remove_suffix(suffix.size());
    return true;
}

} // namespace

std::vector<ListingEntry> listing_entries(std::string_view html, std::string_view folder_url, std::size_t limit) {
    std::vector<ListingEntry> out;
    std::set<std::string> seen;
    std::size_t pos = 0;
    while (out.size() < limit) {
        std::size_t a = find_nocase(html, "<a", pos);
        if (a == std::string_view::npos) break;
        pos = a + 2;
        if (pos >= html.size() || !is_space(html[pos])) continue; // <abbr>, <area>...
        std::size_t close = html.find('>', pos);
        if (close == std::string_view::npos) break;
        auto href = href_of(html.substr(pos, close - pos));
        pos = close + 1;
        if (!href) continue;
        std::string name = entry_name(*href, folder_url);
        if (name.empty() || !seen.insert(name).second) continue;
        // The date a listing prints after the link, before the next one.
        std::size_t next = find_nocase(html, "<a", pos);
        std::string_view after = html.substr(pos, std::min<std::size_t>(
                                                       (next == std::string_view::npos ? html.size() : next) - pos, 300));
        out.push_back({name, month_in(after)});
    }
    return out;
}

std::optional<Version> manifest_version(std::string_view name) {
    if (!take_prefix(name, "redistrib_") || !take_suffix(name, ".json")) return std::nullopt;
    return plausible_version(name, 3, 4);
}

std::optional<Version> legacy_folder_version(std::string_view name) {
    if (!take_prefix(name, "v") || !take_suffix(name, "/")) return std::nullopt;
    return plausible_version(name, 3, 3);
}

std::optional<LegacyArchive> legacy_archive(std::string_view name) {
    if (!take_prefix(name, "cudnn-")) return std::nullopt;
    LegacyArchive a;
    // The per-minor redist form: cudnn-linux-x86_64-8.3.1.22_cuda11.5-archive.tar.xz
    for (const char* os : {"linux-x86_64-", "windows-x86_64-"}) {
        std::string_view rest = name;
        if (!take_prefix(rest, os)) continue;
        if (!take_suffix(rest, os[0] == 'l' ? "-archive.tar.xz" : "-archive.zip")) return std::nullopt;
        auto cut = rest.find("_cuda");
        if (cut == std::string_view::npos) return std::nullopt;
        auto v = plausible_version(rest.substr(0, cut), 4, 4);
        auto c = plausible_version(rest.substr(cut + 5), 1, 2);
        if (!v || !c) return std::nullopt;
        a.cudnn = *v;
        a.cuda = *c;
        a.windows = os[0] == 'w';
        return a;
    }
    // The older form: cudnn-<cuda>-<os>-x64-v<version>.tgz|zip
    auto dash = name.find('-');
    if (dash == std::string_view::npos) return std::nullopt;
    auto cuda = parse_version(name.substr(0, dash), 2, 2);
    if (!cuda || cuda->parts[0] > 99) return std::nullopt;
    std::string_view rest = name.substr(dash + 1);
    if (take_prefix(rest, "linux-x64-v")) {
        if (!take_suffix(rest, ".tgz")) return std::nullopt;
    } else if (take_prefix(rest, "windows")) {
        while (!rest.empty() && std::isdigit(static_cast<unsigned char>(rest.front()))) rest.remove_prefix(1);
        if (!take_prefix(rest, "-x64-v") || !take_suffix(rest, ".zip")) return std::nullopt;
        a.windows = true;
    } else {
        return std::nullopt; // osx, ppc64le, aarch64...: no cvm host
    }
    auto v = plausible_version(rest, 4, 4);
    if (!v) return std::nullopt;
    a.cudnn = *v;
    a.cuda = *cuda;
    return a;
}

} // namespace cvm::registry
