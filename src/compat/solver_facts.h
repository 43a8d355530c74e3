#pragma once
// What `cvm use --for`'s solver (solver.h) checks the toolkits against: the machine, as a
// description (MachineFacts), and cvm's knowledge of it (Knowledge: the registry and tables);
// the constraints it applies, and one line of why (Reason) naming one.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compat/auto_host_compiler.h"
#include "compat/compiler_id.h"
#include "compat/gpu_arch.h"
#include "compat/host_compiler_limits.h"
#include "spec/spec.h"
#include "registry/registry.h"

namespace cvm::compat {

struct MachineFacts {
    registry::Platform platform = registry::Platform::Linux;
    std::optional<registry::DriverVersion> driver; // nullopt: no NVIDIA driver (CI, build node)
    std::vector<Gpu> gpus;                         // empty: none seen
    std::vector<CompilerId> compilers;             // installed host compilers; empty: none
    std::vector<Version> toolkits;                 // installed toolkits (three numbers)
    std::vector<CudnnId> cudnn;                    // installed cuDNN builds
    // The limits an installed toolkit's own host_config.h states, by its version ("11.8.0");
    // others take the registry's row.
    std::map<std::string, HostCompilerLimits> toolkit_limits;
    // Whether the machine's distribution has a package of this name (a fix names only those);
    // empty: nothing is known, compilers are named by version only.
    PackageCheck packaged;
};

struct Knowledge {
    const registry::Registry* reg = nullptr;        // required
    const HostCompilerTable* compilers = nullptr;   // optional: no host compiler check without it
    const std::vector<GpuArchRow>* archs = nullptr; // optional: no GPU check without it
};

enum class Constraint { Framework, Platform, Driver, Gpu, HostCompiler, Cudnn };
const char*
constraint_name(Constraint c); // "framework", "platform", "driver", "gpu", "host_compiler", "cudnn"
const char*
constraint_words(Constraint c); // for people: "framework", ..., "GPU", "host compiler", "cuDNN"

struct Reason {
    Constraint constraint;
    std::string text; // one line
};

} // namespace cvm::compat
