#pragma once
// A pip wheel's record of what it installed: <site-packages>/<name>.dist-info/RECORD, one CSV
// line per file ("path,sha256=DIGEST,size", the path relative to site-packages). Imports check a
// wheel against it before they link to its files (a wheel pip left half-installed is refused);
// cvm verify compares the files' digests with it (install/owner_records.h).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cvm {

// The lines of a RECORD that carry a sha256: the path as written, the urlsafe base64 digest, the
// size ("" when not given). Lines without one (RECORD itself, compiled .pyc files) are left out.
struct WheelRecordLine {
    std::string path, digest, size;
};
std::vector<WheelRecordLine> parse_wheel_record(const std::string& text);

// RECORD files are read up to this size.
constexpr std::size_t kWheelRecordLimit = std::size_t(256) << 20;

// The *.dist-info folders of `site` whose names start with `prefix` ("nvidia_nccl_cu"), sorted.
std::vector<std::filesystem::path> dist_infos(const std::filesystem::path& site, const std::string& prefix);

// Whether the wheel of `dist_info` (a folder in site-packages) is wholly installed: nullopt when
// its RECORD can be read and every file it lists with a digest is there, else one line saying
// what is wrong (no RECORD, a file it names missing) and what to run.
std::optional<std::string> wheel_install_damage(const std::filesystem::path& dist_info);

// The first wheel pip left half-installed among those of `site` (dist-infos named with `prefix`)
// that put files below `folder` (a folder of `site`, e.g. <site>/nvidia/cu13): a dist-info with no
// RECORD counts when `prefix` names one project ("nvidia_nccl_cu"), one whose RECORD names a file
// below `folder` when any of its files is missing. nullopt when all are whole.
std::optional<std::string> wheel_folder_damage(const std::filesystem::path& site, const std::filesystem::path& folder,
                                               const std::string& prefix, bool prefix_is_one_project);

} // namespace cvm
