// Retries of failed download attempts (download_policy.h).
#include "install/download_policy.h"

#include <algorithm>

namespace cvm::install {

bool retry_failed_attempt(bool worth_retrying, bool host_unreached, unsigned attempt,
                          unsigned unreached_attempts, const DownloadOptions& options) {
    return worth_retrying && attempt < options.retries &&
           (!host_unreached || unreached_attempts < 2);
}

long retry_delay_ms(const DownloadOptions& options, unsigned attempt) {
    long delay = options.retry_delay_ms << std::min(attempt - 1, 5u);
    return std::min(delay, 30000L);
}

} // namespace cvm::install
