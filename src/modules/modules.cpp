#include "modules/modules.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>

#include "activation/host_compiler_choice.h"
#include "modules/module_driver.h"
#include "modules/module_strings.h"
#include "activation/view.h"
#include "text/path_list.h"

namespace cvm {

const char* const kModuleMarker = "cvm-generated module";

namespace {

bool is_path_variable(const std::string& name) {
    return is_list_variable(name);
}

std::string header_line(const ModuleFile& m, ModuleFormat f) {
    return std::string(kModuleMarker) + " " + m.name() + ", written by `cvm export " +
           (f == ModuleFormat::Lua ? "lmod" : "tcl") +
           "`; do not edit: the next export rewrites or removes it";
}

// The help text: what the module is and exactly what it sets.
std::string help_text(const std::string& intro, const std::vector<ModuleActions>& branches) {
    std::ostringstream out;
    out << intro << "\n";
    for (const auto& b : branches) {
        out << "\n";
        if (!b.toolkit_id.empty()) out << "With cuda/" << b.toolkit_id << " loaded:\n";
        for (const auto& [name, value] : b.set)
            out << "  " << name << "=" << value << "\n";
        for (const auto& [name, dirs] : b.prepend) {
            out << "  " << name << ": prepends";
            for (const auto& d : dirs)
                out << " " << d;
            out << "\n";
        }
    }
    out << "\nUnloading restores every value it changed.";
    return out.str();
}

void render_actions_lua(std::ostream& out, const ModuleActions& a, const std::string& indent) {
    for (const auto& [name, value] : a.set)
        out << indent << "pushenv(" << lua_string(name) << ", " << lua_string(value) << ")\n";
    // Prepending one folder at a time, last first, leaves them in `cvm env`'s order; a folder
    // already there (the toolkit's, from the cuda module) moves to the front and is counted
    // twice, so unloading the cudnn module keeps it for the cuda module.
    for (const auto& [name, dirs] : a.prepend)
        for (auto it = dirs.rbegin(); it != dirs.rend(); ++it)
            out << indent << "prepend_path(" << lua_string(name) << ", " << lua_string(*it)
                << ")\n";
}

// Lmod 8's built-in Tcl interpreter (LMOD_FAST_TCL_INTERP, on by default) lets `pushenv` set
// the real environment before Lmod saves the previous value, so the value saved for unloading
// would be the new one. Putting the old value back right after the call (only under Lmod:
// Environment Modules keeps its own state) makes unloading restore what was there. The
// `info exists` before the unset matters: it makes Tcl re-read the changed environment.
const char* const kTclPushenv =
    "proc cvm_pushenv {name value} {\n"
    "    set had [info exists ::env($name)]\n"
    "    if {$had} { set old $::env($name) }\n"
    "    pushenv $name $value\n"
    "    if {[info exists ::ModuleTool] && $::ModuleTool eq \"Lmod\"} {\n"
    "        if {$had} { set ::env($name) $old } elseif {[info exists ::env($name)]} {\n"
    "            unset ::env($name)\n"
    "        }\n"
    "    }\n"
    "}\n";

void render_actions_tcl(std::ostream& out, const ModuleActions& a, const std::string& indent) {
    for (const auto& [name, value] : a.set)
        out << indent << "cvm_pushenv " << tcl_string(name) << " " << tcl_string(value) << "\n";
    for (const auto& [name, dirs] : a.prepend)
        for (auto it = dirs.rbegin(); it != dirs.rend(); ++it)
            out << indent << "prepend-path " << tcl_string(name) << " " << tcl_string(*it) << "\n";
}

// The cuda modules a cudnn or nccl module has a branch for: "cuda/12.4.1, cuda/12.6.3".
std::string toolkit_modules(const ModuleFile& m) {
    std::string list;
    for (const auto& b : m.branches)
        list += (list.empty() ? "" : ", ") + ("cuda/" + b.toolkit_id);
    return list;
}

std::string wrong_toolkit_message(const ModuleFile& m) {
    return m.name() + " is built for CUDA " + m.built_for +
           ", but another cuda module is loaded; run `module load cuda/" +
           m.branches.front().toolkit_id + "` first (compatible: " + toolkit_modules(m) + ")";
}

std::string render_lua(const ModuleFile& m) {
    std::ostringstream out;
    out << "-- " << header_line(m, ModuleFormat::Lua) << "\n";
    out << "help(" << lua_string(m.help) << ")\n";
    for (const auto& w : m.whatis)
        out << "whatis(" << lua_string(w) << ")\n";
    out << "family(" << lua_string(kind_dir(m.kind)) << ")\n";
    if (m.kind == Kind::Cuda) {
        out << driver_check_lua(m.name(), m.version, m.driver);
        render_actions_lua(out, m.branches.front(), "");
        return out.str();
    }
    out << "local toolkits = {";
    for (size_t i = 0; i < m.branches.size(); ++i)
        out << (i ? ", " : " ") << lua_string(m.branches[i].toolkit_id);
    out << " }\n";
    out << "local toolkit = nil\n"
           "for _, id in ipairs(toolkits) do\n"
           "    if isloaded(\"cuda/\" .. id) then\n"
           "        toolkit = id\n"
           "        break\n"
           "    end\n"
           "end\n"
           "if toolkit == nil then\n"
           "    if mode() == \"load\" and isloaded(\"cuda\") then\n"
           "        LmodError("
        << lua_string(wrong_toolkit_message(m))
        << ")\n"
           "    end\n"
           "    toolkit = toolkits[1]\n"
           "end\n"
           "depends_on(\"cuda/\" .. toolkit)\n";
    for (size_t i = 0; i < m.branches.size(); ++i) {
        out << (i ? "elseif" : "if") << " toolkit == " << lua_string(m.branches[i].toolkit_id)
            << " then\n";
        render_actions_lua(out, m.branches[i], "    ");
    }
    out << "end\n";
    return out.str();
}

std::string render_tcl(const ModuleFile& m) {
    std::ostringstream out;
    out << "#%Module1.0\n";
    out << "## " << header_line(m, ModuleFormat::Tcl) << "\n";
    out << "proc ModulesHelp { } {\n    puts stderr " << tcl_string(m.help) << "\n}\n";
    for (const auto& w : m.whatis)
        out << "module-whatis " << tcl_string(w) << "\n";
    out << "conflict " << kind_dir(m.kind) << "\n";
    out << kTclPushenv;
    if (m.kind == Kind::Cuda) {
        out << driver_check_tcl(m.name(), m.version, m.driver);
        render_actions_tcl(out, m.branches.front(), "");
        return out.str();
    }
    out << "set toolkits [list";
    for (const auto& b : m.branches)
        out << " " << tcl_string(b.toolkit_id);
    out << "]\n";
    out << "set toolkit \"\"\n"
           "foreach id $toolkits {\n"
           "    if {[is-loaded \"cuda/$id\"]} {\n"
           "        set toolkit $id\n"
           "        break\n"
           "    }\n"
           "}\n"
           "if {$toolkit eq \"\"} {\n"
           "    if {[module-info mode load] && [is-loaded cuda]} {\n"
           "        error "
        << tcl_string(wrong_toolkit_message(m))
        << "\n"
           "    }\n"
           "    set toolkit [lindex $toolkits 0]\n"
           "}\n"
           "depends-on \"cuda/$toolkit\"\n";
    for (size_t i = 0; i < m.branches.size(); ++i) {
        out << (i ? "} elseif" : "if") << " {$toolkit eq " << tcl_string(m.branches[i].toolkit_id)
            << "} {\n";
        render_actions_tcl(out, m.branches[i], "    ");
    }
    out << "}\n";
    return out.str();
}

std::string describe_layer(const Store& store, const Entry& e) {
    std::string s = (e.imported ? "imported from " : "installed in ") + e.path.u8string();
    if (e.layer != 0) s += " (read-only store " + store.layers()[e.layer].u8string() + ")";
    return s;
}

// True when `file` is a regular file (not a link) whose first two lines carry the marker.
bool written_by_cvm(const fs::path& file) {
    std::error_code ec;
    if (!fs::is_regular_file(fs::symlink_status(file, ec))) return false;
    auto text = platform::read_file(file, 4096); // bounded, never waiting on a FIFO
    if (!text) return false;
    size_t first = text->find('\n');
    size_t second = first == std::string::npos ? first : text->find('\n', first + 1);
    return text->substr(0, second).find(kModuleMarker) != std::string::npos;
}

// DIR/cuda, DIR/cudnn and DIR/nccl: folders of the export's own, made when missing. A link there
// (to a folder elsewhere) is refused: modules would be written, and old ones removed, through it.
void prepare_module_folder(const fs::path& folder) {
    std::error_code ec;
    auto st = fs::symlink_status(folder, ec);
    if (fs::is_symlink(st))
        throw std::runtime_error(
            "export: " + folder.u8string() +
            " is a link; cvm writes and removes modules only in a folder of its own "
            "there; remove the link and run the export again");
    if (fs::exists(st) && !fs::is_directory(st))
        throw std::runtime_error("export: " + folder.u8string() + " is " +
                                 platform::file_type_text(folder) +
                                 ", not a folder; remove it and run the export again");
    if (!fs::exists(st)) fs::create_directories(folder);
}

} // namespace

ModuleActions module_actions_of(const std::vector<EnvChange>& changes, platform::Os os) {
    ModuleActions a;
    for (const auto& c : changes) {
        if (!c.value) continue;
        if (is_path_variable(c.name)) {
            std::vector<std::string> dirs;
            for (auto& d : split_path_list(*c.value, os))
                if (!d.empty()) dirs.push_back(std::move(d));
            if (!dirs.empty()) a.prepend.emplace_back(c.name, std::move(dirs));
        } else {
            a.set.emplace_back(c.name, *c.value);
        }
    }
    return a;
}

static ModuleActions actions_of(const Store& store, const Resolved& r, const fs::path& view,
                                platform::Os os) {
    Layout layout = layout_of(r, view, os);
    layout.host_compiler = handed_host_compiler(store.root(), r.toolkit.id);
    auto changes = compute_environment(
        layout, [](const std::string&) { return std::optional<std::string>(); },
        foreign_dirs_of(store), os);
    return module_actions_of(changes, os);
}

ModuleFile toolkit_module(const Store& store, const Entry& toolkit, platform::Os os) {
    ModuleFile m;
    m.kind = Kind::Cuda;
    m.id = toolkit.id;
    m.version = toolkit.version.str();
    Resolved r;
    r.toolkit = toolkit;
    // The toolkit's own view, when its nvcc needs a host compiler it cannot read (view.h).
    m.branches.push_back(actions_of(store, r, view_path(store, r), os));
    m.whatis = {"Name: CUDA toolkit", "Version: " + m.version, "Category: compiler, library",
                "Description: NVIDIA CUDA toolkit " + m.version + ", " +
                    describe_layer(store, toolkit),
                "URL: https://developer.nvidia.com/cuda-toolkit"};
    m.help = help_text("NVIDIA CUDA toolkit " + m.version + ", " + describe_layer(store, toolkit) +
                           ".\nLoading sets what `cvm env " + toolkit.id +
                           "` sets; load a cudnn module on top for cuDNN.",
                       m.branches);
    return m;
}

ModuleFile cudnn_module(const Store& store, const Entry& cudnn, const std::vector<Entry>& toolkits,
                        const std::function<fs::path(const Resolved&)>& view_for, platform::Os os) {
    ModuleFile m;
    m.kind = Kind::Cudnn;
    m.id = cudnn.id;
    m.version = cudnn.version.str();
    m.built_for = cudnn.cuda.str();
    for (const auto& tk : toolkits) {
        Resolved r;
        r.toolkit = tk;
        r.cudnn = cudnn;
        ModuleActions a = actions_of(store, r, view_for(r), os);
        a.toolkit_id = tk.id;
        m.branches.push_back(std::move(a));
    }
    const std::string needs = toolkit_modules(m);
    m.whatis = {"Name: cuDNN", "Version: " + m.version, "Category: library",
                "Description: NVIDIA cuDNN " + m.version + " built for CUDA " + m.built_for + ", " +
                    describe_layer(store, cudnn) + "; needs one of " + needs,
                "URL: https://developer.nvidia.com/cudnn"};
    m.help = help_text(
        "NVIDIA cuDNN " + m.version + " built for CUDA " + m.built_for + ", " +
            describe_layer(store, cudnn) + ".\nNeeds one of " + needs +
            ": it uses the one loaded, or loads the newest.\nLoading sets what `cvm env "
            "TOOLKIT+" +
            cudnn.id +
            "` sets: CUDA_PATH and CUDA_HOME name the merged view of the loaded toolkit and "
            "this cuDNN.",
        m.branches);
    return m;
}

ModuleFile nccl_module(const Store& store, const Entry& nccl, const std::vector<Entry>& toolkits,
                       platform::Os os) {
    ModuleFile m;
    m.kind = Kind::Nccl;
    m.id = nccl.id;
    m.version = nccl.version.str();
    m.built_for = nccl.cuda.str();
    ModuleActions own;
    auto folders = [&](const std::vector<std::string>& rels) {
        std::vector<std::string> out;
        for (const auto& d : rels)
            out.push_back(
                (d.empty() || d == "." ? nccl.path : nccl.path / fs::u8path(d)).u8string());
        return out;
    };
    // Programs load its library, and builds (the linker's -lnccl, #include <nccl.h>) see it.
    const auto libs = folders(nccl.lib_dirs);
    const auto includes = folders(nccl.include_dirs);
    own.set = {{"NCCL_HOME", nccl.path.u8string()}, {"NCCL_ROOT", nccl.path.u8string()}};
    if (!includes.empty()) own.set.emplace_back("NCCL_INCLUDE_DIR", includes.front());
    if (!libs.empty()) own.set.emplace_back("NCCL_LIB_DIR", libs.front());
    if (os == platform::Os::Linux) {
        if (!libs.empty()) {
            own.prepend.emplace_back("LD_LIBRARY_PATH", libs);
            own.prepend.emplace_back("LIBRARY_PATH", libs);
        }
        if (!includes.empty()) own.prepend.emplace_back("CPATH", includes);
    }
    for (const auto& tk : toolkits) {
        ModuleActions a = own;
        a.toolkit_id = tk.id;
        m.branches.push_back(std::move(a));
    }
    const std::string needs = toolkit_modules(m);
    m.whatis = {"Name: NCCL", "Version: " + m.version, "Category: library",
                "Description: NVIDIA NCCL " + m.version + " built for CUDA " + m.built_for + ", " +
                    describe_layer(store, nccl) + "; needs one of " + needs,
                "URL: https://developer.nvidia.com/nccl"};
    m.help = help_text(
        "NVIDIA NCCL " + m.version + " built for CUDA " + m.built_for + ", " +
            describe_layer(store, nccl) + ".\nNeeds one of " + needs +
            ": it uses the one loaded, or loads the newest.\nLoading sets NCCL_HOME, NCCL_ROOT, "
            "NCCL_INCLUDE_DIR and NCCL_LIB_DIR, puts its library folder first on LD_LIBRARY_PATH "
            "and LIBRARY_PATH and its include "
            "folder first on CPATH.",
        m.branches);
    return m;
}

std::string render_module(const ModuleFile& m, ModuleFormat format) {
    return format == ModuleFormat::Lua ? render_lua(m) : render_tcl(m);
}

fs::path module_file_name(const ModuleFile& m, ModuleFormat format) {
    return fs::u8path(kind_dir(m.kind)) /
           fs::u8path(format == ModuleFormat::Lua ? m.id + ".lua" : m.id);
}

ExportResult export_modules(const Store& store, const fs::path& dir, ModuleFormat format,
                            platform::Os os,
                            const std::function<ModuleDriverFloors(const Entry&)>& driver_floors) {
    ExportResult result;
    std::vector<Entry> toolkits;
    for (auto& e : store.list(Kind::Cuda)) {
        // The id becomes a file name: only a well-formed one that matches its folder.
        if (!(parse_toolkit_id(e.id) || is_toolkit_name(e.id)) || e.entry_dir.filename().u8string() != e.id) {
            result.skipped.push_back("cuda " + printable(e.id) + ": not a toolkit id (entry " +
                                     e.entry_dir.u8string() + ")");
            continue;
        }
        toolkits.push_back(std::move(e));
    }
    for (const char* sub : {"cuda", "cudnn"})
        prepare_module_folder(dir / sub);
    if (!store.list(Kind::Nccl).empty()) prepare_module_folder(dir / "nccl"); // only once there is one
    std::set<fs::path> keep;
    auto emit = [&](const ModuleFile& m) {
        fs::path target = dir / module_file_name(m, format);
        platform::write_file_atomically(target, render_module(m, format));
        result.written.push_back(target);
        keep.insert(target);
    };
    for (const auto& tk : toolkits) {
        ModuleFile m = toolkit_module(store, tk, os);
        if (driver_floors && os == platform::Os::Linux) m.driver = driver_floors(tk);
        emit(m);
    }
    // A cuDNN or NCCL module: for the toolkits its build serves; skipped, with the reason, when
    // its id is not a safe file name or no toolkit is there.
    for (Kind kind : {Kind::Cudnn, Kind::Nccl})
        for (const auto& e : store.list(kind)) {
            const std::string what = std::string(kind_dir(kind)) + " ";
            auto cudnn = e.cudnn_id();
            auto nccl = e.nccl_id();
            if (!parse_entry_id(kind, e.id) || e.entry_dir.filename().u8string() != e.id) {
                result.skipped.push_back(what + printable(e.id) + ": not a " + kind_label(kind) +
                                         " build id (entry " + e.entry_dir.u8string() + ")");
                continue;
            }
            std::vector<Entry> compatible;
            for (const auto& tk : toolkits)
                if (cudnn ? cudnn->serves(tk.version) : nccl->serves(tk.version))
                    compatible.push_back(tk);
            if (compatible.empty()) {
                // An NCCL serves its CUDA major, a cuDNN built per minor only that minor.
                std::string cuda =
                    kind == Kind::Nccl ? std::to_string(e.cuda.major()) : e.cuda.str();
                result.skipped.push_back(what + e.id + ": no installed toolkit is CUDA " + cuda +
                                         "; run `cvm install cuda " + cuda + "` and export again");
                continue;
            }
            if (kind == Kind::Cudnn)
                emit(cudnn_module(
                    store, e, compatible,
                    [&](const Resolved& r) { return ensure_view(store, r, os); }, os));
            else
                emit(nccl_module(store, e, compatible, os));
        }
    for (const char* sub : {"cuda", "cudnn", "nccl"}) {
        std::error_code ec;
        for (fs::directory_iterator it(dir / sub, ec), end; !ec && it != end; it.increment(ec)) {
            if (keep.count(it->path())) continue;
            std::error_code e2;
            if (!written_by_cvm(it->path())) continue;
            if (fs::remove(it->path(), e2)) result.removed.push_back(it->path());
        }
    }
    return result;
}

} // namespace cvm
