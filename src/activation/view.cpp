#include "activation/view.h"

#include <algorithm>
#include <map>
#include <set>
#include <system_error>

#include "activation/host_compiler_choice.h"
#include "activation/shims.h"

namespace cvm {

namespace {

// Written last into a finished view; a view without it (made by an older cvm, or marked stale
// when the host compiler choice changed) is made again. The number is the view's format.
constexpr const char* kViewMark = ".cvm-view";
constexpr const char* kViewFormat = "2\n";

std::string view_name(const Resolved& r) {
    return needs_merged_view(r) ? r.active() : r.toolkit.id;
}

} // namespace

bool needs_merged_view(const Resolved& r) {
    // A cuDNN or NCCL inside the toolkit's own folder needs no merging. Entries hold canonical
    // paths (import resolves links, installs live in the store), so comparing the names is
    // enough; this runs in the shim before every tool.
    for (const Entry* e : r.libraries())
        if (e->path != r.toolkit.path) return true;
    return false;
}

fs::path view_path(const Store& store, const Resolved& r) {
    fs::path view = store.views_dir() / fs::u8path(view_name(r));
    if (needs_merged_view(r)) return view;
    // A toolkit's own view exists only while its nvcc needs a host compiler it cannot read from
    // NVCC_CCBIN (refresh_toolkit_views): one stat.
    std::error_code ec;
    return fs::is_directory(view, ec) ? view : fs::path();
}

namespace {

// cuDNN and NCCL folders that appear inside a view folder (relative path in the view -> source
// folders). A key with no sources still makes its folder real (a folder of links rather than one
// link): the view's bin, so that nvcc started from there takes the view's folders.
using Overlay = std::map<std::string, std::vector<fs::path>>;

void link_into(const fs::path& target, const fs::path& link) {
    std::error_code ec;
    bool dir = fs::is_directory(target, ec);
    platform::make_link(target, link, dir);
}

// A relative link of the toolkit that stays inside it (lib64 -> lib, include ->
// targets/x86_64-linux/include, targets/x86_64-linux/include -> ../../include) is made again as
// it is, so that it points into the view, whose folders hold cuDNN too. `rel` is the link's path
// inside the toolkit. False when `entry` is no such link.
bool copy_inner_link(const fs::path& entry, const std::string& rel, const fs::path& link) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(entry, ec))) return false;
    fs::path target = fs::read_symlink(entry, ec);
    if (ec || target.empty() || target.is_absolute()) return false;
    fs::path inside = (fs::u8path(rel).parent_path() / target).lexically_normal();
    if (inside.empty() || *inside.begin() == "..") return false;
    fs::create_symlink(target, link, ec);
    return !ec;
}

// libcudnn.so -> libcudnn.so.9 where a build ships only the versioned name (the wheels do): the
// linker's -lcudnn needs the bare one. Only names the folder lacks; the shortest version wins.
void add_linker_names(const fs::path& out, const std::set<std::string>& names,
                      std::set<std::string>& taken) {
    std::map<std::string, std::string> best; // libX.so -> libX.so.N...
    for (const auto& name : names) {
        size_t so = name.find(".so.");
        if (name.rfind("lib", 0) != 0 || so == std::string::npos) continue;
        std::string bare = name.substr(0, so + 3);
        auto it = best.find(bare);
        if (it == best.end() || name.size() < it->second.size()) best[bare] = name;
    }
    for (const auto& [bare, versioned] : best) {
        if (!taken.insert(bare).second) continue;
        std::error_code ec;
        fs::create_symlink(versioned, out / fs::u8path(bare), ec);
    }
}

struct MergeContext {
    const Overlay& overlay;
    platform::Os os;
};

