// `cvm uninstall [KIND] ID|PREFIX... [-y]` (`cvm rm`): removes toolkits and cuDNN builds, asking first
// when a project (a .cudaversion that `cvm use` wrote) or the global default selects one.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/context.h"
#include "project/projects.h"
#include "store/resolve.h"
#include "activation/shims.h"
#include "config/trust.h"
#include "platform/platform.h"

namespace cvm::cli {

namespace {

struct Target {
    Kind kind;
    std::string id;
    std::string what() const { return std::string(kind_dir(kind)) + " " + id; }
    bool operator==(const Target& o) const { return kind == o.kind && id == o.id; }
};

// Ids and prefixes are digits, dots, "-cuda" and letters at most: anything else (a path, `..`,
// a quote) is refused before the store is looked at.
bool plausible(const std::string& word) {
    if (is_toolkit_name(word)) return true; // a toolkit imported with --as NAME
    if (word.empty() || word.front() == '.' || word.find("..") != std::string::npos) return false;
    for (char c : word)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '.' || c == '-')) return false;
    return true;
}

// What `word` names: the entry of that id, else every entry whose id starts with it at a
// boundary ("12.4" matches 12.4.1, not 12.40.0; "8.1" matches 8.1.0.77-cuda11.2).
// `only`: the kind a KIND word before the ids named (`cvm uninstall cudnn 9.2`).
std::vector<Target> matches(const Store& store, std::string word, std::optional<Kind> only) {
    std::vector<Target> out;
    // "nccl2.21" names NCCL only, as the spec writes it.
    if (word.rfind("nccl", 0) == 0 && (!only || *only == Kind::Nccl)) {
        word.erase(0, 4);
        only = Kind::Nccl;
    }
    for (Kind kind : all_kinds())
        for (const auto& [id, layer] : store.ids(kind)) {
            if (only && kind != *only) continue;
            (void)layer;
            if (id == word) return {{kind, id}};
            // A toolkit's name (import --as) is given whole; ids by a prefix too.
            if (kind == Kind::Cuda && !parse_toolkit_id(id)) continue;
            if (id.size() > word.size() && id.compare(0, word.size(), word) == 0 &&
                (id[word.size()] == '.' || id[word.size()] == '-'))
                out.push_back({kind, id});
        }
    return out;
}

std::vector<Target> targets_of(const Store& store, std::vector<std::string> words) {
    // The KIND word that may come first, as `cvm list cudnn` and `cvm install cudnn` take it.
    std::optional<Kind> only = words.empty() ? std::nullopt : kind_of_dir(words.front());
    if (only) {
        words.erase(words.begin());
        if (words.empty())
            throw UsageError(std::string("uninstall: ") + kind_dir(*only) + " needs an id or a prefix of one; e.g. " +
                                 "cvm uninstall " + kind_dir(*only) + " " +
                                 (*only == Kind::Cuda ? "12.4" : *only == Kind::Cudnn ? "9.2" : "2.21") +
                                 " (see `cvm list " + kind_dir(*only) + "`)",
                             "usage");
    }
    const std::string kind_name = !only ? "" : *only == Kind::Cuda ? "toolkit" : kind_label(*only);
    std::vector<Target> out;
    for (const auto& word : words) {
        if (!plausible(word))
            throw UsageError(
                "uninstall: '" + printable(word) +
                "' is not a toolkit id (11.2.2) or name, a cuDNN id (8.1.0.77-cuda11.2), an NCCL id "
                "(2.21.5-cuda12.4) or a prefix of one (11.2); see `cvm list`");
        auto found = matches(store, word, only);
        if (found.empty() && only)
            throw Failure("uninstall: " + kind_name + " " + word + " is not installed (no " + kind_name +
                              " id is or starts with it); see `cvm list " + kind_dir(*only) + "`",
                          "not_installed");
        if (found.empty())
            throw Failure("uninstall: " + word +
                              " is not installed (no toolkit, cuDNN or NCCL id is or starts "
                              "with it); see `cvm list`",
                          "not_installed");
        if (found.size() > 1) {
            std::string names;
            for (const auto& t : found) names += (names.empty() ? "" : ", ") + t.id;
            throw UsageError("uninstall: '" + word + "' matches " + std::to_string(found.size()) +
                             " entries (" + names + "); give more of the id");
        }
        if (std::find(out.begin(), out.end(), found.front()) == out.end()) out.push_back(found.front());
    }
    return out;
}

// True when a read-only layer holds the same id: removing the writable one changes no selection.
bool copy_in_other_layer(const Store& store, const Target& t) {
    std::error_code ec;
    for (size_t i = 1; i < store.layers().size(); ++i)
        if (fs::exists(store.layers()[i] / kind_dir(t.kind) / fs::u8path(t.id) / "entry", ec)) return true;
    return false;
}

