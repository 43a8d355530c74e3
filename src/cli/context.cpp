#include "cli/context.h"

#include <cstdio>
#include <iostream>

#include "activation/launch_plan.h"
#include "text/terminal_text.h"
#include "activation/view.h"
#include "platform/platform.h"

namespace cvm::cli {

Store open_store() {
    return Store::from_environment();
}

void require_store_folder(const Store& store) {
    std::error_code ec;
    auto status = fs::status(store.root(), ec);
    if (ec == std::errc::not_a_directory ||
        (!ec && fs::exists(status) && !fs::is_directory(status)))
        throw fs::filesystem_error("cannot read the folder", store.root(),
                                   std::make_error_code(std::errc::not_a_directory));
}

Selection current_selection(const Store& store, const std::optional<std::string>& explicit_spec) {
    if (explicit_spec) {
        Selection sel;
        sel.origin = Selection::Origin::Argument;
        sel.spec = spec_argument(*explicit_spec);
        return sel;
    }
    std::error_code ec;
    fs::path cwd = platform::current_folder(ec);
    try {
        Selection sel =
            find_selection(cwd, platform::get_env("CVM_VERSION"), store.global_version_file());
        for (const auto& w : sel.warnings)
            note("warning: " + w);
        return sel;
    } catch (const SelectionError& e) {
        throw UsageError(e.what());
    }
}

Resolved resolve_selection(const Store& store, const Selection& sel) {
    if (sel.origin == Selection::Origin::None)
        throw Failure("no CUDA version is selected here; run `cvm use SPEC` or `cvm use --global "
                      "SPEC` (see `cvm list`)",
                      "not_selected");
    if (sel.spec.system)
        throw Failure("'system' is selected (" + sel.origin_text() +
                          "): cvm changes nothing; run `cvm use SPEC` to pick a toolkit",
                      "not_selected");
    try {
        return resolve(store, sel.spec);
    } catch (const ResolveError& e) {
        throw Failure(sel.not_installed_text(e.what()), "not_installed");
    }
}

Spec spec_argument(const std::string& text, const std::string& what) {
    try {
        return parse_spec(text);
    } catch (const SpecError& e) {
        throw UsageError(what + ": " + e.what());
    }
}

std::vector<EnvChange> selection_changes(const Store& store, const Resolved& r, Layout* layout_out,
                                         const EnvLookup& current) {
    Layout layout = selection_layout(store, r);
    check_selection_programs(r, layout);
    auto changes = selection_environment(
        store, r, layout, current ? current : [](const std::string& n) { return platform::get_env(n); });
    if (layout_out) *layout_out = layout;
    return changes;
}

void print_json(const nlohmann::json& doc) {
    std::string text = doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fputc('\n', stdout);
}

void print_text(const std::string& text) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
}

nlohmann::json entry_json(const Store& store, const Entry& e) {
    nlohmann::json j;
    j["kind"] = kind_dir(e.kind);
    j["id"] = e.id;
    j["version"] = e.version.str();
    if (e.kind != Kind::Cuda) j["cuda"] = e.cuda.str();
    j["path"] = e.path.u8string();
    j["source"] = e.imported ? "imported" : "installed";
    if (!e.origin.empty()) j["origin"] = e.origin.u8string();
    j["layer"] = store.layers()[e.layer].u8string();
    j["read_only"] = e.layer != 0;
    if (!e.components.empty()) j["components"] = e.components;
    if (!e.platform.empty()) j["platform"] = e.platform;
    return j;
}

// Paths from the disk may name folders with terminal escapes: shown escaped (terminal_text.h).
void note(const std::string& message) {
    std::fprintf(stderr, "cvm: %s\n", escape_controls(message).c_str());
}

bool& quiet_flag() {
    static bool quiet = false;
    return quiet;
}

void hint(const std::string& message) {
    if (!quiet_flag()) note(message);
}

void report(const std::string& message) {
    if (!quiet_flag()) note(message);
}

void hint(const std::string& command, const std::string& why) {
    hint("next: " + command + (why.empty() ? std::string() : " (" + why + ")"));
}

bool colour_allowed(int fd) {
    auto no_colour = platform::get_env("NO_COLOR");
    return platform::is_terminal(fd) && (!no_colour || no_colour->empty());
}

} // namespace cvm::cli
