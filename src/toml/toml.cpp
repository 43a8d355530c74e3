// toml++'s parser and writers, compiled once (cvm_toml): every other file includes only their
// declarations (TOML_HEADER_ONLY=0), where the header-only mode compiled them into each of them.
#define TOML_IMPLEMENTATION
#include <toml++/toml.h>