// "/p/.cudaversion (12.4)" for every project and the global default whose selection resolves to
// one of `targets` today.
std::vector<std::string> selected_by(const Store& store, const std::vector<Target>& targets) {
    std::vector<Selection> sels = project_selections(store);
    try {
        if (auto g = read_version_file(store.global_version_file(), Selection::Origin::Global))
            sels.push_back(*g);
    } catch (const SelectionError&) {
        // A broken global default selects nothing.
    }
    std::vector<std::string> out;
    for (const auto& sel : sels) {
        if (sel.spec.system) continue;
        std::optional<Resolved> r;
        try {
            r = resolve(store, sel.spec);
        } catch (const ResolveError&) {
            continue;
        } catch (const TrustError&) { // an entry another user could change: removing it is the fix
            continue;
        }
        for (const auto& t : targets) {
            if (copy_in_other_layer(store, t)) continue; // the selection keeps the same id
            const Entry* e = r->of(t.kind);
            bool hit = e && e->id == t.id;
            if (!hit) continue;
            std::string who = sel.origin == Selection::Origin::Global ? "the global default"
                                                                        : sel.file.u8string();
            out.push_back(t.what() + " is selected by " + who + " (" + sel.spec.str() + ")");
        }
    }
    return out;
}

// Asks on the terminal; true for y or yes.
bool confirmed(const std::string& question) {
    std::fprintf(stderr, "cvm: %s [y/N] ", question.c_str());
    std::fflush(stderr);
    std::string answer;
    if (!std::getline(std::cin, answer)) {
        std::fputc('\n', stderr);
        return false;
    }
    while (!answer.empty() && (answer.back() == '\r' || answer.back() == ' ')) answer.pop_back();
    return answer == "y" || answer == "Y" || answer == "yes" || answer == "Yes";
}

} // namespace

void register_uninstall(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "uninstall",
        "Remove toolkits, cuDNN or NCCL builds (an imported one is only forgotten); asks first "
        "when a project or the global default selects one");
    auto ids = std::make_shared<std::vector<std::string>>();
    auto yes = std::make_shared<bool>(false);
    auto json = std::make_shared<bool>(false);
    cmd->add_option("id", *ids,
                    "ids or unique prefixes, e.g. 11.2.2, 12.4, 8.1.0.77-cuda11.2, 2.21.5-cuda12.4 "
                    "(see `cvm list`); a first word cuda, cudnn or nccl keeps to that kind (cudnn 9.2)")
        ->required();
    cmd->add_flag("-y,--yes", *yes, "remove without asking, even what a project selects");
    cmd->add_flag("--json", *json, "print one JSON document");
    cmd->callback([ids, yes, json] {
        Store store = open_store();
        auto targets = targets_of(store, *ids);
        for (const auto& t : targets) {
            auto e = store.find(t.kind, t.id);
            if (e && e->layer != 0)
                throw Failure("uninstall: " + t.what() + " is in the read-only store " +
                              store.layers()[e->layer].u8string() + "; nothing removed (ask its owner)");
        }
        auto uses = selected_by(store, targets);
        if (!uses.empty() && !*yes) {
            std::string all;
            for (const auto& t : targets) all += " " + t.id;
            for (const auto& u : uses) note(u);
            if (!platform::is_terminal(0))
                throw UsageError("uninstall: nothing removed; to remove it anyway: cvm uninstall --yes" + all);
            if (!confirmed(targets.size() == 1 ? "remove it anyway?" : "remove them anyway?")) {
                note("nothing removed");
                throw ExitCode{1};
            }
        }
        bool toolkit_removed = false;
        nlohmann::json removed = nlohmann::json::array();
        for (const auto& t : targets) {
            auto e = store.find(t.kind, t.id);
            if (!e) continue; // removed meanwhile
            store.remove(t.kind, t.id);
            note(std::string(e->imported ? "forgot " : "removed ") + t.what());
            removed.push_back({{"kind", kind_dir(t.kind)}, {"id", t.id}, {"path", e->path.u8string()},
                               {"status", e->imported ? "forgotten" : "removed"}});
            toolkit_removed |= t.kind == Kind::Cuda;
        }
        std::error_code ec;
        fs::path shim = shim_binary();
        if (toolkit_removed && fs::exists(shim, ec)) rehash(store, shim);
        if (*json)
            print_json({{"removed", removed}});
        else if (!uses.empty())
            hint("cvm list", "see what is left, then `cvm use SPEC` where a project selected what was removed");
        else
            hint("cvm list", "see what is left");
    });
}

} // namespace cvm::cli
