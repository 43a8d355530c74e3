// libFuzzer target for the PE reader: any byte string must give a result or an error, never a
// crash or a leak.
#include "binary/pe_reader.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace cvm::binary;
    auto pe = read_pe(ByteView(data, size));
    if (pe && pe.info->file_version) (void)pe.info->file_version->str();
    return 0;
}
