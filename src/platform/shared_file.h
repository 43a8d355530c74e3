#pragma once
// A file that several handles use at once and that is renamed or deleted while they are open:
// a download's part file, written by the downloader (install/download_curl.cpp) and read at the
// same time by the extraction (install/download_tap.h), then renamed into the download cache,
// or deleted when the download fails or begins again.
//
// POSIX allows all of this to any descriptor. Windows refuses to rename or delete a file that
// another handle holds unless every handle on it was opened with FILE_SHARE_DELETE, which the C
// runtime's fopen (and so std::fstream) never asks for; and a deleted file that is still open
// keeps its name until its last handle closes, so a new file of that name cannot be made. Here
// every handle shares reading, writing and deletion (CreateFileW, windows/shared_file.cpp), and
// remove_shared_file frees the name at once.
#include <cstddef>
#include <filesystem>
#include <system_error>

namespace cvm::platform {

class SharedFile {
public:
    enum class Mode {
        Read,     // an existing file, from its first byte
        Append,   // created (0600) if missing, written at its end
        Truncate, // created (0600) if missing, emptied
    };

    SharedFile() = default;
    ~SharedFile() { close(); }
    SharedFile(const SharedFile&) = delete;
    SharedFile& operator=(const SharedFile&) = delete;
    SharedFile(SharedFile&& other) noexcept;
    SharedFile& operator=(SharedFile&& other) noexcept;

    // Opens `path` (closing what was open). Returns 0, or the errno-style error (ENOENT,
    // EACCES, ENOSPC, EIO...). Links are not followed on POSIX; a file that is not regular is
    // refused (EINVAL).
    int open(const std::filesystem::path& path, Mode mode);
    bool is_open() const;
    void close();

    // Writes all `size` bytes: 0, or the error (then part of them may have been written).
    int write_all(const void* data, std::size_t size);
    // Reads up to `size` bytes; fewer only at the end of the file. The count, 0 at the end; on
    // a failure 0 with `*error` set (left 0 otherwise).
    std::size_t read(void* buffer, std::size_t size, int* error);

private:
#ifdef _WIN32
    void* handle_ = nullptr;
#else
    int fd_ = -1;
#endif
};

// Renames `from` to `to`, replacing `to`, while SharedFile handles may hold `from` open
// (MoveFileExW with MOVEFILE_REPLACE_EXISTING on Windows).
void rename_shared_file(const std::filesystem::path& from, const std::filesystem::path& to,
                        std::error_code& ec);

// Removes a file that SharedFile handles may hold open; its name is free at once (on Windows it
// is first renamed to a unique name beside it, deleted as soon as the last handle closes). A
// missing file is no error.
void remove_shared_file(const std::filesystem::path& path, std::error_code& ec);

} // namespace cvm::platform
