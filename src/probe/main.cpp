// cvm-probe: see probe.h. Links only the C++ standard library and the system's loader.
#include "probe.h"

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

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
        auto report = cvm::probe::run_probe(parsed.options);
        std::string out =
            parsed.options.json ? cvm::probe::render_json(report) : cvm::probe::render_text(report);
        std::fputs(out.c_str(), stdout);
        std::fflush(stdout);
        return report.ok() ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "cvm-probe: internal error: %s\n", e.what());
        return 1;
    }
}
