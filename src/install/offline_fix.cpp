#include "install/offline_fix.h"

#include <algorithm>

#include "text/affixes.h"

namespace cvm::install {

namespace {

std::string offline_last_part(const std::string& url) {
    auto slash = url.find_last_of('/');
    return slash == std::string::npos ? url : url.substr(slash + 1);
}

} // namespace

std::string offline_fix(const std::string& url) {
    const std::string name = offline_last_part(url);
    if (starts_with(name, "redistrib_") && ends_with(name, ".json"))
        return "; or download " + url + " elsewhere, then the cuDNN archive it lists for this machine, and run "
               "`cvm install ./ARCHIVE`";
    for (const char* ext : {".tar.xz", ".txz", ".tar.gz", ".tgz", ".zip", ".whl", ".run", ".exe", ".deb"})
        if (ends_with(name, ext))
            return "; or download " + url + " elsewhere and run `cvm install ./" + name + "`";
    return "; or download " + url + " elsewhere into a folder DIR laid out as the server, and set "
           "CVM_MIRROR=file://DIR";
}

std::string offline_fix_toolkit(const std::string& mirror, const std::string& manifest_url,
                                const std::vector<std::string>& archives, const std::string& id,
                                const std::string& host) {
    std::vector<std::string> files = {manifest_url};
    for (const auto& a : archives)
        if (std::find(files.begin(), files.end(), a) == files.end()) files.push_back(a);
    std::string list;
    for (const auto& f : files)
        list += (list.empty() ? "" : ", ") + f;
    const std::string what =
        archives.empty() ? manifest_url + " and the archives it lists for " + host
                         : std::to_string(files.size()) + " files (" + list + ")";
    return "; or download " + what + " elsewhere into a folder DIR, each where it lies under " + mirror +
           ", and run `CVM_MIRROR=file://DIR cvm install cuda " + id + "`";
}

} // namespace cvm::install
