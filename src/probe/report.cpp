#include "report.h"

#include "json_writer.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <functional>

namespace cvm::probe {
namespace {

std::string format_double(const char* format, double value) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, format, value);
    return buffer;
}

// "9.0"; "" when unknown (major -1).
std::string cc_text(int major, int minor) {
    return major >= 0 ? std::to_string(major) + "." + std::to_string(minor) : "";
}

std::string bytes_text(std::size_t bytes) {
    if (bytes < 1024) return std::to_string(bytes) + " B";
    if (bytes < 1024 * 1024) return format_double("%.1f KiB", static_cast<double>(bytes) / 1024);
    return format_double("%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
}

void write_shape(JsonWriter& json, const ConvShape& s) {
    json.key("shape").value(s.describe());
    json.key("n").value(s.n).key("c").value(s.c).key("h").value(s.h).key("w").value(s.w);
    json.key("k").value(s.k).key("r").value(s.r).key("s").value(s.s);
    json.key("pad").begin_array().value(s.pad_h).value(s.pad_w).end_array();
    json.key("stride").begin_array().value(s.stride_h).value(s.stride_w).end_array();
    json.key("dilation").begin_array().value(s.dilation_h).value(s.dilation_w).end_array();
}

void write_comparison(JsonWriter& json, const Comparison& c) {
    json.key("matched").value(c.matched);
    json.key("checked").value(static_cast<std::int64_t>(c.checked));
    json.key("non_finite").value(static_cast<std::int64_t>(c.non_finite));
    json.key("max_abs_error").value(c.max_abs_error);
    json.key("max_abs_reference").value(c.max_abs_reference);
    json.key("relative_error").value(c.relative_error);
}

void write_library(JsonWriter& json, const LibraryInfo& lib) {
    json.begin_object();
    json.key("loaded").value(lib.loaded());
    if (lib.loaded())
        json.key("name").value(lib.name).key("path").value(lib.path);
    else
        json.key("name").null().key("path").null();
    json.key("tried").begin_array();
    for (const auto& a : lib.attempts) {
        json.begin_object().key("name").value(a.name);
        if (a.error.empty())
            json.key("error").null();
        else
            json.key("error").value(a.error);
        json.end_object();
    }
    json.end_array();
    json.end_object();
}

void optional_number(JsonWriter& json, const char* name, long long value) {
    json.key(name);
    if (value < 0)
        json.null();
    else
        json.value(static_cast<std::int64_t>(value));
}

void optional_text(JsonWriter& json, const char* name, const std::string& value) {
    json.key(name);
    if (value.empty())
        json.null();
    else
        json.value(value);
}

void write_nccl(JsonWriter& json, const NcclReport& n) {
    json.begin_object();
    json.key("library");
    write_library(json, n.library);
    json.key("version").begin_object();
    optional_number(json, "code", n.version_code);
    optional_text(json, "text", n.version);
    json.end_object();
    optional_text(json, "banner", n.banner);
    optional_text(json, "built_for_cuda", n.built_for_cuda);
    json.key("ranks").value(n.ranks);
    json.key("one_gpu").value(n.ranks == 1);
    optional_text(json, "note", n.ranks == 1 ? one_gpu_note() : "");
    json.key("devices").begin_array();
    for (std::size_t r = 0; r < n.bus_ids.size(); ++r) {
        json.begin_object().key("rank").value(static_cast<int>(r));
        optional_text(json, "bus_id", n.bus_ids[r]);
        json.end_object();
    }
    json.end_array();
    json.key("peer_access").begin_array();
    for (const auto& row : n.peer_access) {
        json.begin_array();
        for (int v : row)
            if (v < 0)
                json.null();
            else
                json.value(v == 1);
        json.end_array();
    }
    json.end_array();
    json.key("links").begin_array();
    for (const auto& l : n.links)
        json.begin_object()
            .key("from")
            .value(l.from)
            .key("to")
            .value(l.to)
            .key("transport")
            .value(l.transport)
            .key("channels")
            .value(l.channels)
            .end_object();
    json.end_array();
    json.key("all_reduce").begin_array();
    for (const auto& z : n.sizes) {
        json.begin_object();
        json.key("bytes")
            .value(static_cast<std::int64_t>(z.bytes))
            .key("iterations")
            .value(z.iterations);
        json.key("time_us").value(z.time_us);
        json.key("algbw_gbs");
        if (z.timed)
            json.value(z.algbw_gbs);
        else
            json.null();
        json.key("busbw_gbs");
        if (z.timed)
            json.value(z.busbw_gbs);
        else
            json.null();
        json.key("checked").value(static_cast<std::int64_t>(z.checked));
        json.key("mismatched").value(static_cast<std::int64_t>(z.mismatched));
        json.key("matched").value(z.matched());
        optional_text(json, "first_mismatch", z.first_mismatch);
        json.end_object();
    }
    json.end_array();
    json.key("environment").begin_array();
    for (const auto& e : n.environment)
        json.value(e);
    json.end_array();
    json.key("init_ms").value(n.init_ms).key("all_reduce_ms").value(n.allreduce_ms);
    json.end_object();
}

void render_nccl(const NcclReport& n, const std::function<void(const std::string&)>& line) {
    line("");
    if (!n.library.loaded()) {
        line("NCCL    not loaded");
        return;
    }
    std::string head =
        "NCCL    " + (n.version.empty() ? std::string("version unknown")
                                        : n.version + " (" + std::to_string(n.version_code) + ")");
    if (!n.built_for_cuda.empty()) head += ", built for CUDA " + n.built_for_cuda;
    line(head + "  " + n.library.path);
    if (n.ranks <= 0) return;
    std::string devices;
    for (std::size_t r = 0; r < n.bus_ids.size(); ++r)
        devices += (devices.empty() ? "" : ", ") + std::to_string(r) +
                   (n.bus_ids[r].empty() ? "" : " " + n.bus_ids[r]);
    line("ranks   " + std::to_string(n.ranks) + " (GPU " + devices + "), ncclCommInitAll " +
         format_double("%.0f ms", n.init_ms));
    if (n.ranks > 1) {
        std::string peers;
        for (std::size_t a = 0; a < n.peer_access.size(); ++a)
            for (std::size_t b = a + 1; b < n.peer_access[a].size(); ++b) {
                int v = n.peer_access[a][b];
                peers += (peers.empty() ? "" : ", ") + std::to_string(a) + "-" + std::to_string(b) +
                         " " +
                         (v == 1   ? "yes"
                          : v == 0 ? "no"
                                   : "?");
            }
        line("peer access " + peers);
        for (const auto& l : n.links)
            line("link    " + std::to_string(l.from) + " -> " + std::to_string(l.to) + " via " +
                 l.transport + " (" + std::to_string(l.channels) + " channel" +
                 (l.channels == 1 ? "" : "s") + ")");
    } else {
        line(one_gpu_note());
    }
    if (!n.environment.empty())
        line("NCCL variables: " + [&] {
            std::string all;
            for (const auto& e : n.environment)
                all += (all.empty() ? "" : " ") + e;
            return all;
        }());
    if (n.sizes.empty()) return;
    line("all-reduce (float sum, out of place, every rank checked exactly):");
    line("  size        time      algbw      busbw  check");
    for (const auto& z : n.sizes) {
        std::string text = "  " + size_label(z.bytes);
        text.resize(std::max<std::size_t>(text.size(), 10), ' ');
        text += format_double("%9.1f us", z.time_us);
        if (z.timed)
            text += format_double(" %6.1f GB/s", z.algbw_gbs) +
                    format_double(" %6.1f GB/s", z.busbw_gbs);
        else
            text += "          -          -";
        text += z.matched() ? "  exact"
                            : "  WRONG (" + std::to_string(z.mismatched) + " of " +
                                  std::to_string(z.checked) + ")";
        line(text);
    }
}

} // namespace

