// The probe's report as text for a person: render_text.
#include "report.h"

#include <cstdio>
#include <functional>

namespace cvm::probe {
namespace {

std::string format_double(const char* format, double value) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, format, value);
    return buffer;
}

std::string bytes_text(std::size_t bytes) {
    if (bytes < 1024) return std::to_string(bytes) + " B";
    if (bytes < 1024 * 1024) return format_double("%.1f KiB", static_cast<double>(bytes) / 1024);
    return format_double("%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
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
