// libFuzzer target for the archive-name parser and the entry-path rules of the extractor:
// any byte string must give a result or a refusal, never a crash; a path the rules accept
// never climbs out of the install folder.
#include "install/archive_name.h"
#include "install/extract.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace cvm::install;
    std::string text(reinterpret_cast<const char*>(data), size);
    if (auto name = parse_archive_name(text)) {
        if (name->version.empty()) std::abort();
        (void)parse_archive_folder_name(name->product);
    }
    (void)normalize_project_name(text);
    std::string why;
    std::string path = normalize_entry_path(text, &why);
    if (!path.empty() && path != ".") {
        // Accepted paths are relative and have no ".." component.
        if (path.front() == '/' || path == ".." || path.rfind("../", 0) == 0 ||
            path.find("/../") != std::string::npos ||
            (path.size() >= 3 && path.compare(path.size() - 3, 3, "/..") == 0))
            std::abort();
    }
    // Split the input: first line is the link's path, the rest its target.
    auto nl = text.find('\n');
    if (nl != std::string::npos) {
        std::string link = normalize_entry_path(text.substr(0, nl), nullptr);
        if (!link.empty() && link != ".") {
            std::string resolved = resolve_link_target(link, text.substr(nl + 1), &why);
            if (!resolved.empty() &&
                (resolved == ".." || resolved.rfind("../", 0) == 0 || resolved.front() == '/' ||
                 resolved.find("/../") != std::string::npos))
                std::abort();
        }
    }
    return 0;
}
