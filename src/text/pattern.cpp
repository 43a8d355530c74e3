#include "text/pattern.h"

#include <regex>

namespace cvm {

struct Pattern::Compiled {
    std::regex re;
    // A match's groups as strings, and which of them took part.
    Match take(const std::match_results<std::string_view::const_iterator>& m) const {
        Match out;
        for (std::size_t i = 0; i < m.size(); ++i) {
            out.groups_.push_back(m[i].str());
            out.took_part_.push_back(m[i].matched);
        }
        return out;
    }
};

Pattern::Pattern(const std::string& ecmascript, bool ignore_case)
    : compiled_(std::make_unique<Compiled>()) {
    compiled_->re = std::regex(ecmascript, ignore_case
                                               ? std::regex::ECMAScript | std::regex::icase
                                               : std::regex::ECMAScript);
}

Pattern::~Pattern() = default;

std::optional<Match> Pattern::match(std::string_view text) const {
    std::match_results<std::string_view::const_iterator> m;
    if (!std::regex_match(text.begin(), text.end(), m, compiled_->re)) return std::nullopt;
    return compiled_->take(m);
}

std::optional<Match> Pattern::search(std::string_view text) const {
    std::match_results<std::string_view::const_iterator> m;
    if (!std::regex_search(text.begin(), text.end(), m, compiled_->re)) return std::nullopt;
    return compiled_->take(m);
}

std::vector<Match> Pattern::search_all(std::string_view text) const {
    std::vector<Match> all;
    using Iterator = std::regex_iterator<std::string_view::const_iterator>;
    for (Iterator it(text.begin(), text.end(), compiled_->re), end; it != end; ++it)
        all.push_back(compiled_->take(*it));
    return all;
}

} // namespace cvm
