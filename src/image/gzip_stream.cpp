#include "image/gzip_stream.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <new>
#include <stdexcept>
#include <thread>
#include <vector>

#include <zlib.h>

namespace cvm::image {

// Named, not anonymous: GzipStream::Impl holds Blocks, and a unity build (CMakeLists.txt) makes
// this file part of a larger one where an anonymous type in a class of the header is an error.
namespace gzip_blocks {

constexpr std::size_t kWindow = 32768; // deflate's window: the dictionary a block is primed with

struct Block {
    std::vector<unsigned char> input;
    std::vector<unsigned char> dictionary; // the last kWindow bytes before `input`
    bool last = false;
    std::vector<unsigned char> output;
    bool done = false;
    std::exception_ptr error;
};

// Raw deflate of one block. A block that is not the last ends with a sync flush (an empty stored
// block) so the next one starts on a byte boundary and the outputs can be joined as they are.
void compress(Block& b) {
    z_stream z{};
    if (deflateInit2(&z, GzipStream::kLevel, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        throw std::bad_alloc();
    struct End {
        z_stream* z;
        ~End() { deflateEnd(z); }
    } end{&z};
    if (!b.dictionary.empty() &&
        deflateSetDictionary(&z, b.dictionary.data(), static_cast<uInt>(b.dictionary.size())) !=
            Z_OK)
        throw std::runtime_error("zlib refused a dictionary");
    z.next_in = b.input.data();
    z.avail_in = static_cast<uInt>(b.input.size());
    b.output.resize(deflateBound(&z, static_cast<uLong>(b.input.size())) + 16);
    std::size_t used = 0;
    for (;;) {
        z.next_out = b.output.data() + used;
        z.avail_out = static_cast<uInt>(b.output.size() - used);
        int rc = deflate(&z, b.last ? Z_FINISH : Z_SYNC_FLUSH);
        used = b.output.size() - z.avail_out;
        if (rc == Z_STREAM_ERROR) throw std::runtime_error("zlib could not compress a block");
        bool complete = b.last ? rc == Z_STREAM_END : (z.avail_in == 0 && z.avail_out > 0);
        if (complete) break;
        b.output.resize(b.output.size() * 2); // never with deflateBound's room; kept for safety
    }
    b.output.resize(used);
}

} // namespace gzip_blocks

using namespace gzip_blocks;

struct GzipStream::Impl {
    Sink sink;
    std::vector<std::thread> workers;
    std::mutex mutex;
    std::condition_variable work_ready, block_done;
    std::deque<std::shared_ptr<Block>> queue;   // waiting for a worker
    std::deque<std::shared_ptr<Block>> pending; // in stream order, until written to the sink
    bool stopping = false;
    std::vector<unsigned char> current; // the block being filled
    std::vector<unsigned char> window;  // the last kWindow bytes of the blocks handed on
    uLong crc = crc32(0L, Z_NULL, 0);
    bool finished = false;

    void work() {
        for (;;) {
            std::shared_ptr<Block> b;
            {
                std::unique_lock<std::mutex> lock(mutex);
                work_ready.wait(lock, [&] { return stopping || !queue.empty(); });
                if (queue.empty()) return;
                b = queue.front();
                queue.pop_front();
            }
            try {
                compress(*b);
            } catch (...) {
                b->error = std::current_exception();
            }
            {
                std::lock_guard<std::mutex> lock(mutex);
                b->done = true;
            }
            block_done.notify_all();
        }
    }

    // Writes the finished blocks at the front of `pending` to the sink, first waiting (in order)
    // until no more than `keep_at_most` blocks are pending.
    void drain(std::size_t keep_at_most) {
        for (;;) {
            std::shared_ptr<Block> b;
            {
                std::unique_lock<std::mutex> lock(mutex);
                if (pending.empty()) return;
                if (pending.size() > keep_at_most)
                    block_done.wait(lock, [&] { return pending.front()->done; });
                else if (!pending.front()->done)
                    return;
                b = pending.front();
                pending.pop_front();
            }
            if (b->error) std::rethrow_exception(b->error);
            sink(b->output.data(), b->output.size());
        }
    }

    void hand_on(bool last) {
        auto b = std::make_shared<Block>();
        b->input.swap(current);
        b->dictionary = window;
        b->last = last;
        // The next block's dictionary: the last kWindow bytes of everything so far.
        if (b->input.size() >= kWindow) {
            window.assign(b->input.end() - kWindow, b->input.end());
        } else {
            window.insert(window.end(), b->input.begin(), b->input.end());
            if (window.size() > kWindow) window.erase(window.begin(), window.end() - kWindow);
        }
        current.clear();
        current.reserve(kBlock);
        if (workers.empty()) {
            compress(*b);
            sink(b->output.data(), b->output.size());
            return;
        }
        {
            std::lock_guard<std::mutex> lock(mutex);
            pending.push_back(b);
            queue.push_back(b);
        }
        work_ready.notify_one();
        drain(2 * workers.size());
    }
};

GzipStream::GzipStream(Sink sink, unsigned threads) : impl_(std::make_unique<Impl>()) {
    impl_->sink = std::move(sink);
    impl_->current.reserve(kBlock);
    // The member header: no file name, no time (0), no extra flags, system "unknown" (255).
    // Written before any thread starts, so a sink that throws here leaves none to join.
    static const unsigned char header[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255};
    impl_->sink(header, sizeof header);
    for (unsigned i = 0; i < threads; ++i)
        impl_->workers.emplace_back([this] { impl_->work(); });
}

GzipStream::~GzipStream() {
    {
        std::lock_guard<std::mutex> lock(impl_->mutex);
        impl_->stopping = true;
        impl_->queue.clear();
    }
    impl_->work_ready.notify_all();
    for (auto& t : impl_->workers)
        t.join();
}

void GzipStream::write(const void* data, std::size_t size) {
    const auto* p = static_cast<const unsigned char*>(data);
    total_in_ += size;
    while (size > 0) {
        std::size_t room = kBlock - impl_->current.size();
        std::size_t n = std::min(room, size);
        impl_->crc = crc32(impl_->crc, p, static_cast<uInt>(n));
        impl_->current.insert(impl_->current.end(), p, p + n);
        p += n;
        size -= n;
        if (impl_->current.size() == kBlock) impl_->hand_on(false);
    }
}

void GzipStream::finish() {
    if (impl_->finished) return;
    impl_->finished = true;
    impl_->hand_on(true);
    impl_->drain(0);
    unsigned char trailer[8];
    std::uint32_t crc = static_cast<std::uint32_t>(impl_->crc);
    std::uint32_t isize = static_cast<std::uint32_t>(total_in_ & 0xffffffffu);
    for (int i = 0; i < 4; ++i) {
        trailer[i] = static_cast<unsigned char>(crc >> (8 * i));
        trailer[4 + i] = static_cast<unsigned char>(isize >> (8 * i));
    }
    impl_->sink(trailer, sizeof trailer);
}

unsigned GzipStream::default_threads() {
    unsigned n = std::thread::hardware_concurrency();
    if (n <= 1) return 0;
    return std::min(n, 16u);
}

} // namespace cvm::image
