#include "image/export_oci.h"

#include <sys/stat.h>
#include <system_error>
#include <unistd.h>

#include "activation/view.h"
#include "image/image_config.h"
#include "image/blob_file.h"
#include "image/image_selection.h"
#include "image/layout_writer.h"
#include "image/oci_layout.h"
#include "install/error.h"
#include "install/progress.h"
#include "platform/platform.h"

namespace cvm::image {

namespace {

using install::fail_input;

bool same_folder(const fs::path& a, const fs::path& b) {
    std::error_code ec;
    return fs::equivalent(a, b, ec);
}

nlohmann::json index_entry(const Descriptor& manifest, const std::string& tag,
                           const std::string& arch) {
    nlohmann::json e = manifest.to_json();
    e["annotations"] = {{kRefName, tag}};
    e["platform"] = {{"architecture", arch}, {"os", "linux"}};
    return e;
}

} // namespace

ExportResult export_oci(const Store& store, const Resolved& selection, const ExportOptions& o) {
    ExportResult result;
    if (platform::host_os() == platform::Os::Windows)
        fail_input(
            "a Windows store holds Windows toolkits, and container images hold Linux ones; run "
            "`cvm export --oci` on Linux");
    fs::path view =
        needs_merged_view(selection) ? ensure_view(store, selection, platform::Os::Linux) : fs::path();
    ImageSelection s = image_selection(selection, view, o.runtime);
    result.architecture = image_architecture(s);
    std::time_t epoch = source_date_epoch();
    result.selection = selection.active();
    result.tag = o.tag ? *o.tag : default_tag(s);

    // DIR, its blobs and blobs/sha256: the user's own folders, no links; its oci-layout and
    // index.json no links either. Checked before anything is written.
    check_destination(o.dir);
    check_layout_files(o.dir, "");
    std::string why;
    FolderState state = folder_state(o.dir, why);
    if (state == FolderState::Other)
        fail_input(
            o.dir.u8string() + " is " + why +
            ", not an OCI image layout; name a new or empty folder, or an image layout to add to");
    result.dir = state == FolderState::Absent ? o.dir : fs::canonical(o.dir);
    result.new_layout = state != FolderState::Layout;

    std::optional<BaseImage> base;
    if (o.base) {
        base = read_base_image(*o.base, o.base_tag, result.architecture);
        result.base =
            ExportResult::Base{base->layout, base->tag, base->manifest_digest, base->layers.size()};
    }
    LayerPlan plan = plan_layer(layer_trees(s), plan_options(s));
    result.files = plan.files;
    result.bytes = plan.bytes;
    result.left_out_files = plan.left_out_files;
    result.left_out_bytes = plan.left_out_bytes;
    result.skipped = plan.skipped;
    result.outside = plan.outside;

    LayoutWriter out(result.dir, state);
    // The index the image is added to, read (under the layout's lock) before any blob is written:
    // a damaged one is refused with the layout as it was.
    nlohmann::json index = {
        {"schemaVersion", 2}, {"mediaType", media::kIndex}, {"manifests", nlohmann::json::array()}};
    if (!result.new_layout) index = read_index(result.dir);
    // The layer, streamed.
    {
        auto blob = out.create("layer");
        int item = o.progress
                       ? o.progress->start("writing", "layer of " + result.selection, plan.bytes)
                       : -1;
        try {
            result.layer = write_layer(plan, epoch, *blob, o.threads, [&](std::uint64_t done) {
                if (o.progress) o.progress->update(item, done);
            });
        } catch (...) {
            if (o.progress) o.progress->finish(item, false);
            throw;
        }
        if (o.progress)
            o.progress->finish(item, true,
                               install::Progress::format_bytes(result.layer.size) + " compressed");
        out.keep(blob->path(), result.layer.digest);
    }
    // The base image's layers, unless they are in this layout already: each checked against its
    // digest (read no further than its size) and to be a tar stream, wherever it is.
    nlohmann::json layers = nlohmann::json::array();
    std::uint64_t size = result.layer.size;
    if (base) {
        bool here = !result.new_layout && same_folder(base->layout, result.dir);
        std::string where = "--base " + base->layout.u8string();
        std::uint64_t total = 0, done = 0;
        for (const auto& d : base->layers)
            total += d.size;
        int item = o.progress && !here ? o.progress->start("copying", "base layers", total) : -1;
        // A blob of DIR (named `name` in its blobs/sha256): a regular file, the tar stream its
        // media type says, and with `digest`, the bytes its digest names.
        auto check_tar = [&](const std::string& name, const Descriptor& d, bool digest,
                             const std::string& whose) {
            OwnedFd fd(out.open_for_reading(name));
            struct stat st {};
            if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
                fail_input(whose + " lacks the layer " + d.digest +
                           " (or it is no regular file); copy the image into it again");
            if (digest) read_blob_checked(fd.get(), d, whose, {});
            check_tar_layer(fd.get(), d, whose);
        };
        for (std::size_t i = 0; i < base->layers.size(); ++i) {
            const Descriptor& d = base->layers[i];
            size += d.size;
            if (here) {
                check_tar(d.digest.substr(7), d, true, where);
                continue;
            }
            // DIR has it already (another image's layer): checked as a copy would be.
            std::error_code ec;
            if (fs::exists(fs::symlink_status(blob_path(out.work(), d.digest), ec))) {
                check_tar(d.digest.substr(7), d, true, result.dir.u8string());
                continue;
            }
            auto blob = out.create("base-" + std::to_string(i));
            copy_blob(base->layout, d, *blob);
            check_tar(blob->path().string(), d, false, where);
            out.keep(blob->path(), d.digest);
            done += d.size;
            if (o.progress) o.progress->update(item, done);
        }
        if (item >= 0) o.progress->finish(item, true);
        layers = base->layer_descriptors;
    }
    layers.push_back(
        Descriptor{media::kLayerGzip, result.layer.digest, result.layer.size}.to_json());

    std::vector<std::string> base_env;
    const nlohmann::json* base_config = base ? &base->config : nullptr;
    if (base_config && base_config->contains("config") && (*base_config)["config"].is_object()) {
        const auto& env = (*base_config)["config"].value("Env", nlohmann::json::array());
        if (env.is_array())
            for (const auto& v : env)
                if (v.is_string()) base_env.push_back(v.get<std::string>());
    }
    ConfigInput in;
    in.base = base_config;
    in.env = image_env(s, base_env);
    in.labels = image_labels(s);
    in.diff_id = result.layer.diff_id;
    in.created = rfc3339(epoch);
    in.architecture = result.architecture;
    in.created_by =
        std::string("cvm export --oci") + (o.runtime ? " --runtime " : " ") + result.selection;
    result.env = in.env;
    Descriptor config = out.json_blob("config", media::kConfig, image_config(in));
    result.config_digest = config.digest;
    nlohmann::json manifest = {{"schemaVersion", 2},
                               {"mediaType", media::kManifest},
                               {"config", config.to_json()},
                               {"layers", layers}};
    Descriptor m = out.json_blob("manifest", media::kManifest, manifest);
    result.manifest_digest = m.digest;
    result.image_size = size + config.size + m.size;

    if (!result.new_layout) {
        nlohmann::json kept = nlohmann::json::array();
        for (const auto& e : index["manifests"]) {
            bool same_tag = e.is_object() && e.contains("annotations") &&
                            e["annotations"].is_object() &&
                            e["annotations"].value(kRefName, std::string()) == result.tag;
            if (same_tag)
                result.replaced = e.value("digest", std::string()) != m.digest;
            else
                kept.push_back(e);
        }
        index["manifests"] = kept;
    }
    index["manifests"].push_back(index_entry(m, result.tag, result.architecture));
    out.commit(index);
    return result;
}

} // namespace cvm::image
