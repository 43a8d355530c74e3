#pragma once
// What to fetch by other means when a download reached no server (UnreachableError, error.h),
// said once, after the download's own line: the file itself and the command that installs it, or,
// for what only the server's layout can stand in for (a manifest and the archives it lists, a
// checksum list), a folder laid out as the server, named by CVM_MIRROR.
#include <string>
#include <vector>

namespace cvm::install {

// For the one file of `url`: "; or download URL elsewhere and run `cvm install ./NAME`" for an
// archive or installer; for a cuDNN manifest (redistrib_*.json), also the archive it lists; for
// anything else (a checksum list), the mirror folder.
std::string offline_fix(const std::string& url);

// For a toolkit from a manifest: the manifest and each archive (`archives`: their URLs; empty
// while the manifest itself is what failed), each named once, laid out under a folder as they lie
// under `mirror`, then `CVM_MIRROR=file://DIR cvm install cuda ID`.
std::string offline_fix_toolkit(const std::string& mirror, const std::string& manifest_url,
                                const std::vector<std::string>& archives, const std::string& id,
                                const std::string& host);

} // namespace cvm::install
