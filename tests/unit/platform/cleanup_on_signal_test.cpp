// The one signal clean-up registry (platform/cleanup_on_signal.h): files and folders registered
// from many threads go when a signal stops the process, which still dies of that signal; a child
// of fork() neither removes its parent's paths nor swallows the signal. Each case runs in a
// forked process, so this test program's own signal dispositions are untouched.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>
#include <vector>

#include "platform/cleanup_on_signal.h"
#include "test_support.h"

namespace fs = std::filesystem;
using cvm::platform::CleanupOnSignal;
using cvm::platform::Removal;

namespace {

// Not test_support.h's write_file: this one runs in worker threads and forked children, where
// Catch's assertions (write_file's REQUIRE) must not run.
void touch(const fs::path& p) { std::ofstream(p) << "x"; }

// Runs `body` in a child process; returns its wait status.
template <typename Body>
int in_child(Body body) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        // As a fresh process: not Catch's handlers, which would report the signal as a failure.
        for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, SIG_DFL);
        body();
        ::_exit(0);
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    return status;
}

bool died_of(int status, int sig) { return WIFSIGNALED(status) && WTERMSIG(status) == sig; }

} // namespace

TEST_CASE("files registered from many threads are removed on a signal, released ones kept") {
    cvm::test::TempDir tmp;
    const fs::path dir = tmp.path;
    int status = in_child([&] {
        std::vector<std::thread> threads;
        std::atomic<int> ready{0};
        std::vector<std::unique_ptr<CleanupOnSignal>> guards(64);
        for (int t = 0; t < 8; ++t)
            threads.emplace_back([&, t] {
                for (int i = 0; i < 6; ++i) {
                    int n = t * 8 + i;
                    fs::path p = dir / ("f" + std::to_string(n));
                    touch(p);
                    guards[n] = std::make_unique<CleanupOnSignal>(p);
                    if (i % 2) guards[n]->release(); // kept
                }
                ++ready;
            });
        for (auto& th : threads) th.join();
        ::raise(SIGTERM);
        ::_exit(3); // not reached: the process dies of SIGTERM
    });
    CHECK(died_of(status, SIGTERM));
    for (int t = 0; t < 8; ++t)
        for (int i = 0; i < 6; ++i) {
            fs::path p = dir / ("f" + std::to_string(t * 8 + i));
            INFO(p);
            CHECK(fs::exists(p) == (i % 2 == 1));
        }
}

TEST_CASE("a folder is removed after its owner unwinds, and the process dies of the signal") {
    cvm::test::TempDir tmp;
    const fs::path stage = tmp.path / "stage", part = tmp.path / "x.part";
    int status = in_child([&] {
        fs::create_directories(stage / "a" / "b");
        touch(stage / "a" / "b" / "lib.so");
        touch(part);
        CleanupOnSignal file(part);
        CleanupOnSignal tree(stage, Removal::Tree);
        ::kill(::getpid(), SIGINT);
        // Work notices, stops and unwinds: the guard's owner removes the folder and releases it,
        // which ends the process by the signal.
        while (!cvm::platform::interrupted()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        if (fs::exists(part)) ::_exit(4); // files go in the handler itself
        fs::remove_all(stage);
        tree.release();
        ::_exit(5); // not reached
    });
    CHECK(died_of(status, SIGINT));
    CHECK_FALSE(fs::exists(stage));
    CHECK_FALSE(fs::exists(part));
}

TEST_CASE("a folder whose owner does not unwind is removed by the watcher") {
    cvm::test::TempDir tmp;
    const fs::path stage = tmp.path / "stage";
    int status = in_child([&] {
        fs::create_directories(stage / "bin");
        touch(stage / "bin" / "nvcc");
        fs::permissions(stage / "bin", fs::perms::owner_read | fs::perms::owner_exec); // read-only, as archives have
        CleanupOnSignal tree(stage, Removal::Tree);
        ::raise(SIGHUP);
        for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(50)); // busy elsewhere
    });
    CHECK(died_of(status, SIGHUP));
    CHECK_FALSE(fs::exists(stage));
}

TEST_CASE("a forked child removes none of its parent's paths and still dies of a signal") {
    cvm::test::TempDir tmp;
    const fs::path mine = tmp.path / "parent.part", stage = tmp.path / "stage",
                   childs = tmp.path / "child.part";
    int status = in_child([&] {
        touch(mine);
        fs::create_directories(stage);
        CleanupOnSignal file(mine);
        CleanupOnSignal tree(stage, Removal::Tree);
        // A child that never registers anything: the signal kills it, nothing is removed.
        pid_t a = ::fork();
        if (a == 0) {
            ::raise(SIGTERM);
            ::_exit(6);
        }
        int sa = 0;
        ::waitpid(a, &sa, 0);
        if (!died_of(sa, SIGTERM)) ::_exit(10);
        if (!fs::exists(mine) || !fs::exists(stage)) ::_exit(11);
        // A child that registers its own file: only that one goes.
        pid_t b = ::fork();
        if (b == 0) {
            touch(childs);
            CleanupOnSignal own(childs);
            ::raise(SIGINT);
            ::_exit(7);
        }
        int sb = 0;
        ::waitpid(b, &sb, 0);
        if (!died_of(sb, SIGINT)) ::_exit(12);
        if (fs::exists(childs)) ::_exit(13);
        if (!fs::exists(mine) || !fs::exists(stage)) ::_exit(14);
        file.release();
        tree.release();
        ::_exit(0);
    });
    INFO("child status " << status);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(fs::exists(mine));
    CHECK(fs::exists(stage));
}

TEST_CASE("an ignored SIGHUP stays ignored, an earlier handler is chained to") {
    cvm::test::TempDir tmp;
    const fs::path a = tmp.path / "a";
    int status = in_child([&] {
        touch(a);
        std::signal(SIGHUP, SIG_IGN);
        std::signal(SIGTERM, [](int) { ::_exit(9); });
        CleanupOnSignal guard(a);
        ::raise(SIGHUP); // ignored: nothing removed
        if (!fs::exists(a)) ::_exit(8);
        ::raise(SIGTERM);
        ::_exit(0);
    });
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 9);
    CHECK_FALSE(fs::exists(a));
}

TEST_CASE("SIGINT ignored from the start (a background job) still stops the process, cleanly") {
    cvm::test::TempDir tmp;
    const fs::path a = tmp.path / "a";
    int status = in_child([&] {
        touch(a);
        std::signal(SIGINT, SIG_IGN);
        CleanupOnSignal guard(a);
        ::raise(SIGINT);
        ::_exit(0);
    });
    CHECK(died_of(status, SIGINT));
    CHECK_FALSE(fs::exists(a));
}
