#include "core/view.h"

#include <algorithm>
#include <map>
#include <set>
#include <system_error>

namespace cvm {

fs::path view_path(const Store& store, const Resolved& r) {
    if (!r.cudnn) return {};
    // A cuDNN inside the toolkit's own folder needs no view. Entries hold canonical paths (import
    // resolves links, installs live in the store), so comparing the names is enough; this runs
    // in the shim before every tool.
    if (r.toolkit.path == r.cudnn->path) return {};
    return store.views_dir() / fs::u8path(r.toolkit.id + "+" + r.cudnn->id);
}

namespace {

// cuDNN folders that appear inside a view folder (relative path in the view -> source folders).
using Overlay = std::map<std::string, std::vector<fs::path>>;

void link_into(const fs::path& target, const fs::path& link) {
    std::error_code ec;
    bool dir = fs::is_directory(target, ec);
    platform::make_link(target, link, dir);
}

// Fills `out` (an empty real folder) with the union of `toolkit_dir`'s entries and the overlay
// folders registered for `rel`; cuDNN's files win over same-named toolkit files.
void merge_dir(const fs::path& out, const fs::path& toolkit_dir, const std::string& rel,
               const Overlay& overlay) {
    std::set<std::string> taken;
    auto it = overlay.find(rel);
    if (it != overlay.end()) {
        for (const auto& src : it->second) {
            std::error_code ec;
            for (fs::directory_iterator d(src, ec), end; !ec && d != end; d.increment(ec)) {
                std::string name = d->path().filename().u8string();
                if (!taken.insert(name).second) continue;
                link_into(d->path(), out / d->path().filename());
            }
        }
    }
    std::error_code ec;
    for (fs::directory_iterator d(toolkit_dir, ec), end; !ec && d != end; d.increment(ec)) {
        std::string name = d->path().filename().u8string();
        std::string child_rel = rel.empty() ? name : rel + "/" + name;
        bool has_overlay_below = false;
        for (const auto& [k, v] : overlay)
            if (k == child_rel || k.rfind(child_rel + "/", 0) == 0) has_overlay_below = true;
        std::error_code ec2;
        if (has_overlay_below && fs::is_directory(d->path(), ec2)) {
            if (taken.count(name)) continue;
            taken.insert(name);
            fs::create_directory(out / d->path().filename());
            merge_dir(out / d->path().filename(), d->path(), child_rel, overlay);
            continue;
        }
        if (!taken.insert(name).second) continue;
        link_into(d->path(), out / d->path().filename());
    }
    // Overlay folders the toolkit lacks entirely (a toolkit without lib64, say).
    for (const auto& [k, v] : overlay) {
        std::string prefix = rel.empty() ? "" : rel + "/";
        if (k.rfind(prefix, 0) != 0) continue;
        std::string rest = k.substr(prefix.size());
        if (rest.empty() || rest.find('/') != std::string::npos) continue;
        if (taken.count(rest)) continue;
        taken.insert(rest);
        fs::create_directory(out / fs::u8path(rest));
        merge_dir(out / fs::u8path(rest), toolkit_dir / fs::u8path(rest), k, overlay);
    }
}

} // namespace

void build_view(const Resolved& r, const fs::path& folder, platform::Os os) {
    std::error_code ec;
    const Entry& tk = r.toolkit;
    const Entry& dnn = *r.cudnn;
    Overlay overlay;
    auto add = [&](const std::string& rel, const fs::path& src) {
        std::error_code e2;
        if (fs::is_directory(src, e2)) overlay[rel].push_back(src);
    };
    // Toolkit folders that receive cuDNN's libraries: the toolkit's own lib folders, or the
    // conventional one when it has none recorded.
    std::vector<std::string> tk_libs = tk.lib_dirs;
    if (tk_libs.empty()) tk_libs.push_back(os == platform::Os::Windows ? "lib/x64" : "lib64");
    // A toolkit with lib64 -> lib should show cuDNN under both names.
    if (os == platform::Os::Linux) {
        for (const char* extra : {"lib", "lib64"})
            if (fs::is_directory(tk.path / extra, ec) &&
                std::find(tk_libs.begin(), tk_libs.end(), std::string(extra)) == tk_libs.end())
                tk_libs.push_back(extra);
    }
    for (const auto& inc : dnn.include_dirs) add("include", dnn.path / fs::u8path(inc));
    for (const auto& lib : dnn.lib_dirs)
        for (const auto& tl : tk_libs) add(tl, dnn.path / fs::u8path(lib));
    for (const auto& bin : dnn.bin_dirs) add("bin", dnn.path / fs::u8path(bin));
    fs::create_directories(folder);
    merge_dir(folder, tk.path, "", overlay);
}

fs::path ensure_view(const Store& store, const Resolved& r, platform::Os os) {
    fs::path view = view_path(store, r);
    if (view.empty()) return view;
    std::error_code ec;
    if (fs::is_directory(view, ec)) return view;
    const Entry& tk = r.toolkit;
    const Entry& dnn = *r.cudnn;
    fs::create_directories(store.staging_dir());
    fs::path stage = store.staging_dir() /
                     fs::u8path("view-" + std::to_string(platform::process_id()) + "-" +
                                tk.id + "+" + dnn.id);
    fs::remove_all(stage, ec);
    try {
        build_view(r, stage, os);
    } catch (...) {
        fs::remove_all(stage, ec);
        throw;
    }
    fs::create_directories(store.views_dir());
    fs::rename(stage, view, ec);
    if (ec) {
        // Someone else made it first: theirs is as good as ours.
        std::string why = ec.message();
        fs::remove_all(stage, ec);
        if (!fs::is_directory(view, ec))
            throw std::runtime_error("cannot create the merged view " + view.u8string() + ": " +
                                     why + "; check that the store is writable");
    }
    return view;
}

} // namespace cvm
