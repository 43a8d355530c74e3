#pragma once
// What the signal-time registry holds (cleanup_on_signal.h is its interface, cleanup_detail.h its
// slots inside the platform layer): how many paths at once, and what is removed for each.

namespace cvm::platform {

constexpr int kCleanupSlots = 64;

enum class Removal { File, Tree };

} // namespace cvm::platform
