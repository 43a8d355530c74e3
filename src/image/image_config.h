#pragma once
// The config document of an exported image (image-spec's config.md): the base image's, when
// there is one, with the selection's environment applied to its Env, the labels added, the new
// layer's diff_id and a history entry appended.
#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "activation/environment.h"

namespace cvm::image {

// "1980-01-01T00:00:00Z"
std::string rfc3339(std::time_t t);

// `env` ("NAME=VALUE" items, as a config's Env) with `changes` applied: a variable set again
// keeps its place, a new one is appended, an unset one removed.
std::vector<std::string> apply_env(std::vector<std::string> env,
                                   const std::vector<EnvChange>& changes);

// The value of NAME in an Env list.
std::optional<std::string> env_value(const std::vector<std::string>& env, const std::string& name);

struct ConfigInput {
    const nlohmann::json* base = nullptr; // the base image's config, or none
    std::vector<std::string> env;         // the image's whole Env
    std::map<std::string, std::string> labels;
    std::string diff_id;
    std::string created; // rfc3339
    std::string architecture;
    std::string created_by; // the history entry's
};
nlohmann::json image_config(const ConfigInput& in);

} // namespace cvm::image
