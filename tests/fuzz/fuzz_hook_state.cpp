// The prompt hook's record comes from the environment (_CVM_HOOK), which anyone can edit: whatever
// the bytes, decoding yields nothing or a record that encodes back to text decoding to the same
// record, and undoing it against an environment never crashes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "shells/hook.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    auto state = cvm::decode_hook_state(text);
    if (!state) return 0;
    std::string encoded = cvm::encode_hook_state(*state);
    auto again = cvm::decode_hook_state(encoded);
    if (!again || cvm::encode_hook_state(*again) != encoded) __builtin_trap();
    auto env = [](const std::string& name) -> std::optional<std::string> {
        if (name == "PATH") return std::string("/a::/b:/a");
        if (name == "CUDA_PATH") return std::string("");
        return std::nullopt;
    };
    for (auto os : {cvm::platform::Os::Linux, cvm::platform::Os::Windows})
        for (const auto& c : cvm::undo_hook(*state, env, os))
            if (!cvm::is_variable_name(c.name)) __builtin_trap();
    return 0;
}
