#include "image/layer_plan.h"

#include <algorithm>
#include <cerrno>
#include <dirent.h>
#include <map>
#include <set>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>
#include <utility>

#include "config/trust.h"
#include "image/runtime_filter.h"

namespace cvm::image {

namespace {

[[noreturn]] void fail(const char* what, const fs::path& p, int error) {
    throw fs::filesystem_error(what, p, std::error_code(error, std::generic_category()));
}

std::vector<std::string> sorted_names(const fs::path& dir) {
    DIR* d = ::opendir(dir.c_str());
    if (!d) fail("cannot read the folder", dir, errno);
    std::vector<std::string> names;
    errno = 0;
    while (dirent* e = ::readdir(d)) {
        std::string n = e->d_name;
        if (n != "." && n != "..") names.push_back(std::move(n));
    }
    int error = errno;
    ::closedir(d);
    if (error) fail("cannot read the folder", dir, error);
    std::sort(names.begin(), names.end());
    return names;
}

std::string join(const std::string& dir, const std::string& name) {
    return dir.empty() ? name : dir + "/" + name;
}

const char* type_text(mode_t m) {
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISSOCK(m)) return "a socket";
    if (S_ISCHR(m) || S_ISBLK(m)) return "a device";
    return "not a file";
}


// Nothing another user could change goes into an image: a folder they could add to, a file they
// could rewrite (trust.h's rules, as for what cvm runs).
void check_owner(const fs::path& p, const struct stat& st) {
    check_trusted("to put into an image", p, platform::meta_of_stat(st));
}

class Walker {
public:
    Walker(std::vector<LayerTree> trees, const PlanOptions& options)
        : trees_(std::move(trees)), runtime_(options.runtime) {
        for (const auto& r : options.redirects) {
            struct stat st {};
            if (::stat(r.file.c_str(), &st) == 0) redirects_[{st.st_dev, st.st_ino}] = r.layer;
        }
        std::sort(trees_.begin(), trees_.end(),
                  [](const LayerTree& a, const LayerTree& b) { return a.layer < b.layer; });
        for (auto& t : trees_) {
            t.host = t.host.lexically_normal();
            std::error_code ec;
            fs::path canonical = fs::canonical(t.host, ec);
            roots_.push_back({t.host, &t});
            if (!ec && canonical != t.host) roots_.push_back({canonical, &t});
        }
        // The deepest root first, so a link is mapped into the innermost tree that holds it.
        std::stable_sort(roots_.begin(), roots_.end(), [](const auto& a, const auto& b) {
            return a.first.native().size() > b.first.native().size();
        });
    }

    LayerPlan run() {
        for (const auto& t : trees_) {
            add_parents(t.layer);
            struct stat st {};
            if (::stat(t.host.c_str(), &st) != 0) fail("cannot read the folder", t.host, errno);
            if (!S_ISDIR(st.st_mode)) fail("cannot read the folder", t.host, ENOTDIR);
            check_owner(t.host, st);
            active_.insert({st.st_dev, st.st_ino});
            leave_out_ = &t.leave_out;
            walk(t.host, t.host, t.layer, "", t.made_by_cvm);
            active_.clear();
        }
        return std::move(plan_);
    }

private:
    using Key = std::pair<dev_t, ino_t>;

    void add_parents(const std::string& layer) {
        for (std::size_t at = 0; at != std::string::npos;) {
            at = layer.find('/', at + 1);
            std::string dir = layer.substr(0, at);
            if (made_.insert(dir).second) add_dir(dir);
        }
    }

    void add_dir(const std::string& layer) {
        LayerEntry e;
        e.type = LayerEntry::Type::Directory;
        e.path = layer;
        e.mode = 0755;
        plan_.entries.push_back(std::move(e));
    }

    void add_file(const fs::path& source, const std::string& layer, const struct stat& st) {
        LayerEntry e;
        e.path = layer;
        e.mode = (st.st_mode & 0111) ? 0755 : 0644;
        auto [it, first] = seen_.emplace(Key{st.st_dev, st.st_ino}, layer);
        if (!first) {
            e.type = LayerEntry::Type::Hardlink;
            e.target = it->second;
        } else {
            e.type = LayerEntry::Type::File;
            e.source = source;
            e.size = static_cast<std::uint64_t>(st.st_size);
            plan_.files += 1;
            plan_.bytes += e.size;
        }
        plan_.entries.push_back(std::move(e));
    }

    void add_link(const std::string& layer, const std::string& target) {
        LayerEntry e;
        e.type = LayerEntry::Type::Symlink;
        e.path = layer;
        e.target = target;
        e.mode = 0777;
        plan_.entries.push_back(std::move(e));
    }

