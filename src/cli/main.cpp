// cvm: the command-line front. Each command lives in its own file (see commands.h); this file
// wires them into one CLI11 app and turns errors into the contract's exit codes.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/usage.h"
#include "core/config.h"
#include "core/spec.h"
#include "platform/platform.h"

int main(int argc, char** argv) {
    using namespace cvm::cli;
    CLI::App app{"cvm: side-by-side CUDA toolkits and cuDNN builds, selected per project",
                 "cvm"};
    app.require_subcommand(1); // bare `cvm` prints the help (usage.cpp)
    app.set_version_flag("-V,--version", std::string("cvm ") + CVM_VERSION_STRING);
#ifdef CVM_TOOL_INSTALL
    // cvm-install: the install and verify commands alone (see src/cli/CMakeLists.txt).
    register_install(app);
    register_verify(app);
#else
#if defined(CVM_HAVE_INSTALL)
    register_install(app);
    register_verify(app);
#elif defined(CVM_INSTALL_FORWARD)
    register_install_forward(app);
    register_verify_forward(app);
#endif
    register_import(app);
    register_uninstall(app);
    register_list(app);
    register_use(app);
    register_current(app);
    register_which(app);
    register_exec(app);
#ifdef CVM_HAVE_ENV
    register_env(app);
#endif
    register_rehash(app);
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
#endif
    describe_app(app);

    auto args = cvm::platform::utf8_args(argc, argv);
    std::vector<std::string> words(args.begin() + (args.empty() ? 0 : 1), args.end());
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
            std::fprintf(stderr, "%s\n", parse_error_line(app, e, words).c_str());
            return 2;
        }
    } catch (const ExitCode& e) {
        return e.code;
    } catch (const UsageError& e) {
        note(e.what());
        return 2;
    } catch (const cvm::SpecError& e) {
        note(e.what());
        return 2;
    } catch (const cvm::ConfigError& e) {
        note(e.what());
        return 2;
    } catch (const std::exception& e) {
        note(e.what());
        return 1;
    }
    return 0;
}
