// `cvm doctor [--json]`: which CUDA and cuDNN libraries a program really loads here and through
// cvm, what is incompatible, and the fix for each problem. Gathers the machine's facts, hands
// them to cvm::doctor::diagnose (src/doctor) and prints its report. Exit 0 healthy, 1 problems.
//
// Test hooks (all optional): CVM_PROC_DRIVER_VERSION (file read instead of
// /proc/driver/nvidia/version), CVM_NVIDIA_SMI (program run instead of nvidia-smi), CVM_PYTHON
// (interpreter to inspect; empty: none), CVM_LD_SO_CACHE (cache read instead of
// /etc/ld.so.cache; empty: none), CVM_LD_DEFAULT_DIRS (':'-separated folders instead of the
// loader's built-in ones), CVM_WINDOWS_DIR (instead of %SystemRoot%), CVM_DPKG_DIR (instead of
// /var/lib/dpkg, for the owners of cuDNN files), CVM_DEV_SHM (the folder whose file system stands
// for /dev/shm).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>

#include "cli/commands.h"
#include "cli/context.h"
#include "compat/cudnn_header.h"
#include "compat/doctor_checks.h"
#include "compat/library_cuda_major.h"
#include "compat/nccl_checks.h"
#include "compat/torch_arch.h"
#include "install/installed_files.h"
#include "store/resolve.h"
#include "text/path_list.h"
#include "text/terminal_text.h"
#include "config/trust.h"
#include "doctor/diagnose.h"
#include "doctor/report.h"
#include "platform/platform.h"
#include "registry/registry.h"

