#pragma once
// What a host compiler is, from what it says about itself: the first lines of `gcc --version`,
// `clang --version`, cl.exe's banner, or the MSVC toolset folder cl.exe sits in
// (VC\Tools\MSVC\14.29.30133\bin\Hostx64\x64). Pure: no program is run here.
#include <optional>
#include <string>
#include <string_view>

#include "spec/spec.h"

namespace cvm::compat {

enum class CompilerKind { Gcc, Clang, Msvc };
const char* to_string(CompilerKind k); // "gcc", "clang", "msvc"

struct CompilerId {
    CompilerKind kind = CompilerKind::Gcc;
    Version version; // 12.2.0, 14.0.6, 19.29.30133 (cl.exe's own version)
};

// "gcc 12.2.0", "clang 14.0.6", "MSVC 19.29 (Visual Studio 2019)".
std::string describe(const CompilerId& id);

// The compiler a `--version` output or a cl.exe banner names; nullopt when it is none of them.
std::optional<CompilerId> parse_compiler_banner(std::string_view text);

// cl.exe's _MSC_VER: 19.29.30133 -> 1929.
unsigned msc_ver(const Version& cl_version);
// The Visual Studio release of an _MSC_VER ("2019"); "" when unknown.
std::string visual_studio_of(unsigned msc);

// The cl.exe version of an MSVC toolset folder name: "14.29.30133" -> 19.29.30133 (toolset 14.x
// is cl 19.x). nullopt when the name is not a toolset version.
std::optional<Version> cl_version_of_toolset(std::string_view folder_name);

} // namespace cvm::compat
