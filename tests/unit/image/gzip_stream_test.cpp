#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include <zlib.h>

#include "image/gzip_stream.h"

using cvm::image::GzipStream;

namespace {

std::string compressed(const std::string& input, unsigned threads, std::size_t piece) {
    std::string out;
    GzipStream gz([&](const unsigned char* d,
                      std::size_t n) { out.append(reinterpret_cast<const char*>(d), n); },
                  threads);
    for (std::size_t at = 0; at < input.size(); at += piece)
        gz.write(input.data() + at, std::min(piece, input.size() - at));
    gz.finish();
    return out;
}

// zlib's own gzip reader, as any other reader would read it: one member, checked CRC and size.
std::string gunzip(const std::string& in) {
    z_stream z{};
    REQUIRE(inflateInit2(&z, 16 + 15) == Z_OK);
    std::string out;
    std::vector<unsigned char> buffer(1 << 16);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = static_cast<uInt>(in.size());
    int rc = Z_OK;
    while (rc == Z_OK) {
        z.next_out = buffer.data();
        z.avail_out = static_cast<uInt>(buffer.size());
        rc = inflate(&z, Z_NO_FLUSH);
        out.append(reinterpret_cast<char*>(buffer.data()), buffer.size() - z.avail_out);
    }
    CHECK(rc == Z_STREAM_END);
    CHECK(z.avail_in == 0); // nothing after the one member
    inflateEnd(&z);
    return out;
}

std::string sample_bytes(std::size_t size) {
    std::mt19937 rng(7);
    std::string s;
    s.reserve(size);
    // Half text that compresses, half noise that does not, across block boundaries.
    while (s.size() < size) {
        if ((s.size() / 300000) % 2)
            s.push_back(static_cast<char>(rng()));
        else
            s += "libcudart.so.13 ";
    }
    s.resize(size);
    return s;
}

} // namespace

TEST_CASE("gzip stream: readable, and the same bytes whatever the threads and write sizes") {
    for (std::size_t size :
         {std::size_t(0), std::size_t(10), GzipStream::kBlock, 3 * GzipStream::kBlock + 12345}) {
        std::string input = sample_bytes(size);
        std::string one = compressed(input, 0, 4096);
        CHECK(gunzip(one) == input);
        CHECK(compressed(input, 3, 1 << 20) == one);
        CHECK(compressed(input, 8, 777) == one);
    }
}

TEST_CASE("gzip stream: the header holds no time, name or system") {
    std::string gz = compressed("hello", 0, 5);
    REQUIRE(gz.size() > 18);
    const unsigned char want[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255};
    CHECK(std::string(gz.data(), 10) == std::string(reinterpret_cast<const char*>(want), 10));
}

TEST_CASE("gzip stream: each block is primed with the 32 KiB before it (pigz's way)") {
    // 16 KiB of noise repeated over three blocks: one copy is stored, the rest are matches, also
    // at the start of the second and third block. Without the window each block would store it
    // again.
    std::string pattern = sample_bytes(700000).substr(310000, 16384);
    std::string input;
    while (input.size() < 3 * GzipStream::kBlock)
        input += pattern;
    std::string gz = compressed(input, 2, 65536);
    CHECK(gunzip(gz) == input);
    // As small as one zlib stream of it (within 1%), where unprimed blocks would add 32 KiB.
    uLongf single = compressBound(static_cast<uLong>(input.size()));
    std::string one(single, '\0');
    REQUIRE(compress2(reinterpret_cast<Bytef*>(&one[0]), &single,
                      reinterpret_cast<const Bytef*>(input.data()),
                      static_cast<uLong>(input.size()), GzipStream::kLevel) == Z_OK);
    CHECK(gz.size() < single + single / 100 + 64);
}

TEST_CASE("gzip stream: a sink that fails is reported, from the header on, whatever the threads") {
    for (int fail_at : {1, 2, 5}) {
        for (unsigned threads : {0u, 3u}) {
            int calls = 0;
            auto run = [&] {
                GzipStream gz(
                    [&](const unsigned char*, std::size_t) {
                        if (++calls == fail_at) throw std::runtime_error("disk full");
                    },
                    threads);
                std::string input = sample_bytes(6 * GzipStream::kBlock);
                gz.write(input.data(), input.size());
                gz.finish();
            };
            CHECK_THROWS_WITH(run(), "disk full");
        }
    }
}
