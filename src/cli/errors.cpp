#include "cli/errors.h"

#include <cerrno>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <optional>
#include <utility>

#include "cli/context.h"
#include "config/config.h"
#include "spec/spec.h"
#include "store/store.h"
#include "text/terminal_text.h"
#include "platform/platform.h"

namespace cvm::cli {


bool wants_json(const std::vector<std::string>& words) {
    if (words.empty() || words.front() == "exec") return false;
    for (const auto& w : words) {
        if (w == "--") return false;
        if (w == "--json") return true;
    }
    return false;
}

void report_error(bool json, const std::string& code, const std::string& line, bool prefixed) {
    if (prefixed) note(line);
    else
        std::fprintf(stderr, "%s\n", escape_controls(line).c_str());
    if (json) print_json({{"error", {{"code", code}, {"message", line}}}});
}

std::string error_code_of(const std::error_code& ec) {
    if (ec == std::errc::no_space_on_device) return "no_space";
#ifdef EDQUOT
    if (ec.value() == EDQUOT && ec.category() == std::generic_category()) return "no_space";
#endif
    if (ec == std::errc::permission_denied || ec == std::errc::operation_not_permitted ||
        ec == std::errc::read_only_file_system)
        return "permission";
    if (ec == std::errc::no_such_file_or_directory) return "not_found";
    return "io";
}

int report_current_exception(bool json, const std::function<std::string(const std::string&)>& command_line) {
    auto coded = [&](const CodedError& e, const char* fallback, int exit_code) {
        report_error(json, e.code().empty() ? fallback : e.code(), command_line(e.what()), false);
        return exit_code;
    };
    try {
        throw;
    } catch (const UsageError& e) {
        return coded(e, "invalid_input", 2);
    } catch (const Failure& e) {
        return coded(e, "failed", 1);
    } catch (const SpecError& e) {
        report_error(json, "invalid_input", e.what());
        return 2;
    } catch (const ConfigError& e) {
        report_error(json, "invalid_input", e.what());
        return 2;
    } catch (const std::system_error& e) {
        report_error(json, error_code_of(e.code()), command_line(error_text(e)), false);
        return 1;
    } catch (const std::exception& e) {
        report_error(json, "failed", command_line(error_text(e)), false);
        return 1;
    }
}

} // namespace cvm::cli
