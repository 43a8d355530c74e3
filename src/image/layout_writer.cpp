#include "image/layout_writer.h"

#include <cerrno>
#include <system_error>
#include <unistd.h>

#include "image/blob_file.h"
#include "install/error.h"

namespace cvm::image {

namespace {

std::string pid_text() {
    return std::to_string(platform::process_id());
}

std::string dumped(const nlohmann::json& doc) {
    return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

} // namespace

LayoutWriter::LayoutWriter(const fs::path& dir, FolderState state)
    : dir_(dir), mode_(state == FolderState::Layout  ? Mode::Add
                       : state == FolderState::Empty ? Mode::Fill
                                                     : Mode::Stage) {
    try {
        switch (mode_) {
        case Mode::Add:
            work_ = dir;
            if (::access((dir / "oci-layout").c_str(), W_OK) != 0)
                throw fs::filesystem_error("cannot write", dir,
                                           std::error_code(errno, std::generic_category()));
            lock_.acquire(dir / "oci-layout"); // one export into a layout at a time
            fs::create_directories(work_ / "blobs" / "sha256");
            break;
        case Mode::Fill:
            work_ = dir;
            tree_guard_.watch(work_ / "blobs", platform::Removal::Tree);
            fs::create_directories(work_ / "blobs" / "sha256");
            break;
        case Mode::Stage:
            // Folders above DIR that are missing are made, and removed again on failure.
            for (fs::path p = dir.parent_path(); !p.empty() && !fs::exists(p);
                 p = p.parent_path()) {
                made_parents_.insert(made_parents_.begin(), p);
                if (p == p.parent_path()) break;
            }
            for (const auto& p : made_parents_)
                fs::create_directory(p);
            stage_ = dir.parent_path() /
                     fs::u8path("." + dir.filename().u8string() + ".tmp" + pid_text());
            std::error_code ec;
            fs::remove_all(stage_, ec);
            tree_guard_.watch(stage_, platform::Removal::Tree);
            work_ = stage_;
            fs::create_directories(work_ / "blobs" / "sha256");
            break;
        }
    } catch (const fs::filesystem_error& e) {
        discard();
        throw fs::filesystem_error("cannot write", dir_, e.code());
    }
}

LayoutWriter::~LayoutWriter() {
    if (!committed_) discard();
}

fs::path LayoutWriter::temp(const std::string& role) {
    fs::path p = work_ / "blobs" / "sha256" / fs::u8path("." + role + ".tmp" + pid_text());
    temps_.push_back(p);
    if (mode_ == Mode::Add) guards_.push_back(std::make_unique<platform::CleanupOnSignal>(p));
    return p;
}

void LayoutWriter::keep(const fs::path& temp, const std::string& digest) {
    ready_.push_back({temp, digest});
}

Descriptor LayoutWriter::json_blob(const std::string& role, const char* media_type,
                                   const nlohmann::json& doc) {
    std::string text = dumped(doc);
    fs::path p = temp(role);
    BlobFile f(p, dir_);
    f.write(text.data(), text.size());
    Descriptor d{media_type, f.close(), text.size()};
    keep(p, d.digest);
    return d;
}

void LayoutWriter::write_file(const fs::path& file, const std::string& text) {
    written_.push_back(file);
    BlobFile f(file, dir_);
    f.write(text.data(), text.size());
    f.close();
}

void LayoutWriter::commit(const nlohmann::json& index) {
    for (const auto& [temp, digest] : ready_) {
        fs::path final = blob_path(work_, digest);
        std::error_code ec;
        if (fs::exists(final, ec)) { // the same bytes, by their name
            fs::remove(temp, ec);
            continue;
        }
        fs::rename(temp, final, ec);
        if (ec) throw fs::filesystem_error("cannot write", dir_, ec);
        named_.push_back(final);
    }
    if (mode_ != Mode::Add) write_file(work_ / "oci-layout", kLayoutText);
    fs::path index_temp = work_ / fs::u8path(".index.json.tmp" + pid_text());
    temps_.push_back(index_temp);
    platform::CleanupOnSignal index_guard(index_temp);
    write_file(index_temp, dumped(index));
    std::error_code ec;
    fs::rename(index_temp, work_ / "index.json", ec);
    if (ec) throw fs::filesystem_error("cannot write", dir_, ec);
    if (mode_ == Mode::Stage) {
        fs::rename(stage_, dir_, ec);
        if (ec == std::errc::directory_not_empty || ec == std::errc::file_exists)
            install::fail_operation(
                dir_.u8string() + " was made by another program while cvm wrote the image; nothing "
                                  "was changed there; export again");
        if (ec) throw fs::filesystem_error("cannot write", dir_, ec);
    }
    committed_ = true;
    tree_guard_.release();
    guards_.clear();
}

void LayoutWriter::discard() {
    std::error_code ec;
    for (const auto& t : temps_)
        fs::remove(t, ec);
    for (const auto& n : named_)
        fs::remove(n, ec);
    for (const auto& w : written_)
        fs::remove(w, ec);
    if (mode_ == Mode::Fill) fs::remove_all(work_ / "blobs", ec);
    if (!stage_.empty()) fs::remove_all(stage_, ec);
    for (auto it = made_parents_.rbegin(); it != made_parents_.rend(); ++it)
        fs::remove(*it, ec);
    tree_guard_.release();
    guards_.clear();
}

} // namespace cvm::image
