#pragma once
// starts_with and ends_with (std::string and std::string_view have them only from C++20): exact,
// case-sensitive byte comparison; an empty prefix or suffix matches any text.
#include <string_view>

namespace cvm {

inline bool starts_with(std::string_view s, std::string_view prefix) {
    return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

inline bool ends_with(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

} // namespace cvm
