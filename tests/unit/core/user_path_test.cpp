#include <catch2/catch.hpp>

#include "platform/user_path.h"

using cvm::platform::user_path_with;

TEST_CASE("folders are appended to the user's PATH once, compared as Windows compares them") {
    CHECK(user_path_with("", {"C:\\cvm\\bin"}) == std::optional<std::string>("C:\\cvm\\bin"));
    CHECK(user_path_with("%USERPROFILE%\\bin", {"C:\\cvm\\bin", "C:\\s"}) ==
          std::optional<std::string>("%USERPROFILE%\\bin;C:\\cvm\\bin;C:\\s"));
    // Already there in another case or with a trailing backslash: nothing to do.
    CHECK_FALSE(user_path_with("c:\\CVM\\bin\\;D:\\x", {"C:\\cvm\\bin"}));
    // A trailing ';' is not doubled; one folder given twice is added once.
    CHECK(user_path_with("D:\\x;", {"C:\\a", "c:\\A\\"}) == std::optional<std::string>("D:\\x;C:\\a"));
    // A long PATH (beyond setx's 1024 characters) stays whole.
    std::string longer;
    for (int i = 0; i < 80; ++i) longer += (i ? ";" : "") + std::string("C:\\Tools\\number-") + std::to_string(i);
    auto out = user_path_with(longer, {"C:\\cvm\\bin"});
    REQUIRE(out);
    CHECK(*out == longer + ";C:\\cvm\\bin");
}
