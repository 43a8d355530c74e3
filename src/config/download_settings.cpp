#include "config/download_settings.h"

#include <cmath>
#include <cstdlib>

#include "config/config_error.h"
#include "config/download_table.h"
#include "platform/platform.h"

namespace cvm {

namespace {

enum class Unit { Bytes, Count };

struct Key {
    const char* name;     // in [download]
    const char* variable; // CVM_*
    Unit unit;
    std::optional<std::uint64_t> DownloadSettings::*bytes;
    std::optional<long> DownloadSettings::*count;
};

const Key kKeys[] = {
    {"min_rate", "CVM_DOWNLOAD_MIN_RATE", Unit::Bytes, &DownloadSettings::min_rate, nullptr},
    {"rate_window", "CVM_DOWNLOAD_RATE_WINDOW", Unit::Count, nullptr,
     &DownloadSettings::rate_window},
    {"deadline", "CVM_DOWNLOAD_DEADLINE", Unit::Count, nullptr, &DownloadSettings::deadline},
    {"deadline_rate", "CVM_DOWNLOAD_DEADLINE_RATE", Unit::Bytes, &DownloadSettings::deadline_rate,
     nullptr},
    {"max_size", "CVM_DOWNLOAD_MAX_SIZE", Unit::Bytes, &DownloadSettings::max_size, nullptr},
    {"connect_timeout", "CVM_CONNECT_TIMEOUT", Unit::Count, nullptr,
     &DownloadSettings::connect_timeout},
    {"stall_timeout", "CVM_STALL_TIMEOUT", Unit::Count, nullptr, &DownloadSettings::stall_timeout},
    {"retries", "CVM_RETRIES", Unit::Count, nullptr, &DownloadSettings::retries},
};

std::string key_names() {
    std::string out;
    for (const Key& k : kKeys)
        out += (out.empty() ? "" : ", ") + std::string(k.name);
    return out;
}

std::optional<long> parse_count(const std::string& text) {
    if (text.empty() || text.size() > 9) return std::nullopt;
    for (char c : text)
        if (c < '0' || c > '9') return std::nullopt;
    return std::stol(text);
}

const char* expected(Unit unit) {
    return unit == Unit::Bytes ? "a number of bytes like 10240 or \"10k\" (k, M, G)"
                               : "a whole number of seconds like 30";
}

// Stores `text` (or `number`) into the field of `key`; false when it is not that kind of value.
bool store(DownloadSettings& s, const Key& key, const std::string& text) {
    if (key.unit == Unit::Bytes) {
        auto v = parse_byte_amount(text);
        if (!v) return false;
        s.*key.bytes = *v;
    } else {
        auto v = parse_count(text);
        if (!v) return false;
        s.*key.count = *v;
    }
    return true;
}

} // namespace

void DownloadSettings::fill_from(const DownloadSettings& other) {
    for (const Key& k : kKeys) {
        if (k.bytes && !(this->*k.bytes)) this->*k.bytes = other.*k.bytes;
        if (k.count && !(this->*k.count)) this->*k.count = other.*k.count;
    }
}

std::optional<std::uint64_t> parse_byte_amount(const std::string& text) {
    if (text.empty() || text.size() > 20) return std::nullopt;
    std::size_t digits = 0;
    bool dot = false;
    while (digits < text.size() &&
           ((text[digits] >= '0' && text[digits] <= '9') || (text[digits] == '.' && !dot))) {
        dot = dot || text[digits] == '.';
        ++digits;
    }
    if (digits == 0 || text[0] == '.') return std::nullopt;
    double scale = 1;
    std::string suffix = text.substr(digits);
    if (suffix == "k" || suffix == "K")
        scale = 1024.0;
    else if (suffix == "M")
        scale = 1024.0 * 1024;
    else if (suffix == "G")
        scale = 1024.0 * 1024 * 1024;
    else if (!suffix.empty())
        return std::nullopt;
    double value = std::strtod(text.substr(0, digits).c_str(), nullptr) * scale;
    if (!std::isfinite(value) || value > 1e18) return std::nullopt;
    return static_cast<std::uint64_t>(value);
}

DownloadSettings parse_download_table(const toml::node& node, const std::string& origin) {
    auto fail = [&](const toml::source_region& at, const std::string& why) {
        return ConfigError(origin + ":" + std::to_string(at.begin.line) + ": " + why);
    };
    const toml::table* table = node.as_table();
    if (!table)
        throw fail(node.source(), "download must be a table: write [download] on its own line, "
                                  "then its settings (min_rate = \"10k\")");
    DownloadSettings s;
    for (const auto& [name, value] : *table) {
        const Key* key = nullptr;
        for (const Key& k : kKeys)
            if (name.str() == k.name) key = &k;
        if (!key)
            throw fail(name.source(), "unknown setting 'download." + std::string(name.str()) +
                                          "'; the ones cvm knows are " + key_names());
        std::string text;
        if (const auto* i = value.as_integer())
            text = i->get() >= 0 ? std::to_string(i->get()) : "-";
        else if (const auto* str = value.as_string())
            text = str->get();
        if (!store(s, *key, text))
            throw fail(value.source(),
                       "download." + std::string(key->name) + " must be " + expected(key->unit));
    }
    return s;
}

DownloadSettings download_variables() {
    DownloadSettings s;
    for (const Key& k : kKeys) {
        auto v = platform::get_env(k.variable);
        if (!v || v->empty()) continue;
        if (!store(s, k, *v))
            throw ConfigError(std::string(k.variable) + "=\"" + *v + "\" is not " +
                              expected(k.unit) + "; fix or unset it");
    }
    return s;
}

} // namespace cvm
