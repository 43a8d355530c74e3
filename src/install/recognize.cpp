#include "install/recognize.h"

#include "binary/nccl_version.h"
#include "layouts/cudnn_cuda_major.h"
#include "store/cudnn_libraries.h"
#include "layouts/nccl_layouts.h"
#include "spec/redist_platform.h"
#include "install/error.h"
#include "platform/platform.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace cvm::install {

namespace fs = std::filesystem;

namespace {

std::string read_small(const fs::path& p, std::size_t limit = 1 << 20) {
    return platform::read_file(p, limit).value_or(std::string()); // never waits on a FIFO
}

std::string rel(const fs::path& p, const fs::path& root) {
    return p.lexically_relative(root).generic_string();
}

std::vector<int> version_numbers(const std::string& v) {
    std::vector<int> out;
    std::stringstream ss(v);
    std::string part;
    while (std::getline(ss, part, '.')) {
        if (part.empty() || part.size() > 9 ||
            !std::all_of(part.begin(), part.end(),
                         [](unsigned char c) { return std::isdigit(c) != 0; }))
            return {};
        out.push_back(std::stoi(part));
    }
    return out;
}

// True when the shorter of two versions is a prefix of the longer.
bool versions_agree(const std::string& a, const std::string& b) {
    auto x = version_numbers(a), y = version_numbers(b);
    if (x.empty() || y.empty()) return a == b;
    std::size_t n = std::min(x.size(), y.size());
    return std::equal(x.begin(), x.begin() + static_cast<long>(n), y.begin());
}

std::string major_minor(const std::string& v) {
    auto n = version_numbers(v);
    if (n.size() < 2) return {};
    return std::to_string(n[0]) + "." + std::to_string(n[1]);
}

std::optional<long> header_define(const std::string& text, const std::string& macro) {
    std::size_t at = 0;
    while ((at = text.find("#define", at)) != std::string::npos) {
        at += 7;
        std::size_t p = at;
        while (p < text.size() && (text[p] == ' ' || text[p] == '\t'))
            ++p;
        if (text.compare(p, macro.size(), macro) != 0) continue;
        p += macro.size();
        if (p < text.size() && !(text[p] == ' ' || text[p] == '\t'))
            continue; // a longer macro name
        while (p < text.size() && (text[p] == ' ' || text[p] == '\t'))
            ++p;
        std::size_t e = p;
        while (e < text.size() && std::isdigit(static_cast<unsigned char>(text[e])))
            ++e;
        if (e == p || e - p > 9) return std::nullopt;
        return std::stol(text.substr(p, e - p));
    }
    return std::nullopt;
}

// One claim about the product: a value and where it comes from.
struct Claim {
    std::string value;
    std::string source;
};

bool looks_binary_name(const std::string& name) {
    return name.find(".so") != std::string::npos ||
           (name.size() > 4 && (name.compare(name.size() - 4, 4, ".dll") == 0 ||
                                name.compare(name.size() - 4, 4, ".exe") == 0));
}

struct ArchiveTree {
    std::set<std::string> names;    // file names anywhere below the root
    std::vector<fs::path> binaries; // candidates for the platform check
};

ArchiveTree scan(const fs::path& root) {
    ArchiveTree tree;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (it.depth() > 6) {
            it.disable_recursion_pending();
            continue;
        }
        std::string name = it->path().filename().string();
        if (it->is_directory(ec) || ec) continue;
        tree.names.insert(name);
        bool regular = it->is_regular_file(ec) && !it->is_symlink(ec);
        std::string parent = it->path().parent_path().filename().string();
        if (regular && tree.binaries.size() < 64 && (looks_binary_name(name) || parent == "bin"))
            tree.binaries.push_back(it->path());
    }
    return tree;
}

std::string comma_list(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v)
        out += (out.empty() ? "" : ", ") + s;
    return out;
}

std::map<std::string, std::string> read_metadata(const fs::path& file) {
    std::map<std::string, std::string> fields;
    std::istringstream in(read_small(file));
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) break; // the body starts
        auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string key = line.substr(0, colon);
        std::string value = line.substr(colon + 1);
        value.erase(0, value.find_first_not_of(" \t"));
        fields.emplace(key, value);
    }
    return fields;
}

} // namespace

