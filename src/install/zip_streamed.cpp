#include "install/zip_streamed.h"

#include "install/error.h"
#include "install/zip_directory.h"
#include "platform/platform.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

namespace cvm::install {

namespace fs = std::filesystem;

namespace {

// Longer targets are not links any system makes (PATH_MAX).
constexpr std::uint64_t kMaxLinkTarget = 4096;

class Settler {
public:
    Settler(const fs::path& zip, const fs::path& root, ExtractResult& streamed, std::string name)
        : zip_(zip), root_(root), streamed_(streamed), name_(std::move(name)) {}

    std::size_t run(const ExtractOptions& options) {
        std::error_code ec;
        fs::path root = fs::canonical(root_, ec);
        if (ec) fail_operation("cannot resolve " + root_.u8string() + ": " + ec.message());
        root_ = root; // the scratch folder goes beside it, links are resolved within it
        index_central();
        std::set<std::string> again;
        std::vector<ExtractedEntry*> links;
        compare(again, links);
        if (!again.empty()) read_again(again, options);
        for (ExtractedEntry* e : links)
            make_link(*e);
        apply_modes();
        verify_symlinks(root_, streamed_.entries, name_);
        return again.size();
    }

private:
    [[noreturn]] void disagree(const std::string& entry, const std::string& why) const {
        fail_input("archive " + name_ + " refused: entry \"" + entry + "\" " + why +
                   " (its local header and its central directory disagree)");
    }
    [[noreturn]] void refuse(const std::string& entry, const std::string& why) const {
        fail_input("archive " + name_ + " refused: entry \"" + entry + "\": " + why);
    }

    void index_central() {
        central_ = read_zip_directory(zip_);
        for (const auto& c : central_) {
            std::string why;
            std::string path = normalize_entry_path(c.name, &why);
            if (path.empty()) refuse(c.name, why);
            if (path == ".") continue;
            if (!by_path_.emplace(path, &c).second)
                disagree(path, "is listed twice in the central directory");
            if (c.symlink) links_.insert(path);
        }
    }

    // Names and types must agree; files whose bytes differ go to `again`, files the central
    // directory calls symlinks (with the right bytes) to `links`.
    void compare(std::set<std::string>& again, std::vector<ExtractedEntry*>& links) {
        std::set<std::string> seen;
        for (auto& e : streamed_.entries) {
            // Nothing is written through a link, whichever came first.
            for (auto slash = e.path.find('/'); slash != std::string::npos;
                 slash = e.path.find('/', slash + 1))
                if (links_.count(e.path.substr(0, slash)))
                    refuse(e.path, "goes through the symlink \"" + e.path.substr(0, slash) + "\"");
            auto it = by_path_.find(e.path);
            if (it == by_path_.end()) disagree(e.path, "is not in the central directory");
            const ZipCentralEntry& c = *it->second;
            seen.insert(e.path);
            bool folder = e.type == ExtractedEntry::Type::Directory;
            if (folder != c.directory)
                disagree(e.path, folder ? "is a folder, but a file in the central directory"
                                        : "is a file, but a folder in the central directory");
            if (folder) continue;
            if (e.type != ExtractedEntry::Type::File)
                disagree(e.path, "is a link in its local header");
            if (e.size != c.size || e.crc32 != c.crc32)
                again.insert(e.path);
            else if (c.symlink)
                links.push_back(&e);
        }
        if (seen.size() != by_path_.size())
            for (const auto& listed : by_path_)
                if (!seen.count(listed.first))
                    disagree(listed.first,
                             "is in the central directory, but no local header holds it");
    }

