#pragma once
// Regular expressions compiled in one file (pattern.cpp): <regex> costs seconds of compile time in
// every file that includes it, and cvm's few patterns (version strings, file names, #defines)
// need only a match's groups as strings.
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cvm {

// The groups of one match; group 0 is the whole match. A group that took no part is "" and not
// matched().
class Match {
public:
    const std::string& operator[](std::size_t i) const { return groups_.at(i); }
    bool matched(std::size_t i) const { return took_part_.at(i); }
    std::size_t size() const { return groups_.size(); }

private:
    friend class Pattern;
    std::vector<std::string> groups_;
    std::vector<bool> took_part_;
};

// An ECMAScript regular expression.
class Pattern {
public:
    explicit Pattern(const std::string& ecmascript, bool ignore_case = false);
    ~Pattern();
    Pattern(const Pattern&) = delete;
    Pattern& operator=(const Pattern&) = delete;

    // The whole of `text` matches.
    std::optional<Match> match(std::string_view text) const;
    // The first match anywhere in `text`.
    std::optional<Match> search(std::string_view text) const;
    // Every match in `text`, in order, none overlapping.
    std::vector<Match> search_all(std::string_view text) const;

private:
    struct Compiled;
    std::unique_ptr<Compiled> compiled_;
};

} // namespace cvm
