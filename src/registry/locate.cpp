// Where the registry files are at run time, and the copy compiled into the binary.
#include <system_error>

#include "platform/platform.h"
#include "registry/registry.h"

#ifndef CVM_SOURCE_REGISTRY_DIR
#define CVM_SOURCE_REGISTRY_DIR ""
#endif

namespace cvm::registry {

// Defined in the generated embedded_registry.cpp.
extern const unsigned char embedded_cuda_toml[];
extern const std::size_t embedded_cuda_toml_size;
extern const unsigned char embedded_cudnn_toml[];
extern const std::size_t embedded_cudnn_toml_size;
extern const unsigned char embedded_frameworks_toml[];
extern const std::size_t embedded_frameworks_toml_size;

namespace {

namespace fs = std::filesystem;

bool holds_registry(const fs::path& dir) {
    std::error_code ec;
    return !dir.empty() && fs::is_regular_file(dir / "cuda.toml", ec);
}

std::string text_of(const unsigned char* data, std::size_t size) {
    return std::string(reinterpret_cast<const char*>(data), size);
}

} // namespace

std::optional<fs::path> find_registry_dir(const RegistryDirInputs& in) {
    if (in.env_value && !in.env_value->empty()) {
        fs::path dir = fs::u8path(*in.env_value);
        if (!holds_registry(dir))
            throw RegistryError("CVM_REGISTRY_DIR=" + printable(*in.env_value) +
                                ": no cuda.toml there; point it at a folder holding cuda.toml, "
                                "cudnn.toml and frameworks.toml, or unset it");
        return dir;
    }
    if (!in.exe_path.empty()) {
        fs::path dir = in.exe_path.parent_path() / ".." / "share" / "cvm" / "registry";
        if (holds_registry(dir)) return dir.lexically_normal();
    }
    if (holds_registry(in.source_dir)) return in.source_dir;
    return std::nullopt;
}

fs::path source_tree_registry_dir() {
    return fs::u8path(CVM_SOURCE_REGISTRY_DIR);
}

fs::path locate_registry_dir() {
    RegistryDirInputs in;
    in.env_value = platform::get_env("CVM_REGISTRY_DIR");
    try {
        in.exe_path = platform::current_exe();
    } catch (const std::exception&) {
        // Without a known executable path only the other candidates remain.
    }
    in.source_dir = source_tree_registry_dir();
    if (auto dir = find_registry_dir(in)) return *dir;
    std::string tried = "CVM_REGISTRY_DIR (unset)";
    if (!in.exe_path.empty())
        tried += ", " + (in.exe_path.parent_path() / ".." / "share" / "cvm" / "registry")
                            .lexically_normal()
                            .string();
    if (!in.source_dir.empty()) tried += ", " + in.source_dir.string();
    throw RegistryError("no registry found (tried " + tried +
                        "); reinstall cvm or set CVM_REGISTRY_DIR to its registry folder");
}

std::pair<std::string, std::string> registry_table_text(const std::string& name, std::string_view embedded) {
    try {
        fs::path file = locate_registry_dir() / fs::u8path(name);
        if (auto text = platform::read_file(file)) return {*text, file.u8string()};
    } catch (const RegistryError&) {
        if (embedded.empty()) throw;
    }
    if (embedded.empty())
        throw RegistryError("no " + name + " in the registry; reinstall cvm or set CVM_REGISTRY_DIR to a "
                            "registry folder holding it");
    return {std::string(embedded), "<embedded>/" + name};
}

bool has_embedded_registry() {
    return embedded_cuda_toml_size > 0;
}

Registry load_embedded_registry() {
    if (!has_embedded_registry())
        throw RegistryError("this cvm was built without an embedded registry; set "
                            "CVM_REGISTRY_DIR to a registry folder");
    RegistryTexts texts;
    texts.cuda_toml = text_of(embedded_cuda_toml, embedded_cuda_toml_size);
    texts.cudnn_toml = text_of(embedded_cudnn_toml, embedded_cudnn_toml_size);
    texts.frameworks_toml = text_of(embedded_frameworks_toml, embedded_frameworks_toml_size);
    return parse_registry(texts, "<embedded>");
}

Registry load_default_registry() {
    RegistryDirInputs in;
    in.env_value = platform::get_env("CVM_REGISTRY_DIR");
    try {
        in.exe_path = platform::current_exe();
    } catch (const std::exception&) {
    }
    in.source_dir = source_tree_registry_dir();
    if (auto dir = find_registry_dir(in)) return load_registry(*dir);
    if (has_embedded_registry()) return load_embedded_registry();
    return load_registry(locate_registry_dir()); // throws the message listing what was tried
}

} // namespace cvm::registry