namespace cvm::cli {

namespace {

// The text report's layout: wrapped to COLUMNS, else to the terminal on stdout (not when it is a
// pipe or file), with the home folder as ~.
doctor::TextLayout doctor_layout() {
    doctor::TextLayout layout;
    if (auto columns = platform::get_env("COLUMNS")) {
        try {
            int n = std::stoi(*columns);
            if (n >= 40 && n <= 1000) layout.width = static_cast<std::size_t>(n);
        } catch (const std::exception&) {
        }
    }
    if (layout.width == 0) {
        int n = platform::terminal_columns(1);
        if (n > 0) layout.width = static_cast<std::size_t>(std::max(n, 40));
    }
    if (auto home = platform::home_dir_if_any()) {
        std::string h = home->u8string();
        while (h.size() > 1 && h.back() == '/')
            h.pop_back();
        layout.home = h;
    }
    return layout;
}

std::vector<std::string> split_colon_list(const std::string& text) {
    std::vector<std::string> out;
    for (const auto& item : split_path_list(text, platform::Os::Linux))
        if (!item.empty()) out.push_back(item);
    return out;
}

// Installed entries whose files no longer have the sizes they were written with: one stat per
// file (`cvm verify` compares the contents too).
void add_damaged_installs(const Store& store, doctor::DoctorReport& report) {
    for (Kind kind : all_kinds())
        for (const Entry& e : store.list(kind)) {
            if (e.imported) continue;
            std::vector<FileDamage> damage;
            try {
                if (auto files = read_installed_files(e.entry_dir))
                    damage = check_installed_sizes(e.path, *files);
            } catch (const std::exception& ex) {
                damage.push_back({installed_files_name(), ex.what()});
            }
            if (damage.empty()) continue;
            report.findings.push_back({doctor::Severity::error, "install-damaged",
                                       std::string(kind_dir(kind)) + " " + e.id +
                                           " is damaged: " + std::to_string(damage.size()) +
                                           " file(s) differ from what was installed (" +
                                           damage.front().path + ": " + damage.front().what +
                                           "); `cvm verify " + e.id + "` tells more",
                                       "cvm install --reinstall " + e.id});
        }
}

} // namespace

void register_doctor(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "doctor", "Diagnose the environment: which CUDA/cuDNN libraries actually load and why, "
                  "what is incompatible, how to fix it");
    auto json = std::make_shared<bool>(false);
    cmd->add_flag("--json", *json, "print one JSON document on stdout");
    cmd->callback([json] {
        using namespace cvm::doctor;
        const platform::Os os = platform::host_os();
        Store store = open_store();
        doctor::RealFileSystem fs;

        DoctorInputs in;
        in.os = os;
        in.fs = &fs;
        in.env = platform::environment();
        std::error_code ec;
        in.cwd = fs::current_path(ec).u8string();
        in.selection = current_selection(store, std::nullopt);
        for (const auto& layer : store.layers())
            in.store_layers.push_back(layer.u8string());
        if (in.selection.origin != Selection::Origin::None && !in.selection.spec.system) {
            try {
                Resolved r = resolve(store, in.selection.spec);
                Layout layout;
                in.selected_changes = selection_changes(store, r, &layout);
                in.selection_dirs.push_back(r.toolkit.path.u8string());
                if (r.cudnn) in.selection_dirs.push_back(r.cudnn->path.u8string());
                if (r.nccl) in.selection_dirs.push_back(r.nccl->path.u8string());
                in.selection_dirs.push_back(layout.cuda_path.u8string());
                in.resolved = std::move(r);
            } catch (const ResolveError& e) {
                in.resolve_error = in.selection.forced.empty()
                                       ? e.what()
                                       : in.selection.not_installed_text(e.what());
            } catch (const TrustError& e) { // a folder of the selection another user could change
                in.resolve_error = e.what();
            }
        }

        std::optional<registry::Registry> reg;
        try {
            reg = registry::load_default_registry();
            in.registry = &*reg;
        } catch (const std::exception& e) {
            if (!*json)
                note(std::string("doctor: no compatibility data (") + e.what() +
                     "); driver and cuDNN range checks are skipped");
        }

        in.driver = detect_driver(default_driver_probe());
        const std::string python = default_python();
        if (!python.empty()) in.python = inspect_python(python, fs, &in.python_failure);

        std::optional<binary::LdCache> cache;
        if (os == platform::Os::Linux) {
            auto cache_path = platform::get_env("CVM_LD_SO_CACHE").value_or("/etc/ld.so.cache");
            if (!cache_path.empty()) {
                auto read = binary::read_ld_cache_file(cache_path);
                if (read) {
                    cache = std::move(*read.cache);
                    in.ld_cache = &*cache;
                }
                in.ld_cache_path = cache_path;
            }
            auto self = binary::read_elf_file(platform::current_exe().u8string());
            if (self) in.linux_abi = *self.info;
            if (auto dirs = platform::get_env("CVM_LD_DEFAULT_DIRS"))
                in.linux_default_dirs = split_colon_list(*dirs);
            else if (in.linux_abi)
                in.linux_default_dirs = default_linux_library_dirs(*in.linux_abi, fs);
        } else {
            std::string windows =
                platform::get_env("CVM_WINDOWS_DIR")
                    .value_or(platform::get_env("SystemRoot")
                                  .value_or(platform::get_env("WINDIR").value_or("C:\\Windows")));
            in.windows.windows_dir = windows;
            in.windows.system32_dir = path_join(windows, "System32");
            in.windows.system16_dir = path_join(windows, "System");
        }

        DoctorReport report = diagnose(in);
        add_damaged_installs(store, report);
        compat::revise_cudnn_sets(report);
        if (report.resolved) {
            for (auto& f : compat::host_compiler_findings(store, report.resolved->toolkit, in.env))
                report.findings.push_back(std::move(f));
            for (auto& f : compat::gpu_arch_findings(*report.resolved, report.python))
                report.findings.push_back(std::move(f));
            for (auto& f : compat::library_cuda_major_findings(report))
                report.findings.push_back(std::move(f));
            for (auto& f :
                 compat::cudnn_header_findings(report, in.env, store.shims_dir().u8string()))
                report.findings.push_back(std::move(f));
        }
        compat::NcclMachine nccl;
        nccl.env = in.env;
        nccl.shm_bytes =
            compat::file_system_bytes(platform::get_env("CVM_DEV_SHM").value_or("/dev/shm"));
        if (report.python)
            if (auto facts = compat::torch_facts_if_run(report.python->executable))
                nccl.torch_runtime_nccl = facts->nccl;
        for (auto& f : compat::nccl_findings(report, nccl))
            report.findings.push_back(std::move(f));
        if (*json) {
            print_json(report_json(report));
        } else {
            const bool colour = colour_allowed(1);
            std::string text = report_text(report, colour, doctor_layout());
            // Paths with terminal escapes are shown escaped; the report's own colours are kept.
            text = escape_controls(text, true, colour);
            std::fwrite(text.data(), 1, text.size(), stdout);
        }
        if (!report.healthy()) throw ExitCode{1};
    });
}

} // namespace cvm::cli
