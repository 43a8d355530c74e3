#pragma once
// A version the unit tests write as text ("12.4.1"), parsed as cvm parses one; a text that is no
// version fails the test.
#include <catch2/catch.hpp>

#include "spec/spec.h"

namespace cvm::test {

inline Version v(const char* text) {
    auto parsed = parse_version(text);
    REQUIRE(parsed);
    return *parsed;
}

} // namespace cvm::test
