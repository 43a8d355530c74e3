#pragma once
// The version symbols of cuDNN's libraries: read-only 4-byte data that cuDNN 9's sub-libraries
// (and 8's) export, e.g. cudnn_ops_infer_version = 0x091300 (9.19.0). Standard C++ and the
// binary readers only: cvm-probe links it too.
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "binary/byte_source.h"

namespace cvm::binary {

// 0x091300 -> {9, 19, 0} (major, minor, patch one byte each); also the decimal forms
// 8902 -> {8, 9, 2} and 91900 -> {9, 19, 0}. nullopt when it is neither.
std::optional<std::array<unsigned, 3>> decode_cudnn_version_number(std::uint32_t value);

struct RawVersionSymbol {
    std::string name; // "cudnn_ops_infer_version"
    std::array<unsigned, 3> version{};
    std::string text() const; // "9.19.0"
};
// The first cudnn*_version data symbol (4 bytes, defined, in a section with file bytes) of an
// ELF shared library whose value decodes as a version. nullopt when none or not ELF.
std::optional<RawVersionSymbol> read_cudnn_version_symbol(const ByteSource& file);
std::optional<RawVersionSymbol> read_cudnn_version_symbol_file(const std::string& path);

} // namespace cvm::binary
