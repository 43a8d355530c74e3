#include "image/oci_layout.h"

#include <algorithm>
#include <archive.h>
#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <fstream>
#include <memory>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "image/blob_file.h"
#include "install/error.h"
#include "config/trust.h"
#include "install/sha256.h"
#include "platform/cleanup_on_signal.h"

namespace cvm::image {

using install::fail_input;

namespace {

constexpr std::uint64_t kJsonLimit = std::uint64_t(16) << 20; // an index, manifest or config

std::string shown(const fs::path& p) {
    return p.u8string();
}

// A whole small regular file, or nullopt when it cannot be read, is not a regular file (a FIFO
// is not waited for: O_NONBLOCK) or is larger than `limit`. A link is never followed.
std::optional<std::string> read_small(const fs::path& file, std::uint64_t limit,
                                      struct stat* meta = nullptr) {
    int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    OwnedFd close_it(fd);
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        static_cast<std::uint64_t>(st.st_size) > limit)
        return std::nullopt;
    if (meta) *meta = st;
    std::string text;
    char buffer[65536];
    for (;;) {
        ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return std::nullopt;
        if (n == 0) break;
        text.append(buffer, static_cast<std::size_t>(n));
        if (text.size() > limit) return std::nullopt; // grew while read
    }
    return text;
}

// What to do about a layout whose JSON is damaged: the same for --base and for the layout
// exported into.
const char* const kRecopy = "copy the image into the layout again, or name another folder";

nlohmann::json parse_object(const std::string& text, const std::string& what) {
    // nlohmann's parser recurses once per level: 100,000 '[' would overflow the stack.
    if (!json_nesting_within(text, kJsonDepthLimit))
        fail_input(what + " is nested deeper than " + std::to_string(kJsonDepthLimit) +
                   " levels, which no image layout needs; " + kRecopy);
    nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object())
        fail_input(what + " is not a JSON object; " + kRecopy);
    return doc;
}

Descriptor descriptor_of(const nlohmann::json& j, const std::string& where) {
    Descriptor d;
    if (!j.is_object() || !j.contains("mediaType") || !j["mediaType"].is_string() ||
        !j.contains("digest") || !j["digest"].is_string() || !j.contains("size") ||
        !j["size"].is_number_unsigned())
        fail_input(where + " has a descriptor without mediaType, digest or size; " + kRecopy);
    d.media_type = j["mediaType"].get<std::string>();
    d.digest = j["digest"].get<std::string>();
    d.size = j["size"].get<std::uint64_t>();
    if (!is_sha256_digest(d.digest))
        fail_input(where + " names the digest '" + d.digest.substr(0, 80) +
                   "', which is not sha256:<64 hex digits>; " + kRecopy);
    return d;
}

// A JSON blob of `layout`, checked against its descriptor.
nlohmann::json read_json_blob(const fs::path& layout, const Descriptor& d,
                              const std::string& what) {
    fs::path file = blob_path(layout, d.digest);
    if (d.size > kJsonLimit)
        fail_input(what + " " + d.digest + " of " + shown(layout) + " is larger than 16 MB");
    auto text = read_small(file, kJsonLimit);
    if (!text)
        fail_input(shown(layout) + " lacks the " + what + " " + d.digest +
                   " (blobs/sha256/...); copy the image into it again");
    install::Sha256 h;
    h.update(text->data(), text->size());
    if (text->size() != d.size || "sha256:" + h.hex_digest() != d.digest)
        fail_input("the " + what + " " + d.digest + " of " + shown(layout) +
                   " does not match its digest; copy the image into it again");
    return parse_object(*text, "the " + what + " " + d.digest + " of " + shown(layout));
}

std::string tags_text(const nlohmann::json& manifests) {
    std::string out;
    for (const auto& m : manifests) {
        if (!m.is_object() || !m.contains("annotations") || !m["annotations"].is_object()) continue;
        const auto& a = m["annotations"];
        if (!a.contains(kRefName) || !a[kRefName].is_string()) continue;
        if (!out.empty()) out += ", ";
        out += a[kRefName].get<std::string>();
    }
    return out.empty() ? "none" : out;
}

bool is_layer_type(const std::string& t) {
    static const char* known[] = {
        "application/vnd.oci.image.layer.v1.tar",
        "application/vnd.oci.image.layer.v1.tar+gzip",
        "application/vnd.oci.image.layer.v1.tar+zstd",
    };
    return std::find(std::begin(known), std::end(known), t) != std::end(known);
}

} // namespace

nlohmann::json Descriptor::to_json() const {
    return {{"mediaType", media_type}, {"digest", digest}, {"size", size}};
}

