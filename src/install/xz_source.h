#pragma once
// liblzma on its own thread(s), feeding libarchive decoded tar bytes through a bounded queue:
// multi-block .xz files (as `xz -T2` writes them) decode on several threads while libarchive
// writes files (libarchive 3.6 decodes on one).
#include <archive.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace cvm::install {

class XzSource {
public:
    // Reads compressed bytes into a buffer: how many, 0 at the end; throws when it cannot.
    using Reader = std::function<std::size_t(char*, std::size_t)>;

    XzSource(const std::filesystem::path& file, unsigned threads,
             std::function<void(std::uint64_t, std::uint64_t)> progress);
    XzSource(const std::filesystem::path& file, Reader read, std::uint64_t total, unsigned threads,
             std::function<void(std::uint64_t, std::uint64_t)> progress);
    ~XzSource();

    static la_ssize_t read_callback(archive* a, void* self, const void** buffer);

    // Decodes what libarchive left unread (the tar trailer) so the whole file's checks are
    // verified; throws on a damaged or truncated stream.
    void drain();

    std::string error();

private:
    struct Block;

    static Reader file_reader(const std::filesystem::path& file);
    la_ssize_t next(archive* a, const void** buffer);
    void finish(const std::string& error);
    std::unique_ptr<Block> take_free();
    bool publish(std::unique_ptr<Block> block);
    void decode();

    std::filesystem::path path_;
    unsigned threads_;
    std::function<void(std::uint64_t, std::uint64_t)> progress_;
    Reader read_;
    std::uint64_t total_ = 0;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<std::unique_ptr<Block>> ready_;
    std::vector<std::unique_ptr<Block>> free_;
    std::unique_ptr<Block> current_;
    bool finished_ = false;
    bool cancelled_ = false;
    std::string error_;
    std::thread worker_;
};

} // namespace cvm::install
