// cvm: the command-line front. Each command lives in its own file (see commands.h); this file
// wires them into one CLI11 app and turns errors into the contract's exit codes.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "cli/cli_model.h"
#include "cli/commands.h"
#include "cli/completion.h"
#include "cli/context.h"
#include "cli/errors.h"
#include "cli/usage.h"
#include "platform/platform.h"

int main(int argc, char** argv) {
    using namespace cvm::cli;
    CLI::App app{"cvm: side-by-side CUDA toolkits and cuDNN builds, selected per project",
                 "cvm"};
    app.require_subcommand(1); // bare `cvm` prints the help (usage.cpp)
    app.set_version_flag("-V,--version", std::string("cvm ") + CVM_VERSION_STRING, "print cvm's version");
#ifdef CVM_TOOL_INSTALL
    // cvm-install: the install and verify commands alone, and `use --install` (see src/cli/CMakeLists.txt).
    register_install(app);
    register_use(app);
    register_verify(app);
    register_update(app);
#ifdef CVM_HAVE_IMAGE
    register_export(app); // `cvm export --oci`, handed over by cvm
#endif
#else
#if defined(CVM_HAVE_INSTALL)
    register_install(app);
    register_verify(app);
    register_update(app);
#elif defined(CVM_INSTALL_FORWARD)
    register_install_forward(app);
    register_verify_forward(app);
    register_update_forward(app);
#endif
    register_import(app);
    register_uninstall(app);
    register_list(app);
    register_latest(app);
    register_use(app);
    register_current(app);
    register_which(app);
    register_exec(app);
#ifdef CVM_HAVE_ENV
    register_env(app);
#endif
    register_rehash(app);
    register_user_path(app);
    register_cache(app);
#ifdef CVM_HAVE_DOCTOR
    register_doctor(app);
#endif
#ifdef CVM_HAVE_PROBE
    register_probe(app);
#endif
#ifdef CVM_HAVE_EXPORT
    register_export(app);
#endif
#ifdef CVM_HAVE_LOCK
    register_lock(app);
#endif
    register_completions(app);
#endif
    describe_app(app);

    auto args = cvm::platform::utf8_args(argc, argv);
    std::vector<std::string> words(args.begin() + (args.empty() ? 0 : 1), args.end());
    if (auto code = answer_internal(app, words)) return *code; // __complete, __man
    if (auto code = answer_help(app, words)) return *code;
    std::vector<std::string> rev(words.rbegin(), words.rend());
    try {
        try {
            app.parse(std::move(rev));
        } catch (const CLI::CallForHelp&) {
            std::fputs(app.help().c_str(), stdout);
            return 0;
        } catch (const CLI::CallForAllHelp&) {
            std::fputs(app.help("", CLI::AppFormatMode::All).c_str(), stdout);
            return 0;
        } catch (const CLI::CallForVersion&) {
            std::printf("cvm %s\n", CVM_VERSION_STRING);
            return 0;
        } catch (const CLI::ParseError& e) {
            report_error(wants_json(words), "usage", parse_error_line(app, e, words), false);
            return 2;
        }
    } catch (const ExitCode& e) {
        return e.code;
    } catch (const std::exception&) {
        // errors.cpp: one line naming the command, and the codes of --json
        return report_current_exception(wants_json(words),
                                        [&](const std::string& m) { return error_line(app, m); });
    }
    return 0;
}
