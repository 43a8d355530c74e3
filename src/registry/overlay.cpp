// The `cvm update` overlay of the shipped registry: reading, writing and merging it.
#include "registry/overlay.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <sstream>

#include <toml++/toml.h>

#include "text/toml_input.h"
#include "config/trust.h"
#include "platform/platform.h"
#include "registry/rows.h"

namespace cvm::registry {

namespace fs = std::filesystem;

namespace {

const char* const kAdvice = "; run `cvm update` to write it again, or `cvm cache clean --all` to drop it";

[[noreturn]] void fail_at(const std::string& file, const toml::source_region& src, const std::string& key,
                          const std::string& what) {
    std::string at = file;
    if (src.begin.line != 0) at += ":" + std::to_string(src.begin.line) + ":" + std::to_string(src.begin.column);
    throw RegistryError(at + ": " + (key.empty() ? "" : key + ": ") + what + kAdvice);
}

void only_keys(const toml::table& t, const std::string& file, const std::string& where,
               std::initializer_list<std::string_view> allowed) {
    for (const auto& [k, v] : t) {
        (void)v;
        if (std::find(allowed.begin(), allowed.end(), k.str()) == allowed.end())
            fail_at(file, k.source(), where + std::string(k.str()), "unknown key");
    }
}

std::string string_value(const toml::table& t, const std::string& file, const char* key) {
    const toml::node* n = t.get(key);
    if (!n) fail_at(file, t.source(), key, "missing");
    auto s = n->as_string();
    if (!s) fail_at(file, n->source(), key, "expected a string");
    return s->get();
}

// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm; no time zone involved).
long long days_from_civil(long long y, unsigned m, unsigned d) {
    y -= m <= 2;
    const long long era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<long long>(doe) - 719468;
}

// Seconds since the epoch of "YYYY-MM-DDTHH:MM:SSZ"; false when `text` is not that.
bool parse_utc(const std::string& text, long long& seconds) {
    int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
    char z = 0;
    int used = 0;
    if (text.size() != 20 ||
        std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c%n", &y, &mo, &d, &h, &mi, &s, &z, &used) != 7 ||
        used != 20 || z != 'Z' || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60)
        return false;
    seconds = days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)) * 86400 + h * 3600 +
              mi * 60 + s;
    return true;
}

long long epoch_seconds(std::chrono::system_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

toml::array string_array(const std::vector<std::string>& items) {
    toml::array a;
    for (const auto& s : items) a.push_back(s);
    return a;
}

toml::table cuda_row(const CudaRelease& r) {
    toml::table t;
    t.insert("version", r.version.str());
    if (!r.date.empty()) t.insert("date", r.date);
    if (!r.manifest.empty()) t.insert("manifest", r.manifest);
    if (r.cudart) t.insert("cudart", r.cudart->str());
    if (r.nvcc) t.insert("nvcc", r.nvcc->str());
    if (r.driver_linux) t.insert("driver_linux", r.driver_linux->text);
    if (r.driver_windows) t.insert("driver_windows", r.driver_windows->text);
    t.insert("source", r.source);
    if (!r.inferred.empty()) t.insert("inferred", string_array(r.inferred));
    return t;
}

toml::table cudnn_row(const CudnnRelease& r) {
    toml::table t;
    t.insert("version", r.version.str());
    if (!r.date.empty()) t.insert("date", r.date);
    if (!r.manifest.empty()) t.insert("manifest", r.manifest);
    t.insert("source", r.source);
    if (!r.inferred.empty()) t.insert("inferred", string_array(r.inferred));
    toml::array builds;
    for (const auto& b : r.builds) {
        toml::table bt;
        bt.insert("cuda", b.cuda.str());
        bt.insert("supports", toml::array{b.supports_min.str(), b.supports_max.str()});
        if (!b.linux_archives.empty()) bt.insert("linux_archives", string_array(b.linux_archives));
        if (!b.windows_archives.empty()) bt.insert("windows_archives", string_array(b.windows_archives));
        builds.push_back(std::move(bt));
    }
    t.insert("build", std::move(builds));
    return t;
}

} // namespace

fs::path overlay_file(const fs::path& cache_dir) {
    return cache_dir / "registry-overlay.toml";
}

Overlay parse_overlay(std::string_view text, const std::string& file) {
    toml::table root = parse_toml<RegistryError>(text, file, kAdvice);
    only_keys(root, file, "", {"schema", "updated", "mirror", "cuda", "cudnn"});
    const toml::node* schema = root.get("schema");
    if (!schema || !schema->as_integer() || schema->as_integer()->get() != 1)
        fail_at(file, schema ? schema->source() : root.source(), "schema", "expected schema = 1");
    Overlay o;
    o.updated = string_value(root, file, "updated");
    long long seconds = 0;
    if (!parse_utc(o.updated, seconds))
        fail_at(file, root.get("updated")->source(), "updated",
                "\"" + printable(o.updated) + "\" is not a UTC time like 2026-12-01T04:14:22Z");
    o.mirror = string_value(root, file, "mirror");
    Registry rows;
    for (const char* product : {"cuda", "cudnn"}) {
        const toml::node* n = root.get(product);
        if (!n) continue;
        const toml::table* t = n->as_table();
        if (!t) fail_at(file, n->source(), product, "expected a table of [[" + std::string(product) + ".release]]");
        only_keys(*t, file, std::string(product) + ".", {"release"});
        if (std::string_view(product) == "cuda") read_cuda_tables(*t, file, rows);
        else read_cudnn_tables(*t, file, rows);
    }
    o.cuda = std::move(rows.cuda);
    o.cudnn = std::move(rows.cudnn);
    return o;
}