std::optional<std::string> binary_platform(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return std::nullopt;
    unsigned char h[64] = {};
    in.read(reinterpret_cast<char*>(h), sizeof h);
    if (in.gcount() < 20) return std::nullopt;
    if (h[0] == 0x7f && h[1] == 'E' && h[2] == 'L' && h[3] == 'F') {
        bool little = h[5] == 1;
        unsigned machine = little ? (h[18] | (h[19] << 8)) : ((h[18] << 8) | h[19]);
        switch (machine) {
        case 62:
            return std::string("linux-x86_64");
        case 183:
            return std::string("linux-sbsa");
        case 21:
            return std::string(little ? "linux-ppc64le" : "linux-ppc64");
        case 3:
            return std::string("linux-i386");
        default:
            return "linux-machine" + std::to_string(machine);
        }
    }
    if (h[0] == 'M' && h[1] == 'Z' && in.gcount() == 64) {
        std::uint32_t offset = h[0x3c] | (h[0x3d] << 8) | (h[0x3e] << 16) |
                               (static_cast<std::uint32_t>(h[0x3f]) << 24);
        if (offset > (1u << 20)) return std::nullopt;
        in.clear();
        in.seekg(offset);
        unsigned char pe[6] = {};
        in.read(reinterpret_cast<char*>(pe), sizeof pe);
        if (in.gcount() != 6 || std::memcmp(pe, "PE\0\0", 4) != 0) return std::nullopt;
        unsigned machine = pe[4] | (pe[5] << 8);
        switch (machine) {
        case 0x8664:
            return std::string("windows-x86_64");
        case 0xAA64:
            return std::string("windows-arm64");
        case 0x14c:
            return std::string("windows-i386");
        default:
            return "windows-machine" + std::to_string(machine);
        }
    }
    return std::nullopt;
}

bool same_machine(const std::string& a, const std::string& b) {
    auto canon = [](std::string p) { return p == "linux-aarch64" ? std::string("linux-sbsa") : p; };
    return canon(a) == canon(b);
}

std::string parse_cudnn_header_version(const std::string& text) {
    auto major = header_define(text, "CUDNN_MAJOR");
    auto minor = header_define(text, "CUDNN_MINOR");
    auto patch = header_define(text, "CUDNN_PATCHLEVEL");
    if (!major || !minor || !patch) return {};
    return std::to_string(*major) + "." + std::to_string(*minor) + "." + std::to_string(*patch);
}

std::vector<std::string> cudnn_required_libraries(int major, bool windows) {
    std::string m = std::to_string(major);
    std::vector<std::string> names;
    names.push_back(windows ? "cudnn64_" + m + ".dll" : "libcudnn.so." + m);
    for (const auto& s : cudnn_sub_libraries(major))
        names.push_back(windows ? "cudnn_" + s + "64_" + m + ".dll" : "libcudnn_" + s + ".so." + m);
    return names;
}

