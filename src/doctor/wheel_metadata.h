#pragma once
// Readers of an installed wheel's METADATA text (pure): the version specifier a `Requires-Dist:`
// header gives a requirement, and the releases it names. PyTorch pins the cuDNN it was built with
// ("nvidia-cudnn-cu13==9.26.0.51"); JAX's CUDA plugin gives a range whose lower bound is its
// build's
// ("nvidia-cudnn-cu13<10.0,>=9.12.0.46; sys_platform == \"linux\" and extra == \"with-cuda\"").
#include <optional>
#include <string>
#include <string_view>

namespace cvm::doctor {

// The specifier of the first `Requires-Dist:` header whose requirement name starts with
// `name_prefix` ("nvidia-cudnn-cu"), without its environment marker: "<10.0,>=9.12.0.46". Only the
// headers are read (they end at the first empty line). nullopt when none names it.
std::optional<std::string> metadata_requirement(std::string_view metadata,
                                                std::string_view name_prefix);

// The release an `==` clause of `specifier` pins ("==9.26.0.51" gives "9.26.0.51").
std::optional<std::string> specifier_pin(std::string_view specifier);

// The lower bound of `specifier`: its `>=` clause, else its `==` pin ("<10.0,>=9.12.0.46" gives
// "9.12.0.46").
std::optional<std::string> specifier_floor(std::string_view specifier);

} // namespace cvm::doctor
