#include "nccl_probe.h"
#include "report.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace cvm::probe;

TEST_CASE("NCCL probe: the sizes, doubling; one size for one GPU", "[probe][nccl]") {
    const std::size_t mib = std::size_t(1) << 20;
    auto sizes = nccl_sizes(8 * mib, 1024 * mib, 8);
    CHECK(sizes == std::vector<std::size_t>{8 * mib, 16 * mib, 32 * mib, 64 * mib, 128 * mib,
                                            256 * mib, 512 * mib, 1024 * mib});
    CHECK(nccl_sizes(8 * mib, 1024 * mib, 1) == std::vector<std::size_t>{8 * mib});
    // A maximum that is no power-of-two multiple of the minimum still ends the list.
    CHECK(nccl_sizes(4096, 10000, 2) == std::vector<std::size_t>{4096, 8192, 10000});
    CHECK(nccl_sizes(4096, 4096, 2) == std::vector<std::size_t>{4096});
    // Whole floats only.
    CHECK(nccl_sizes(4097, 8195, 2) == std::vector<std::size_t>{4096, 8192});
}

TEST_CASE("NCCL probe: bus bandwidth as nccl-tests define it", "[probe][nccl]") {
    CHECK(bus_bandwidth(100, 2) == Approx(100));
    CHECK(bus_bandwidth(100, 8) == Approx(175));
    CHECK(bus_bandwidth(90, 3) == Approx(120));
    CHECK(bus_bandwidth(100, 1) == 0);
}

TEST_CASE("NCCL probe: the links NCCL's log names", "[probe][nccl]") {
    const std::string log =
        "h:1:1 [0] NCCL INFO NCCL version 2.28.9+cuda13.0\n"
        "h:1:1 [0] NCCL INFO Channel 00/02 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
        "h:1:1 [1] NCCL INFO Channel 00/02 : 1[1] -> 0[0] via P2P/CUMEM/read\n"
        "h:1:1 [0] NCCL INFO Channel 01/02 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
        // older releases: no channel count, bus ids in the brackets
        "h:1:1 [0] NCCL INFO Channel 00 : 2[1b000] -> 3[1c000] via P2P/IPC\n"
        // network connections say which side
        "h:1:1 [0] NCCL INFO Channel 00/0 : 4[0] -> 5[0] [send] via NET/IB/0\r\n"
        "h:1:1 [0] NCCL INFO Channel 02/0 : 0 1\n"                   // a ring, no link
        "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via\n"      // cut short
        "h:1:1 [0] NCCL INFO Channel xx/0 : 0[0] -> 1[1] via SHM\n"; // not a number
    auto links = parse_nccl_links(log);
    REQUIRE(links.size() == 4);
    CHECK(links[0].from == 0);
    CHECK(links[0].to == 1);
    CHECK(links[0].transport == "P2P/CUMEM/read");
    CHECK(links[0].channels == 2);
    CHECK(links[1].from == 1);
    CHECK(links[1].channels == 1);
    CHECK(links[2].transport == "P2P/IPC");
    CHECK(links[2].from == 2);
    CHECK(links[3].transport == "NET/IB/0");
    CHECK(links[3].to == 5);
    CHECK(parse_nccl_links("").empty());
}

TEST_CASE("NCCL probe: the report's NCCL part and its verdict", "[probe][nccl][report]") {
    Report r;
    r.cudnn_skipped = true;
    CHECK_FALSE(r.ok()); // nothing was probed
    r.nccl.asked = true;
    CHECK_FALSE(r.ok()); // no all-reduce ran
    r.nccl.ranks = 2;
    r.nccl.library.name = "libnccl.so.2";
    r.nccl.library.path = "/opt/nccl/lib/libnccl.so.2.28.9";
    r.nccl.version = "2.28.9";
    r.nccl.version_code = 22809;
    NcclSize s;
    s.bytes = 8 << 20;
    s.iterations = 20;
    s.time_us = 100;
    s.algbw_gbs = 83.9;
    s.busbw_gbs = 83.9;
    s.checked = 2 * (2 << 20);
    r.nccl.sizes.push_back(s);
    CHECK(r.ok());
    auto j = nlohmann::json::parse(render_json(r));
    CHECK(j["ok"] == true);
    CHECK(j["cudnn_skipped"] == true);
    CHECK(j["nccl"]["all_reduce"][0]["bytes"] == 8 << 20);
    CHECK(j["nccl"]["all_reduce"][0]["matched"] == true);
    CHECK(j["nccl"]["one_gpu"] == false);
    auto text = render_text(r);
    CHECK(text.find("  8 MiB") != std::string::npos);
    CHECK(text.find("NCCL    2.28.9 (22809)  /opt/nccl/lib/libnccl.so.2.28.9") !=
          std::string::npos);
    CHECK(text.find("NCCL's all-reduce over 2 GPUs gave the exact sums") != std::string::npos);

    r.nccl.sizes[0].mismatched = 1;
    CHECK_FALSE(r.ok());
    CHECK(render_text(r).find("WRONG (1 of ") != std::string::npos);

    Report without;
    CHECK(nlohmann::json::parse(render_json(without))["nccl"].is_null());
}
