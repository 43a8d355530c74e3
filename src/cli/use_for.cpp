#include "cli/use_for.h"

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/framework_warning.h"
#include "cli/install_backend.h"
#include "compat/auto_host_compiler.h"
#include "compat/solver.h"
#include "core/projects.h"
#include "doctor/driver.h"
#include "doctor/python_env.h"
#include "platform/platform.h"
#include "registry/registry.h"

#include <algorithm>

namespace cvm::cli {

namespace {

// The frameworks installed in the active Python, as the solver takes them.
std::vector<compat::FrameworkWant> python_wants() {
    const std::string python = doctor::default_python();
    if (python.empty())
        throw UsageError(
            "use --for .: no Python found; activate a virtual environment, put python3 on PATH or "
            "set CVM_PYTHON, or name the framework: --for torch==2.5");
    doctor::RealFileSystem fs;
    auto info = doctor::inspect_python(python, fs);
    if (!info)
        throw Failure("use --for .: " + python +
                      " did not say where its packages are; check that it runs (" + python +
                      " -c 'import sys'), or name the framework: --for torch==2.5");
    // The solver knows the releases of torch and tensorflow (the registry); JAX is left to doctor.
    info->frameworks.erase(
        std::remove_if(info->frameworks.begin(), info->frameworks.end(),
                       [](const doctor::FrameworkInstall& f) { return f.name == "jax"; }),
        info->frameworks.end());
    if (info->frameworks.empty())
        throw UsageError("use --for .: the Python " + python +
                         " has neither torch nor tensorflow installed; install "
                         "one, or name it: --for torch==2.5");
    std::vector<compat::FrameworkWant> out;
    for (const auto& f : info->frameworks) {
        compat::FrameworkWant w;
        w.name = f.name;
        w.installed = true;
        w.version =
            parse_version(f.version.substr(0, f.version.find('+')), 1, 4).value_or(Version{});
        w.label = std::string(f.name == "pytorch" ? "torch " : "tensorflow ") +
                  (f.version.empty() ? "(version unknown)" : f.version) + " in " + f.location;
        if (f.cuda) w.built_cuda = parse_version(*f.cuda, 1, 3);
        if (f.cudnn) w.built_cudnn = parse_version(*f.cudnn, 1, 4);
        if (f.own_cudnn_dir)
            w.own_cudnn = *f.own_cudnn_dir +
                          (f.own_cudnn_version ? ", cuDNN " + *f.own_cudnn_version : std::string());
        out.push_back(std::move(w));
    }
    return out;
}

compat::MachineFacts machine_facts(const Store& store) {
    compat::MachineFacts m;
    m.platform = platform::host_os() == platform::Os::Windows ? registry::Platform::Windows
                                                              : registry::Platform::Linux;
    doctor::DriverInfo driver = doctor::detect_driver(doctor::default_driver_probe());
    if (driver.version) m.driver = registry::parse_driver_version(*driver.version);
    m.gpus = compat::detect_gpus();
    Entry none;
    none.path = store.root() / "cuda" / "none";
    for (const auto& c : compat::installed_host_compilers(compat::toolkit_query(store, none)))
        if (c.id) m.compilers.push_back(*c.id);
    for (const auto& e : store.list(Kind::Cuda)) {
        m.toolkits.push_back(e.version);
        if (auto limits = compat::toolkit_limits(e)) m.toolkit_limits[e.version.str()] = *limits;
    }
    for (const auto& [id, layer] : store.ids(Kind::Cudnn)) {
        (void)layer;
        if (auto c = parse_cudnn_id(id)) m.cudnn.push_back(*c);
    }
    m.packaged = compat::distribution_packages();
    return m;
}

nlohmann::json framework_wants_json(const std::vector<compat::FrameworkWant>& wants) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& w : wants)
        out.push_back({{"framework", w.name},
                       {"version", w.version.empty() ? nlohmann::json(nullptr)
                                                     : nlohmann::json(w.version.str())},
                       {"label", w.label},
                       {"installed", w.installed},
                       {"cuda", w.built_cuda ? nlohmann::json(w.built_cuda->str())
                                             : nlohmann::json(nullptr)}});
    return out;
}

// `--install`: installs what the pick names that is missing, before anything is written.
nlohmann::json install_pick(const UseForRequest& r, const Spec& spec) {
    if (install_backend().install_missing) return install_backend().install_missing(spec);
    if (!install_backend().forward)
        throw Failure("use --for: this cvm was built without downloads; install " + spec.str() +
                      " yourself (cvm install FILE), then run `cvm use --for` again");
    std::vector<std::string> args{"use", "--for", r.target, "--install"};
    if (r.global) args.emplace_back("--global");
    if (r.json) args.emplace_back("--json");
    forward_to_install_program(args);
}

} // namespace

