// libFuzzer target for the NVIDIA manifest parser and the component/variant selection built on
// it: any byte string must parse or raise InstallError, never crash, hang or leak.
#include "install/error.h"
#include "install/manifest.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace cvm::install;
    std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        Manifest m = parse_manifest(text, "fuzz.json");
        for (const char* platform : {"linux-x86_64", "windows-x86_64", "linux-sbsa"}) {
            (void)default_toolkit_components(m, platform);
            for (const auto& [key, component] : m.components) {
                for (const char* cuda : {"", "12", "11.8", "x"}) {
                    try {
                        const Artifact& a = select_artifact(component, platform, cuda);
                        (void)a.relative_path.size();
                    } catch (const InstallError&) {
                    }
                }
            }
            try {
                (void)resolve_components(m, platform, {std::string(text.substr(0, 64))});
            } catch (const InstallError&) {
            }
        }
    } catch (const InstallError&) {
    }
    return 0;
}
