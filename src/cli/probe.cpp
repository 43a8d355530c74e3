// `cvm probe [SPEC] [--json] [--benchmark] [--nccl]`: starts the helper cvm-probe (src/probe) in
// exactly the environment the selection gives a program, so it loads what the user's program loads,
// and relays its report and exit code. The helper is told which folders the selection put cuDNN,
// NCCL and the CUDA runtime in, so a library loaded from anywhere else is reported too.
#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/probe_python.h"
#include "activation/environment.h"
#include "store/resolve.h"
#include "activation/shims.h"
#include "platform/platform.h"

namespace cvm::cli {

namespace {

fs::path probe_program() {
    fs::path probe = companion_program("cvm-probe");
    std::error_code ec;
    if (!fs::is_regular_file(probe, ec) || !platform::is_executable(probe))
        throw Failure("probe: the helper " + probe.u8string() +
                      " is missing; cvm-probe belongs next to cvm, reinstall cvm");
    return probe;
}

// The folders of an entry that hold its shared libraries: lib dirs on Linux, on Windows the
// DLL folders (bin) as well.
std::vector<std::string> library_dirs(const Entry& e) {
    std::vector<std::string> dirs;
    auto add = [&](const std::vector<std::string>& relative) {
        for (const auto& d : relative)
            dirs.push_back((e.path / fs::u8path(d)).u8string());
    };
    if (platform::host_os() == platform::Os::Windows) add(e.bin_dirs);
    add(e.lib_dirs);
    return dirs;
}

} // namespace

void register_probe(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "probe",
        "Load the cuDNN (and NCCL) that the selection makes a program load, run convolutions "
        "(and all-reduces) on the GPUs and check them");
    auto spec = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    auto benchmark = std::make_shared<bool>(false);
    auto nccl = std::make_shared<bool>(false);
    cmd->add_option("spec", *spec,
                    "probe this SPEC (CUDA[+CUDNN] or system) instead of the selection");
    cmd->add_flag("--json", *json, "print one JSON document on stdout");
    cmd->add_flag(
        "--benchmark", *benchmark,
        "let cuDNN's heuristics choose the algorithm and time every forward algorithm, fastest "
        "first (as cudnn.benchmark would)");
    cmd->add_flag(
        "--nccl", *nccl,
        "also probe NCCL: one communicator over every visible GPU, all-reduces of 8 MiB to 1 GiB "
        "checked exactly, with their bandwidth (the default when the selection names an NCCL)");
    auto python = std::make_shared<std::string>();
    auto* python_option =
        cmd->add_option("--python", *python,
                        "run PyTorch's, JAX's and TensorFlow's own checks (cuDNN version, a convolution, the "
                        "libraries loaded) in this Python (default: the one that would run) under the selection")
            ->expected(0, 1);
    cmd->callback([spec, json, benchmark, nccl, python, python_option] {
        Store store = open_store();
        Selection sel = current_selection(store, spec->empty() ? std::nullopt
                                                               : std::optional<std::string>(*spec));
        if (python_option->count() > 0) {
            if (*benchmark || *nccl) throw UsageError("probe: --python runs the frameworks' own checks; give --benchmark and --nccl without it");
            int code = probe_python(store, sel, *python, *json);
            if (code != 0) throw ExitCode{code};
            return;
        }
        fs::path program = probe_program();
        auto env = platform::environment();
        std::vector<std::string> args{program.u8string()};
        if (*json) args.push_back("--json");
        if (*benchmark) args.push_back("--benchmark");
        bool probe_nccl = *nccl;
        // `system`: the machine's own libraries, with no expectations about where they live.
        if (!(sel.origin != Selection::Origin::None && sel.spec.system)) {
            Resolved r = resolve_selection(store, sel);
            Layout layout;
            apply_changes(env, selection_changes(store, r, &layout));
            // A library is expected from the folders the selection puts first (the merged view's
            // links; on Windows its bin, whose hard links report the view's path when loaded) or
            // from its own entry's folders.
            const auto& shared = platform::host_os() == platform::Os::Windows ? layout.bin_dirs
                                                                             : layout.lib_dirs;
            auto expect = [&](const char* flag, const Entry& e) {
                std::vector<std::string> dirs;
                for (const auto& d : shared)
                    dirs.push_back(d.u8string());
                for (auto& d : library_dirs(e))
                    dirs.push_back(std::move(d));
                for (auto& d : dirs)
                    args.insert(args.end(), {flag, std::move(d)});
            };
            args.insert(args.end(), {"--cudart-major", std::to_string(r.toolkit.version.major())});
            expect("--expect-cudart-dir", r.toolkit);
            if (r.nccl) {
                // Selected, NCCL is probed; without a cuDNN of the selection, only NCCL is.
                probe_nccl = true;
                if (!r.cudnn) args.push_back("--no-cudnn");
                expect("--expect-nccl-dir", *r.nccl);
                args.insert(args.end(), {"--expect-nccl-version", r.nccl->version.str()});
            }
            if (r.cudnn) {
                args.insert(args.end(), {"--cudnn-major", std::to_string(r.cudnn->version.major()),
                                         "--expect-cudnn-version", r.cudnn->version.str()});
                expect("--expect-cudnn-dir", *r.cudnn);
            }
        }
        if (probe_nccl) args.push_back("--nccl");
        std::string error;
        int code = platform::run_process(program, args, &env, &error);
        if (code < 0) throw Failure("probe: could not start " + program.u8string() + ": " + error);
        if (code != 0) throw ExitCode{code};
    });
}

} // namespace cvm::cli
