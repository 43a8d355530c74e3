#pragma once
// What cvm hands to cvm-install on Linux and does itself where one program holds everything
// (cvm-install; cvm on Windows): src/cli/CMakeLists.txt says why there are two programs. The
// commands are compiled once, into the library both programs link; each program's main says,
// through install_backend(), which way its commands go.
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace cvm {
struct Spec;
}

namespace cvm::cli {

// `cvm export`'s arguments (export.cpp; --oci in export_oci.cpp).
struct ExportArgs {
    std::string format, dir; // lmod|tcl DIR; with --oci, `format` holds the SPEC
    std::string oci, tag, base;
    bool runtime = false, json = false;
};

struct InstallBackend {
    // Installs what a spec names that is missing, in this process; returns the entries as
    // `cvm install --json` lists them (install.cpp's install_missing).
    nlohmann::json (*install_missing)(const Spec&) = nullptr;
    // Writes a selection as an OCI image layout (export_oci.cpp).
    void (*export_oci)(const ExportArgs&) = nullptr;
    // Where the above are missing: hand the command to cvm-install (cvm on Linux), or refuse it
    // (a build without downloads; --oci on Windows).
    bool forward = false;
};

InstallBackend& install_backend();

// export_oci.cpp: `cvm export --oci` itself.
void export_oci_command(const ExportArgs& a);

} // namespace cvm::cli