// Fills `out` (an empty real folder) with the union of `toolkit_dir`'s entries and the overlay
// folders registered for `rel`; cuDNN's and NCCL's files win over same-named toolkit files.
void merge_dir(const fs::path& out, const fs::path& toolkit_dir, const std::string& rel,
               const MergeContext& m) {
    std::set<std::string> taken;
    auto it = m.overlay.find(rel);
    if (it != m.overlay.end() && !it->second.empty()) {
        std::set<std::string> overlaid;
        for (const auto& src : it->second) {
            std::error_code ec;
            for (fs::directory_iterator d(src, ec), end; !ec && d != end; d.increment(ec)) {
                std::string name = d->path().filename().u8string();
                if (!taken.insert(name).second) continue;
                overlaid.insert(name);
                link_into(d->path(), out / d->path().filename());
            }
        }
        if (m.os == platform::Os::Linux) add_linker_names(out, overlaid, taken);
    }
    std::error_code ec;
    for (fs::directory_iterator d(toolkit_dir, ec), end; !ec && d != end; d.increment(ec)) {
        std::string name = d->path().filename().u8string();
        std::string child_rel = rel.empty() ? name : rel + "/" + name;
        if (taken.count(name)) continue;
        if (m.os == platform::Os::Linux &&
            copy_inner_link(d->path(), child_rel, out / d->path().filename())) {
            taken.insert(name);
            continue;
        }
        bool has_overlay_below = false;
        for (const auto& [k, v] : m.overlay)
            if (k == child_rel || k.rfind(child_rel + "/", 0) == 0) has_overlay_below = true;
        std::error_code ec2;
        if (has_overlay_below && fs::is_directory(d->path(), ec2)) {
            taken.insert(name);
            fs::create_directory(out / d->path().filename());
            merge_dir(out / d->path().filename(), d->path(), child_rel, m);
            continue;
        }
        taken.insert(name);
        link_into(d->path(), out / d->path().filename());
    }
    // Overlay folders the toolkit lacks entirely (a toolkit without lib64, say).
    for (const auto& [k, v] : m.overlay) {
        std::string prefix = rel.empty() ? "" : rel + "/";
        if (k.rfind(prefix, 0) != 0) continue;
        std::string rest = k.substr(prefix.size());
        if (rest.empty()) continue;
        std::string first = rest.substr(0, rest.find('/'));
        if (taken.count(first)) continue;
        taken.insert(first);
        fs::create_directory(out / fs::u8path(first));
        merge_dir(out / fs::u8path(first), toolkit_dir / fs::u8path(first), prefix + first, m);
    }
}

// Where a toolkit folder really is, relative to the toolkit (include ->
// targets/x86_64-linux/include in the runfile's layout): cuDNN's files go there, and the links that
// lead to it show them.
std::string inner_real_path(const fs::path& toolkit, const std::string& rel) {
    std::error_code ec;
    fs::path real = fs::canonical(toolkit / fs::u8path(rel), ec);
    fs::path root = fs::canonical(toolkit, ec);
    if (ec || real.empty()) return rel;
    fs::path inside = real.lexically_relative(root);
    if (inside.empty() || *inside.begin() == "..") return rel;
    return inside.generic_u8string();
}

bool view_current(const fs::path& view) {
    std::error_code ec;
    return fs::is_regular_file(view / kViewMark, ec);
}

} // namespace

void fill_view(const Store& store, const Resolved& r, const fs::path& folder, platform::Os os) {
    const Entry& tk = r.toolkit;
    std::error_code ec;
    Overlay overlay;
    auto add = [&](const std::string& rel, const fs::path& src) {
        std::error_code e2;
        if (fs::is_directory(src, e2)) overlay[rel].push_back(src);
    };
    for (const auto& b : tk.bin_dirs)
        overlay[b]; // real folders: nvcc started there finds the view
    // nvcc's own -I and -L name targets/<arch>/include and lib: real folders in the view, whose
    // links to ../../include and ../../lib then lead to the view's.
    if (os == platform::Os::Linux)
        for (fs::directory_iterator t(tk.path / "targets", ec), end; !ec && t != end;
             t.increment(ec))
            overlay["targets/" + t->path().filename().u8string()];
    if (needs_merged_view(r)) {
        // Toolkit folders that receive cuDNN's and NCCL's libraries: the toolkit's own lib folders,
        // or the conventional one when it has none recorded.
        std::vector<std::string> tk_libs = tk.lib_dirs;
        if (tk_libs.empty()) tk_libs.push_back(os == platform::Os::Windows ? "lib/x64" : "lib64");
        // A toolkit with lib64 and lib as two real folders shows them under both names.
        if (os == platform::Os::Linux) {
            for (const char* extra : {"lib", "lib64"})
                if (fs::is_directory(tk.path / extra, ec) &&
                    std::find(tk_libs.begin(), tk_libs.end(), std::string(extra)) == tk_libs.end())
                    tk_libs.push_back(extra);
        }
        std::set<std::string> lib_targets;
        for (const auto& tl : tk_libs)
            lib_targets.insert(os == platform::Os::Linux ? inner_real_path(tk.path, tl) : tl);
        std::string include =
            os == platform::Os::Linux ? inner_real_path(tk.path, "include") : "include";
        // cuDNN's folders, then NCCL's: an earlier overlay wins a name both have.
        for (const Entry* e : r.libraries()) {
            for (const auto& inc : e->include_dirs)
                add(include, e->path / fs::u8path(inc));
            for (const auto& lib : e->lib_dirs)
                for (const auto& tl : lib_targets)
                    add(tl, e->path / fs::u8path(lib));
            for (const auto& bin : e->bin_dirs)
                add("bin", e->path / fs::u8path(bin));
        }
    }

    fs::create_directories(folder);
    merge_dir(folder, tk.path, "", MergeContext{overlay, os});
    // nvcc reads NVCC_CCBIN only from CUDA 12.0: for an older one that needs a host compiler
    // handed over, the view's nvcc is cvm's shim, which adds -ccbin and starts the real one
    // as if from here (shims/shim.cpp), so that `$CUDA_HOME/bin/nvcc` in a Makefile gets it.
    if (os == platform::Os::Linux && !tk.bin_dirs.empty()) {
        HostCompiler handed = handed_host_compiler(store.root(), tk.id);
        fs::path nvcc = folder / fs::u8path(tk.bin_dirs.front()) / "nvcc";
        if (!handed.path.empty() && !handed.via_env &&
            fs::is_symlink(fs::symlink_status(nvcc, ec))) {
            fs::remove(nvcc, ec);
            platform::make_link(shim_binary(), nvcc, false);
        }
    }
    platform::write_file_atomically(folder / kViewMark, kViewFormat);
}

