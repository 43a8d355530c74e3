// The credentials taken out of URLs (register_url_credentials, download.h), kept by origin for
// this process's requests (url_credentials_for, download_credentials.h). Without network nothing
// asks for them, and the URL comes back without them all the same (it is shown and recorded).
#include "install/download_credentials.h"
#include "install/download.h"

#include "config/url_credentials.h"

#include <map>
#include <mutex>

namespace cvm::install {

namespace {

// The credentials register_url_credentials took out of URLs, by origin ("https://host:443").
struct CredentialTable {
    std::mutex mutex;
    std::map<std::string, std::pair<std::string, std::string>> by_origin;
};

CredentialTable& credential_table() {
    static CredentialTable table;
    return table;
}

} // namespace

std::string register_url_credentials(const std::string& url) {
    UrlCredentials c = split_url_credentials(url);
    if (!c.present) return url;
    CredentialTable& table = credential_table();
    std::lock_guard<std::mutex> lock(table.mutex);
    table.by_origin[c.origin] = {c.user, c.password};
    return c.url;
}

std::optional<std::pair<std::string, std::string>> url_credentials_for(const std::string& url) {
    CredentialTable& table = credential_table();
    std::lock_guard<std::mutex> lock(table.mutex);
    auto it = table.by_origin.find(url_origin(url));
    if (it == table.by_origin.end()) return std::nullopt;
    return it->second;
}

} // namespace cvm::install
