#pragma once
// What the portable file code (files.cpp) asks of each OS's files.cpp, inside the platform layer.
#include <cstdio>
#include <filesystem>

namespace cvm::platform {

// A new temporary file for write_file_atomically, open for writing; nullptr with `error` (an
// errno value) when it cannot be made.
std::FILE* open_new_file(const std::filesystem::path& tmp, int& error);
// An existing file for write_output_file, opened as it is (never created), emptied when it is a
// regular file, without waiting for a FIFO's reader (none gives ENXIO); nullptr with `error`.
std::FILE* open_existing_file(const std::filesystem::path& file, int& error);

} // namespace cvm::platform
