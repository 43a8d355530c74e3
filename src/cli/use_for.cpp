#include "cli/use_for.h"

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/framework_warning.h"
#include "cli/import.h"
#include "cli/install_backend.h"
#include "compat/auto_host_compiler.h"
#include "compat/project_wants.h"
#include "compat/solver.h"
#include "project/projects.h"
#include "store/resolve.h"
#include "text/terminal_text.h"
#include "doctor/driver.h"
#include "doctor/python_env.h"
#include "platform/platform.h"
#include "registry/registry.h"

#include <algorithm>

namespace cvm::cli {

namespace {

// A framework's own cuDNN or NCCL wheel folder (site-packages/nvidia/cudnn, nvidia/nccl), read as
// `cvm import FOLDER` reads it; registered only once the pick selects it.
struct OwnWheel {
    fs::path folder;
    FolderImport found;
};

// The frameworks of the active Python, and the own wheels they bring.
struct PythonWants {
    std::vector<compat::FrameworkWant> wants;
    std::vector<OwnWheel> wheels;
};

// `dir` when it is a wheel's nvidia/NAME folder, else empty (torch/lib: a bundled copy).
fs::path wheel_folder(const fs::path& dir, const char* name) {
    if (dir.filename() == name && dir.parent_path().filename() == "nvidia") return dir;
    return {};
}

// Reads one own wheel folder (once, however many frameworks share it). A wheel pip left
// half-installed is refused as `cvm import` refuses it (exit 2), before anything is written.
const FolderImport& read_own_wheel(PythonWants& out, const fs::path& folder,
                                   const std::string& what, const std::string& label) {
    for (const auto& w : out.wheels)
        if (w.folder == folder) return w.found;
    try {
        out.wheels.push_back({folder, read_import_folder(folder, std::nullopt)});
    } catch (const NothingToImport&) {
        // A layout cvm does not read: the framework keeps loading it as today, unselected.
        note("note: " + folder.u8string() + " of " + label + " holds no " +
             what.substr(0, what.find(' ')) + " cvm can import; it is not selected");
        out.wheels.push_back({folder, FolderImport{}});
    } catch (const UsageError& e) {
        std::string why = e.what();
        if (why.rfind("import: ", 0) == 0) why.erase(0, 8);
        throw UsageError("use --for .: the " + what + " " + folder.u8string() + " of " + label +
                         " cannot be imported: " + why);
    }
    return out.wheels.back().found;
}

// PyTorch's own cuDNN and NCCL wheels, on Linux (on Windows it loads its DLLs without PATH, so
// what cvm selects there does not change what it loads).
void add_own_wheels(PythonWants& out, const doctor::FrameworkInstall& f, compat::FrameworkWant& w) {
    if (f.name != "pytorch" || platform::host_os() == platform::Os::Windows) return;
    if (f.own_cudnn_dir) {
        const fs::path folder = wheel_folder(fs::u8path(*f.own_cudnn_dir).parent_path(), "cudnn");
        if (!folder.empty())
            if (const auto& c = read_own_wheel(out, folder, "cuDNN wheel", w.label).cudnn) {
                w.own_cudnn_build = CudnnId{c->entry.version, c->entry.cuda};
                w.own_cudnn_folder = folder.u8string();
            }
    }
    if (f.own_nccl_library) {
        const fs::path folder =
            wheel_folder(fs::u8path(*f.own_nccl_library).parent_path().parent_path(), "nccl");
        if (!folder.empty())
            if (const auto& n = read_own_wheel(out, folder, "NCCL wheel", w.label).nccl) {
                w.own_nccl_build = NcclId{n->entry.version, n->entry.cuda};
                w.own_nccl_folder = folder.u8string();
            }
    }
}

// What the active Python says: its frameworks, or why it has none to give (no Python, one that
// does not run, one without torch or tensorflow), as the line's two halves: what, and what to do.
struct PythonLook {
    std::optional<PythonWants> found;
    std::string why, fix;
    bool failure = false; // a Python that does not run: exit 1 where nothing else is found
};

// The frameworks installed in the active Python, as the solver takes them.
PythonLook python_wants() {
    PythonLook look;
    const std::string python = doctor::default_python();
    if (python.empty()) {
        look.why = "no Python found";
        look.fix = "activate a virtual environment, put python3 on PATH or set CVM_PYTHON, or name "
                   "the framework: --for torch==2.5";
        return look;
    }
    doctor::RealFileSystem fs;
    std::string why;
    auto info = doctor::inspect_python(python, fs, &why);
    if (!info) {
        look.why = why;
        look.fix = "check that it runs (" + python +
                   " -I -c 'import sys'), or name the framework: --for torch==2.5";
        look.failure = true;
        return look;
    }
    // The solver knows the releases of torch and tensorflow (the registry); JAX is left to doctor.
    info->frameworks.erase(
        std::remove_if(info->frameworks.begin(), info->frameworks.end(),
                       [](const doctor::FrameworkInstall& f) { return f.name == "jax"; }),
        info->frameworks.end());
    if (info->frameworks.empty()) {
        look.why = "the Python " + python + " has neither torch nor tensorflow installed";
        look.fix = "install one, or name it: --for torch==2.5";
        return look;
    }
    PythonWants out;
    for (const auto& f : info->frameworks) {
        if (!f.damaged.empty())
            throw UsageError("use --for .: " + f.location + " is half-installed (" + f.damaged + "); " +
                             doctor::reinstall_fix(f, python));
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
        add_own_wheels(out, f, w);
        out.wants.push_back(std::move(w));
    }
    look.found = std::move(out);
    return look;
}

// Whether `e` is the build the pick selects.
bool picked(const compat::Pick& pick, const Entry& e) {
    if (e.kind == Kind::Cudnn) return pick.own_builds && pick.cudnn && pick.cudnn->str() == e.id;
    return e.kind == Kind::Nccl && pick.nccl && pick.nccl->str() == e.id;
}

// The selected own wheels' entries, each with its folder.
std::vector<std::pair<Entry, fs::path>> selected_entries(const std::vector<OwnWheel>& wheels,
                                                         const compat::Pick& pick) {
    std::vector<std::pair<Entry, fs::path>> out;
    for (const auto& wheel : wheels) {
        if (wheel.found.cudnn && picked(pick, wheel.found.cudnn->entry))
            out.emplace_back(wheel.found.cudnn->entry, wheel.folder);
        if (wheel.found.nccl && picked(pick, wheel.found.nccl->entry))
            out.emplace_back(wheel.found.nccl->entry, wheel.folder);
    }
    return out;
}

// The store holds one entry per id: the same build registered from another folder (another
// venv's wheel, an archive `cvm install` fetched) would put its sub-libraries beside the wheel's
// own front library, files of two folders in one process. Refused before anything is registered,
// as `cvm import` refuses it.
void refuse_registered_elsewhere(const Store& store, const std::vector<OwnWheel>& wheels,
                                 const compat::Pick& pick) {
    for (const auto& [e, folder] : selected_entries(wheels, pick)) {
        auto existing = store.find(e.kind, e.id);
        if (!existing || existing->layer != 0) continue;
        const fs::path source = existing->origin.empty() ? existing->path : existing->origin;
        std::error_code ec;
        if (fs::equivalent(source, folder, ec)) continue;
        throw Failure("use --for .: " + std::string(kind_dir(e.kind)) + " " + e.id +
                      " is already registered from " + source.u8string() + ", not from " +
                      folder.u8string() + "; run `cvm uninstall " + e.id +
                      "`, then `cvm use --for .` again");
    }
}

// Registers the own wheels the pick selects, as `cvm import FOLDER` does (one registered from
// the same folder is kept, recorded `already_registered`).
void import_own_wheels(const Store& store, const std::vector<OwnWheel>& wheels,
                       const compat::Pick& pick, ImportRun& run) {
    for (const auto& wheel : wheels) {
        FolderImport selected;
        if (wheel.found.cudnn && picked(pick, wheel.found.cudnn->entry))
            selected.cudnn = wheel.found.cudnn;
        if (wheel.found.nccl && picked(pick, wheel.found.nccl->entry))
            selected.nccl = wheel.found.nccl;
        if (selected.cudnn || selected.nccl) register_folder(store, selected, run);
    }
}

// Forgets what import_own_wheels registered in this run, when what follows fails: nothing is left
// registered by a `cvm use --for` that wrote nothing.
void forget_imports(const Store& store, const ImportRun& run) {
    for (const auto& e : run.entries) {
        if (e.value("status", "") != "imported") continue;
        const std::string kind = e.value("kind", "");
        try {
            store.remove(kind == "nccl" ? Kind::Nccl : Kind::Cudnn, e.value("id", ""));
            note("forgot " + kind + " " + e.value("id", "") + " again: nothing was selected");
        } catch (const std::exception&) {
        }
    }
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
                       {"from", w.source.empty() ? nlohmann::json(nullptr) : nlohmann::json(w.source)},
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

// `--for .`, `--for ../proj`, `--for /srv/proj`: a folder, where a framework's name is not.
bool is_folder_target(const std::string& t) {
    if (t == "." || t == ".." || t.rfind("~", 0) == 0) return true;
    if (t.find('/') != std::string::npos) return true;
    return platform::host_os() == platform::Os::Windows && t.find('\\') != std::string::npos;
}

// The project's pins where the active Python has no framework; none either: the Python's reason,
// with the files read.
compat::ProjectWants project_wants(const registry::Registry& reg, const fs::path& dir,
                                   const PythonLook& look, const std::string& target) {
    const std::string head = "use --for " + printable(target) + ": ";
    std::vector<compat::ProjectPin> pins;
    std::vector<std::string> read;
    try {
        pins = compat::read_project_pins(dir, &read);
    } catch (const compat::ProjectFileError& e) {
        throw UsageError(head + escape_controls(e.what()) + " (in " + dir.u8string() + ")");
    }
    if (pins.empty()) {
        const std::string files =
            read.empty() ? "there is no " + std::string(compat::kProjectFileNames) + " in " +
                               dir.u8string()
                         : "no torch, tensorflow or jax is pinned in " + dir.u8string() + "'s " +
                               [&] {
                                   std::string out;
                                   for (const auto& n : read)
                                       out += (out.empty() ? "" : ", ") + n;
                                   return out;
                               }();
        const std::string line = head + look.why + ", and " + files + "; " + look.fix;
        if (look.failure) throw Failure(line);
        throw UsageError(line);
    }
    try {
        return compat::project_wants(reg, pins);
    } catch (const compat::FrameworkInputError& e) {
        throw UsageError(head + escape_controls(e.what()));
    }
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
    // What to suit: the active Python's frameworks, else the project's pins (`.`, a folder); a
    // range or a bare name (candidates, newest first); or NAME==VERSION.
    std::vector<compat::FrameworkWant> wants;
    std::vector<OwnWheel> wheels;
    std::vector<compat::WantChoices> choices;
    std::vector<std::string> pin_notes;
    const bool folder = is_folder_target(r.target);
    fs::path project = fs::current_path();
    if (folder) {
        std::error_code ec;
        if (r.target != ".") project = fs::absolute(fs::u8path(r.target), ec);
        if (!fs::is_directory(project, ec))
            throw UsageError("use --for " + printable(r.target) +
                             ": no such folder; name a project folder, . for this one, or a "
                             "framework: --for torch==2.5");
        PythonLook look = python_wants();
        if (look.found) {
            wants = std::move(look.found->wants);
            wheels = std::move(look.found->wheels);
        } else {
            if (look.failure) note("note: " + look.why + "; the project's files are read instead");
            compat::ProjectWants found = project_wants(reg, project, look, r.target);
            choices = std::move(found.choices);
            pin_notes = std::move(found.notes);
        }
    } else {
        try {
            compat::WantChoices range;
            if (compat::range_choices(reg, r.target, range))
                choices.push_back(std::move(range));
            else
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
    for (const auto& n : pin_notes)
        note("note: " + n);
    nlohmann::json passed_over = nlohmann::json::array();
    if (!choices.empty()) {
        std::vector<compat::ChoiceLine> lines;
        wants = compat::choose_newest(choices, machine, know, lines);
        for (size_t i = 0; i < lines.size(); ++i) {
            if (!lines[i].text.empty()) note(lines[i].text);
            for (const auto& [version, why] : lines[i].passed)
                passed_over.push_back(
                    {{"framework", choices[i].framework}, {"version", version}, {"why", why}});
        }
    }
    compat::SolveResult res = compat::solve(wants, machine, know);
    if (res.pick) refuse_registered_elsewhere(store, wheels, *res.pick);
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
    // As `cvm use SPEC`: a choice that is not installed is not written unless asked to be.
    const bool missing = !pick.toolkit_installed || (pick.cudnn && !pick.cudnn_installed);
    if (missing && !r.install && !r.force) {
        std::string what = pick.toolkit_installed ? std::string() : "CUDA " + pick.toolkit.str();
        if (pick.cudnn && !pick.cudnn_installed)
            what += (what.empty() ? "cuDNN " : " and cuDNN ") + pick.cudnn->str();
        const std::string g = r.global ? " --global" : "";
        throw Failure("use --for " + r.target + ": nothing written: " + spec.str() + " is the choice, and " + what +
                          (what.find(" and ") == std::string::npos ? " is" : " are") + " not installed; `cvm use --for " +
                          r.target + g + " --install` installs and selects it, `cvm use --for " + r.target + g +
                          " --force` writes it anyway",
                      "not_installed");
    }
    nlohmann::json doc;
    ImportRun run;
    const fs::path file = r.global ? store.global_version_file() : project / ".cudaversion";
    const bool needs_install =
        r.install && (!pick.toolkit_installed || (pick.cudnn && !pick.cudnn_installed));
    // Without downloads in this program, cvm-install runs the whole command, its imports included.
    if (needs_install && !install_backend().install_missing) install_pick(r, spec);
    try {
        import_own_wheels(store, wheels, pick, run);
        if (needs_install) doc["installed"] = install_pick(r, spec);
        if (r.global) fs::create_directories(store.root());
        write_version_file(file, spec);
    } catch (...) {
        forget_imports(store, run);
        throw;
    }
    if (!r.global) remember_project(store, file);
    doc["for"] = framework_wants_json(wants);
    doc["passed_over"] = passed_over;
    doc["spec"] = spec.str();
    doc["file"] = file.u8string();
    doc["global"] = r.global;
    doc["toolkit"] = {{"version", pick.toolkit.str()},
                      {"installed", pick.toolkit_installed || r.install}};
    doc["cudnn"] = pick.cudnn ? nlohmann::json{{"id", pick.cudnn->str()},
                                               {"installed", pick.cudnn_installed || r.install},
                                               {"own", pick.own_builds}}
                              : nlohmann::json(nullptr);
    doc["nccl"] = pick.nccl
                      ? nlohmann::json{{"id", pick.nccl->str()}, {"installed", true}, {"own", true}}
                      : nlohmann::json(nullptr);
    doc["imported"] = run.entries;
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
        report("selected " + resolved.active() + " " + where);
        std::string line =
            compat::host_compiler_line(compat::refresh_host_compiler(store, resolved.toolkit));
        if (line.rfind("warning: ", 0) == 0) note(line);
        else if (!line.empty()) report(line);
        warn_framework_libraries(store, resolved);
    } catch (const ResolveError&) {
        note("wrote " + spec.str() + " " + where + "; it is not installed yet");
        hint("cvm use --for " + r.target + (r.global ? " --global" : "") + " --install",
             "installs it");
    }
    if (r.json) print_json(doc);
}

} // namespace cvm::cli
