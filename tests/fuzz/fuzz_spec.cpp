// Specs and version files: whatever the bytes, parsing either yields a spec that prints back to
// something that parses to the same spec, or throws SpecError. Never a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "project/selection.h"
#include "spec/spec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    try {
        cvm::Spec s = cvm::parse_spec(text);
        cvm::Spec again = cvm::parse_spec(s.str());
        if (again.str() != s.str()) __builtin_trap();
    } catch (const cvm::SpecError&) {
    }
    int line = 0;
    if (auto spec_text = cvm::spec_text_of(text, &line)) {
        if (line < 1) __builtin_trap();
        try {
            cvm::parse_spec(*spec_text);
        } catch (const cvm::SpecError&) {
        }
    }
    cvm::parse_version(text, 1, 4);
    cvm::parse_cudnn_id(text);
    // An NCCL id prints back to itself.
    if (auto n = cvm::parse_nccl_id(text)) {
        auto again = cvm::parse_nccl_id(n->str());
        if (!again || again->str() != n->str()) __builtin_trap();
    }
    return 0;
}
