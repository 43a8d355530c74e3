// cvm-probe: see probe.h. Links only the C++ standard library and the system's loader.
#include "probe.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

// Under AddressSanitizer the process always exits the usual way, so that its leak check runs.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kLeakCheck = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kLeakCheck = true;
#else
constexpr bool kLeakCheck = false;
#endif
#else
constexpr bool kLeakCheck = false;
#endif

#ifndef CVM_PROBE_VERSION
#define CVM_PROBE_VERSION "0.0.0"
#endif

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    auto parsed = cvm::probe::parse_arguments(args);
    if (!parsed.error.empty()) {
        std::fprintf(stderr, "cvm-probe: %s\n%s", parsed.error.c_str(),
                     cvm::probe::usage_text().c_str());
        return 2;
    }
    if (parsed.help) {
        std::fputs(cvm::probe::usage_text().c_str(), stdout);
        return 0;
    }
    if (parsed.version) {
        std::puts("cvm-probe " CVM_PROBE_VERSION);
        return 0;
    }
    try {
        int code = 1;
        cvm::probe::run_probe(parsed.options, [&](const cvm::probe::Report& report) {
            std::string out = parsed.options.json ? cvm::probe::render_json(report)
                                                  : cvm::probe::render_text(report);
            std::fputs(out.c_str(), stdout);
            code = report.ok() ? 0 : 1;
            // Once the report is out, a process that used a GPU ends here: destroying cuDNN's
            // handle and the CUDA context by hand only adds to what the kernel does at exit
            // anyway (about 20 ms on an H200). Without a GPU the usual exit runs.
            if (!kLeakCheck && report.device_count > 0 && std::fflush(stdout) == 0)
                std::_Exit(code);
        });
        return std::fflush(stdout) == 0 ? code : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "cvm-probe: internal error: %s\n", e.what());
        return 1;
    }
}
