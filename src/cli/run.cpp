#include "cli/run.h"

#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "cli/internal_commands.h"
#include "cli/commands.h"
#include "cli/completion.h"
#include "cli/context.h"
#include "cli/errors.h"
#include "cli/usage.h"
#include "platform/platform.h"

namespace cvm::cli {

void setup_app(CLI::App& app) {
    app.name("cvm");
    app.description("cvm: side-by-side CUDA toolkits and cuDNN builds, selected per project");
    app.require_subcommand(1); // bare `cvm` prints the help (usage.cpp)
    app.set_version_flag("-V,--version", std::string("cvm ") + CVM_VERSION_STRING, "print cvm's version");
}

void register_commands(CLI::App& app) {
    register_import(app);
    register_uninstall(app);
    register_list(app);
    register_latest(app);
    register_use(app);
    register_current(app);
    register_which(app);
    register_exec(app);
    register_env(app);
    register_rehash(app);
    register_user_path(app);
    register_cache(app);
    register_doctor(app);
    register_probe(app);
    register_export(app);
    register_lock(app);
    register_completions(app);
}

int run(CLI::App& app, int argc, char** argv) {
    platform::restrict_file_creation_mask(); // nothing cvm makes is group- or world-writable
    describe_app(app);
    auto args = platform::utf8_args(argc, argv);
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

} // namespace cvm::cli
