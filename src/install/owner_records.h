#pragma once
// What the owner of an imported install says its files are: a wheel's *.dist-info/RECORD
// (sha256 in urlsafe base64, size) and dpkg's /var/lib/dpkg/info/<package>.md5sums. cvm verify
// compares an import with these, since cvm wrote none of its files.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "layouts/wheel_record.h"

namespace cvm::install {

// An owner's word on one file.
struct OwnerRecord {
    enum class Kind { Wheel, Dpkg } kind = Kind::Wheel;
    std::string digest; // wheel: urlsafe base64 of the sha256; dpkg: md5 hex
    std::string size;   // wheel only ("" when not given)
    std::string owner;  // "nvidia_cudnn_cu12-9.1.0.70.dist-info" or "libcudnn9-cuda-12:amd64"
    std::string file;   // the record's own path
};

// Adds the RECORD entries of the site-packages folders that hold `files` (real paths -> shown
// paths) for those files.
void read_wheel_records(const std::map<std::filesystem::path, std::string>& files,
                        std::map<std::filesystem::path, OwnerRecord>& out);
// Adds the RECORD entries of a toolkit folder assembled from NVIDIA's wheels (the wheels'
// records kept in <root>/dist-info/*.dist-info/RECORD, their paths "nvidia/<package>/<rest>"
// standing for <root>/<rest>) for those of `files` not in `out` yet.
void read_assembled_wheel_records(const std::filesystem::path& root,
                                  const std::map<std::filesystem::path, std::string>& files,
                                  std::map<std::filesystem::path, OwnerRecord>& out);
// Adds the md5sums entries of dpkg's database folder `info` for the files not in `out` yet.
void read_dpkg_records(const std::map<std::filesystem::path, std::string>& files,
                       const std::filesystem::path& info,
                       std::map<std::filesystem::path, OwnerRecord>& out);

// The RECORD parser is layouts' (imports check wheels with it too).
using cvm::WheelRecordLine;
using cvm::parse_wheel_record;

// Lower-case hex -> the urlsafe base64 without padding that wheels' RECORD files use.
std::string hex_to_urlsafe_base64(const std::string& hex);

} // namespace cvm::install