    // What `--runtime` leaves out below `p`: its regular files, links not followed.
    void count_left_out(const fs::path& p) {
        struct stat st {};
        if (::lstat(p.c_str(), &st) != 0) return;
        if (S_ISREG(st.st_mode)) {
            plan_.left_out_files += 1;
            plan_.left_out_bytes += static_cast<std::uint64_t>(st.st_size);
        } else if (S_ISDIR(st.st_mode)) {
            std::error_code ec;
            for (fs::recursive_directory_iterator it(p, ec), end; !ec && it != end;
                 it.increment(ec)) {
                if (::lstat(it->path().c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
                    plan_.left_out_files += 1;
                    plan_.left_out_bytes += static_cast<std::uint64_t>(st.st_size);
                }
            }
        }
    }

    // The layer path of a host path inside one of the trees, or "" when it is in none. `rel`
    // gets its path inside that tree.
    std::string mapped(const fs::path& p, std::string& rel) const {
        for (const auto& [root, tree] : roots_) {
            if (!path_within(p, root)) continue;
            rel = p.native().size() > root.native().size()
                      ? p.lexically_relative(root).generic_string()
                      : "";
            return rel.empty() ? tree->layer : tree->layer + "/" + rel;
        }
        return {};
    }

    // `made_by_cvm`: `dir` is a folder cvm made (an assembled root, a view), whose links out
    // are followed.
    void walk(const fs::path& dir, const fs::path& context, const std::string& layer,
              const std::string& rel, bool made_by_cvm) {
        for (const auto& name : sorted_names(dir)) {
            fs::path p = dir / name;
            std::string lp = join(layer, name), rp = join(rel, name);
            if (std::find(leave_out_->begin(), leave_out_->end(), rp) != leave_out_->end())
                continue;
            if (runtime_ && build_only(rp)) {
                count_left_out(p);
                continue;
            }
            struct stat st {};
            if (::lstat(p.c_str(), &st) != 0) fail("cannot read", p, errno);
            if (S_ISDIR(st.st_mode)) {
                check_owner(p, st);
                add_dir(lp);
                walk(p, context, lp, rp, made_by_cvm);
            } else if (S_ISREG(st.st_mode)) {
                check_owner(p, st);
                add_file(p, lp, st);
            } else if (S_ISLNK(st.st_mode)) {
                // A link's own mode means nothing: its owner alone is judged.
                check_trusted("to put into an image", p,
                              platform::owner_only(platform::meta_of_stat(st)));
                link(p, dir, context, lp, rp, made_by_cvm);
            } else {
                plan_.skipped.push_back(p.u8string() + " (" + type_text(st.st_mode) + ")");
            }
        }
    }

    void link(const fs::path& p, const fs::path& dir, const fs::path& context,
              const std::string& lp, const std::string& rp, bool made_by_cvm) {
        std::error_code ec;
        fs::path text = fs::read_symlink(p, ec);
        if (ec) fail("cannot read the link", p, ec.value());
        if (!redirects_.empty()) {
            struct stat st {};
            auto it = ::stat(p.c_str(), &st) == 0 ? redirects_.find({st.st_dev, st.st_ino})
                                                  : redirects_.end();
            if (it != redirects_.end()) {
                add_link(lp, relative_to(it->second, lp));
                return;
            }
        }
        fs::path resolved = (text.is_absolute() ? text : dir / text).lexically_normal();
        // Inside its own folder: the layer has the same folder, so the link works as it is.
        if (text.is_relative() && path_within(resolved, context)) {
            add_link(lp, text.native());
            return;
        }
        // Into a folder of the layer: a relative link to where that is in the layer.
        std::string target_rel;
        std::string target = mapped(resolved, target_rel);
        if (!target.empty()) {
            if (runtime_ && !target_rel.empty() && build_only(target_rel))
                return; // its target is left out
            add_link(lp, relative_to(target, lp));
            return;
        }
        // Out of the layer. Only a link cvm made is followed; any other (one planted in an
        // imported toolkit, `include/up -> ../..`) is left out, and what it points to never read.
        struct stat st {};
        if (::stat(p.c_str(), &st) != 0) {
            add_link(lp, text.native()); // a link to nothing stays one
            return;
        }
        if (!made_by_cvm) {
            plan_.skipped.push_back(p.u8string() + " (a link out of its folder to " +
                                    text.u8string() + ", not followed)");
            return;
        }
        fs::path real = fs::canonical(p, ec);
        if (ec) fail("cannot read the link", p, ec.value());
        if (S_ISREG(st.st_mode)) {
            check_owner(real, st);
            check_folder(real.parent_path());
            add_file(p, lp, st);
            plan_.outside.push_back({lp, real, false});
        } else if (S_ISDIR(st.st_mode)) {
            check_owner(real, st);
            check_folder(real.parent_path());
            if (!active_.insert({st.st_dev, st.st_ino}).second) {
                add_link(lp, text.native()); // a loop: keep the link
                return;
            }
            add_dir(lp);
            plan_.outside.push_back({lp, real, true});
            // Its own links are judged as an entry's: cvm did not make that folder.
            walk(real, real, lp, rp, false);
            active_.erase({st.st_dev, st.st_ino});
        } else {
            plan_.skipped.push_back(p.u8string() + " (" + type_text(st.st_mode) + ")");
        }
    }

    // The folder holding a file or folder a link of cvm's leads to: another user must not be
    // able to swap what is in it.
    static void check_folder(const fs::path& dir) {
        struct stat st {};
        if (::stat(dir.c_str(), &st) != 0) fail("cannot read the folder", dir, errno);
        check_owner(dir, st);
    }

    // The text of a link at `link` (a layer path) that leads to `target` (another).
    static std::string relative_to(const std::string& target, const std::string& link) {
        std::string from = link.substr(0, link.rfind('/'));
        return fs::path("/" + target).lexically_relative("/" + from).generic_string();
    }

    std::vector<LayerTree> trees_;
    bool runtime_;
    std::map<Key, std::string> redirects_;
    const std::vector<std::string>* leave_out_ = nullptr;
    std::vector<std::pair<fs::path, const LayerTree*>> roots_;
    LayerPlan plan_;
    std::set<std::string> made_;
    std::map<Key, std::string> seen_;
    std::set<Key> active_;
};

} // namespace

bool path_within(const fs::path& p, const fs::path& root) {
    auto a = p.native(), r = root.native();
    while (r.size() > 1 && r.back() == '/')
        r.pop_back();
    return a == r || (a.size() > r.size() && a.compare(0, r.size(), r) == 0 &&
                      (r == "/" || a[r.size()] == '/'));
}


LayerPlan plan_layer(std::vector<LayerTree> trees, const PlanOptions& options) {
    return Walker(std::move(trees), options).run();
}

} // namespace cvm::image
