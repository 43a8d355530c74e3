#pragma once
// Which failed attempts of a download are tried again, and after how long
// (download_policy.cpp), without libcurl.
#include "install/download.h"

namespace cvm::install {

// Whether a failed attempt is tried again: one worth it (`worth_retrying`: the network or the
// server hiccuped, or the transfer was too slow), while `attempt` (the retries made so far) is
// below options.retries. A host not reached at all (`host_unreached`; `unreached_attempts` counts
// such attempts, this one included) is tried twice only, so that an install without network
// fails within seconds.
bool retry_failed_attempt(bool worth_retrying, bool host_unreached, unsigned attempt,
                          unsigned unreached_attempts, const DownloadOptions& options);

// The wait before retry number `attempt` (1 for the first): retry_delay_ms, doubled for each
// retry before it (five times at most), 30 s at most.
long retry_delay_ms(const DownloadOptions& options, unsigned attempt);

} // namespace cvm::install
