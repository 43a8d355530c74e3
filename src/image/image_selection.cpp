#include "image/image_selection.h"

#include "project/lockfile.h"
#include "activation/shims.h"
#include "activation/view.h"
#include "image/image_config.h"
#include "install/error.h"
#include "platform/platform.h"

namespace cvm::image {

const char* const kLicenceNote =
    "the files inside are NVIDIA's, under NVIDIA's licences (the CUDA Toolkit EULA, the cuDNN "
    "SLA), which limit redistribution: keep this image in a private registry";

namespace {

std::string prefix_rel() {
    return std::string(kPrefix).substr(1);
} // "opt/cvm"

constexpr const char* kDefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// `where` ends in <site-packages or dist-packages>/nvidia/<library>: a folder of NVIDIA's wheels.
bool in_wheels(const fs::path& where) {
    fs::path p = where.lexically_normal();
    if (!p.has_filename()) p = p.parent_path();
    fs::path nvidia = p.parent_path();
    std::string packages = nvidia.parent_path().filename().u8string();
    return nvidia.filename() == "nvidia" &&
           (packages == "site-packages" || packages == "dist-packages");
}

// `where` is a machine's usr whose packages dpkg records (where the importers read the record).
bool in_packages(const fs::path& where) {
    std::error_code ec;
    return where.filename() == "usr" &&
           fs::is_regular_file(where.parent_path() / "var" / "lib" / "dpkg" / "status", ec);
}

// What an import was made from, in words, from the phrases the importers write into its note
// (layouts/*_layouts) and the shape of its folder: never the folder, whose path would make the
// image differ by where the files were and would carry a home folder into a registry.
std::string imported_from(const Entry& e) {
    auto says = [&](const char* phrase) { return e.note.find(phrase) != std::string::npos; };
    const fs::path& where = e.origin.empty() ? e.path : e.origin;
    if (says("assembled from pip wheels at") || says(", CUDA from the wheel nvidia_") ||
        in_wheels(where))
        return "NVIDIA's wheels";
    if (says("assembled from Debian's nvidia-cuda-toolkit at") ||
        says("version from dpkg's package ") || says(", CUDA from dpkg's package ") ||
        in_packages(where.lexically_normal()))
        return "Debian's packages";
    if (says("assembled from conda environment at") || says(", CUDA from conda-meta"))
        return "a conda environment";
    if (says("assembled from a shared prefix at")) return "a shared prefix";
    return "a folder";
}

// An archive as its label says it: NVIDIA's URL (a mirror's stands for it), a URL without its
// credentials, or "a local file" (never its path), then its sum.
std::string archive_label(const ArchiveRecord& a) {
    std::string where = lockable_source(a.url);
    if (where.empty()) where = "a local file";
    return where + " sha256:" + a.sha256 + (a.first_use ? " (trusted on first use)" : "");
}

} // namespace

ImageSelection image_selection(const Resolved& r, const fs::path& view, bool runtime) {
    ImageSelection s;
    s.host = r;
    s.runtime = runtime;
    // Every entry of the selection, toolkit first: the one list the image is made from.
    for (const Entry* e : r.entries()) {
        ImagePart part;
        part.entry = *e;
        fs::path host = e->path.lexically_normal();
        for (const auto& earlier : s.parts) {
            fs::path root = earlier.entry.path.lexically_normal();
            if (!path_within(host, root)) continue;
            // Inside another part's folder (cuDNN copied into a toolkit): it is there already.
            std::string rel = host.lexically_relative(root).generic_string();
            part.layer = rel == "." || rel.empty() ? earlier.layer : earlier.layer + "/" + rel;
            part.walked = false;
            break;
        }
        if (part.layer.empty()) part.layer = prefix_rel() + "/" + kind_dir(e->kind) + "/" + e->id;
        s.parts.push_back(std::move(part));
    }
    if (!view.empty() && needs_merged_view(r)) {
        s.view = view;
        s.view_layer = prefix_rel() + "/views/" + view.filename().u8string();
    }
    return s;
}

std::vector<LayerTree> layer_trees(const ImageSelection& s) {
    std::vector<LayerTree> trees;
    // An assembled root (an import of scattered folders: Entry::origin) and the view are cvm's
    // own folders of links: only their links out of the selection are followed.
    for (const auto& p : s.parts)
        if (p.walked)
            trees.push_back({p.entry.path, p.layer, {},
                             !p.entry.origin.empty() &&
                                 p.entry.path.lexically_normal() ==
                                     (p.entry.entry_dir / "root").lexically_normal()});
    // The view's mark (view.cpp's kViewMark) says when cvm made it: nothing for an image.
    if (!s.view.empty()) trees.push_back({s.view, s.view_layer, {".cvm-view"}, true});
    return trees;
}

PlanOptions plan_options(const ImageSelection& s) {
    PlanOptions o;
    o.runtime = s.runtime;
    const Entry& tk = s.parts.front().entry;
    if (!tk.bin_dirs.empty())
        o.redirects.push_back(
            {shim_binary(), s.parts.front().layer + "/" + tk.bin_dirs.front() + "/nvcc"});
    return o;
}

namespace {

// `p` (a folder of this machine inside one of the image's folders) where the image has it.
fs::path in_image(const ImageSelection& s, const fs::path& p) {
    const fs::path* best = nullptr;
    const std::string* layer = nullptr;
    auto consider = [&](const fs::path& root, const std::string& l) {
        if (path_within(p, root) && (!best || root.native().size() > best->native().size())) {
            best = &root;
            layer = &l;
        }
    };
    for (const auto& part : s.parts)
        consider(part.entry.path, part.layer);
    if (!s.view.empty()) consider(s.view, s.view_layer);
    if (!best) return p;
    std::string rel = p.native().size() > best->native().size()
                          ? p.lexically_relative(*best).generic_string()
                          : "";
    return fs::path("/" + *layer + (rel.empty() ? "" : "/" + rel));
}

void relocate(const ImageSelection& s, std::vector<fs::path>& dirs) {
    for (auto& d : dirs)
        d = in_image(s, d);
}

void relocate(const ImageSelection& s, std::optional<fs::path>& p) {
    if (p) p = in_image(s, *p);
}

} // namespace

std::vector<std::string> image_env(const ImageSelection& s, const std::vector<std::string>& env) {
    // The layout of the selection on this machine (its files are here to look at), then each
    // folder where the image holds it.
    Layout layout = layout_of(s.host, s.view, platform::Os::Linux);
    layout.cuda_path = in_image(s, layout.cuda_path);
    relocate(s, layout.bin_dirs);
    relocate(s, layout.tool_dirs);
    relocate(s, layout.lib_dirs);
    relocate(s, layout.include_dirs);
    relocate(s, layout.nvcc);
    relocate(s, layout.cudnn_path);
    relocate(s, layout.cudnn_include_dir);
    relocate(s, layout.cudnn_lib_dir);
    relocate(s, layout.nccl_path);
    relocate(s, layout.nccl_include_dir);
    relocate(s, layout.nccl_lib_dir);
    layout.host_compiler = {};
    if (s.runtime) { // bin/ and the headers are left out
        layout.bin_dirs.clear();
        layout.tool_dirs.clear();
        layout.nvcc.reset();
        layout.include_dirs.clear();
        layout.cudnn_include_dir.reset();
        layout.nccl_include_dir.reset();
    }
    ForeignDirs rules;
    rules.store_layers = {fs::path(kPrefix)}; // an earlier cvm export's folders in a base image
    rules.probe_filesystem = false;           // this machine's folders say nothing of the image's
    EnvLookup current = [&](const std::string& name) {
        auto v = env_value(env, name);
        if (!v && name == "PATH") return std::optional<std::string>(kDefaultPath);
        return v;
    };
    auto changes = compute_environment(layout, current, rules, platform::Os::Linux);
    const Version& v = s.host.toolkit.version;
    changes.push_back({"NVIDIA_REQUIRE_CUDA",
                       "cuda>=" + std::to_string(v.major()) + "." + std::to_string(v.minor())});
    return apply_env(env, changes);
}

std::map<std::string, std::string> image_labels(const ImageSelection& s) {
    std::map<std::string, std::string> labels;
    labels["cvm.selection"] = s.host.active();
    labels["cvm.prefix"] = kPrefix;
    labels["cvm.variant"] = s.runtime ? "runtime" : "devel";
    labels["cvm.licence"] = kLicenceNote;
    for (const auto& p : s.parts) {
        const Entry& e = p.entry;
        std::string key = std::string("cvm.") + kind_dir(e.kind);
        labels[key] = e.id;
        labels[key + ".path"] = "/" + p.layer;
        if (e.imported) {
            labels[key + ".source"] = "imported from " + imported_from(e);
            continue;
        }
        labels[key + ".source"] = e.archives.empty()
                                      ? "installed"
                                      : "installed from " + std::to_string(e.archives.size()) +
                                            (e.archives.size() == 1 ? " archive" : " archives");
        for (const auto& a : e.archives)
            labels[key + ".archive." + fs::u8path(a.name).filename().u8string()] = archive_label(a);
    }
    return labels;
}

std::string default_tag(const ImageSelection& s) {
    std::string tag;
    for (const auto& p : s.parts)
        tag += (tag.empty() ? "" : "-") + std::string(kind_dir(p.entry.kind)) + p.entry.id;
    if (s.runtime) tag += "-runtime";
    for (auto& c : tag)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '-' || c == '_'))
            c = '_';
    return tag.substr(0, 128);
}

