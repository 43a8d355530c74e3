#include "report.h"

#include "file_system_view.h"

#include <algorithm>

namespace cvm::doctor {

namespace {

nlohmann::json optional_json(const std::optional<std::string>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// The store layer an entry comes from ("" when the report was made without a store).
std::string layer_of(const DoctorReport& r, const Entry& e) {
    return e.layer < r.store_layers.size() ? r.store_layers[e.layer] : std::string();
}

nlohmann::json entry_summary(const DoctorReport& r, const Entry& e) {
    nlohmann::json j;
    j["id"] = e.id;
    j["version"] = e.version.str();
    j["path"] = e.path.u8string();
    j["source"] = e.imported ? "imported" : "installed";
    if (e.kind != Kind::Cuda) j["cuda"] = e.cuda.str();
    std::string layer = layer_of(r, e);
    j["layer"] = layer.empty() ? nlohmann::json(nullptr) : nlohmann::json(layer);
    j["read_only"] = e.layer != 0;
    return j;
}

struct Style {
    bool on = false;
    std::string wrap(const std::string& code, const std::string& text) const {
        return on ? "\x1b[" + code + "m" + text + "\x1b[0m" : text;
    }
    std::string bold(const std::string& t) const { return wrap("1", t); }
    std::string dim(const std::string& t) const { return wrap("2", t); }
    std::string severity(Severity s) const {
        std::string text = to_string(s);
        text.resize(8, ' ');
        switch (s) {
        case Severity::error:
            return wrap("1;31", text);
        case Severity::warning:
            return wrap("1;33", text);
        case Severity::note:
            return wrap("36", text);
        }
        return text;
    }
};

std::string pad(std::string s, std::size_t width) {
    if (s.size() < width) s.resize(width, ' ');
    return s;
}

std::string shown_path(const LibraryLoad& l) {
    std::string s = *l.path;
    if (l.real_path && *l.real_path != *l.path) {
        const std::string real_name = path_basename(*l.real_path);
        if (path_dirname(*l.real_path) == path_dirname(*l.path))
            s += " -> " + real_name;
        else
            s += " -> " + *l.real_path;
    }
    return s;
}

std::string load_line(const LibraryLoad& l, const Style& st) {
    if (l.failure) return st.wrap("31", "fails: " + *l.failure);
    if (!l.path) return st.wrap("31", "not found");
    std::string s = shown_path(l);
    if (l.version) s += "  " + *l.version;
    s += "  " + st.dim("[" + l.mechanism + "]");
    if (!l.shadowed.empty()) s += st.dim("  shadows " + std::to_string(l.shadowed.size()));
    if (l.from_selection == false && l.scenario == "selected")
        s += "  " + st.wrap("31", "outside the selection");
    return s;
}

const char* scenario_label(const std::string& scenario) {
    return scenario == "current" ? "now" : "cvm";
}

} // namespace

nlohmann::json report_json(const DoctorReport& r) {
    nlohmann::json doc;
    doc["healthy"] = r.healthy();
    doc["os"] = r.os == platform::Os::Windows ? "windows" : "linux";
    nlohmann::json sel;
    sel["spec"] =
        r.selection_spec.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.selection_spec);
    sel["origin"] =
        r.selection_origin.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.selection_origin);
    if (r.resolved) {
        sel["active"] = r.resolved->active();
        sel["toolkit"] = entry_summary(r, r.resolved->toolkit);
        sel["cudnn"] =
            r.resolved->cudnn ? entry_summary(r, *r.resolved->cudnn) : nlohmann::json(nullptr);
        sel["nccl"] =
            r.resolved->nccl ? entry_summary(r, *r.resolved->nccl) : nlohmann::json(nullptr);
    } else {
        sel["active"] = nullptr;
    }
    doc["selection"] = sel;

