#include "config/url_credentials.h"

#include <cctype>

#include "text/ascii.h"

namespace cvm {

namespace {

std::string percent_decoded(std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        int hi = 0, lo = 0;
        if (s[i] == '%' && i + 2 < s.size() && (hi = hex_digit(s[i + 1])) >= 0 &&
            (lo = hex_digit(s[i + 2])) >= 0) {
            out.push_back(static_cast<char>(hi * 16 + lo));
            i += 2;
        } else {
            out.push_back(s[i]);
        }
    }
    return out;
}

struct Parts {
    std::string_view scheme, userinfo, hostport, rest;
    bool ok = false;
};

// scheme "://" [userinfo "@"] hostport rest
Parts parts_of(std::string_view url) {
    Parts p;
    std::size_t colon = url.find("://");
    if (colon == std::string_view::npos || colon == 0) return p;
    for (std::size_t i = 0; i < colon; ++i) {
        char c = url[i];
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.')
            return p;
    }
    p.scheme = url.substr(0, colon);
    std::string_view after = url.substr(colon + 3);
    std::size_t end = after.find_first_of("/?#");
    std::string_view authority = after.substr(0, end);
    p.rest = end == std::string_view::npos ? std::string_view() : after.substr(end);
    std::size_t at = authority.rfind('@');
    if (at != std::string_view::npos) {
        p.userinfo = authority.substr(0, at);
        p.hostport = authority.substr(at + 1);
    } else {
        p.hostport = authority;
    }
    p.ok = true;
    return p;
}

} // namespace

UrlCredentials split_url_credentials(std::string_view url) {
    UrlCredentials out;
    Parts p = parts_of(url);
    if (!p.ok || p.hostport.empty()) {
        out.url = std::string(url);
        return out;
    }
    out.origin = url_origin(url);
    if (p.userinfo.data() == nullptr) {
        out.url = std::string(url);
        return out;
    }
    out.present = true;
    std::size_t colon = p.userinfo.find(':');
    out.user = percent_decoded(p.userinfo.substr(0, colon));
    if (colon != std::string_view::npos)
        out.password = percent_decoded(p.userinfo.substr(colon + 1));
    out.url = std::string(p.scheme) + "://" + std::string(p.hostport) + std::string(p.rest);
    return out;
}

std::string without_url_credentials(std::string_view url) {
    return split_url_credentials(url).url;
}

std::string url_origin(std::string_view url) {
    Parts p = parts_of(url);
    if (!p.ok || p.hostport.empty()) return {};
    std::string scheme = ascii_lower(p.scheme);
    std::string hostport = ascii_lower(p.hostport);
    // A port is after the last ':' unless that is inside an IPv6 literal's brackets.
    std::size_t colon = hostport.rfind(':');
    bool has_port = colon != std::string::npos && hostport.find(']', colon) == std::string::npos;
    if (!has_port) {
        if (scheme == "https")
            hostport += ":443";
        else if (scheme == "http")
            hostport += ":80";
    }
    return scheme + "://" + hostport;
}

} // namespace cvm
