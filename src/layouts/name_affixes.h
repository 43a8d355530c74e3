#pragma once
// starts_with and ends_with for file names (std::string has them only from C++20), for the
// toolkit layouts' files; no header outside src/layouts includes this one.
#include <string>

namespace cvm {

inline bool starts_with(const std::string& s, const std::string& prefix) {
    return s.rfind(prefix, 0) == 0;
}

inline bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

} // namespace cvm
