#pragma once
// How many threads extraction runs: the CPUs this process may run on, unless the caller asked.

namespace cvm::install {

// CPUs this process may run on (the affinity mask, where the system tells it).
unsigned available_cpus();
// `requested`, or available_cpus() when it is 0.
unsigned worker_count(unsigned requested);

} // namespace cvm::install
