// Accounts by reading /etc/passwd and /etc/group directly. The shim is a static program, and a
// static glibc cannot use NSS (LDAP, sssd); these are only consulted to print an owner's name or
// to resolve trusted_owners, which also takes numeric ids for accounts that live elsewhere.
#include <string_view>

#include "platform/platform.h"

namespace cvm::platform {

namespace {

// Calls `row(fields)` for each line of a colon-separated account file until it returns true.
template <typename Row>
void each_row(const char* file, Row row) {
    auto text = read_file(std::string(file), std::size_t(16) << 20);
    if (!text) return;
    std::string_view rest(*text);
    while (!rest.empty()) {
        size_t nl = rest.find('\n');
        std::string_view line = rest.substr(0, nl);
        rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
        std::string_view f[4];
        size_t n = 0;
        while (n < 4) {
            size_t colon = line.find(':');
            f[n++] = line.substr(0, colon);
            if (colon == std::string_view::npos) break;
            line.remove_prefix(colon + 1);
        }
        if (n == 4 && row(f)) return;
    }
}

std::optional<std::uint32_t> number(std::string_view s) {
    if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string_view::npos)
        return std::nullopt;
    std::uint32_t v = 0;
    for (char c : s) v = v * 10 + static_cast<std::uint32_t>(c - '0');
    return v;
}

} // namespace

std::string user_name(std::uint32_t uid) {
    std::string name;
    each_row("/etc/passwd", [&](const std::string_view* f) {
        if (number(f[2]) != uid) return false;
        name = std::string(f[0]);
        return true;
    });
    return name;
}

std::optional<std::uint32_t> user_id(const std::string& name) {
    std::optional<std::uint32_t> id;
    each_row("/etc/passwd", [&](const std::string_view* f) {
        if (f[0] != name) return false;
        id = number(f[2]);
        return true;
    });
    return id;
}

bool is_private_group(std::uint32_t gid, std::uint32_t uid) {
    std::string user;
    bool shared = false;
    each_row("/etc/passwd", [&](const std::string_view* f) {
        if (number(f[3]) != gid) return false;
        if (number(f[2]) == uid) user = std::string(f[0]);
        else shared = true; // another account's primary group too
        return false;
    });
    if (user.empty() || shared) return false;
    bool named = false;
    each_row("/etc/group", [&](const std::string_view* f) {
        if (number(f[2]) != gid) return false;
        named = f[0] == user;
        for (std::string_view members = f[3]; !members.empty();) {
            size_t comma = members.find(',');
            std::string_view m = members.substr(0, comma);
            if (!m.empty() && m != user) shared = true;
            members.remove_prefix(comma == std::string_view::npos ? members.size() : comma + 1);
        }
        return true;
    });
    return named && !shared;
}

std::optional<std::uint32_t> sudo_uid() {
    if (effective_uid() != 0 || host_os() == Os::Windows) return std::nullopt;
    auto v = get_env("SUDO_UID");
    if (!v || v->empty() || v->size() > 9 || v->find_first_not_of("0123456789") != std::string::npos)
        return std::nullopt;
    return static_cast<std::uint32_t>(std::stoul(*v));
}

bool is_own_uid(std::uint32_t uid) {
    if (uid == 0 || uid == effective_uid()) return true;
    auto sudo = sudo_uid();
    return sudo && *sudo == uid;
}

} // namespace cvm::platform
