#pragma once
// The registry overlay: releases `cvm update` found on the mirror that the shipped registry
// (registry/*.toml) lacks, kept in $CVM_ROOT/cache/registry-overlay.toml. Its rows have the keys
// of cuda.toml's and cudnn.toml's rows, under [[cuda.release]] and [[cudnn.release]], with the
// time of the update and the mirror it read:
//
//   schema = 1
//   updated = "2026-12-01T04:14:22Z"
//   mirror = "https://developer.download.nvidia.com/compute"
//   [[cuda.release]]
//   version = "13.4.1"   ... as in cuda.toml
//
// The shipped registry always wins: an overlay row for a release it knows is left out. A
// garbled or untrusted overlay is reported and ignored, never fatal: the shipped data still works.
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "registry/registry.h"

namespace cvm::registry {

struct Overlay {
    std::string updated; // UTC, "2026-12-01T04:14:22Z"
    std::string mirror;  // the base URL that was read
    std::vector<CudaRelease> cuda;
    std::vector<CudnnRelease> cudnn;
};

// $CVM_ROOT/cache/registry-overlay.toml for the store's cache folder.
std::filesystem::path overlay_file(const std::filesystem::path& cache_dir);

// Parses an overlay's text; `file` names it in errors. Throws RegistryError
// ("<file>:<line>:<column>: <key>: <problem>").
Overlay parse_overlay(std::string_view text, const std::string& file);

// The overlay as TOML (what parse_overlay reads back).
std::string overlay_text(const Overlay& overlay);

// Adds the overlay's releases whose versions `reg` does not have, keeping both lists sorted.
// Returns how many were added.
std::size_t merge_overlay(Registry& reg, const Overlay& overlay);

// What loading the overlay found, for messages ("registry updated 3 days ago").
struct OverlayState {
    std::filesystem::path file;
    bool present = false;  // a valid overlay was read
    std::string updated;   // its time, as written
    std::string mirror;
    std::size_t added = 0; // releases it added to the shipped registry
    std::string problem;   // one line: why an overlay that is there was ignored
};

// Reads the overlay of `cache_dir` (absent: nothing to do). A file that is not a regular file,
// is not the user's, or does not parse leaves `overlay` untouched and sets state.problem.
void read_overlay(const std::filesystem::path& cache_dir, Overlay& overlay, OverlayState& state);

// load_default_registry() with the overlay of `cache_dir` merged in; `state` (optional) says
// what the overlay was. Throws RegistryError only for the shipped registry.
Registry load_registry_with_overlay(const std::filesystem::path& cache_dir, OverlayState* state = nullptr);

// "2026-12-01T04:14:22Z" for a time point.
std::string utc_timestamp(std::chrono::system_clock::time_point when);
// How long ago `updated` (as utc_timestamp writes it) was, in words: "just now", "5 minutes
// ago", "3 hours ago", "3 days ago". Empty when `updated` is not such a time.
std::string age_text(const std::string& updated, std::chrono::system_clock::time_point now);

} // namespace cvm::registry
