// Windows: cuDNN's DLLs carry no ELF version symbols to compare; a DLL of another release fails
// to load with a status the convolution check already names.
#include "prober.h"

namespace cvm::probe::detail {

void Prober::check_sublibrary_versions() {}

} // namespace cvm::probe::detail
