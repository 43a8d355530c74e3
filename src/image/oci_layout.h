#pragma once
// OCI image layouts (image-spec's image-layout.md): a folder with `oci-layout`, `index.json` and
// `blobs/sha256/<hex>`. What cvm reads of one (the image a tag names: its manifest, config and
// layers, every blob checked against its digest) and the names it writes.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cvm::image {

namespace fs = std::filesystem;

class BlobFile; // blob_file.h

namespace media {
inline constexpr const char* kIndex = "application/vnd.oci.image.index.v1+json";
inline constexpr const char* kManifest = "application/vnd.oci.image.manifest.v1+json";
inline constexpr const char* kConfig = "application/vnd.oci.image.config.v1+json";
inline constexpr const char* kLayer = "application/vnd.oci.image.layer.v1.tar";
inline constexpr const char* kLayerGzip = "application/vnd.oci.image.layer.v1.tar+gzip";
inline constexpr const char* kLayerZstd = "application/vnd.oci.image.layer.v1.tar+zstd";
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
// A folder holding only what a killed export left (an empty blobs/sha256, or one with only stale
// temporary files: is_stale_temp) is Empty.
FolderState folder_state(const fs::path& dir, std::string& why);

// Whether `name` is a temporary file cvm left in a layout (`.ROLE.tmp<pid>`) whose process is no
// longer running (killed with -9, or the machine stopped): safe to remove.
bool is_stale_temp(const std::string& name);

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

// The layout's index.json (`{"schemaVersion": 2, "manifests": []}` for a new layout). Read
// without following a link; one not owned by the user (or root, config/trust.h) keeps only the
// fields an index has (schemaVersion, mediaType, manifests, annotations), so that nothing of
// another user's file is carried into one cvm writes.
nlohmann::json read_index(const fs::path& layout);

// The deepest JSON cvm parses from a layout: nlohmann's parser recurses once per level.
inline constexpr std::size_t kJsonDepthLimit = 64;
// Whether `text` nests arrays and objects at most `limit` deep (strings skipped).
bool json_nesting_within(const std::string& text, std::size_t limit);

// Refuses (install input error, one line) a layout whose oci-layout or index.json is a link, or
// not a regular file: cvm reads and writes a layout's files themselves, never what a link names.
// `role` starts the message ("--base " or "").
void check_layout_files(const fs::path& layout, const std::string& role);

// A blob of `layout` opened for reading: a regular file, opened with O_NOFOLLOW (no link) and
// O_NONBLOCK (a FIFO is not waited for). Throws install::InstallError (input) naming the layout.
// The caller closes the descriptor.
int open_blob(const fs::path& layout, const Descriptor& d, const std::string& role);

// Reads the open blob `fd` to its end, but no more than d.size + 1 bytes, each given to `sink`
// (may be empty); refuses (input) a blob of another size or digest. `where` names its layout.
void read_blob_checked(int fd, const Descriptor& d, const std::string& where,
                       const std::function<void(const char*, std::size_t)>& sink);

// Refuses (input) a layer `fd` that is not a tar stream compressed as its media type says
// (plain, gzip or zstd: the magic and a valid first tar header, read with libarchive). `fd` is
// read from its start; `where` names the layout it came from.
void check_tar_layer(int fd, const Descriptor& d, const std::string& where);

// Copies a blob of one layout into `to` (a new blob file), checking it against its digest and
// size (read_blob_checked); throws install::InstallError naming the source layout when the bytes
// differ.
void copy_blob(const fs::path& from_layout, const Descriptor& d, BlobFile& to);
// The same into a new file `to`; `shown` names the destination in errors.
void copy_blob(const fs::path& from_layout, const Descriptor& d, const fs::path& to,
               const fs::path& shown);

} // namespace cvm::image
