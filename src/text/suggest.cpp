#include "text/suggest.h"

#include <algorithm>

namespace cvm {

namespace {
char fold(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
std::size_t letters(std::string_view word) { return word.size() - std::min(word.find_first_not_of('-'), word.size()); }
} // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
    // Three rows of the usual table: two back for the swap, one back, and the current one.
    const std::size_t n = b.size();
    std::vector<std::size_t> before(n + 1), previous(n + 1), current(n + 1);
    for (std::size_t j = 0; j <= n; ++j) previous[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        current[0] = i;
        for (std::size_t j = 1; j <= n; ++j) {
            const bool same = fold(a[i - 1]) == fold(b[j - 1]);
            std::size_t best = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (same ? 0 : 1)});
            if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) && fold(a[i - 2]) == fold(b[j - 1]))
                best = std::min(best, before[j - 2] + 1);
            current[j] = best;
        }
        std::swap(before, previous);
        std::swap(previous, current);
    }
    return previous[n];
}

std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates) {
    const std::size_t limit = std::clamp<std::size_t>(letters(word) / 3, 1, 3);
    std::optional<std::string> best;
    std::size_t best_distance = limit + 1;
    for (const std::string& c : candidates) {
        std::size_t d = edit_distance(word, c);
        // Replacing every letter of either word is no suggestion ("-x" is not "-h"; "-v" is "-V").
        if (d < best_distance && (d == 0 || (d < letters(word) && d < letters(c)))) {
            best = c;
            best_distance = d;
        }
    }
    return best;
}

} // namespace cvm
