#pragma once
// The folder listings `cvm update` reads on NVIDIA's download site or a mirror: the HTML index
// pages web servers make of a folder (Apache's and nginx's autoindex, and the like), and what
// their names say (redistrib_13.4.1.json, v8.1.0/, cudnn-11.2-linux-x64-v8.1.0.77.tgz). Pure:
// text in, names out; the fetching is src/install/registry_update.cpp's.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spec/spec.h"

namespace cvm::registry {

struct ListingEntry {
    std::string name; // "redistrib_13.4.1.json", or "v8.1.0/" for a folder
    std::string month; // "2021-01" where the listing shows a date beside the link, else empty
};

// The files and folders directly inside the listed folder, in the order of the page, each once:
// the targets of its <a href="..."> links, percent-decoded. `folder_url` is the listing's own
// URL ending in "/"; a link to an absolute URL or path counts only when it names an entry of
// that folder. Links elsewhere (parent folders, other hosts, "?C=N;O=D" sort links, anchors),
// and names that are empty, over 200 characters or hold anything but letters, digits and
// ". _ + -" (a folder's one trailing "/" aside) are left out. At most `limit` entries.
std::vector<ListingEntry> listing_entries(std::string_view html, std::string_view folder_url,
                                          std::size_t limit = 10000);

// The version a manifest's name gives: redistrib_13.4.1.json -> 13.4.1 (3 or 4 numbers, the
// first at most 99, each at most 99999). nullopt for other names.
std::optional<Version> manifest_version(std::string_view name);

// The version of a legacy cuDNN folder: "v8.1.0/" -> 8.1.0 (3 numbers). nullopt otherwise.
std::optional<Version> legacy_folder_version(std::string_view name);

// A legacy cuDNN archive's name: cudnn-11.2-linux-x64-v8.1.0.77.tgz,
// cudnn-10.2-windows10-x64-v8.1.0.77.zip, cudnn-linux-x86_64-8.3.1.22_cuda11.5-archive.tar.xz.
struct LegacyArchive {
    Version cudnn;   // 8.1.0.77
    Version cuda;    // 11.2 (the build's variant)
    bool windows = false;
};
std::optional<LegacyArchive> legacy_archive(std::string_view name);

} // namespace cvm::registry
