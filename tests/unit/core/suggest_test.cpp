#include <catch2/catch.hpp>

#include "text/suggest.h"

using namespace cvm;

TEST_CASE("edit distance counts inserts, deletes, replacements and neighbour swaps, without case") {
    CHECK(edit_distance("", "") == 0);
    CHECK(edit_distance("use", "use") == 0);
    CHECK(edit_distance("", "list") == 4);
    CHECK(edit_distance("list", "") == 4);
    CHECK(edit_distance("usee", "use") == 1);
    CHECK(edit_distance("instal", "install") == 1);
    CHECK(edit_distance("lsit", "list") == 1);        // one swap, not two replacements
    CHECK(edit_distance("isntall", "install") == 1);
    CHECK(edit_distance("USE", "use") == 0);
    CHECK(edit_distance("Doctor", "doctor") == 0);
    CHECK(edit_distance("kitten", "sitting") == 3);
    CHECK(edit_distance("ca", "abc") == 3);           // optimal string alignment, not full Damerau
    CHECK(edit_distance("--globl", "--global") == 1);
}

TEST_CASE("closest_match suggests only what is close enough") {
    const std::vector<std::string> commands{"install", "import", "uninstall", "list", "ls", "use", "current",
                                            "which", "exec", "env", "rehash", "doctor", "rm"};
    CHECK(closest_match("usee", commands) == std::optional<std::string>("use"));
    CHECK(closest_match("lsit", commands) == std::optional<std::string>("list"));
    CHECK(closest_match("instal", commands) == std::optional<std::string>("install"));
    CHECK(closest_match("INSTALL", commands) == std::optional<std::string>("install"));
    CHECK(closest_match("dcotor", commands) == std::optional<std::string>("doctor"));
    CHECK(closest_match("uninstal", commands) == std::optional<std::string>("uninstall"));
    CHECK_FALSE(closest_match("nosuch", commands));
    CHECK_FALSE(closest_match("frobnicate", commands));
    CHECK_FALSE(closest_match("", commands));
    CHECK_FALSE(closest_match("x", commands)); // one edit from nothing useful: "rm" needs two
    CHECK_FALSE(closest_match("usee", {}));
    // A long word allows more edits, but never more than three.
    CHECK(closest_match("rehsashh", commands) == std::optional<std::string>("rehash"));
    CHECK_FALSE(closest_match("uninstallxxxx", commands));
    // Options: the dashes count as characters to edit but not toward the allowance.
    const std::vector<std::string> options{"--global", "-g", "--help", "-h"};
    CHECK(closest_match("--globl", options) == std::optional<std::string>("--global"));
    CHECK(closest_match("--GLOBAL", options) == std::optional<std::string>("--global"));
    CHECK_FALSE(closest_match("--json", options));
    // One-letter options: only a difference of case is a suggestion.
    const std::vector<std::string> top{"--help", "-h", "--version", "-V"};
    CHECK(closest_match("-v", top) == std::optional<std::string>("-V"));
    CHECK_FALSE(closest_match("-x", top));
    CHECK(closest_match("--verison", top) == std::optional<std::string>("--version"));
    // Ties go to the earlier candidate.
    CHECK(closest_match("ab", {"ax", "xb"}) == std::optional<std::string>("ax"));
}