void use_for(const UseForRequest& r) {
    registry::Registry reg;
    try {
        reg = registry::load_default_registry();
    } catch (const registry::RegistryError& e) {
        throw Failure(std::string("use --for: cvm's release registry cannot be read (") + e.what() +
                      "); reinstall cvm or set CVM_REGISTRY_DIR");
    }
    std::vector<compat::FrameworkWant> wants;
    if (r.target == ".") {
        wants = python_wants();
    } else {
        try {
            wants.push_back(compat::parse_framework_want(reg, r.target));
        } catch (const compat::FrameworkInputError& e) {
            throw UsageError(std::string("use --for: ") + e.what());
        }
    }
    Store store = open_store();
    compat::MachineFacts machine = machine_facts(store);
    compat::HostCompilerTable compilers;
    std::vector<compat::GpuArchRow> archs;
    compat::Knowledge know;
    know.reg = &reg;
    try {
        compilers = compat::load_host_compiler_table();
        know.compilers = &compilers;
    } catch (const std::exception&) {
        note("use --for: cvm's table of host compilers cannot be read; the registry's ranges are "
             "not used");
    }
    try {
        archs = compat::load_gpu_arch_table();
        know.archs = &archs;
    } catch (const std::exception&) {
    }
    compat::SolveResult res = compat::solve(wants, machine, know);
    for (const auto& n : res.notes)
        note("note: " + n);
    if (!res.pick) {
        const std::string line = "use --for " + r.target + ": nothing fits here; the " +
                                 compat::constraint_words(res.ruled_out_by) +
                                 " rules out every choice: " + res.why;
        if (!r.json) throw Failure(line, "nothing_fits");
        print_json({{"error", {{"code", "nothing_fits"}, {"message", line}}},
                    {"constraint", compat::constraint_name(res.ruled_out_by)},
                    {"for", framework_wants_json(wants)},
                    {"notes", res.notes}});
        note(line);
        throw ExitCode{1};
    }
    const compat::Pick& pick = *res.pick;
    for (const auto& reason : pick.reasons)
        note(reason.text);
    const Spec spec = pick.spec();
    nlohmann::json doc;
    if (r.install && (!pick.toolkit_installed || (pick.cudnn && !pick.cudnn_installed)))
        doc["installed"] = install_pick(r, spec);
    const fs::path file =
        r.global ? store.global_version_file() : fs::current_path() / ".cudaversion";
    if (r.global) fs::create_directories(store.root());
    write_version_file(file, spec);
    if (!r.global) remember_project(store, file);
    doc["for"] = framework_wants_json(wants);
    doc["spec"] = spec.str();
    doc["file"] = file.u8string();
    doc["global"] = r.global;
    doc["toolkit"] = {{"version", pick.toolkit.str()},
                      {"installed", pick.toolkit_installed || r.install}};
    doc["cudnn"] = pick.cudnn ? nlohmann::json{{"id", pick.cudnn->str()},
                                               {"installed", pick.cudnn_installed || r.install}}
                              : nlohmann::json(nullptr);
    doc["reasons"] = nlohmann::json::array();
    for (const auto& reason : pick.reasons)
        doc["reasons"].push_back(
            {{"constraint", compat::constraint_name(reason.constraint)}, {"text", reason.text}});
    doc["notes"] = res.notes;
    const std::string where = r.global ? "globally" : "in " + file.u8string();
    if (auto session = platform::get_env("CVM_VERSION"); session && !session->empty())
        note("CVM_VERSION=" + *session +
             " (a session override, `cvm shell`) still wins in this shell; " +
             "`cvm shell --unset` drops it");
    try {
        Resolved resolved = resolve(store, spec);
        note("selected " + resolved.active() + " " + where);
        std::string line =
            compat::host_compiler_line(compat::refresh_host_compiler(store, resolved.toolkit));
        if (!line.empty()) note(line);
        warn_framework_cudnn(resolved);
    } catch (const ResolveError&) {
        note("wrote " + spec.str() + " " + where + "; it is not installed yet");
        hint("cvm use --for " + r.target + (r.global ? " --global" : "") + " --install",
             "installs it");
    }
    if (r.json) print_json(doc);
}

} // namespace cvm::cli
