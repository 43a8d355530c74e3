#include "image/oci_layout.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "image/blob_file.h"
#include "install/error.h"
#include "install/sha256.h"
#include "platform/cleanup_on_signal.h"

namespace cvm::image {

using install::fail_input;

namespace {

constexpr std::uint64_t kJsonLimit = std::uint64_t(16) << 20; // an index, manifest or config

std::string shown(const fs::path& p) {
    return p.u8string();
}

// A whole small file, or nullopt when it cannot be read or is larger than `limit`.
std::optional<std::string> read_small(const fs::path& file, std::uint64_t limit) {
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) return std::nullopt;
    auto size = fs::file_size(file, ec);
    if (ec || size > limit) return std::nullopt;
    std::ifstream in(file, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) return std::nullopt;
    return text.str();
}

// What to do about a layout whose JSON is damaged: the same for --base and for the layout
// exported into.
const char* const kRecopy = "copy the image into the layout again, or name another folder";

nlohmann::json parse_object(const std::string& text, const std::string& what) {
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
    if (names.empty()) return FolderState::Empty;
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
    auto text = read_small(layout / "index.json", kJsonLimit);
    if (!text)
        fail_input(shown(layout / "index.json") + " cannot be read (or is over 16 MB); " + kRecopy);
    auto doc = parse_object(*text, shown(layout / "index.json"));
    if (!doc.contains("manifests")) doc["manifests"] = nlohmann::json::array();
    if (!doc["manifests"].is_array())
        fail_input(shown(layout / "index.json") + " has no manifests list; " + kRecopy);
    return doc;
}

BaseImage read_base_image(const fs::path& layout, const std::optional<std::string>& tag,
                          const std::string& architecture) {
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

void copy_blob(const fs::path& from_layout, const Descriptor& d, const fs::path& to,
               const fs::path& shown_to) {
    fs::path from = blob_path(from_layout, d.digest);
    std::ifstream in(from, std::ios::binary);
    if (!in)
        fail_input("--base " + shown(from_layout) + " lacks the layer " + d.digest +
                   "; copy the image into it again");
    BlobFile out(to, shown_to);
    std::vector<char> buffer(std::size_t(1) << 20);
    while (in) {
        if (platform::interrupted()) install::fail_operation("interrupted; nothing was exported");
        in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
        auto n = static_cast<std::size_t>(in.gcount());
        if (n) out.write(buffer.data(), n);
    }
    if (in.bad()) fail_input("cannot read the layer " + d.digest + " of " + shown(from_layout));
    std::string digest = out.close();
    if (digest != d.digest || out.size() != d.size)
        fail_input("the layer " + d.digest + " of --base " + shown(from_layout) +
                   " does not match its digest; copy the image into it again");
}

} // namespace cvm::image
