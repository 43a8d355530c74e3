#include <catch2/catch.hpp>

#include "config/url_credentials.h"

using namespace cvm;

TEST_CASE("credentials are split off an URL's authority") {
    auto c = split_url_credentials("https://me:s%40cret@Mirror.example:8443/compute/x?y@z");
    CHECK(c.present);
    CHECK(c.url == "https://Mirror.example:8443/compute/x?y@z");
    CHECK(c.user == "me");
    CHECK(c.password == "s@cret");
    CHECK(c.origin == "https://mirror.example:8443");
    auto user_only = split_url_credentials("http://token@127.0.0.1/a");
    CHECK(user_only.present);
    CHECK(user_only.user == "token");
    CHECK(user_only.password.empty());
    CHECK(user_only.url == "http://127.0.0.1/a");
    CHECK(user_only.origin == "http://127.0.0.1:80");
}

TEST_CASE("URLs without credentials, and other text, come back as they are") {
    for (const char* s :
         {"https://host/a@b", "file:///srv/mirror", "/local/x.tgz", "", "host:80/x", "https://"}) {
        auto c = split_url_credentials(s);
        CHECK_FALSE(c.present);
        CHECK(c.url == s);
        CHECK(without_url_credentials(s) == s);
    }
    CHECK(url_origin("https://[::1]/x") == "https://[::1]:443");
    CHECK(url_origin("http://[::1]:8080/x") == "http://[::1]:8080");
    CHECK(url_origin("/path").empty());
}
