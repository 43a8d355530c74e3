// The probe's report as JSON (`cvm probe --json`, what cvm reads back): render_json.
#include "report.h"

#include "json_writer.h"

namespace cvm::probe {
namespace {

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

} // namespace

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

} // namespace cvm::probe