    nlohmann::json driver;
    driver["version"] = optional_json(r.driver.version);
    driver["source"] =
        r.driver.source.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.driver.source);
    driver["gpus"] = r.driver.gpus;
    driver["notes"] = r.driver.notes;
    doc["driver"] = driver;

    if (r.python) {
        nlohmann::json py;
        py["executable"] = r.python->executable;
        py["version"] = r.python->version;
        nlohmann::json fws = nlohmann::json::array();
        for (const auto& f : r.python->frameworks) {
            nlohmann::json j;
            j["name"] = f.name;
            j["version"] = f.version;
            j["location"] = f.location;
            j["cuda"] = optional_json(f.cuda);
            j["cudnn"] = optional_json(f.cudnn);
            j["own_cudnn_dir"] = optional_json(f.own_cudnn_dir);
            j["own_cudnn_version"] = optional_json(f.own_cudnn_version);
            j["own_nccl_library"] = optional_json(f.own_nccl_library);
            j["own_nccl_version"] = optional_json(f.own_nccl_version);
            j["own_nccl_cuda"] = optional_json(f.own_nccl_cuda);
            j["own_cublas_dir"] = f.own_cublas ? nlohmann::json(f.own_cublas->dir) : nlohmann::json();
            j["own_cublas_version"] = optional_json(f.own_cublas ? f.own_cublas->version : std::nullopt);
            fws.push_back(j);
        }
        py["frameworks"] = fws;
        doc["python"] = py;
    } else {
        doc["python"] = nullptr;
    }

    nlohmann::json libs = nlohmann::json::array();
    for (const auto& l : r.libraries) {
        nlohmann::json j;
        j["scenario"] = l.scenario;
        j["family"] = l.family;
        j["role"] = l.role;
        j["name"] = l.name;
        j["main"] = l.main;
        j["path"] = optional_json(l.path);
        j["real_path"] = optional_json(l.real_path);
        j["mechanism"] =
            l.mechanism.empty() ? nlohmann::json(nullptr) : nlohmann::json(l.mechanism);
        j["origin"] = l.origin.empty() ? nlohmann::json(nullptr) : nlohmann::json(l.origin);
        j["version"] = optional_json(l.version);
        j["failure"] = optional_json(l.failure);
        j["from_selection"] =
            l.from_selection ? nlohmann::json(*l.from_selection) : nlohmann::json(nullptr);
        j["shadowed"] = l.shadowed;
        nlohmann::json cands = nlohmann::json::array();
        for (const auto& c : l.candidates)
            cands.push_back({{"path", c.path},
                             {"mechanism", c.mechanism},
                             {"status", c.status},
                             {"detail", c.detail}});
        j["candidates"] = cands;
        libs.push_back(j);
    }
    doc["libraries"] = libs;

    nlohmann::json findings = nlohmann::json::array();
    for (const auto& f : r.findings)
        findings.push_back(
            {{"severity", to_string(f.severity)},
             {"code", f.code},
             {"message", f.message},
             {"fix", f.fix.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.fix)}});
    doc["findings"] = findings;
    return doc;
}