Recognized recognize_extracted(const fs::path& extracted, const std::optional<ArchiveName>& name,
                               const RecognizeOptions& options) {
    const std::string what = options.archive_display.empty()
                                 ? (name ? std::string("the archive") : extracted.string())
                                 : options.archive_display;
    auto refuse = [&](const std::string& why) -> void { fail_input(what + ": " + why); };

    Recognized r;
    std::error_code ec;
    std::vector<fs::path> top;
    for (const auto& e : fs::directory_iterator(extracted, ec))
        top.push_back(e.path());
    if (ec || top.empty()) fail_input(what + " is empty");

    std::vector<Claim> version_claims; // full versions claimed by names and metadata
    std::vector<Claim> variant_claims; // the CUDA a cuDNN build is for
    std::vector<Claim> platform_claims;
    std::vector<Claim> component_claims;
    std::optional<ArchiveFamily> layout_family;
    auto claim_from_name = [&](const ArchiveName& n, const std::string& source) {
        version_claims.push_back({n.version, source});
        if (!n.cuda_variant.empty()) variant_claims.push_back({n.cuda_variant, source});
        if (!n.platform.empty()) platform_claims.push_back({n.platform, source});
        component_claims.push_back({n.product, source});
    };
    std::string file_source = "the file name";
    if (name) claim_from_name(*name, file_source);

    // --- layout: which folder becomes the install root --------------------------------------
    fs::path root = extracted;
    fs::path dist_info;
    for (const auto& p : top)
        if (fs::is_directory(p) && p.extension() == ".dist-info") {
            if (!dist_info.empty())
                refuse("holds the metadata of two wheels: " + dist_info.filename().string() +
                       " and " + p.filename().string());
            dist_info = p;
        }
    if (!dist_info.empty() && fs::is_directory(extracted / "nvidia")) {
        auto meta = read_metadata(dist_info / "METADATA");
        std::string project = normalize_project_name(meta["Name"]);
        std::string version = meta["Version"];
        if (project.empty() || version.empty())
            refuse(rel(dist_info / "METADATA", extracted) + " names no project or version");
        std::string stem = project;
        std::replace(stem.begin(), stem.end(), '-', '_');
        auto parsed = parse_archive_name(stem + "-" + version + "-py3-none-any.whl");
        if (!parsed) refuse("wheel " + project + " is not an NVIDIA CUDA or cuDNN wheel");
        if (name && name->family != ArchiveFamily::CudnnWheel &&
            name->family != ArchiveFamily::CudaWheel && name->family != ArchiveFamily::NcclWheel)
            refuse("the name says " + std::string(family_name(name->family)) +
                   " but the contents are the wheel " + project);
        if (name && !name->wheel_project.empty() && name->wheel_project != project)
            refuse("the name says " + name->wheel_project + " but " +
                   rel(dist_info / "METADATA", extracted) + " says " + project);
        claim_from_name(*parsed, rel(dist_info / "METADATA", extracted));
        layout_family = parsed->family;
        if (parsed->family == ArchiveFamily::CudnnWheel ||
            parsed->family == ArchiveFamily::NcclWheel) {
            const char* folder = parsed->family == ArchiveFamily::CudnnWheel ? "cudnn" : "nccl";
            root = extracted / "nvidia" / folder;
            if (!fs::is_directory(root))
                refuse("wheel " + project + " has no nvidia/" + folder + " folder");
        } else {
            std::vector<fs::path> subs;
            for (const auto& e : fs::directory_iterator(extracted / "nvidia"))
                if (e.is_directory() && e.path().filename() != "__pycache__")
                    subs.push_back(e.path());
            root = subs.size() == 1 ? subs.front() : extracted / "nvidia";
        }
    } else if (top.size() == 1 && fs::is_directory(top.front()) && !fs::is_symlink(top.front())) {
        root = top.front();
        std::string folder = root.filename().string();
        if (auto parsed = parse_archive_folder_name(folder)) {
            claim_from_name(*parsed, "its folder " + folder);
            layout_family = parsed->family;
        } else if (folder == "cuda") {
            layout_family = ArchiveFamily::LegacyCudnn; // confirmed below by the headers
        }
    }
    r.content_root = root;
    r.family = layout_family ? layout_family : (name ? std::optional(name->family) : std::nullopt);

    // --- consistency of the claims -----------------------------------------------------------
    auto check_agreement = [&](const std::vector<Claim>& claims, const char* what_claimed) {
        for (std::size_t i = 1; i < claims.size(); ++i)
            if (!versions_agree(claims[0].value, claims[i].value))
                refuse(claims[0].source + " says " + what_claimed + " " + claims[0].value +
                       " but " + claims[i].source + " says " + claims[i].value);
    };
    check_agreement(version_claims, "version");
    check_agreement(variant_claims, "CUDA");
    for (std::size_t i = 1; i < component_claims.size(); ++i)
        if (component_claims[i].value != component_claims[0].value)
            refuse(component_claims[0].source + " says " + component_claims[0].value + " but " +
                   component_claims[i].source + " says " + component_claims[i].value);
    for (std::size_t i = 1; i < platform_claims.size(); ++i)
        if (!same_machine(platform_claims[0].value, platform_claims[i].value))
            refuse(platform_claims[0].source + " says " + platform_claims[0].value + " but " +
                   platform_claims[i].source + " says " + platform_claims[i].value);

    // --- platform from the binaries -----------------------------------------------------------
    ArchiveTree tree = scan(root);
    std::string content_platform, content_witness;
    for (const auto& bin : tree.binaries) {
        auto p = binary_platform(bin);
        if (!p) continue;
        if (content_platform.empty()) {
            content_platform = *p;
            content_witness = rel(bin, root);
        } else if (!same_machine(content_platform, *p)) {
            refuse("holds binaries for two platforms: " + content_witness + " (" +
                   content_platform + ") and " + rel(bin, root) + " (" + *p + ")");
        }
    }
    std::string claimed_platform = platform_claims.empty() ? "" : platform_claims[0].value;
    if (!content_platform.empty() && !claimed_platform.empty() &&
        !same_machine(content_platform, claimed_platform))
        refuse(platform_claims[0].source + " says " + claimed_platform + " but " + content_witness +
               " is built for " + content_platform);
    r.platform = !claimed_platform.empty() ? claimed_platform : content_platform;
    if (!options.host_platform.empty() && !r.platform.empty() &&
        !same_machine(r.platform, options.host_platform))
        refuse("it is a build for " + r.platform +
               (content_witness.empty() ? std::string() : " (" + content_witness + ")") +
               "; this machine needs " + options.host_platform + ": get the " +
               options.host_platform + " archive");

    // --- the folders an entry points at --------------------------------------------------------
    auto has_dir = [&](const char* d) { return fs::is_directory(root / d); };
    if (has_dir("include")) r.include_dir = "include";
    if (has_dir("lib64"))
        r.lib_dir = "lib64";
    else if (has_dir("lib/x64"))
        r.lib_dir = "lib/x64";
    else if (has_dir("lib"))
        r.lib_dir = "lib";
    if (has_dir("bin")) r.bin_dir = "bin";

    // --- NCCL ----------------------------------------------------------------------------------
    const bool name_says_nccl = !component_claims.empty() && component_claims[0].value == "nccl";
    fs::path nccl_lib = r.lib_dir.empty() ? fs::path() : nccl_library_in(root / r.lib_dir);
    if (!nccl_lib.empty() || name_says_nccl) {
        if (nccl_lib.empty()) refuse("the name says NCCL but there is no lib/libnccl.so.2 inside");
        if (!component_claims.empty() && component_claims[0].value != "nccl")
            refuse(component_claims[0].source + " says " + component_claims[0].value +
                   " but the contents are NCCL (" + rel(nccl_lib, root) + ")");
        // Its version and CUDA from the library itself, never from a name alone.
        auto banner = binary::read_nccl_banner_file(nccl_lib.string());
        if (!banner)
            refuse(rel(nccl_lib, root) +
                   " does not say which NCCL it is (no \"NCCL version\" text in it); the "
                   "archive is damaged or not NVIDIA's");
        r.kind = ProductKind::Nccl;
        r.version = banner->version_text();
        r.evidence = rel(nccl_lib, root) + " (\"" + banner->text + "\")";
        for (const auto& c : version_claims)
            if (c.value != r.version)
                refuse(c.source + " says NCCL " + c.value + " but " + r.evidence + " is NCCL " +
                       r.version + "; the archive is mislabelled or damaged");
        if (fs::is_regular_file(root / "include/nccl.h")) {
            std::string text = read_small(root / "include/nccl.h");
            auto ma = header_define(text, "NCCL_MAJOR"), mi = header_define(text, "NCCL_MINOR"),
                 pa = header_define(text, "NCCL_PATCH");
            if (ma && mi && pa) {
                std::string header =
                    std::to_string(*ma) + "." + std::to_string(*mi) + "." + std::to_string(*pa);
                if (header != r.version)
                    refuse("include/nccl.h says NCCL " + header + " but " + r.evidence +
                           " is NCCL " + r.version);
            }
        }
        r.cuda_variant = banner->cuda_text();
        if (!options.cuda.empty()) variant_claims.push_back({options.cuda, "--cuda"});
        for (const auto& c : variant_claims) {
            if (r.cuda_variant.empty()) {
                r.cuda_variant = c.value;
                continue;
            }
            // A wheel says the CUDA major (cu12), an archive major.minor: both must agree with the
            // library.
            if (!versions_agree(c.value, r.cuda_variant))
                refuse(c.source + " says CUDA " + c.value + " but " + r.evidence +
                       " was built for CUDA " + r.cuda_variant);
        }
        r.cuda_from_option = banner->cuda_text().empty() && variant_claims.size() == 1 && !options.cuda.empty();
        if (r.cuda_variant.empty())
            refuse(
                "cannot tell which CUDA this NCCL " + r.version +
                " was built for; keep NVIDIA's file name (e.g. nccl_2.21.5-1+cuda12.4_x86_64.txz), "
                "or say it with --cuda (e.g. --cuda 12.4)");
        if (!r.family) r.family = ArchiveFamily::NcclArchive;
        return r;
    }

    // --- cuDNN ---------------------------------------------------------------------------------
    fs::path header;
    for (const char* h : {"include/cudnn_version.h", "include/cudnn.h"})
        if (fs::is_regular_file(root / h)) {
            std::string text = read_small(root / h);
            if (!parse_cudnn_header_version(text).empty()) {
                header = root / h;
                break;
            }
        }
    bool name_says_cudnn = (name && name->product == "cudnn") ||
                           (layout_family && (*layout_family == ArchiveFamily::CudnnRedist ||
                                              *layout_family == ArchiveFamily::CudnnWheel));
    if (!header.empty()) {
        r.kind = ProductKind::Cudnn;
        r.header_version = parse_cudnn_header_version(read_small(header));
        r.evidence = rel(header, root);
        if (!component_claims.empty() && component_claims[0].value != "cudnn")
            refuse(component_claims[0].source + " says " + component_claims[0].value +
                   " but the contents are cuDNN " + r.header_version + " (" + r.evidence + ")");
        for (const auto& c : version_claims)
            if (!versions_agree(c.value, r.header_version))
                refuse(c.source + " says cuDNN " + c.value + " but " + r.evidence + " says " +
                       r.header_version + "; the archive is mislabelled or damaged");
        r.version = r.header_version;
        for (const auto& c : version_claims)
            if (version_numbers(c.value).size() > version_numbers(r.version).size())
                r.version = c.value;
        for (const auto& c : variant_claims)
            if (c.value.size() > r.cuda_variant.size()) r.cuda_variant = c.value;
        if (!options.cuda.empty()) {
            // --cuda, as `cvm import --cuda` takes it: what the name says wins where both say it,
            // so they must agree; the libraries' CUDA major must be its major.
            if (!variant_claims.empty() && !versions_agree(options.cuda, r.cuda_variant))
                refuse("--cuda " + options.cuda + " contradicts " + variant_claims[0].source + ", which says CUDA " +
                       r.cuda_variant + "; rerun with --cuda " + r.cuda_variant + " or without --cuda");
            std::vector<fs::path> libs;
            for (const std::string& d : {r.lib_dir, r.bin_dir})
                if (!d.empty()) {
                    auto found = cudnn_library_files(root / d);
                    libs.insert(libs.end(), found.begin(), found.end());
                }
            LibrariesCudaMajor read = cuda_major_of_libraries(libs);
            auto given = version_numbers(options.cuda);
            if (read.major && !given.empty() && static_cast<int>(*read.major) != given.front())
                refuse("--cuda " + options.cuda + " contradicts its libraries: " + read.because() + " (CUDA " +
                       std::to_string(*read.major) + "); rerun with --cuda " + std::to_string(*read.major));
            if (r.cuda_variant.empty()) {
                r.cuda_variant = options.cuda;
                r.cuda_from_option = true;
            }
        }
        if (r.cuda_variant.empty())
            refuse("cannot tell which CUDA this cuDNN " + r.version +
                   " was built for; keep NVIDIA's file name (e.g. "
                   "cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz), or say it with --cuda "
                   "(e.g. --cuda 11.2 for a legacy cudnn-11.2-... archive)");
        if (layout_family == ArchiveFamily::LegacyCudnn && !name)
            r.family = ArchiveFamily::LegacyCudnn;
        // Completeness: every sub-library of this major version.
        int major = version_numbers(r.header_version).front();
        bool windows = false;
        if (!content_platform.empty())
            windows = is_windows_platform(content_platform);
        else if (!r.platform.empty())
            windows = is_windows_platform(r.platform);
        std::vector<std::string> missing;
        for (const auto& lib : cudnn_required_libraries(major, windows)) {
            auto it = tree.names.lower_bound(lib);
            bool found = it != tree.names.end() &&
                         (*it == lib || (it->rfind(lib, 0) == 0 && (*it)[lib.size()] == '.'));
            if (!found) missing.push_back(lib);
        }
        if (!missing.empty())
            refuse("cuDNN " + r.version + " is incomplete: " + comma_list(missing) +
                   (missing.size() == 1 ? " is" : " are") + " missing");
        return r;
    }
    if (name_says_cudnn)
        refuse("the name says cuDNN but there is no include/cudnn_version.h or include/cudnn.h "
               "with the version");

    // --- CUDA ------------------------------------------------------------------------------
    r.kind = ProductKind::Cuda;
    std::string toolkit_version;
    if (fs::is_regular_file(root / "version.json")) {
        auto doc = nlohmann::json::parse(read_small(root / "version.json"), nullptr, false);
        if (!doc.is_discarded() && doc.is_object() && doc.contains("cuda") &&
            doc["cuda"].is_object() && doc["cuda"].contains("version") &&
            doc["cuda"]["version"].is_string())
            toolkit_version = doc["cuda"]["version"].get<std::string>();
        if (toolkit_version.empty() || version_numbers(toolkit_version).size() < 2)
            refuse("version.json does not name the CUDA version");
        r.evidence = "version.json";
    } else if (fs::is_regular_file(root / "version.txt")) {
        std::string text = read_small(root / "version.txt", 4096);
        auto at = text.find("CUDA Version ");
        if (at != std::string::npos) {
            std::size_t b = at + 13, e = b;
            while (e < text.size() &&
                   (std::isdigit(static_cast<unsigned char>(text[e])) || text[e] == '.'))
                ++e;
            toolkit_version = text.substr(b, e - b);
            r.evidence = "version.txt";
        }
    }
    std::string header_release;
    if (fs::is_regular_file(root / "include/cuda.h")) {
        if (auto v = header_define(read_small(root / "include/cuda.h"), "CUDA_VERSION"))
            header_release = std::to_string(*v / 1000) + "." + std::to_string((*v % 1000) / 10);
    }
    if (!toolkit_version.empty()) {
        if (!component_claims.empty())
            refuse(component_claims[0].source + " says the component " + component_claims[0].value +
                   " but the contents are a whole CUDA toolkit " + toolkit_version);
        if (!header_release.empty() && major_minor(toolkit_version) != header_release)
            refuse(r.evidence + " says CUDA " + toolkit_version + " but include/cuda.h says " +
                   header_release);
        r.version = toolkit_version;
        r.cuda_release = major_minor(toolkit_version);
        return r;
    }
    if (component_claims.empty())
        refuse("neither cuDNN (include/cudnn_version.h) nor CUDA (version.json, a component "
               "archive's folder) is inside");
    r.component = component_claims[0].value;
    r.version = version_claims.empty() ? "" : version_claims[0].value;
    for (const auto& c : version_claims)
        if (version_numbers(c.value).size() > version_numbers(r.version).size())
            r.version = c.value;
    r.evidence = component_claims[0].source;
    // cuda_* components carry the toolkit's MAJOR.MINOR; libraries have their own numbers.
    bool tracks_toolkit = r.component.rfind("cuda_", 0) == 0;
    if (!header_release.empty()) {
        if (tracks_toolkit && major_minor(r.version) != header_release)
            refuse(r.evidence + " says " + r.component + " " + r.version +
                   " but include/cuda.h says CUDA " + header_release);
        r.cuda_release = header_release;
    } else if (tracks_toolkit) {
        r.cuda_release = major_minor(r.version);
    }
    return r;
}

} // namespace cvm::install
