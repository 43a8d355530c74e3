#pragma once
// User names and passwords in URLs (CVM_MIRROR=https://me:secret@mirror/...): they are handed to
// the server they belong to and never shown or stored (messages, entries, cvm.lock, the overlay).
#include <string>
#include <string_view>

namespace cvm {

struct UrlCredentials {
    std::string url;      // the URL without them ("https://mirror/..."), else the URL as given
    std::string origin;   // "https://mirror:443": scheme, host and port, lower case
    std::string user;     // percent-decoded
    std::string password; // percent-decoded
    bool present = false; // the URL held a user name or password
};

// Splits the `user[:password]@` part off an URL's authority. A text that is no URL (a local path,
// "file:///x") comes back as it is with present false.
UrlCredentials split_url_credentials(std::string_view url);

// The URL without its credentials (split_url_credentials(url).url).
std::string without_url_credentials(std::string_view url);

// "https://mirror:443" for any URL with an authority (no credentials, lower case, the scheme's
// port filled in); empty for others.
std::string url_origin(std::string_view url);

} // namespace cvm
