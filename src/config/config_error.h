#pragma once
// The error for a settings mistake, a config file's or a variable's (exit code 2); TrustError
// (trust.h) is one too. Apart from config.h because reading a config needs the trust rules.
#include <stdexcept>

namespace cvm {

class ConfigError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

} // namespace cvm
