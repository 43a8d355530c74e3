#include "cli/internal_commands.h"

#include <cstdio>

#include <CLI/CLI.hpp>

#include "cli/cli_model.h"
#include "cli/completion.h"
#include "cli/context.h"
#include "cli/manpage.h"
#include "activation/shims.h"
#include "platform/platform.h"

namespace cvm::cli {

std::optional<int> answer_internal(const CLI::App& app, const std::vector<std::string>& args) {
    if (args.empty()) return std::nullopt;
    const std::string& what = args[0];
    if (what == "__describe") {
        // For the program that forwards a command here: that command's model as JSON.
        CommandModel root = describe(app);
        const CommandModel* cmd = args.size() == 2 ? root.command(args[1]) : nullptr;
        if (!cmd) {
            note("__describe: name one command of this program");
            return 2;
        }
        std::printf("%s\n", nlohmann::json(*cmd).dump().c_str());
        return 0;
    }
    if (what == "__complete") {
        std::vector<std::string> words(args.begin() + 1, args.end());
        if (words.size() > 1) {
            // A forwarded command completes in the program that has its options.
            for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
                const std::string* companion = forwarded_to(sub);
                if (!companion || !sub->check_name(words[0])) continue;
                fs::path program = companion_program(*companion);
                std::vector<std::string> argv{program.u8string(), "__complete", sub->get_name()};
                argv.insert(argv.end(), words.begin() + 1, words.end());
                if (platform::is_executable(program))
                    platform::exec_replace(program, argv, platform::environment());
            }
        }
        std::fputs(completion_answer(app, words).c_str(), stdout);
        return 0;
    }
    if (what == "__man") {
        if (args.size() > 2) {
            note("__man: at most one FILE");
            return 2;
        }
        std::string page = render_man(describe(app));
        if (args.size() == 1 || args[1] == "-" || args[1] == "/dev/stdout") {
            std::fputs(page.c_str(), stdout);
            return 0;
        }
        // As `cvm script -o`: a link is replaced, never written through; a FIFO or a character
        // device is written to, never replaced; a block device or a socket is refused (issue 33).
        std::string refusal = platform::output_refusal(fs::u8path(args[1]));
        if (!refusal.empty() && refusal != "a folder") {
            note("__man: cannot write " + args[1] + ": it is " + refusal + "; name a file");
            return 2;
        }
        try {
            platform::write_output_file(fs::u8path(args[1]), page);
        } catch (const std::exception& e) {
            auto* fe = dynamic_cast<const fs::filesystem_error*>(&e);
            if (fe && fe->code() == std::errc::no_such_device_or_address)
                note("__man: cannot write " + args[1] +
                     ": nothing reads that FIFO; start its reader first");
            else
                note("__man: cannot write " + args[1] +
                     "; check the folder exists and is writable");
            return 1;
        }
        return 0;
    }
    return std::nullopt;
}

} // namespace cvm::cli
