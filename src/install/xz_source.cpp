// The threaded xz decoder (xz_source.h).
#include "install/xz_source.h"

#include "install/archive_handles.h"
#include "install/error.h"

#include <lzma.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <fstream>

namespace cvm::install {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kXzInBlock = 4 << 20;  // compressed bytes handed to liblzma at once
constexpr std::size_t kXzOutBlock = 1 << 20; // decoded bytes handed to libarchive at once
constexpr std::size_t kXzQueueDepth = 8;     // decoded blocks in flight

} // namespace

struct XzSource::Block {
    std::vector<std::uint8_t> data = std::vector<std::uint8_t>(kXzOutBlock);
    std::size_t size = 0;
};

XzSource::XzSource(const fs::path& file, unsigned threads,
                   std::function<void(std::uint64_t, std::uint64_t)> progress)
    : XzSource(file, file_reader(file), 0, threads, std::move(progress)) {}
XzSource::XzSource(const fs::path& file, Reader read, std::uint64_t total, unsigned threads,
                   std::function<void(std::uint64_t, std::uint64_t)> progress)
    : path_(file), threads_(threads), progress_(std::move(progress)), read_(std::move(read)) {
    std::error_code ec;
    total_ = total != 0 ? total : fs::file_size(file, ec);
    if (ec) total_ = 0;
    for (std::size_t i = 0; i < kXzQueueDepth + 2; ++i)
        free_.push_back(std::make_unique<Block>());
    worker_ = std::thread([this] { decode(); });
}

XzSource::~XzSource() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        cancelled_ = true;
    }
    changed_.notify_all();
    if (worker_.joinable()) worker_.join();
}

la_ssize_t XzSource::read_callback(archive* a, void* self, const void** buffer) {
    return static_cast<XzSource*>(self)->next(a, buffer);
}

void XzSource::drain() {
    const void* buffer = nullptr;
    while (next(nullptr, &buffer) > 0) {
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (!error_.empty()) fail_input(error_);
}

std::string XzSource::error() {
    std::lock_guard<std::mutex> lock(mutex_);
    return error_;
}

XzSource::Reader XzSource::file_reader(const fs::path& file) {
    auto in = std::make_shared<std::ifstream>(file, std::ios::binary);
    if (!*in) fail_operation("cannot read " + file.string() + ": " + std::strerror(errno));
    return [in, file](char* buffer, std::size_t size) {
        in->read(buffer, static_cast<std::streamsize>(size));
        if (in->bad()) fail_operation("cannot read " + file.string() + ": I/O error");
        return static_cast<std::size_t>(std::max<std::streamsize>(in->gcount(), 0));
    };
}

la_ssize_t XzSource::next(archive* a, const void** buffer) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (current_) {
        free_.push_back(std::move(current_));
        changed_.notify_all();
    }
    changed_.wait(lock, [&] { return !ready_.empty() || finished_; });
    if (!ready_.empty()) {
        current_ = std::move(ready_.front());
        ready_.pop_front();
        changed_.notify_all();
        *buffer = current_->data.data();
        return static_cast<la_ssize_t>(current_->size);
    }
    if (!error_.empty()) {
        if (a != nullptr) archive_set_error(a, EINVAL, "%s", error_.c_str());
        return -1;
    }
    return 0;
}

void XzSource::finish(const std::string& error) {
    std::lock_guard<std::mutex> lock(mutex_);
    finished_ = true;
    error_ = error;
    changed_.notify_all();
}

std::unique_ptr<XzSource::Block> XzSource::take_free() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return !free_.empty() || cancelled_; });
    if (cancelled_) return nullptr;
    auto block = std::move(free_.back());
    free_.pop_back();
    block->size = 0;
    return block;
}

bool XzSource::publish(std::unique_ptr<Block> block) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return ready_.size() < kXzQueueDepth || cancelled_; });
    if (cancelled_) return false;
    ready_.push_back(std::move(block));
    changed_.notify_all();
    return true;
}

void XzSource::decode() {
    lzma_stream stream = LZMA_STREAM_INIT;
    lzma_mt mt{};
    mt.flags = LZMA_CONCATENATED | LZMA_FAIL_FAST;
    mt.threads = std::max(1u, threads_);
    // Parallel decoding keeps whole blocks in memory; allow a quarter of RAM for it, and
    // never refuse a file for memory reasons (it then decodes on one thread).
    std::uint64_t physmem = lzma_physmem();
    mt.memlimit_threading = std::max<std::uint64_t>(physmem / 4, 256ULL << 20);
    mt.memlimit_stop = UINT64_MAX;
    if (lzma_stream_decoder_mt(&stream, &mt) != LZMA_OK) {
        finish(display(path_) + ": liblzma could not start a decoder");
        return;
    }
    std::vector<std::uint8_t> input(kXzInBlock);
    std::unique_ptr<Block> out = take_free();
    bool eof = false;
    std::uint64_t consumed = 0;
    std::string error;
    while (out) {
        if (stream.avail_in == 0 && !eof) {
            std::size_t got = 0;
            try {
                got = read_(reinterpret_cast<char*>(input.data()), input.size());
            } catch (const std::exception& e) {
                error = e.what();
                break;
            }
            if (got == 0) eof = true;
            stream.next_in = input.data();
            stream.avail_in = got;
            consumed += stream.avail_in;
            if (progress_) progress_(consumed, total_);
        }
        stream.next_out = out->data.data() + out->size;
        stream.avail_out = out->data.size() - out->size;
        lzma_ret ret = lzma_code(&stream, eof && stream.avail_in == 0 ? LZMA_FINISH : LZMA_RUN);
        out->size = out->data.size() - stream.avail_out;
        if (ret == LZMA_STREAM_END) {
            if (out->size > 0) publish(std::move(out));
            out.reset();
            break;
        }
        if (ret != LZMA_OK) {
            switch (ret) {
            case LZMA_MEM_ERROR:
                error = display(path_) + ": out of memory while decoding xz";
                break;
            case LZMA_FORMAT_ERROR:
                error = display(path_) + " is not an xz file";
                break;
            case LZMA_BUF_ERROR:
                error = display(path_) + " is truncated (the xz stream ends early); "
                                         "download it again";
                break;
            default:
                error = display(path_) + " is damaged (xz data error); download it again";
            }
            break;
        }
        if (out->size == out->data.size()) {
            if (!publish(std::move(out))) break;
            out = take_free();
        }
    }
    lzma_end(&stream);
    finish(error);
}

} // namespace cvm::install