    // The files in `paths` alone, extracted again through the central directory beside the
    // root, checked against it, and moved over the streamed ones.
    void read_again(const std::set<std::string>& paths, const ExtractOptions& options) {
        fs::path scratch = root_.parent_path() / fs::u8path(root_.filename().u8string() + ".again");
        std::error_code ec;
        fs::remove_all(scratch, ec);
        fs::create_directory(scratch, ec);
        if (ec) fail_operation("cannot create " + scratch.u8string() + ": " + ec.message());
        ExtractOptions only = options;
        only.progress = nullptr;
        only.select = [&paths](const std::string& path) { return paths.count(path) > 0; };
        ExtractResult again = extract_archive(zip_, scratch, only);
        check_zip_data(central_, scratch, again, name_);
        std::map<std::string, ExtractedEntry*> records;
        for (auto& e : streamed_.entries)
            records[e.path] = &e;
        std::set<std::string> moved;
        for (auto& e : again.entries) {
            auto record = records.find(e.path);
            if (!paths.count(e.path) || record == records.end()) continue;
            fs::rename(scratch / fs::u8path(e.path), root_ / fs::u8path(e.path), ec);
            if (ec)
                fail_operation("cannot move \"" + e.path + "\" of " + name_ + " into " +
                               root_.u8string() + ": " + ec.message());
            e.crc32 = by_path_.at(e.path)->crc32;
            streamed_.bytes_written += e.size;
            streamed_.bytes_written -= std::min(streamed_.bytes_written, record->second->size);
            *record->second = std::move(e);
            moved.insert(record->first);
        }
        fs::remove_all(scratch, ec);
        for (const auto& path : paths)
            if (!moved.count(path)) disagree(path, "could not be read through the central directory");
    }

    // A file holding a link's target becomes the link.
    void make_link(ExtractedEntry& e) {
        fs::path at = root_ / fs::u8path(e.path);
        if (e.size == 0) refuse(e.path, "symlink without a target");
        if (e.size > kMaxLinkTarget) refuse(e.path, "symlink with a target over 4096 bytes");
        std::string target(static_cast<std::size_t>(e.size), '\0');
        {
            std::ifstream in(at, std::ios::binary);
            in.read(&target[0], static_cast<std::streamsize>(target.size()));
            if (static_cast<std::uint64_t>(in.gcount()) != e.size)
                fail_operation("cannot read " + at.u8string() + " (a symlink's target)");
        }
        if (target.find('\0') != std::string::npos)
            refuse(e.path, "symlink with a NUL byte in its target");
        std::string why;
        if (resolve_link_target(e.path, target, &why).empty())
            refuse(e.path, "symlink to \"" + target + "\" " + why);
        std::error_code ec;
        fs::remove(at, ec);
        if (!ec) fs::create_symlink(fs::u8path(target), at, ec);
        if (ec)
            fail_operation("cannot make the symlink \"" + e.path + "\" of " + name_ + ": " +
                           ec.message());
        e.type = ExtractedEntry::Type::Symlink;
        e.link_target = target;
        e.size = 0;
        e.sha256.clear();
        e.crc32 = 0;
    }

    // Modes are only in the central directory: applied as extraction masks them.
    void apply_modes() {
        for (const auto& e : streamed_.entries) {
            if (e.type == ExtractedEntry::Type::Symlink) continue;
            const ZipCentralEntry& c = *by_path_.at(e.path);
            unsigned perm = c.unix_mode & 0777;
            if (perm == 0) continue;
            perm = extracted_mode(perm, c.directory);
            std::error_code ec;
            fs::permissions(root_ / fs::u8path(e.path), static_cast<fs::perms>(perm),
                            fs::perm_options::replace, ec);
            if (ec)
                fail_operation("cannot set the mode of \"" + e.path + "\" from " + name_ + ": " +
                               ec.message());
        }
    }

    fs::path zip_, root_;
    ExtractResult& streamed_;
    std::string name_;
    std::vector<ZipCentralEntry> central_;
    std::map<std::string, const ZipCentralEntry*> by_path_;
    std::set<std::string> links_;
};

} // namespace

std::size_t settle_streamed_zip(const fs::path& zip, const fs::path& root, ExtractResult& streamed,
                                const std::string& name, const ExtractOptions& options) {
    return Settler(zip, root, streamed, name).run(options);
}

} // namespace cvm::install
