// DownloadOptions::from_environment, for both download_curl.cpp and download_none.cpp.
#include "config/config.h"
#include "install/download.h"
#include "platform/platform.h"

#include <algorithm>

namespace cvm::install {

DownloadOptions DownloadOptions::from_environment() {
    DownloadOptions o;
    DownloadSettings s = download_settings();
    o.min_rate = s.min_rate.value_or(o.min_rate);
    o.rate_window_s = s.rate_window.value_or(o.rate_window_s);
    o.deadline_s = s.deadline.value_or(o.deadline_s);
    o.deadline_rate = s.deadline_rate.value_or(o.deadline_rate);
    o.max_size = s.max_size.value_or(o.max_size);
    o.connect_timeout_s = s.connect_timeout.value_or(o.connect_timeout_s);
    o.stall_timeout_s = s.stall_timeout.value_or(o.stall_timeout_s);
    o.retries = static_cast<unsigned>(s.retries.value_or(o.retries));
    if (auto v = platform::get_env("CVM_RETRY_DELAY_MS"); v && !v->empty()) {
        auto ms = parse_byte_amount(*v); // a plain whole number here
        if (!ms || v->find_first_not_of("0123456789") != std::string::npos)
            throw ConfigError("CVM_RETRY_DELAY_MS=\"" + *v +
                              "\" is not a whole number of milliseconds; fix or unset it");
        o.retry_delay_ms = static_cast<long>(std::min<std::uint64_t>(*ms, 3600000));
    }
    if (auto v = platform::get_env("CVM_ALLOW_HTTP"); v && *v == "1") o.allow_insecure_http = true;
    return o;
}

} // namespace cvm::install