std::string report_text(const DoctorReport& r, bool colour, const TextLayout& layout) {
    Style st{colour};
    std::string out;
    TextLayout paths = layout;
    if (paths.stores.empty()) paths.stores = r.store_layers;
    const std::size_t longest = std::max<std::size_t>(40, layout.width / 2);
    // Each line with its paths shortened, wrapped with its continuation lines `indent` deep.
    auto line = [&](const std::string& s, std::size_t indent = 10) {
        out += wrap_visible(shorten_paths(s, paths, longest), layout.width, indent) + "\n";
    };

    if (r.resolved) {
        line(st.bold(pad("Selected", 10)) + r.resolved->active() + "  " +
             st.dim("(set by " + r.selection_origin + ")"));
        auto where = [&](const Entry& e) {
            std::string layer = layer_of(r, e);
            return e.layer == 0 || layer.empty() ? std::string() : "  " + st.dim("[read-only store " + layer + "]");
        };
        const Entry& tk = r.resolved->toolkit;
        line(pad("  toolkit", 10) + pad(tk.id, 20) + tk.path.u8string() + where(tk));
        if (r.resolved->cudnn)
            line(pad("  cudnn", 10) + pad(r.resolved->cudnn->id, 20) + r.resolved->cudnn->path.u8string() +
                 where(*r.resolved->cudnn));
        if (r.resolved->nccl)
            line(pad("  nccl", 10) + pad(r.resolved->nccl->id, 20) +
                 r.resolved->nccl->path.u8string() + where(*r.resolved->nccl));
    } else if (!r.selection_spec.empty()) {
        line(st.bold(pad("Selected", 10)) + r.selection_spec + "  " +
             st.dim("(set by " + r.selection_origin + ")"));
    } else {
        line(st.bold(pad("Selected", 10)) + "nothing");
    }
    std::string driver = r.driver.version
                             ? *r.driver.version + " " +
                                   st.dim("(" + r.driver.source +
                                          (r.driver.user_space_only
                                               ? ": the driver's user-space library; no kernel module answered)"
                                               : ")"))
                             : std::string("not found");
    if (!r.driver.gpus.empty()) {
        driver += "; GPU: " + r.driver.gpus.front();
        if (r.driver.gpus.size() > 1)
            driver += " and " + std::to_string(r.driver.gpus.size() - 1) + " more";
    }
    line(st.bold(pad("Driver", 10)) + driver);
    if (r.python) {
        std::string py = r.python->executable + " " + r.python->version;
        for (const auto& f : r.python->frameworks) {
            py += "; " + framework_title(f.name) + " " + f.version;
            py += f.cuda ? " (CUDA " + *f.cuda : std::string(" (CPU");
            if (f.own_cudnn_dir) py += ", own cuDNN";
            if (f.own_nccl_library)
                py +=
                    ", own NCCL" + (f.own_nccl_version ? " " + *f.own_nccl_version : std::string());
            if (f.own_cublas)
                py += ", own cuBLAS" + (f.own_cublas->version ? " " + *f.own_cublas->version : std::string());
            py += ")";
        }
        line(st.bold(pad("Python", 10)) + py);
    }

    if (!r.libraries.empty()) {
        line("");
        line(st.bold("Libraries") + st.dim("  now = a program started in this shell, cvm = "
                                           "through cvm exec or the shims"),
             11);
        // Group by family, keeping the report's order; main libraries one line per scenario,
        // sub-libraries summarised when they sit beside their main library.
        std::vector<std::string> families;
        for (const auto& l : r.libraries)
            if (std::find(families.begin(), families.end(), l.family) == families.end())
                families.push_back(l.family);
        for (const auto& family : families) {
            std::vector<const LibraryLoad*> mains, subs;
            for (const auto& l : r.libraries) {
                if (l.family != family) continue;
                (l.main ? mains : subs).push_back(&l);
            }
            std::string last_name;
            for (const auto* m : mains) {
                const std::string name = m->name == last_name ? "" : m->name;
                last_name = m->name;
                line("  " + pad(name, 26) + scenario_label(m->scenario) + "  " + load_line(*m, st), 33);
            }
            if (subs.empty()) continue;
            for (const char* scenario : {"current", "selected"}) {
                const LibraryLoad* main = nullptr;
                for (const auto* m : mains)
                    if (m->scenario == scenario && m->role == family) main = m;
                std::vector<const LibraryLoad*> odd;
                std::size_t count = 0;
                for (const auto* s : subs) {
                    if (s->scenario != scenario) continue;
                    ++count;
                    const bool beside =
                        main && main->path && s->path &&
                        path_dirname(s->real_path.value_or(*s->path)) ==
                            path_dirname(main->real_path.value_or(*main->path)) &&
                        (!s->version || !main->version || *s->version == *main->version);
                    if (!beside) odd.push_back(s);
                }
                if (count == 0 || !main || !main->path) continue;
                // Missing ones on one line: a shell without cuDNN misses them all.
                std::vector<const LibraryLoad*> missing;
                std::vector<const LibraryLoad*> other;
                for (const auto* s : odd)
                    (!s->path && !s->failure ? missing : other).push_back(s);
                if (missing.size() > 1) {
                    std::string names;
                    for (const auto* s : missing)
                        names += (names.empty() ? "" : ", ") + s->name;
                    line("  " + pad("  " + std::to_string(missing.size()) + " sub-libraries", 26) +
                         scenario_label(scenario) + "  " + st.wrap("31", "not found: " + names),
                         33);
                    odd = other;
                    if (odd.empty()) continue;
                }
                if (odd.empty()) {
                    line("  " +
                         pad("  " + std::to_string(count) +
                                 (count == 1 ? " sub-library" : " sub-libraries"),
                             26) +
                         scenario_label(scenario) + "  " + st.dim("all beside " + main->name),
                         33);
                } else {
                    for (const auto* s : odd)
                        line("  " + pad("  " + s->name, 26) + scenario_label(scenario) + "  " +
                                 load_line(*s, st),
                             33);
                }
            }
        }
    }

    line("");
    std::size_t problems = 0;
    for (const auto& f : r.findings)
        if (f.severity != Severity::note) ++problems;
    if (!r.findings.empty()) {
        line(st.bold("Findings"));
        // Errors first, then warnings, then notes.
        for (Severity s : {Severity::error, Severity::warning, Severity::note}) {
            for (const auto& f : r.findings) {
                if (f.severity != s) continue;
                line("  " + st.severity(f.severity) + " " + f.message + " " + st.dim("[" + f.code + "]"), 11);
                if (!f.fix.empty()) line("           " + st.bold("fix:") + " " + f.fix, 16);
            }
        }
        line("");
    }
    if (problems == 0)
        line(st.wrap("32", "No problems found."));
    else
        line(st.wrap("1;31", std::to_string(problems) + (problems == 1 ? " problem" : " problems") +
                                 " found."));
    return out;
}

} // namespace cvm::doctor