std::string size_label(std::size_t bytes) {
    if (bytes >= (std::size_t(1) << 30) && bytes % (std::size_t(1) << 30) == 0)
        return std::to_string(bytes >> 30) + " GiB";
    if (bytes >= (std::size_t(1) << 20) && bytes % (std::size_t(1) << 20) == 0)
        return std::to_string(bytes >> 20) + " MiB";
    if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
    return std::to_string(bytes) + " B";
}

std::string one_gpu_note() {
    return "one GPU: its one-rank all-reduce moves nothing between GPUs, so no link is measured";
}

bool Report::ok() const {
    if (!problems.empty()) return false;
    if (cudnn_skipped && !nccl.asked) return false;
    if (!cudnn_skipped) {
        if (convolutions.empty()) return false;
        for (const auto& c : convolutions)
            if (!c.ran || !c.comparison.matched) return false;
    }
    if (nccl.asked) {
        if (!nccl.ran()) return false;
        for (const auto& s : nccl.sizes)
            if (!s.matched()) return false;
    }
    return true;
}

int cudnn_version_major(long long v) {
    if (v < 0) return -1;
    return static_cast<int>(v >= 90000 ? v / 10000 : v / 1000);
}

std::string cudnn_version_text(long long v) {
    if (v < 0) return {};
    long long major = cudnn_version_major(v);
    long long rest = v >= 90000 ? v % 10000 : v % 1000;
    return std::to_string(major) + "." + std::to_string(rest / 100) + "." +
           std::to_string(rest % 100);
}

