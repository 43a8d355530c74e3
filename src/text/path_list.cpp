#include "text/path_list.h"

namespace cvm {

std::vector<std::string> split_path_list(const std::string& list, platform::Os os) {
    std::vector<std::string> out;
    char sep = platform::path_list_separator(os);
    size_t start = 0;
    while (start <= list.size()) {
        size_t end = list.find(sep, start);
        if (end == std::string::npos) end = list.size();
        out.push_back(list.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

std::string join_path_list(const std::vector<std::string>& items, platform::Os os) {
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) {
        if (i) out.push_back(platform::path_list_separator(os));
        out += items[i];
    }
    return out;
}

} // namespace cvm
