// How many threads extraction runs (cpu_count.h).
#include "install/cpu_count.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace cvm::install {

// CPUs this process may run on. std::thread::hardware_concurrency() ignores the affinity mask
// (taskset, container cpusets), and more decoders than CPUs only slows the longest archive down.
// Linux tells the mask in /proc/self/status; elsewhere the file is absent and the hardware count
// stands. (A platform::available_cpus() would be the better home for this.)
unsigned available_cpus() {
    static const unsigned count = [] {
        unsigned n = std::thread::hardware_concurrency();
        std::ifstream status("/proc/self/status");
        std::string line;
        while (std::getline(status, line)) {
            if (line.rfind("Cpus_allowed_list:", 0) != 0) continue;
            unsigned allowed = 0;
            std::stringstream ranges(line.substr(18));
            std::string range;
            while (std::getline(ranges, range, ',')) {
                unsigned a = 0, b = 0;
                if (std::sscanf(range.c_str(), "%u-%u", &a, &b) == 2 && b >= a)
                    allowed += b - a + 1;
                else if (std::sscanf(range.c_str(), "%u", &a) == 1)
                    allowed += 1;
            }
            if (allowed > 0 && (n == 0 || allowed < n)) n = allowed;
        }
        return n == 0 ? 2u : n;
    }();
    return count;
}

unsigned worker_count(unsigned requested) {
    return requested != 0 ? requested : available_cpus();
}

} // namespace cvm::install
