#pragma once
// OCI image layouts (image-spec's image-layout.md): a folder with `oci-layout`, `index.json` and
// `blobs/sha256/<hex>`. What cvm reads of one (the image a tag names: its manifest, config and
// layers, every blob checked against its digest) and the names it writes.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cvm::image {

namespace fs = std::filesystem;

namespace media {
inline constexpr const char* kIndex = "application/vnd.oci.image.index.v1+json";
inline constexpr const char* kManifest = "application/vnd.oci.image.manifest.v1+json";
inline constexpr const char* kConfig = "application/vnd.oci.image.config.v1+json";
inline constexpr const char* kLayerGzip = "application/vnd.oci.image.layer.v1.tar+gzip";
} // namespace media

inline constexpr const char* kRefName = "org.opencontainers.image.ref.name";
inline constexpr const char* kLayoutText = "{\"imageLayoutVersion\":\"1.0.0\"}";

struct Descriptor {
    std::string media_type;
    std::string digest; // "sha256:<64 hex>"
    std::uint64_t size = 0;
    nlohmann::json to_json() const;
};

// "sha256:" and 64 lower-case hex digits: the only digests cvm reads or writes, so that a digest
// from a file never becomes another path.
bool is_sha256_digest(const std::string& digest);
fs::path blob_path(const fs::path& layout, const std::string& digest);

// Whether a tag is one a reference allows: [A-Za-z0-9_][A-Za-z0-9._-]{0,127}.
bool is_valid_tag(const std::string& tag);

// What a folder given as an export's destination holds.
enum class FolderState { Absent, Empty, Layout, Other };
// `why` says, for Other, what is there instead ("a file", "a folder holding README, src...").
FolderState folder_state(const fs::path& dir, std::string& why);

// An image of a layout, read for `--base`: every blob checked against its digest and size.
struct BaseImage {
    fs::path layout;
    std::string tag; // as named, or the layout's only one
    std::string manifest_digest;
    nlohmann::json config;            // the image's config document
    std::vector<Descriptor> layers;   // as the manifest lists them
    nlohmann::json layer_descriptors; // the same, as they are written (annotations and all)
    std::string architecture, os;
};

// Reads the image `tag` names in `layout` (its only image when no tag is given). An image index
// there is followed to its manifest for linux/`architecture`. Throws install::InstallError (input)
// with one line naming the layout and what to do.
BaseImage read_base_image(const fs::path& layout, const std::optional<std::string>& tag,
                          const std::string& architecture);

// The layout's index.json (`{"schemaVersion": 2, "manifests": []}` for a new layout).
nlohmann::json read_index(const fs::path& layout);

// Copies a blob of one layout to `to` (a new file), checking it against its digest and size;
// throws install::InstallError naming the source layout when the bytes differ. `shown` names the
// destination in errors.
void copy_blob(const fs::path& from_layout, const Descriptor& d, const fs::path& to,
               const fs::path& shown);

} // namespace cvm::image