std::string overlay_text(const Overlay& o) {
    toml::table root;
    root.insert("schema", 1);
    root.insert("updated", o.updated);
    root.insert("mirror", o.mirror);
    toml::array cuda, cudnn;
    for (const auto& r : o.cuda) cuda.push_back(cuda_row(r));
    for (const auto& r : o.cudnn) cudnn.push_back(cudnn_row(r));
    if (!cuda.empty()) root.insert("cuda", toml::table{{"release", std::move(cuda)}});
    if (!cudnn.empty()) root.insert("cudnn", toml::table{{"release", std::move(cudnn)}});
    std::ostringstream out;
    out << "# Releases `cvm update` found on the mirror that cvm's shipped registry lacks. Rebuilt by\n"
           "# every `cvm update`; removed by `cvm cache clean --all`. Keys as in registry/cuda.toml and\n"
           "# registry/cudnn.toml; `inferred` lists what no manifest said.\n";
    out << root << "\n";
    return out.str();
}

std::size_t merge_overlay(Registry& reg, const Overlay& overlay) {
    std::size_t added = 0;
    for (const auto& r : overlay.cuda) {
        bool known = std::any_of(reg.cuda.begin(), reg.cuda.end(),
                                 [&](const CudaRelease& c) { return c.version == r.version; });
        if (known) continue;
        reg.cuda.push_back(r);
        ++added;
    }
    for (const auto& r : overlay.cudnn) {
        bool known = std::any_of(reg.cudnn.begin(), reg.cudnn.end(),
                                 [&](const CudnnRelease& c) { return c.version == r.version; });
        if (known) continue;
        reg.cudnn.push_back(r);
        ++added;
    }
    std::sort(reg.cuda.begin(), reg.cuda.end(),
              [](const CudaRelease& a, const CudaRelease& b) { return a.version < b.version; });
    std::sort(reg.cudnn.begin(), reg.cudnn.end(),
              [](const CudnnRelease& a, const CudnnRelease& b) { return a.version < b.version; });
    return added;
}

void read_overlay(const fs::path& cache_dir, Overlay& overlay, OverlayState& state) {
    state.file = overlay_file(cache_dir);
    const std::string name = state.file.u8string();
    platform::FileRead read = platform::read_file_checked(name, std::size_t(16) << 20);
    if (read.absent()) return;
    if (read.error != 0) {
        state.problem = name + ": cannot read the registry overlay (" + platform::error_text(read.error) +
                        "); it is ignored; run `cvm update` to write it again";
        return;
    }
    if (!read.text) {
        state.problem = name + " is " + platform::file_type_text(state.file) +
                        ", not a file; the registry overlay is ignored; remove it and run `cvm update`";
        return;
    }
    if (Doubt d = doubt_of(read.meta); d != Doubt::None) {
        state.problem = distrust_message("the registry overlay", state.file, read.meta, d, false) +
                        " (ignored)";
        return;
    }
    try {
        overlay = parse_overlay(*read.text, name);
    } catch (const RegistryError& e) {
        state.problem = std::string(e.what()) + " (the registry overlay is ignored)";
        return;
    }
    state.present = true;
    state.updated = overlay.updated;
    state.mirror = overlay.mirror;
}

Registry load_registry_with_overlay(const fs::path& cache_dir, OverlayState* state) {
    Registry reg = load_default_registry();
    OverlayState local;
    OverlayState& st = state ? *state : local;
    Overlay overlay;
    read_overlay(cache_dir, overlay, st);
    if (st.present) st.added = merge_overlay(reg, overlay);
    return reg;
}

std::string utc_timestamp(std::chrono::system_clock::time_point when) {
    long long secs = epoch_seconds(when);
    long long days = secs >= 0 ? secs / 86400 : (secs - 86399) / 86400;
    long long rest = secs - days * 86400;
    // civil_from_days (Howard Hinnant).
    long long z = days + 719468;
    const long long era = (z >= 0 ? z : z - 146096) / 146097;
    const unsigned doe = static_cast<unsigned>(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    long long y = static_cast<long long>(yoe) + era * 400;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    const unsigned d = doy - (153 * mp + 2) / 5 + 1;
    const unsigned m = mp < 10 ? mp + 3 : mp - 9;
    y += m <= 2;
    char buf[96];
    std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02d:%02d:%02dZ", y, m, d, static_cast<int>(rest / 3600),
                  static_cast<int>(rest / 60 % 60), static_cast<int>(rest % 60));
    return buf;
}

std::string age_text(const std::string& updated, std::chrono::system_clock::time_point now) {
    long long then = 0;
    if (!parse_utc(updated, then)) return {};
    long long ago = epoch_seconds(now) - then;
    auto plural = [](long long n, const char* unit) {
        return std::to_string(n) + " " + unit + (n == 1 ? "" : "s") + " ago";
    };
    if (ago < 0) return "in the future (the clock was changed?)";
    if (ago < 60) return "just now";
    if (ago < 3600) return plural(ago / 60, "minute");
    if (ago < 2 * 86400) return plural(ago / 3600, "hour");
    return plural(ago / 86400, "day");
}

} // namespace cvm::registry
