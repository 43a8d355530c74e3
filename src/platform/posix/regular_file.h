#pragma once
// Opening a file that must be a regular one, checked on the open descriptor: what files.cpp and
// shared_file.cpp both do on POSIX before they write or share it.
#include <filesystem>

namespace cvm::platform {

// Opens `path` with `flags` (O_NOFOLLOW and O_NONBLOCK among them, so a link or a FIFO answers at
// once) and mode 0600 for a file it creates, then fstats the descriptor: EINVAL for what is not a
// regular file. 0 with `fd` open, else the errno, nothing left open.
int open_regular_file(const std::filesystem::path& path, int flags, int& fd);

} // namespace cvm::platform