bool is_sha256_digest(const std::string& digest) {
    const std::string head = "sha256:";
    if (digest.size() != head.size() + 64 || digest.compare(0, head.size(), head) != 0)
        return false;
    return std::all_of(digest.begin() + static_cast<std::ptrdiff_t>(head.size()), digest.end(),
                       [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

fs::path blob_path(const fs::path& layout, const std::string& digest) {
    return layout / "blobs" / "sha256" / digest.substr(7);
}

bool is_valid_tag(const std::string& tag) {
    if (tag.empty() || tag.size() > 128) return false;
    auto word = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_';
    };
    if (!word(tag[0])) return false;
    return std::all_of(tag.begin(), tag.end(),
                       [&](char c) { return word(c) || c == '.' || c == '-'; });
}

bool is_stale_temp(const std::string& name) {
    auto at = name.rfind(".tmp");
    if (name.size() < 6 || name[0] != '.' || at == std::string::npos || at == 0 ||
        at + 4 >= name.size() || name.size() - at > 4 + 10)
        return false;
    std::uint64_t pid = 0;
    for (std::size_t i = at + 4; i < name.size(); ++i) {
        if (name[i] < '0' || name[i] > '9') return false;
        pid = pid * 10 + static_cast<std::uint64_t>(name[i] - '0');
    }
    if (pid == 0 || pid > 0x3fffffff || pid == platform::process_id()) return false;
    return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

namespace {

// DIR holds only blobs/ with only sha256/ with only stale temporary files (a killed export's).
bool only_leftovers(const fs::path& dir, const std::vector<std::string>& names) {
    if (names.size() != 1 || names[0] != "blobs") return false;
    std::error_code ec;
    auto is_folder = [&](const fs::path& p) {
        auto st = fs::symlink_status(p, ec);
        return !ec && fs::is_directory(st);
    };
    if (!is_folder(dir / "blobs")) return false;
    for (fs::directory_iterator it(dir / "blobs", ec), end; !ec && it != end; it.increment(ec)) {
        if (it->path().filename() != "sha256" || !is_folder(it->path())) return false;
        for (fs::directory_iterator b(it->path(), ec); !ec && b != end; b.increment(ec)) {
            auto st = fs::symlink_status(b->path(), ec);
            if (ec || !fs::is_regular_file(st) || !is_stale_temp(b->path().filename().string()))
                return false;
        }
    }
    return !ec;
}

} // namespace

FolderState folder_state(const fs::path& dir, std::string& why) {
    std::error_code ec;
    auto link = fs::symlink_status(dir, ec);
    if (ec || !fs::exists(link)) return FolderState::Absent;
    auto st = fs::status(dir, ec);
    if (ec || !fs::exists(st)) {
        why = "a link to nothing";
        return FolderState::Other;
    }
    if (!fs::is_directory(st)) {
        why = fs::is_regular_file(st) ? "a file" : "not a folder";
        return FolderState::Other;
    }
    std::vector<std::string> names;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        names.push_back(it->path().filename().u8string());
    if (ec) {
        why = "a folder that cannot be read";
        return FolderState::Other;
    }
    if (names.empty() || only_leftovers(dir, names)) return FolderState::Empty;
    auto layout = read_small(dir / "oci-layout", 4096);
    if (layout && fs::is_regular_file(dir / "index.json", ec)) {
        auto doc = nlohmann::json::parse(*layout, nullptr, false);
        if (doc.is_object() && doc.contains("imageLayoutVersion") &&
            doc["imageLayoutVersion"].is_string())
            return FolderState::Layout;
    }
    std::sort(names.begin(), names.end());
    why = "a folder holding ";
    for (std::size_t i = 0; i < names.size() && i < 3; ++i)
        why += (i ? ", " : "") + names[i];
    if (names.size() > 3) why += ", ...";
    return FolderState::Other;
}

nlohmann::json read_index(const fs::path& layout) {
    struct stat st {};
    auto text = read_small(layout / "index.json", kJsonLimit, &st);
    if (!text)
        fail_input(shown(layout / "index.json") +
                   " cannot be read (or is over 16 MB, or not a regular file); " + kRecopy);
    auto doc = parse_object(*text, shown(layout / "index.json"));
    if (doubt_of(platform::meta_of_stat(st)) != Doubt::None) {
        // Another user's file: only what an index is made of goes on.
        nlohmann::json known = nlohmann::json::object();
        for (const char* key : {"schemaVersion", "mediaType", "manifests", "annotations"})
            if (doc.contains(key)) known[key] = doc[key];
        doc = std::move(known);
    }
    if (!doc.contains("manifests")) doc["manifests"] = nlohmann::json::array();
    if (!doc["manifests"].is_array())
        fail_input(shown(layout / "index.json") + " has no manifests list; " + kRecopy);
    return doc;
}

bool json_nesting_within(const std::string& text, std::size_t limit) {
    std::size_t depth = 0;
    bool in_string = false, escaped = false;
    for (char c : text) {
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                in_string = false;
            continue;
        }
        if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > limit) return false;
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return true;
}

void check_layout_files(const fs::path& layout, const std::string& role) {
    for (const char* name : {"oci-layout", "index.json"}) {
        fs::path p = layout / name;
        struct stat st {};
        if (::lstat(p.c_str(), &st) != 0) continue; // folder_state says what is missing
        if (S_ISLNK(st.st_mode))
            fail_input(role + shown(p) +
                       " is a link; cvm reads and writes an image layout's own files, never what "
                       "a link names: replace it with the file itself, or name another folder");
        if (!S_ISREG(st.st_mode))
            fail_input(role + shown(p) + " is not a regular file; " + kRecopy);
    }
}

int open_blob(const fs::path& layout, const Descriptor& d, const std::string& role) {
    fs::path file = blob_path(layout, d.digest);
    int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int error = errno;
        if (error == ELOOP)
            fail_input(role + shown(layout) + ": the blob " + d.digest +
                       " is a link; cvm copies only a layout's own files: copy the image into it "
                       "again");
        fail_input(role + shown(layout) + " lacks the blob " + d.digest + " (" +
                   platform::error_text(error) + "); copy the image into it again");
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        fail_input(role + shown(layout) + ": the blob " + d.digest +
                   " is not a regular file; copy the image into it again");
    }
    return fd;
}

void read_blob_checked(int fd, const Descriptor& d, const std::string& where,
                       const std::function<void(const char*, std::size_t)>& sink) {
    if (::lseek(fd, 0, SEEK_SET) < 0)
        fail_input("cannot read the blob " + d.digest + " of " + where +
                   "; copy the image into it again");
    install::Sha256 hash;
    std::uint64_t got = 0;
    std::vector<char> buffer(std::size_t(1) << 20);
    for (;;) {
        if (platform::interrupted()) install::fail_operation("interrupted; nothing was exported");
        // At most one byte past the declared size: enough to tell a longer blob (a link to
        // /dev/zero, a file that grows) without reading it.
        std::uint64_t want = std::min<std::uint64_t>(buffer.size(), d.size + 1 - got);
        ssize_t n = ::read(fd, buffer.data(), static_cast<std::size_t>(want));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0)
            fail_input("cannot read the blob " + d.digest + " of " + where + ": " +
                       platform::error_text(errno) + "; copy the image into it again");
        if (n == 0) break;
        got += static_cast<std::uint64_t>(n);
        if (got > d.size)
            fail_input("the blob " + d.digest + " of " + where +
                       " is larger than its manifest says; copy the image into it again");
        hash.update(buffer.data(), static_cast<std::size_t>(n));
        if (sink) sink(buffer.data(), static_cast<std::size_t>(n));
    }
    if (got != d.size || "sha256:" + hash.hex_digest() != d.digest)
        fail_input("the layer " + d.digest + " of " + where +
                   " does not match its digest; copy the image into it again");
}

