// `cvm update`: new releases from the mirror's listings into the registry overlay.
#include "install/registry_update.h"

#include <algorithm>
#include <map>
#include <set>

#include "install/error.h"
#include "install/manifest.h"
#include "platform/platform.h"
#include "registry/index_listing.h"
#include "registry/overlay.h"
#include "registry/registry.h"

namespace cvm::install {

namespace fs = std::filesystem;

namespace {

using registry::ListingEntry;

// What one run fetches, in this order.
struct Todo {
    enum class Kind { CudaManifest, CudnnManifest, LegacyFolder } kind;
    Version version;   // as the name gives it
    std::string name;  // "redistrib_13.4.1.json", "v8.1.0/"
    std::string month; // the listing's date of a legacy folder
};

// A folder's entries: a file:// mirror's folder is read directly, else its HTML listing.
std::vector<ListingEntry> read_listing(const std::string& folder_url, const UpdateOptions& o) {
    fs::path local = file_url_path(folder_url);
    if (local.empty()) return registry::listing_entries(fetch_text(folder_url, o.download, o.max_listing), folder_url);
    std::vector<ListingEntry> out;
    std::error_code ec;
    fs::directory_iterator it(local, ec), end;
    if (ec)
        fail_operation("cannot read the folder " + local.u8string() + " (" + platform::error_text(ec.value()) +
                           "); check CVM_MIRROR",
                       "not_found");
    for (; it != end && out.size() < 10000; it.increment(ec)) {
        std::string name = it->path().filename().u8string();
        if (it->is_directory(ec)) name += "/";
        out.push_back({name, ""});
    }
    std::sort(out.begin(), out.end(), [](const ListingEntry& a, const ListingEntry& b) { return a.name < b.name; });
    return out;
}

bool is_date(const std::string& s) {
    if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
    for (std::size_t i : {0, 1, 2, 3, 5, 6, 8, 9})
        if (s[i] < '0' || s[i] > '9') return false;
    return true;
}

bool known_cuda(const registry::Registry& reg, const Version& v, const std::string& manifest) {
    return std::any_of(reg.cuda.begin(), reg.cuda.end(),
                       [&](const registry::CudaRelease& r) { return r.version == v || (!manifest.empty() && r.manifest == manifest); });
}

bool known_cudnn(const registry::Registry& reg, const Version& v, const std::string& manifest) {
    return std::any_of(reg.cudnn.begin(), reg.cudnn.end(), [&](const registry::CudnnRelease& r) {
        return r.version.has_prefix(v) || (!manifest.empty() && r.manifest == manifest);
    });
}

// The minimum drivers of a new toolkit, from the newest older release of its major that has them.
void infer_drivers(const registry::Registry& reg, registry::CudaRelease& r) {
    for (auto it = reg.cuda.rbegin(); it != reg.cuda.rend(); ++it) {
        if (it->version.major() != r.version.major() || !(it->version < r.version)) continue;
        if (!r.driver_linux && it->driver_linux) {
            r.driver_linux = it->driver_linux;
            r.inferred.push_back("driver_linux");
        }
        if (!r.driver_windows && it->driver_windows) {
            r.driver_windows = it->driver_windows;
            r.inferred.push_back("driver_windows");
        }
    }
}

// The CUDA minors a new build for `cuda` supports: those of the newest known build for the same
// variant, widened to the newest known toolkit of a per-major variant's major.
void infer_supports(const registry::Registry& reg, registry::CudnnBuild& b) {
    b.supports_min = b.cuda.parts.size() == 2 ? b.cuda : Version{{b.cuda.major(), 0}};
    b.supports_max = b.supports_min;
    for (auto it = reg.cudnn.rbegin(); it != reg.cudnn.rend(); ++it) {
        auto same = std::find_if(it->builds.begin(), it->builds.end(),
                                 [&](const registry::CudnnBuild& o) { return o.cuda == b.cuda; });
        if (same == it->builds.end()) continue;
        b.supports_min = same->supports_min;
        b.supports_max = same->supports_max;
        break;
    }
    if (b.cuda.parts.size() == 1)
        for (const auto& c : reg.cuda)
            if (c.version.major() == b.cuda.major() && b.supports_max < Version{{c.version.major(), c.version.minor()}})
                b.supports_max = Version{{c.version.major(), c.version.minor()}};
}

registry::CudaRelease cuda_from_manifest(const Manifest& m, const Todo& t, const std::string& url,
                                         const registry::Registry& known) {
    if (!m.release_product.empty() && m.release_product != "cuda")
        fail_input(url + ": a manifest of " + printable(m.release_product) + ", not of the CUDA toolkit");
    if (!m.release_label.empty() && m.release_label != t.version.str())
        fail_input(url + ": says it is release " + printable(m.release_label) + ", not " + t.version.str());
    if (m.components.empty()) fail_input(url + ": lists no components");
    registry::CudaRelease r;
    r.version = t.version;
    r.manifest = t.name;
    r.source = "cvm update: " + url;
    if (is_date(m.release_date)) r.date = m.release_date;
    else r.inferred.push_back("date");
    if (const auto* c = m.find("cuda_cudart")) r.cudart = parse_version(c->version, 3, 4);
    if (const auto* c = m.find("cuda_nvcc")) r.nvcc = parse_version(c->version, 3, 4);
    infer_drivers(known, r);
    return r;
}

registry::CudnnRelease cudnn_from_manifest(const Manifest& m, const Todo& t, const std::string& url,
                                           const registry::Registry& known) {
    if (!m.release_product.empty() && m.release_product != "cudnn")
        fail_input(url + ": a manifest of " + printable(m.release_product) + ", not of cuDNN");
    const ManifestComponent* c = m.find("cudnn");
    if (!c) fail_input(url + ": has no \"cudnn\" component");
    auto version = parse_version(c->version, 4, 4);
    if (!version || !version->has_prefix(t.version))
        fail_input(url + ": its cudnn version \"" + printable(c->version) + "\" is not " + t.version.str() +
                   " with a build number");
    registry::CudnnRelease r;
    r.version = *version;
    r.manifest = t.name;
    r.source = "cvm update: " + url;
    if (is_date(m.release_date)) r.date = m.release_date;
    else r.inferred.push_back("date");
    std::set<std::string> variants(c->cuda_variants.begin(), c->cuda_variants.end());
    for (const auto& [platform, by_variant] : c->platforms)
        for (const auto& [variant, artifact] : by_variant) {
            (void)artifact;
            if (variant.rfind("cuda", 0) == 0) variants.insert(variant.substr(4));
        }
    for (const auto& v : variants) {
        auto cuda = parse_version(v, 1, 2);
        if (!cuda || cuda->major() > 99) continue;
        registry::CudnnBuild b;
        b.cuda = *cuda;
        infer_supports(known, b);
        r.builds.push_back(std::move(b));
    }
    if (r.builds.empty()) fail_input(url + ": names no CUDA variant (cuda_variant) for its cudnn");
    r.inferred.push_back("builds.supports");
    return r;
}

// The releases a legacy folder's archives make (usually one).
std::vector<registry::CudnnRelease> cudnn_from_legacy(const std::vector<ListingEntry>& entries, const Todo& t,
                                                      const std::string& url, const registry::Registry& known) {
    std::map<std::string, registry::CudnnRelease> releases; // by version
    for (const auto& e : entries) {
        auto a = registry::legacy_archive(e.name);
        if (!a || !a->cudnn.has_prefix(t.version)) continue;
        auto& r = releases[a->cudnn.str()];
        if (r.builds.empty() && r.source.empty()) {
            r.version = a->cudnn;
            r.date = t.month;
            r.source = "cvm update: " + url + " (folder listing)";
            r.inferred = {"date", "builds.supports"};
        }
        auto b = std::find_if(r.builds.begin(), r.builds.end(),
                              [&](const registry::CudnnBuild& x) { return x.cuda == a->cuda; });
        if (b == r.builds.end()) {
            registry::CudnnBuild nb;
            nb.cuda = a->cuda;
            infer_supports(known, nb);
            r.builds.push_back(std::move(nb));
            b = r.builds.end() - 1;
        }
        (a->windows ? b->windows_archives : b->linux_archives).push_back(e.name);
    }
    if (releases.empty())
        fail_input(url + ": the listing holds no cuDNN archive of " + t.version.str() +
                   " (cudnn-<cuda>-linux-x64-v<version>.tgz or cudnn-<cuda>-windows-x64-v<version>.zip)");
    std::vector<registry::CudnnRelease> out;
    for (auto& [v, r] : releases) {
        (void)v;
        std::sort(r.builds.begin(), r.builds.end(),
                  [](const registry::CudnnBuild& a, const registry::CudnnBuild& b) { return a.cuda < b.cuda; });
        out.push_back(std::move(r));
    }
    return out;
}

} // namespace

UpdateReport update_registry(const registry::Registry& shipped, const UpdateOptions& o) {
    UpdateReport rep;
    registry::Overlay old;
    registry::OverlayState state;
    registry::read_overlay(o.cache_dir, old, state);
    rep.file = state.file;

    // Rows of the last update the shipped registry still lacks are kept.
    registry::Overlay next;
    next.mirror = o.mirror;
    next.updated = registry::utc_timestamp(o.now);
    for (const auto& r : old.cuda)
        if (!known_cuda(shipped, r.version, "")) next.cuda.push_back(r);
    for (const auto& r : old.cudnn)
        if (!known_cudnn(shipped, r.version, "")) next.cudnn.push_back(r);
    registry::Registry known = shipped;
    registry::merge_overlay(known, next);

    std::vector<Todo> todo;
    auto listing = [&](const std::string& folder, bool first) -> std::vector<ListingEntry> {
        if (first) return read_listing(folder, o); // unreachable: fail fast, nothing written
        try {
            return read_listing(folder, o);
        } catch (const InstallError& e) {
            rep.problems.push_back(e.what());
            return {};
        }
    };
    const std::string cuda_folder = o.mirror + "/cuda/redist/";
    auto cuda_entries = listing(cuda_folder, true);
    std::size_t cuda_manifests = 0;
    for (const auto& e : cuda_entries)
        if (auto v = registry::manifest_version(e.name); v && v->parts.size() == 3) {
            ++cuda_manifests;
            if (!known_cuda(known, *v, e.name)) todo.push_back({Todo::Kind::CudaManifest, *v, e.name, ""});
        }
    if (cuda_manifests == 0)
        rep.problems.push_back(cuda_folder + ": the listing names no redistrib_X.Y.Z.json; is CVM_MIRROR a copy "
                                             "of NVIDIA's download folders?");

    const std::string cudnn_folder = o.mirror + "/cudnn/redist/";
    auto cudnn_entries = listing(cudnn_folder, false);
    std::set<std::string> listed;
    for (const auto& e : cudnn_entries)
        if (auto v = registry::manifest_version(e.name)) listed.insert(v->str());
    for (const auto& e : cudnn_entries) {
        auto v = registry::manifest_version(e.name);
        if (!v) continue;
        // redistrib_8.9.7.29.json beside redistrib_8.9.7.json: the same release.
        if (v->parts.size() == 4 && listed.count(Version{{v->parts[0], v->parts[1], v->parts[2]}}.str())) continue;
        if (!known_cudnn(known, *v, e.name)) todo.push_back({Todo::Kind::CudnnManifest, *v, e.name, ""});
    }

    const std::string legacy_folder = o.mirror + "/redist/cudnn/";
    for (const auto& e : listing(legacy_folder, false))
        if (auto v = registry::legacy_folder_version(e.name); v && !known_cudnn(known, *v, ""))
            todo.push_back({Todo::Kind::LegacyFolder, *v, e.name, e.month});

    // Newest first within each kind, so a limited run brings the releases people look for.
    std::stable_sort(todo.begin(), todo.end(), [](const Todo& a, const Todo& b) {
        if (a.kind != b.kind) return a.kind < b.kind;
        return b.version < a.version;
    });
    if (todo.size() > o.max_fetches) rep.left = todo.size() - o.max_fetches;
    todo.resize(std::min<std::size_t>(todo.size(), o.max_fetches));

    for (const Todo& t : todo) {
        std::string url;
        try {
            if (t.kind == Todo::Kind::LegacyFolder) {
                url = legacy_folder + t.name;
                for (auto& r : cudnn_from_legacy(read_listing(url, o), t, url, known)) {
                    if (known_cudnn(known, r.version, "")) continue;
                    rep.added.push_back("cuDNN " + r.version.str());
                    next.cudnn.push_back(r);
                    known.cudnn.push_back(std::move(r));
                }
                continue;
            }
            bool cuda = t.kind == Todo::Kind::CudaManifest;
            url = (cuda ? cuda_folder : cudnn_folder) + t.name;
            Manifest m = parse_manifest(fetch_text(url, o.download, o.max_manifest), url);
            if (cuda) {
                auto r = cuda_from_manifest(m, t, url, known);
                rep.added.push_back("CUDA " + r.version.str());
                next.cuda.push_back(r);
                known.cuda.push_back(std::move(r));
                std::sort(known.cuda.begin(), known.cuda.end(),
                          [](const auto& a, const auto& b) { return a.version < b.version; });
            } else {
                auto r = cudnn_from_manifest(m, t, url, known);
                if (known_cudnn(known, r.version, "")) continue;
                rep.added.push_back("cuDNN " + r.version.str());
                next.cudnn.push_back(r);
                known.cudnn.push_back(std::move(r));
            }
        } catch (const InstallError& e) {
            std::string what = e.what();
            rep.problems.push_back(what.find(url) == std::string::npos ? url + ": " + what : what);
        }
    }

    auto by_version = [](const auto& a, const auto& b) { return a.version < b.version; };
    std::sort(next.cuda.begin(), next.cuda.end(), by_version);
    std::sort(next.cudnn.begin(), next.cudnn.end(), by_version);
    std::string text = registry::overlay_text(next);
    try {
        registry::parse_overlay(text, rep.file.u8string()); // what is written reads back
    } catch (const registry::RegistryError& e) {
        fail_operation(std::string("the registry overlay cvm made does not read back (") + e.what() +
                       "); nothing was written; report this with the mirror's address");
    }
    fs::create_directories(o.cache_dir);
    platform::write_file_atomically(rep.file, text);
    rep.releases = next.cuda.size() + next.cudnn.size();
    return rep;
}

} // namespace cvm::install
