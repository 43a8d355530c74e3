#include "json_writer.h"

#include <cmath>
#include <cstdio>

namespace cvm::probe {
namespace {

// Length of the valid UTF-8 sequence starting at text[i], or 0 when it is not valid.
std::size_t utf8_length(const std::string& text, std::size_t i) {
    auto byte = [&](std::size_t at) { return static_cast<unsigned char>(text[at]); };
    unsigned char lead = byte(i);
    std::size_t length = lead < 0x80           ? 1
                         : (lead >> 5) == 0x6  ? 2
                         : (lead >> 4) == 0xE  ? 3
                         : (lead >> 3) == 0x1E ? 4
                                               : 0;
    if (length == 0 || i + length > text.size()) return 0;
    for (std::size_t j = 1; j < length; ++j)
        if ((byte(i + j) & 0xC0) != 0x80) return 0;
    if (length == 2 && lead < 0xC2) return 0; // overlong
    return length;
}

} // namespace

std::string json_quote(const std::string& text) {
    std::string out = "\"";
    for (std::size_t i = 0; i < text.size();) {
        unsigned char ch = static_cast<unsigned char>(text[i]);
        switch (ch) {
        case '"':
            out += "\\\"";
            ++i;
            continue;
        case '\\':
            out += "\\\\";
            ++i;
            continue;
        case '\n':
            out += "\\n";
            ++i;
            continue;
        case '\r':
            out += "\\r";
            ++i;
            continue;
        case '\t':
            out += "\\t";
            ++i;
            continue;
        default:
            break;
        }
        if (ch < 0x20) {
            char buffer[8];
            std::snprintf(buffer, sizeof buffer, "\\u%04x", ch);
            out += buffer;
            ++i;
            continue;
        }
        std::size_t length = utf8_length(text, i);
        if (length == 0) {
            out += "\xEF\xBF\xBD";
            ++i;
        } else {
            out.append(text, i, length);
            i += length;
        }
    }
    return out + "\"";
}

void JsonWriter::before_value() {
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (has_items_.empty()) return;
    if (has_items_.back()) out_ += ",";
    has_items_.back() = true;
    out_ += "\n" + std::string(has_items_.size() * 2, ' ');
}

void JsonWriter::open(char bracket) {
    before_value();
    out_ += bracket;
    has_items_.push_back(false);
}

void JsonWriter::close(char bracket) {
    bool had_items = !has_items_.empty() && has_items_.back();
    if (!has_items_.empty()) has_items_.pop_back();
    if (had_items) out_ += "\n" + std::string(has_items_.size() * 2, ' ');
    out_ += bracket;
}

JsonWriter& JsonWriter::begin_object() {
    open('{');
    return *this;
}
JsonWriter& JsonWriter::end_object() {
    close('}');
    return *this;
}
JsonWriter& JsonWriter::begin_array() {
    open('[');
    return *this;
}
JsonWriter& JsonWriter::end_array() {
    close(']');
    return *this;
}

JsonWriter& JsonWriter::key(const std::string& name) {
    before_value();
    out_ += json_quote(name) + ": ";
    after_key_ = true;
    return *this;
}

JsonWriter& JsonWriter::value(const std::string& text) {
    before_value();
    out_ += json_quote(text);
    return *this;
}
JsonWriter& JsonWriter::value(const char* text) {
    return value(std::string(text ? text : ""));
}

JsonWriter& JsonWriter::value(bool flag) {
    before_value();
    out_ += flag ? "true" : "false";
    return *this;
}

JsonWriter& JsonWriter::value(double number) {
    if (!std::isfinite(number)) return null();
    before_value();
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.6g", number);
    out_ += buffer;
    return *this;
}

JsonWriter& JsonWriter::value(std::int64_t number) {
    before_value();
    out_ += std::to_string(number);
    return *this;
}

JsonWriter& JsonWriter::null() {
    before_value();
    out_ += "null";
    return *this;
}

} // namespace cvm::probe