namespace {

// Makes `view` again from a staging folder and puts it in place of what is there (an older
// format, or a stale one).
fs::path build_view(const Store& store, const Resolved& r, const fs::path& view, platform::Os os) {
    std::error_code ec;
    fs::create_directories(store.staging_dir());
    fs::path stage =
        store.staging_dir() / fs::u8path("view-" + std::to_string(platform::process_id()) + "-" +
                                         view.filename().u8string());
    fs::remove_all(stage, ec);
    try {
        fill_view(store, r, stage, os);
    } catch (...) {
        fs::remove_all(stage, ec);
        throw;
    }
    fs::create_directories(store.views_dir());
    fs::path old;
    if (fs::exists(fs::symlink_status(view, ec))) {
        old =
            store.staging_dir() / fs::u8path("view-old-" + std::to_string(platform::process_id()) +
                                             "-" + view.filename().u8string());
        fs::remove_all(old, ec);
        fs::rename(view, old, ec);
    }
    fs::rename(stage, view, ec);
    if (ec) {
        // Someone else made it first: theirs is as good as ours.
        std::string why = ec.message();
        fs::remove_all(stage, ec);
        if (!fs::is_directory(view, ec))
            throw std::runtime_error("cannot create the merged view " + view.u8string() + ": " +
                                     why + "; check that the store is writable");
    }
    if (!old.empty()) fs::remove_all(old, ec);
    return view;
}

} // namespace

fs::path ensure_view(const Store& store, const Resolved& r, platform::Os os) {
    fs::path view = view_path(store, r);
    if (view.empty() || view_current(view)) return view;
    return build_view(store, r, view, os);
}

void refresh_toolkit_views(const Store& store, const Entry& toolkit, platform::Os os) {
    std::error_code ec;
    HostCompiler handed = handed_host_compiler(store.root(), toolkit.id);
    bool own_view = os == platform::Os::Linux && !handed.path.empty() && !handed.via_env;
    // Every view of the toolkit is made again at its next use (its nvcc may have to change).
    for (fs::directory_iterator it(store.views_dir(), ec), end; !ec && it != end;
         it.increment(ec)) {
        std::string name = it->path().filename().u8string();
        if (name == toolkit.id || name.rfind(toolkit.id + "+", 0) == 0) {
            std::error_code e2;
            fs::remove(it->path() / kViewMark, e2);
        }
    }
    fs::path mine = store.views_dir() / fs::u8path(toolkit.id);
    if (own_view) {
        Resolved r;
        r.toolkit = toolkit;
        build_view(store, r, mine, os);
    } else {
        fs::remove_all(mine, ec);
    }
}

Layout selection_layout(const Store& store, const Resolved& r, platform::Os os) {
    Layout layout = layout_of(r, view_path(store, r), os);
    layout.host_compiler = handed_host_compiler(store.root(), r.toolkit.id);
    return layout;
}

} // namespace cvm
