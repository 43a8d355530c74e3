// `cvm probe [SPEC] --python [PY]`: the frameworks' own checks (doctor/framework_check) run by the
// user's Python in exactly the environment the selection gives a program, one isolated interpreter
// per framework, and their reports judged: pass, or the framework's failure with what to run.
#include "cli/probe_python.h"

#include "cli/context.h"
#include "config/program_trust.h"
#include "store/resolve.h"
#include "doctor/framework_check.h"
#include "doctor/framework_cudnn.h"
#include "doctor/python_env.h"
#include "platform/platform.h"

#include <cstdio>
#include <cstdlib>

namespace cvm::cli {

namespace {

// Importing a framework and making its first GPU context can take a minute on a cold disk.
constexpr int kDefaultTimeoutSeconds = 300;

int timeout_seconds() {
    auto text = platform::get_env("CVM_PROBE_PYTHON_TIMEOUT");
    if (!text || text->empty()) return kDefaultTimeoutSeconds;
    char* end = nullptr;
    long value = std::strtol(text->c_str(), &end, 10);
    if (*end != '\0' || value < 1 || value > 86400)
        throw UsageError("CVM_PROBE_PYTHON_TIMEOUT=" + *text +
                         " is not a number of seconds from 1 to 86400; unset it for " +
                         std::to_string(kDefaultTimeoutSeconds));
    return static_cast<int>(value);
}

// The interpreter: PY as given (a name is looked up on PATH, a path made absolute), else the one
// doctor and `cvm use` ask.
std::string choose_python(const std::string& given) {
    if (given.empty()) {
        std::string python = doctor::default_python();
        if (python.empty())
            throw UsageError("probe --python: no Python found; activate a virtual environment, put python3 on PATH, "
                             "set CVM_PYTHON or name it: --python=/path/to/python");
        return python;
    }
    fs::path p = fs::u8path(given);
    if (!p.has_parent_path()) {
        auto path = platform::get_env("PATH");
        p = find_trusted_program(given, path ? *path : std::string(), "the python to probe");
        if (p.empty()) throw UsageError("probe --python: no " + given + " on PATH; name it by its path");
        return p.u8string();
    }
    std::error_code ec;
    p = fs::absolute(p, ec);
    if (ec || !platform::is_executable(p))
        throw UsageError("probe --python: " + given + " is not an executable file; name a Python interpreter");
    if (!trusted_program(p, "the python to probe"))
        throw UsageError("probe --python: " + p.u8string() +
                         " could be changed by another user, so cvm does not run it (see the note above)");
    return p.u8string();
}

// The last line of what it printed that is not the report, for a failure's message.
std::string last_words(const std::string& out) {
    std::string last;
    std::size_t pos = 0;
    while (pos < out.size()) {
        auto eol = out.find('\n', pos);
        std::string line = out.substr(pos, eol == std::string::npos ? std::string::npos : eol - pos);
        pos = eol == std::string::npos ? out.size() : eol + 1;
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
        if (!line.empty() && line.rfind(doctor::kFrameworkReportMark, 0) != 0) last = line;
    }
    if (last.size() > 300) last = last.substr(0, 300) + "...";
    return last;
}

// The way out where framework `name` loads another cuDNN than its own: select its own (as its
// files show it), or nothing to say.
std::string own_cudnn_fix(const doctor::PythonInfo& info, const std::string& name, const std::optional<Resolved>& r) {
    if (!r) return {};
    for (const auto& f : info.frameworks)
        if (f.name == name) return doctor::own_cudnn_way_out(f, r->toolkit.version.str()).value_or("");
    return {};
}

struct Outcome {
    std::string name;   // FrameworkInstall's: pytorch, jax, tensorflow
    std::string module; // what the script imports: torch, jax, tensorflow
    std::string label;
    std::optional<doctor::FrameworkRun> run;
    std::string ended = "exited"; // exited, crashed, timed_out, no_report
    doctor::FrameworkJudgement judged;
};

Outcome check_one(const std::string& python, const std::string& name, int timeout_s, const std::string& fix) {
    Outcome o;
    o.name = name;
    o.module = doctor::framework_module(name);
    o.label = doctor::framework_title(name);
    const std::string& module = o.module;
    const std::string script = std::string(doctor::kUserSitePrelude) + doctor::kFrameworkCheckScript;
    auto c = platform::capture_process(fs::u8path(python), {python, "-I", "-c", script, module}, timeout_s * 1000, true);
    using End = platform::Captured::End;
    if (c.end == End::NotStarted) throw Failure("probe --python: could not start " + python + "; check that it runs: `" + python + " -I -c 'import sys'`");
    o.run = doctor::parse_framework_report(c.out);
    if (o.run && !o.run->version.empty()) o.label += " " + o.run->version;
    const std::string words = last_words(c.out);
    const std::string said = words.empty() ? "" : "; its last line: " + words;
    if (c.end == End::TimedOut) {
        o.ended = "timed_out";
        o.judged.problems.push_back(
            {"timed_out",
             python + " did not finish checking " + o.label + " within " + std::to_string(timeout_s) + " s and was stopped" + said,
             "set CVM_PROBE_PYTHON_TIMEOUT=SECONDS for a slower machine, or run `" + python + " -I -c 'import " + module +
                 "'` to see where it stops"});
    } else if (c.end == End::Signaled) {
        o.ended = "crashed";
        o.judged.problems.push_back({"crashed",
                                     python + " was killed by " + platform::signal_name(c.code) + " while checking " + o.label +
                                         " under this selection" + said,
                                     fix.empty() ? "`cvm doctor` names what each library loads from where" : fix});
    } else if (!o.run) {
        o.ended = "no_report";
        o.judged.problems.push_back({"no_report",
                                     python + " printed no report while checking " + o.label + " (exit " +
                                         std::to_string(c.code) + ")" + said,
                                     "check that it is a Python 3 interpreter: `" + python + " -I -c 'import sys'`"});
    } else if (o.run->installed) {
        o.judged = doctor::judge_framework_run(*o.run, o.label, fix, 1e-3);
    }
    return o;
}

nlohmann::json finding_json(const std::string& module, const doctor::CheckFinding& f) {
    return {{"framework", module}, {"kind", f.kind}, {"message", f.message}, {"fix", f.fix.empty() ? nlohmann::json() : nlohmann::json(f.fix)}};
}

nlohmann::json run_json(const Outcome& o) {
    nlohmann::json j{{"framework", o.module}, {"name", doctor::framework_title(o.name)}, {"ended", o.ended}};
    if (!o.run) return j;
    const auto& r = *o.run;
    auto opt = [](const std::optional<std::string>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
    j["version"] = r.version;
    j["cuda"] = opt(r.cuda);
    j["cudnn_built"] = opt(r.cudnn_built);
    j["cudnn_version"] = r.cudnn_version ? nlohmann::json(*r.cudnn_version) : nlohmann::json();
    j["nccl_version"] = opt(r.nccl_version);
    j["error"] = r.error.empty() ? nlohmann::json() : nlohmann::json{{"step", r.error_step}, {"message", r.error}};
    j["gpus"] = r.gpus;
    j["convolution"] = !r.convolution.ran ? nlohmann::json()
                                          : nlohmann::json{{"max_error", r.convolution.error.empty()
                                                                             ? nlohmann::json(r.convolution.max_error)
                                                                             : nlohmann::json()},
                                                           {"error", r.convolution.error.empty()
                                                                         ? nlohmann::json()
                                                                         : nlohmann::json(r.convolution.error)}};
    j["loaded"] = r.loaded ? nlohmann::json(*r.loaded) : nlohmann::json();
    j["cudnn_folders"] = r.loaded ? nlohmann::json(doctor::cudnn_folders(*r.loaded)) : nlohmann::json();
    return j;
}

std::string run_text(const Outcome& o) {
    if (!o.run) return o.label + ": no report\n";
    const auto& r = *o.run;
    std::string t = o.label + ":";
    if (r.cuda) t += " built for CUDA " + *r.cuda;
    if (r.cudnn_built) t += std::string(r.cuda ? "," : "") + " cuDNN " + *r.cudnn_built;
    t += "\n";
    if (r.cudnn_version) t += "  cuDNN it reports: " + std::to_string(*r.cudnn_version) + "\n";
    if (r.nccl_version) t += "  NCCL it reports: " + *r.nccl_version + "\n";
    if (r.loaded)
        for (const auto& [dir, files] : doctor::cudnn_files(*r.loaded)) {
            std::string names;
            for (const auto& f : files) names += (names.empty() ? "" : ", ") + f;
            t += "  cuDNN files from " + dir + ": " + names + "\n";
        }
    t += "  GPUs it sees: " + std::to_string(r.gpus) + (r.gpu_name.empty() ? "" : " (" + r.gpu_name + ")") + "\n";
    return t;
}

} // namespace

int probe_python(const Store& store, const Selection& sel, const std::string& given, bool json) {
    const int timeout_s = timeout_seconds();
    const std::string python = choose_python(given);
    doctor::RealFileSystem files;
    std::string why;
    auto info = doctor::inspect_python(python, files, &why);
    if (!info) throw UsageError("probe --python: " + why + "; check that it runs: `" + python + " -I -c 'import sys'`");
    std::optional<Resolved> resolved;
    std::string selection = "system";
    if (!(sel.origin != Selection::Origin::None && sel.spec.system)) {
        resolved = resolve_selection(store, sel);
        selection = resolved->active();
        for (const auto& change : selection_changes(store, *resolved)) platform::set_env(change.name, change.value);
    }
    std::vector<Outcome> outcomes;
    for (const auto& name : doctor::checked_frameworks()) {
        Outcome o = check_one(python, name, timeout_s, own_cudnn_fix(*info, name, resolved));
        if (o.run && !o.run->installed) continue;
        outcomes.push_back(std::move(o));
    }
    if (outcomes.empty())
        throw UsageError("probe --python: " + python + " has none of torch, jax and tensorflow installed; install one, "
                         "or name another Python: --python=/path/to/python");
    bool ok = true;
    for (const auto& o : outcomes) ok = ok && o.judged.problems.empty();
    if (json) {
        nlohmann::json doc{{"python", {{"executable", python}, {"version", info->version}}},
                           {"selection", selection},
                           {"ok", ok}};
        nlohmann::json runs = nlohmann::json::array(), problems = nlohmann::json::array(),
                       warnings = nlohmann::json::array(), not_checked = nlohmann::json::array();
        for (const auto& o : outcomes) {
            runs.push_back(run_json(o));
            for (const auto& p : o.judged.problems) problems.push_back(finding_json(o.module, p));
            for (const auto& w : o.judged.warnings) warnings.push_back(finding_json(o.module, w));
            for (const auto& n : o.judged.not_checked) not_checked.push_back(n);
        }
        doc["frameworks"] = runs;
        doc["problems"] = problems;
        doc["warnings"] = warnings;
        doc["not_checked"] = not_checked;
        print_json(doc);
        return ok ? 0 : 1;
    }
    std::string text = "python " + python + " " + info->version + ", under " + selection +
                       (sel.origin != Selection::Origin::None ? " (selected by " + sel.origin_text() + ")" : "") + "\n";
    std::string tail;
    int problems = 0;
    for (const auto& o : outcomes) {
        text += run_text(o);
        for (const auto& p : o.judged.problems) {
            ++problems;
            tail += "problem: " + p.message + "\n" + (p.fix.empty() ? "" : "  fix: " + p.fix + "\n");
        }
        for (const auto& w : o.judged.warnings)
            tail += "warning: " + w.message + "\n" + (w.fix.empty() ? "" : "  fix: " + w.fix + "\n");
        for (const auto& n : o.judged.not_checked) tail += "not checked: " + n + "\n";
    }
    text += tail;
    if (ok) {
        std::string summary;
        for (const auto& o : outcomes) summary += (summary.empty() ? "" : "; ") + o.judged.summary;
        text += "result: OK, " + summary + "\n";
    } else {
        text += "result: FAILED, " + std::to_string(problems) + (problems == 1 ? " problem" : " problems") + "\n";
    }
    std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
    return ok ? 0 : 1;
}

} // namespace cvm::cli
