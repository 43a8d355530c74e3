// URLs as the downloads read them, through libcurl's parser (download_url.h), which may be
// fetched (url_allowed), file:// URLs as paths, and the credentials kept by origin.
#include "install/download.h"
#include "install/download_credentials.h"
#include "install/download_url.h"

#include <catch2/catch.hpp>

using namespace cvm::install;

TEST_CASE("download URLs: https, file, and plain http only to this machine", "[download_url]") {
    DownloadOptions o;
    std::string why;
    CHECK(url_allowed("https://mirror.example/cuda.tar.xz", o, &why));
    CHECK(url_allowed("HTTPS://mirror.example/x", o, &why)); // schemes are not case-sensitive
    CHECK(url_allowed("file:///srv/mirror/x", o, &why));
    for (const char* local : {"http://127.0.0.1:8000/x", "http://localhost/x", "http://[::1]:99/x"})
        CHECK(url_allowed(local, o, &why));

    why.clear();
    CHECK_FALSE(url_allowed("http://mirror.example/x", o, &why));
    CHECK(why == "plain http:// is only used for this machine (127.0.0.1, localhost, ::1); use "
                 "https://, or set CVM_ALLOW_HTTP=1 if you trust the network");
    // 127.0.0.2 reaches this machine too, but is none of the names plain http:// is allowed to.
    CHECK_FALSE(url_allowed("http://127.0.0.2/x", o, &why));

    CHECK_FALSE(url_allowed("ftp://mirror.example/x", o, &why));
    CHECK(why == "unsupported URL scheme \"ftp\" (use https://, or file://)");
    CHECK_FALSE(url_allowed("not a url", o, &why));
    CHECK(why == "\"not a url\" is not a URL");
    // The refusal never shows a password.
    CHECK_FALSE(url_allowed("https://me:secret@mirror example/x", o, &why));
    CHECK(why.find("secret") == std::string::npos);

    o.allow_insecure_http = true;
    CHECK(url_allowed("http://mirror.example/x", o, &why));
    CHECK(url_allowed("https://mirror.example/x", o, nullptr));
    CHECK_FALSE(url_allowed("gopher://mirror.example/x", o, nullptr));
}

TEST_CASE("download URLs: loopback hosts are this machine's names exactly", "[download_url]") {
    for (const char* host : {"127.0.0.1", "localhost", "::1", "[::1]"})
        CHECK(loopback_host(host));
    for (const char* host :
         {"", "127.0.0.2", "localhost.example", "LOCALHOST.", "example.com", "0.0.0.0"})
        CHECK_FALSE(loopback_host(host));
}

TEST_CASE("download URLs: libcurl's parts (default ports, decoded path)", "[download_url]") {
    auto parts = parse_url("https://mirror.example/a%20b/c.tar.xz?x=1");
    REQUIRE(parts);
    CHECK(parts->scheme == "https");
    CHECK(parts->host == "mirror.example");
    CHECK(parts->port == "443");
    CHECK(parts->path == "/a b/c.tar.xz");
    parts = parse_url("http://[::1]:8080/x");
    REQUIRE(parts);
    CHECK(parts->host == "[::1]");
    CHECK(parts->port == "8080");
    CHECK_FALSE(parse_url("not a url"));
    CHECK_FALSE(parse_url("https://mirror example/x")); // a space: refused, not cut short
}

TEST_CASE("download URLs: a file:// URL as a local path", "[download_url]") {
    CHECK(file_url_path("file:///tmp/x.tar.xz") == "/tmp/x.tar.xz");
    CHECK(file_url_path("file:///tmp/a%20b") == "/tmp/a b");
    CHECK(file_url_path("file://localhost/srv/x") == "/srv/x");
    CHECK(file_url_path("file:///srv/./a/../x") == "/srv/x");
    CHECK(file_url_path("file:///srv/x?query") == "/srv/x");
    // A drive letter keeps no slash before it, where libcurl reads one (on Windows; elsewhere
    // it refuses file:///C:/x).
    if (parse_url("file:///C:/cuda/x.zip"))
        CHECK(file_url_path("file:///C:/cuda/x.zip") == "C:/cuda/x.zip");
    else
        CHECK(file_url_path("file:///C:/cuda/x.zip").empty());
    CHECK(file_url_path("https://mirror.example/x").empty());
    CHECK(file_url_path("/tmp/x").empty());
    CHECK(file_url_path("file:///tmp/a b").empty());     // not a URL libcurl reads
    CHECK(file_url_path("file://other.host/x").empty()); // another machine's file
}

TEST_CASE("download URLs: credentials go to their own origin only", "[download_url]") {
    // The table is the process's: hosts of this test's own.
    CHECK(register_url_credentials("https://me:s%40cret@creds-a.example/cuda/") ==
          "https://creds-a.example/cuda/");
    auto cred = url_credentials_for("https://creds-a.example/cuda/x.tar.xz");
    REQUIRE(cred);
    CHECK(cred->first == "me");
    CHECK(cred->second == "s@cret");
    CHECK(url_credentials_for("HTTPS://CREDS-A.example:443/other")); // the same origin
    // Another host (where a redirect may lead), port or scheme gets none.
    CHECK_FALSE(url_credentials_for("https://creds-b.example/cuda/x.tar.xz"));
    CHECK_FALSE(url_credentials_for("https://creds-a.example:8443/cuda/x.tar.xz"));
    CHECK_FALSE(url_credentials_for("http://creds-a.example/cuda/x.tar.xz"));
    CHECK_FALSE(url_credentials_for("https://creds-a.example.evil/cuda/x.tar.xz"));
    // A URL without them comes back as it is, and keeps none.
    CHECK(register_url_credentials("https://creds-c.example/x") == "https://creds-c.example/x");
    CHECK_FALSE(url_credentials_for("https://creds-c.example/x"));
    CHECK(register_url_credentials("file:///tmp/x") == "file:///tmp/x");
    // A user name alone is kept, with an empty password.
    CHECK(register_url_credentials("https://token@creds-d.example/x") ==
          "https://creds-d.example/x");
    cred = url_credentials_for("https://creds-d.example/y");
    REQUIRE(cred);
    CHECK(cred->first == "token");
    CHECK(cred->second.empty());
}
