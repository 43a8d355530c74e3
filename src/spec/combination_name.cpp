// The name of a combination, and its parts back from a name (combination_name.h).
#include "spec/combination_name.h"

#include <string>

namespace cvm {

CombinationParts combination_parts(const std::string& name) {
    CombinationParts parts;
    size_t plus = name.find('+');
    parts.cuda = name.substr(0, plus);
    while (plus != std::string::npos) {
        size_t next = name.find('+', plus + 1);
        std::string part =
            name.substr(plus + 1, next == std::string::npos ? next : next - plus - 1);
        if (part.rfind("nccl", 0) == 0)
            parts.nccl = part.substr(4);
        else
            parts.cudnn = part;
        plus = next;
    }
    return parts;
}

std::string combination_name(const std::string& cuda, const std::string* cudnn,
                             const std::string* nccl) {
    std::string out = cuda;
    if (cudnn) out += "+" + *cudnn;
    if (nccl) out += "+nccl" + *nccl;
    return out;
}

} // namespace cvm
