// The version-file reader (read_version_file) on a real file, as a cloned project could hold it,
// alone or behind a link: whatever the bytes, it gives a selection, nothing, or a SelectionError
// whose message is one line of bounded length without raw control characters; behind a link the
// file's text is never in the message.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <unistd.h>

#include "project/selection.h"

namespace fs = std::filesystem;

namespace {

const fs::path& folder() {
    static const fs::path dir = [] {
        fs::path d =
            fs::temp_directory_path() / ("cvm-fuzz-version-file-" + std::to_string(getpid()));
        fs::create_directories(d);
        return d;
    }();
    return dir;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const bool linked = size > 0 && (data[0] & 1);
    std::string text(reinterpret_cast<const char*>(data), size);
    fs::path target = folder() / "target";
    fs::path file = folder() / ".cudaversion";
    std::error_code ec;
    fs::remove(file, ec);
    if (std::FILE* f = std::fopen((linked ? target : file).c_str(), "wb")) {
        std::fwrite(text.data(), 1, text.size(), f);
        std::fclose(f);
    }
    if (linked) fs::create_symlink(target, file, ec);
    try {
        auto sel = cvm::read_version_file(file, cvm::Selection::Origin::ProjectFile);
        if (sel && sel->line < 1) __builtin_trap();
    } catch (const cvm::SelectionError& e) {
        std::string message = e.what();
        if (message.size() > file.u8string().size() + 600)
            __builtin_trap(); // the text quoted whole
        for (unsigned char c : message)
            if (c < 0x20 || c == 0x7f) __builtin_trap();
        if (linked) {
            int line = 0;
            auto spec = cvm::spec_text_of(text, &line);
            // Quoted whole, as a regular file's message quotes it ("'TEXT' is not a version
            // spec"); a bare prefix would match the message's own examples ('system').
            if (spec && message.find("'" + cvm::printable(*spec) + "'") != std::string::npos)
                __builtin_trap();
        }
    }
    return 0;
}
