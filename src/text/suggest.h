#pragma once
// "Did you mean": the closest of a few known words to one a person mistyped.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cvm {

// Edits (insert, delete, replace, swap of two neighbours) that turn `a` into `b`, ASCII letters
// compared without case (optimal string alignment distance).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word`, if close enough to be what was meant: at most a third of the
// word's length (leading dashes not counted), at least 1 and at most 3 edits, and fewer edits than
// either word has letters. Ties go to the earlier candidate.
std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates);

} // namespace cvm
