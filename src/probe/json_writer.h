#pragma once
// A small streaming JSON writer (cvm-probe links nothing beyond the C++ standard library).

#include <cstdint>
#include <string>
#include <vector>

namespace cvm::probe {

class JsonWriter {
public:
    JsonWriter& begin_object();
    JsonWriter& end_object();
    JsonWriter& begin_array();
    JsonWriter& end_array();
    JsonWriter& key(const std::string& name);
    JsonWriter& value(const std::string& text);
    JsonWriter& value(const char* text);
    JsonWriter& value(bool flag);
    JsonWriter& value(double number); // NaN and infinities become null
    JsonWriter& value(std::int64_t number);
    JsonWriter& value(int number) { return value(static_cast<std::int64_t>(number)); }
    JsonWriter& null();

    // The document, pretty-printed with two-space indents and a final newline.
    std::string str() const { return out_ + "\n"; }

private:
    void before_value();
    void open(char bracket);
    void close(char bracket);

    std::string out_;
    std::vector<bool> has_items_; // one per open container
    bool after_key_ = false;
};

// `text` as a JSON string literal, quotes included; invalid UTF-8 bytes become U+FFFD.
std::string json_quote(const std::string& text);

} // namespace cvm::probe
