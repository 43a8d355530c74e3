#pragma once
// Where Visual Studio keeps its compilers: the installs under "...\Microsoft Visual Studio"
// (<year>\<edition>) of %ProgramFiles% and %ProgramFiles(x86)%, and every install the Visual
// Studio Installer records (the state.json of each <id> folder of
// %ProgramData%\Microsoft\VisualStudio\Packages\_Instances, "installationPath": what vswhere
// reads; an install may be anywhere).
// Each install holds one cl.exe per MSVC toolset: VC\Tools\MSVC\<14.xx.yyyyy>\bin\Hostx64\x64.
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

namespace cvm::compat {

// The "...\Microsoft Visual Studio" roots: CVM_VISUAL_STUDIO_ROOTS (a ';' list; tests), else
// those of %ProgramFiles% and %ProgramFiles(x86)%.
std::vector<std::filesystem::path> default_visual_studio_roots();
// The Visual Studio Installer's instance folder: CVM_VISUAL_STUDIO_INSTANCES (tests), else
// %ProgramData%\Microsoft\VisualStudio\Packages\_Instances; empty when neither is known.
std::filesystem::path default_visual_studio_instances();

// The installationPath of an instance's state.json; nullopt when the text has none.
std::optional<std::filesystem::path> installation_path_of_state(std::string_view state_json);

// cl.exe of every MSVC toolset of the installs under `roots` and those `instances` records,
// newest toolset first, each once.
std::vector<std::filesystem::path> visual_studio_cl_programs(const std::vector<std::filesystem::path>& roots,
                                                             const std::filesystem::path& instances);

} // namespace cvm::compat
