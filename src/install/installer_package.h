#pragma once
// Toolkits from NVIDIA's installers (the Linux runfile, the Windows local installer .exe):
// finds the archive inside, extracts only the toolkit's components, and places their files in
// the layout of a redist install (installer_layout.h). The installer's script or program is
// never run.
#include "install/installed_files.h"
#include "install/extract.h"
#include "install/installer_layout.h"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cvm::install {

// The installer family of `file` from its first bytes (a makeself script, an executable), or
// from its name when the contents are neither; nullopt for anything else (an archive).
std::optional<InstallerFamily> detect_installer(const std::filesystem::path& file);

// The MD5 that NVIDIA's md5sum.txt (docs/sidebar/ beside the installers) gives for the installer
// `name`; empty when no line names it.
std::string md5_listed_for(const std::string& md5sum_text, const std::string& name);

struct UnpackedToolkit {
    std::string version;                 // the full toolkit version ("11.2.2")
    std::string platform;                // the installer's ("linux-x86_64")
    std::vector<std::string> components; // chosen keys; empty for the merged 10.x tree
    // key -> (name, version) from the installer's version.json, for the chosen components.
    std::map<std::string, std::pair<std::string, std::string>> component_versions;
    std::vector<InstalledFile> files;   // what was placed in the root
    std::vector<std::string> conflicts; // paths two components both hold (the first kept)
};

struct UnpackOptions {
    std::string host_platform;           // refuse installers for another machine
    std::vector<std::string> components; // as `--components` (empty: the default set)
    std::string expected_version;        // when known before ("11.2.2"): the contents must agree
    ExtractOptions extract;              // threads and progress
};

// Reads the installer `file` of `family`, extracts into `work` (an empty folder) and moves
// the chosen components' files into `root` (an existing empty folder). Throws InstallError
// (input) naming the file: another platform's installer, a network installer, a truncated
// file, an archive past its end, no archive inside, a release cvm cannot take apart.
UnpackedToolkit unpack_installer(const std::filesystem::path& file, InstallerFamily family,
                                 const std::filesystem::path& work,
                                 const std::filesystem::path& root, const UnpackOptions& options);

// The refusals that need no reading of the payload: a network installer, another platform's
// installer. Throws InstallError (input).
void check_installer_name(const std::filesystem::path& file, InstallerFamily family,
                          const std::string& host_platform);

} // namespace cvm::install