std::string image_architecture(const ImageSelection& s) {
    std::string arch;
    for (const auto& p : s.parts) {
        const std::string& pl = p.entry.platform;
        if (pl.empty()) continue;
        std::string a;
        if (pl == "linux-x86_64")
            a = "amd64";
        else if (pl == "linux-sbsa" || pl == "linux-aarch64")
            a = "arm64";
        else if (pl == "linux-ppc64le")
            a = "ppc64le";
        else
            install::fail_input(
                std::string(kind_dir(p.entry.kind)) + " " + p.entry.id + " is for " + pl +
                ": container images hold Linux toolkits; export from a Linux store");
        if (!arch.empty() && a != arch)
            install::fail_input("the selection mixes " + arch + " and " + a + " builds (" +
                                p.entry.id + ")");
        arch = a;
    }
    if (!arch.empty()) return arch;
#if defined(__aarch64__)
    return "arm64";
#elif defined(__powerpc64__)
    return "ppc64le";
#else
    return "amd64";
#endif
}

std::time_t source_date_epoch() {
    auto v = platform::get_env("SOURCE_DATE_EPOCH");
    if (!v || v->empty()) return kDefaultEpoch;
    if (v->size() > 11 || v->find_first_not_of("0123456789") != std::string::npos)
        install::fail_input(
            "SOURCE_DATE_EPOCH='" + v->substr(0, 40) +
            "' is not a whole number of seconds since 1970; unset it or set it to one "
            "(e.g. $(git log -1 --format=%ct))");
    return static_cast<std::time_t>(std::stoll(*v));
}

} // namespace cvm::image