void check_tar_layer(int fd, const Descriptor& d, const std::string& where) {
    if (::lseek(fd, 0, SEEK_SET) < 0)
        fail_input("cannot read the layer " + d.digest + " of " + where +
                   "; copy the image into it again");
    struct ReadFree {
        void operator()(struct archive* a) const { archive_read_free(a); }
    };
    std::unique_ptr<struct archive, ReadFree> a(archive_read_new());
    if (!a) throw std::bad_alloc();
    archive_read_support_filter_all(a.get());
    archive_read_support_format_tar(a.get());
    int want = d.media_type == media::kLayerGzip   ? ARCHIVE_FILTER_GZIP
               : d.media_type == media::kLayerZstd ? ARCHIVE_FILTER_ZSTD
                                                   : ARCHIVE_FILTER_NONE;
    archive_entry* entry = nullptr;
    bool tar = archive_read_open_fd(a.get(), fd, 65536) == ARCHIVE_OK;
    int rc = tar ? archive_read_next_header(a.get(), &entry) : ARCHIVE_FATAL;
    // An empty layer (two zero blocks) is a tar stream too.
    tar = tar && (rc == ARCHIVE_OK || rc == ARCHIVE_WARN || rc == ARCHIVE_EOF) &&
          archive_filter_code(a.get(), 0) == want;
    if (!tar)
        fail_input("the layer " + d.digest + " of " + where + " is not a " + d.media_type +
                   " (a tar stream" +
                   (want == ARCHIVE_FILTER_NONE ? std::string()
                                                : std::string(", compressed so")) +
                   "); copy the image into it again");
}

