#pragma once
// libarchive's handles as extraction uses them: readers and disk writers freed on every path, the
// writer's umask handling serialised between threads, narrow or wide paths, error texts.
#include <archive.h>
#include <archive_entry.h>

#include <cstddef>
#include <filesystem>
#include <string>

namespace cvm::install {

constexpr std::size_t kReadBlock = 1 << 20; // bytes read from the archive file at once

// An archive's name in messages: its file name.
std::string display(const std::filesystem::path& p);

// libarchive takes narrow paths on POSIX and wide ones on Windows; overloads pick the right call
// from fs::path::value_type without a platform test here.
inline void set_entry_path(archive_entry* e, const char* p) {
    archive_entry_copy_pathname(e, p);
}
inline void set_entry_path(archive_entry* e, const wchar_t* p) {
    archive_entry_copy_pathname_w(e, p);
}
inline void set_entry_hardlink(archive_entry* e, const char* p) {
    archive_entry_copy_hardlink(e, p);
}
inline void set_entry_hardlink(archive_entry* e, const wchar_t* p) {
    archive_entry_copy_hardlink_w(e, p);
}
inline int open_filename(archive* a, const char* p, std::size_t block) {
    return archive_read_open_filename(a, p, block);
}
inline int open_filename(archive* a, const wchar_t* p, std::size_t block) {
    return archive_read_open_filename_w(a, p, block);
}

std::string error_text(archive* a);

struct ReadHandle {
    archive* a = archive_read_new();
    ~ReadHandle() {
        if (a != nullptr) archive_read_free(a);
    }
};

// archive_write_disk_new() and archive_write_header() under one lock (archive_handles.cpp says
// why).
archive* new_write_disk();
int write_header(archive* w, archive_entry* e);

struct WriteHandle {
    archive* a = new_write_disk();
    WriteHandle();
    ~WriteHandle() {
        if (a != nullptr) archive_write_free(a);
    }
};

} // namespace cvm::install
