#include "image/runtime_filter.h"

#include <array>

#include "text/affixes.h"

namespace cvm::image {

bool build_only(std::string_view rel) {
    // Folders left out wholly when they start the path: what a toolkit's compiler and tools are.
    static constexpr std::array<std::string_view, 3> top = {"bin", "nvvm", "samples"};
    // Folders left out wherever they are: headers, link-time stubs, samples.
    static constexpr std::array<std::string_view, 3> anywhere = {"include", "stubs", "samples"};
    static constexpr std::array<std::string_view, 5> suffixes = {".h", ".hpp", ".cuh", ".inl",
                                                                 ".a"};
    std::size_t start = 0;
    bool first = true;
    std::string_view previous;
    while (start <= rel.size()) {
        std::size_t end = rel.find('/', start);
        if (end == std::string_view::npos) end = rel.size();
        std::string_view part = rel.substr(start, end - start);
        if (first)
            for (auto t : top)
                if (part == t) return true;
        for (auto a : anywhere)
            if (part == a) return true;
        if (previous == "extras" && part == "demo_suite") return true;
        if (end == rel.size()) {
            for (auto s : suffixes)
                if (ends_with(part, s)) return true;
            break;
        }
        previous = part;
        first = false;
        start = end + 1;
    }
    return false;
}

} // namespace cvm::image