BaseImage read_base_image(const fs::path& layout, const std::optional<std::string>& tag,
                          const std::string& architecture) {
    check_layout_files(layout, "--base ");
    std::string why;
    if (folder_state(layout, why) != FolderState::Layout)
        fail_input("--base " + shown(layout) +
                   " is not an OCI image layout (no oci-layout and "
                   "index.json); write one with `skopeo copy docker-archive:FILE oci:" +
                   shown(layout) + ":TAG`");
    BaseImage base;
    base.layout = layout;
    nlohmann::json index = read_index(layout);
    const auto& manifests = index["manifests"];
    const nlohmann::json* chosen = nullptr;
    if (tag) {
        for (const auto& m : manifests)
            if (m.is_object() && m.contains("annotations") && m["annotations"].is_object() &&
                m["annotations"].value(kRefName, std::string()) == *tag)
                chosen = &m;
        if (!chosen)
            fail_input("--base " + shown(layout) + " has no image tagged '" + *tag +
                       "' (tags: " + tags_text(manifests) + ")");
        base.tag = *tag;
    } else {
        if (manifests.size() != 1)
            fail_input("--base " + shown(layout) + " holds " + std::to_string(manifests.size()) +
                       " images (tags: " + tags_text(manifests) + "); name one: --base " +
                       shown(layout) + ":TAG");
        chosen = &manifests[0];
        if (chosen->contains("annotations") && (*chosen)["annotations"].is_object())
            base.tag = (*chosen)["annotations"].value(kRefName, std::string());
    }
    std::string where = shown(layout / "index.json");
    Descriptor d = descriptor_of(*chosen, where);
    if (d.media_type == media::kIndex) {
        // A multi-platform image: the manifest for this toolkit's platform.
        nlohmann::json nested = read_json_blob(layout, d, "image index");
        const nlohmann::json* pick = nullptr;
        if (nested.contains("manifests") && nested["manifests"].is_array())
            for (const auto& m : nested["manifests"])
                if (m.is_object() && m.contains("platform") && m["platform"].is_object() &&
                    m["platform"].value("os", std::string()) == "linux" &&
                    m["platform"].value("architecture", std::string()) == architecture)
                    pick = &m;
        if (!pick)
            fail_input("--base " + shown(layout) + ": the image index " + d.digest +
                       " has no manifest for linux/" + architecture);
        d = descriptor_of(*pick, "the image index " + d.digest);
    }
    if (d.media_type != media::kManifest)
        fail_input("--base " + shown(layout) + ": the image is a " + d.media_type +
                   ", not an OCI image manifest; convert it with `skopeo copy oci:" +
                   shown(layout) + " oci:NEWDIR:TAG`");
    base.manifest_digest = d.digest;
    nlohmann::json manifest = read_json_blob(layout, d, "manifest");
    if (!manifest.contains("config") || !manifest.contains("layers") ||
        !manifest["layers"].is_array())
        fail_input("the manifest " + d.digest + " of " + shown(layout) +
                   " lacks its config or layers");
    Descriptor config = descriptor_of(manifest["config"], "the manifest " + d.digest);
    base.config = read_json_blob(layout, config, "image config");
    for (const auto& l : manifest["layers"]) {
        Descriptor layer = descriptor_of(l, "the manifest " + d.digest);
        if (!is_layer_type(layer.media_type))
            fail_input("--base " + shown(layout) + " has a layer of type " + layer.media_type +
                       ", which cvm does not copy; convert the image with `skopeo copy`");
        base.layers.push_back(layer);
    }
    base.layer_descriptors = manifest["layers"];
    base.os = base.config.value("os", std::string());
    base.architecture = base.config.value("architecture", std::string());
    if (base.os != "linux" || base.architecture != architecture)
        fail_input("--base " + shown(layout) + " is an image for " + base.os + "/" +
                   base.architecture + "; the toolkit is for linux/" + architecture);
    const auto& rootfs = base.config.value("rootfs", nlohmann::json::object());
    if (!rootfs.is_object() || !rootfs.contains("diff_ids") || !rootfs["diff_ids"].is_array() ||
        rootfs["diff_ids"].size() != base.layers.size())
        fail_input("the image config of " + shown(layout) +
                   " does not list one diff_id per layer; copy the image into it again");
    return base;
}

void copy_blob(const fs::path& from_layout, const Descriptor& d, BlobFile& out) {
    OwnedFd fd(open_blob(from_layout, d, "--base "));
    read_blob_checked(fd.get(), d, "--base " + shown(from_layout),
                      [&](const char* data, std::size_t n) { out.write(data, n); });
    out.close();
}

void copy_blob(const fs::path& from_layout, const Descriptor& d, const fs::path& to,
               const fs::path& shown_to) {
    BlobFile out(to, shown_to);
    copy_blob(from_layout, d, out);
}

} // namespace cvm::image