std::string cuda_version_text(long long v) {
    if (v < 0) return {};
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

int major_from_library_name(const std::string& name) {
    std::string file = name.substr(name.find_last_of("/\\") + 1);
    std::size_t at = file.find(".so.");
    if (at != std::string::npos) {
        at += 4;
    } else {
        std::size_t dll = file.rfind(".dll");
        std::size_t underscore = file.rfind('_', dll);
        if (dll == std::string::npos || underscore == std::string::npos) return -1;
        at = underscore + 1;
    }
    int major = 0;
    std::size_t digits = 0;
    while (at < file.size() && std::isdigit(static_cast<unsigned char>(file[at])) && digits < 6) {
        major = major * 10 + (file[at++] - '0');
        ++digits;
    }
    return digits ? major : -1;
}

std::string render_json(const Report& r) {
    JsonWriter json;
    json.begin_object();
    json.key("ok").value(r.ok());
    json.key("cudnn");
    write_library(json, r.cudnn);
    json.key("cudnn_version").begin_object();
    optional_number(json, "number", r.cudnn_version);
    optional_text(json, "text", cudnn_version_text(r.cudnn_version));
    optional_number(json, "cudart_number", r.cudnn_cudart_version);
    optional_text(json, "cudart_text", cuda_version_text(r.cudnn_cudart_version));
    json.end_object();
    json.key("cudart");
    write_library(json, r.cudart);
    json.key("runtime_version").begin_object();
    optional_number(json, "number", r.runtime_version);
    optional_text(json, "text", cuda_version_text(r.runtime_version));
    json.end_object();
    json.key("driver_version").begin_object();
    optional_number(json, "number", r.driver_version);
    optional_text(json, "text", r.driver_version > 0 ? cuda_version_text(r.driver_version) : "");
    json.end_object();
    json.key("device").begin_object();
    optional_number(json, "count", r.device_count);
    json.key("index").value(r.device_index);
    optional_text(json, "name", r.device_name);
    optional_text(json, "compute_capability", cc_text(r.cc_major, r.cc_minor));
    json.end_object();
    json.key("devices").begin_array();
    for (const auto& d : r.devices) {
        json.begin_object().key("index").value(d.index);
        optional_text(json, "name", d.name);
        optional_text(json, "compute_capability", cc_text(d.cc_major, d.cc_minor));
        json.end_object();
    }
    json.end_array();
    json.key("libraries").begin_array();
    for (const auto& m : r.cuda_modules)
        json.begin_object()
            .key("path")
            .value(m.path)
            .key("real_path")
            .value(m.real_path)
            .end_object();
    json.end_array();
    json.key("cudnn_folders").begin_array();
    for (const auto& f : r.cudnn_folders)
        json.value(f);
    json.end_array();
    json.key("tolerance").begin_object();
    json.key("relative").value(kRelativeTolerance);
    json.key("definition").value("max |gpu - reference| <= relative * max |reference|");
    optional_text(json, "math", r.math);
    json.end_object();
    optional_text(json, "algorithm_choice", r.algorithm_choice);
    json.key("convolutions").begin_array();
    for (const auto& c : r.convolutions) {
        json.begin_object();
        write_shape(json, c.shape);
        json.key("ran").value(c.ran);
        optional_text(json, "algorithm", c.algorithm);
        optional_text(json, "math", c.math);
        json.key("workspace_bytes").value(static_cast<std::int64_t>(c.workspace_bytes));
        json.key("time_ms").value(c.time_ms);
        json.key("wall_ms").value(c.wall_ms);
        write_comparison(json, c.comparison);
        optional_text(json, "error", c.error);
        json.end_object();
    }
    json.end_array();
    json.key("benchmark").begin_array();
    for (const auto& b : r.benchmarks) {
        json.begin_object();
        write_shape(json, b.shape);
        optional_text(json, "error", b.error);
        json.key("algorithms").begin_array();
        for (const auto& a : b.algorithms) {
            json.begin_object();
            json.key("algorithm").value(a.algorithm).key("id").value(a.algorithm_id);
            json.key("status").value(a.status).key("time_ms").value(a.time_ms);
            json.key("workspace_bytes").value(static_cast<std::int64_t>(a.workspace_bytes));
            json.key("math").value(a.math).key("deterministic").value(a.deterministic);
            json.key("verified").value(a.verified);
            if (a.verified) write_comparison(json, a.comparison);
            optional_text(json, "error", a.error);
            json.end_object();
        }
        json.end_array();
        json.end_object();
    }
    json.end_array();
    json.key("problems").begin_array();
    for (const auto& p : r.problems)
        json.begin_object().key("kind").value(p.kind).key("message").value(p.message).end_object();
    json.end_array();
    json.key("warnings").begin_array();
    for (const auto& w : r.warnings)
        json.value(w);
    json.end_array();
    json.key("searched_folders").begin_array();
    for (const auto& f : r.searched_folders)
        json.begin_object().key("path").value(f.path).key("origin").value(f.origin).end_object();
    json.end_array();
    json.key("loader_cache").begin_array();
    for (const auto& e : r.cache_entries)
        json.value(e);
    json.end_array();
    json.key("cudnn_skipped").value(r.cudnn_skipped);
    json.key("nccl");
    if (r.nccl.asked)
        write_nccl(json, r.nccl);
    else
        json.null();
    json.key("timings_ms").begin_object();
    json.key("load").value(r.timings.load_ms).key("init").value(r.timings.init_ms);
    json.key("convolutions").value(r.timings.convolution_ms);
    json.key("benchmark").value(r.timings.benchmark_ms).key("nccl").value(r.timings.nccl_ms);
    json.key("total").value(r.timings.total_ms);
    json.end_object();
    json.end_object();
    return json.str();
}

std::string render_text(const Report& r) {
    std::string out;
    auto line = [&out](const std::string& text) { out += text + "\n"; };
    if (r.cudnn_skipped) {
        line("cuDNN   not probed (--no-cudnn)");
    } else if (r.cudnn.loaded()) {
        std::string text =
            "cuDNN   " + (r.cudnn_version >= 0 ? cudnn_version_text(r.cudnn_version) + " (" +
                                                     std::to_string(r.cudnn_version) + ")"
                                               : std::string("version unknown"));
        if (r.cudnn_cudart_version >= 0)
            text += ", built for CUDA " + cuda_version_text(r.cudnn_cudart_version);
        line(text + "  " + r.cudnn.path);
    } else {
        line("cuDNN   not loaded");
    }
    if (r.cudart.loaded())
        line("runtime CUDA " +
             (r.runtime_version >= 0 ? cuda_version_text(r.runtime_version) : std::string("?")) +
             "  " + r.cudart.path);
    else
        line("runtime not loaded");
    if (r.driver_version > 0)
        line("driver  supports CUDA " + cuda_version_text(r.driver_version));
    else if (r.driver_version == 0)
        line("driver  none (cudaDriverGetVersion reports 0)");
    if (!r.device_name.empty() || r.cc_major >= 0)
        line("device  " + std::to_string(r.device_index) + ": " + r.device_name +
             ", compute capability " + (r.cc_major >= 0 ? cc_text(r.cc_major, r.cc_minor) : "?") +
             " (" + std::to_string(r.device_count) + " device" + (r.device_count == 1 ? "" : "s") +
             ")");
    if (r.devices.size() > 1) {
        std::string all;
        for (const auto& d : r.devices)
            all += (all.empty() ? "" : ", ") + std::to_string(d.index) + ": " + d.name + " (" +
                   (d.cc_major >= 0 ? cc_text(d.cc_major, d.cc_minor) : "?") + ")";
        line("devices " + all);
    }
    if (!r.convolutions.empty()) {
        line("");
        line("convolutions (float NCHW, " + (r.math.empty() ? std::string("default") : r.math) +
             " math, " +
             (r.algorithm_choice == "heuristic" ? "algorithm from cuDNN's heuristics"
                                                : "fixed algorithm") +
             "; pass when max error <= " + format_double("%g", kRelativeTolerance) +
             " x max |reference|):");
        for (const auto& c : r.convolutions) {
            std::string status = !c.ran ? "FAIL " : c.comparison.matched ? "ok   " : "WRONG";
            std::string text = "  " + status + " " + c.shape.describe();
            if (c.ran)
                text += "  " + c.algorithm + " " + format_double("%.3f ms", c.time_ms) +
                        "  rel.err " + format_double("%.2e", c.comparison.relative_error);
            else
                text += "  " + c.error;
            line(text);
        }
    }
    for (const auto& b : r.benchmarks) {
        line("");
        line("benchmark " + b.shape.describe() + " (fastest first):");
        if (!b.error.empty()) line("  " + b.error);
        int rank = 1;
        for (const auto& a : b.algorithms) {
            std::string text = "  " + std::to_string(rank++) + ". " + a.algorithm;
            text.resize(std::max<std::size_t>(text.size(), 30), ' ');
            if (a.status == "CUDNN_STATUS_SUCCESS") {
                text += format_double("%9.3f ms", a.time_ms) + "  workspace " +
                        bytes_text(a.workspace_bytes) + "  " + a.math;
                if (a.verified)
                    text += a.comparison.matched
                                ? "  matches"
                                : "  WRONG (rel.err " +
                                      format_double("%.2e", a.comparison.relative_error) + ")";
                if (!a.error.empty()) text += "  " + a.error;
            } else {
                text += "  " + a.status;
            }
            line(text);
        }
    }
    if (r.nccl.asked) render_nccl(r.nccl, line);
    if (!r.cuda_modules.empty()) {
        line("");
        line("CUDA, cuDNN and NCCL libraries in the process:");
        for (const auto& m : r.cuda_modules)
            line("  " + m.real_path + (m.real_path != m.path ? "  (as " + m.path + ")" : ""));
    }
    if (!r.searched_folders.empty()) {
        line("");
        line("folders searched:");
        for (const auto& f : r.searched_folders)
            line("  " + f.path + "  (" + f.origin + ")");
        for (const auto& e : r.cache_entries)
            line("  ld.so.cache: " + e);
    }
    for (const auto& w : r.warnings)
        line("warning: " + w);
    if (!r.problems.empty()) {
        line("");
        for (const auto& p : r.problems)
            line("problem [" + p.kind + "]: " + p.message);
    }
    line("");
    std::string passed =
        r.cudnn_skipped ? "" : "the convolutions ran on the GPU and matched the CPU reference";
    if (r.nccl.asked)
        passed +=
            std::string(passed.empty() ? "" : "; ") + "NCCL's all-reduce" +
            (r.nccl.ranks > 1 ? " over " + std::to_string(r.nccl.ranks) + " GPUs" : std::string()) +
            " gave the exact sums";
    line(r.ok() ? "result: OK, " + passed : "result: FAILED");
    line("time: " + format_double("%.0f ms", r.timings.total_ms) + " (load " +
         format_double("%.0f", r.timings.load_ms) + ", init " +
         format_double("%.0f", r.timings.init_ms) + ", convolutions " +
         format_double("%.0f", r.timings.convolution_ms) +
         (r.benchmarks.empty() ? std::string()
                               : ", benchmark " + format_double("%.0f", r.timings.benchmark_ms)) +
         (r.nccl.asked ? ", NCCL " + format_double("%.0f", r.timings.nccl_ms) : std::string()) +
         ")");
    return out;
}

} // namespace cvm::probe
