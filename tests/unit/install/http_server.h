#pragma once
// Starts tests/integration/http_server.py on loopback for the download tests.
#include "test_util.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace cvm::install::test {

class HttpServer {
public:
    HttpServer(const fs::path& root, const std::vector<std::string>& rules, const fs::path& log) {
        int fds[2];
        REQUIRE(::pipe(fds) == 0);
        std::vector<std::string> args = {
            "python3",   (repo_root() / "tests/integration/http_server.py").string(),
            "--root",    root.string(),
            "--timeout", "120",
            "--log",     log.string()};
        for (const auto& r : rules) {
            args.push_back("--rule");
            args.push_back(r);
        }
        pid_ = ::fork();
        REQUIRE(pid_ >= 0);
        if (pid_ == 0) {
            ::dup2(fds[1], 1);
            ::close(fds[0]);
            ::close(fds[1]);
            std::vector<char*> argv;
            for (auto& a : args)
                argv.push_back(a.data());
            argv.push_back(nullptr);
            ::execvp("python3", argv.data());
            ::_exit(127);
        }
        ::close(fds[1]);
        std::string line;
        char c;
        while (::read(fds[0], &c, 1) == 1 && c != '\n')
            line += c;
        ::close(fds[0]);
        REQUIRE_FALSE(line.empty());
        port_ = std::stoi(line);
    }
    ~HttpServer() {
        if (pid_ > 0) {
            ::kill(pid_, SIGTERM);
            int status = 0;
            ::waitpid(pid_, &status, 0);
        }
    }
    HttpServer(const HttpServer&) = delete;
    HttpServer& operator=(const HttpServer&) = delete;
    std::string url(const std::string& path) const {
        return "http://127.0.0.1:" + std::to_string(port_) + "/" + path;
    }

private:
    pid_t pid_ = -1;
    int port_ = 0;
};

} // namespace cvm::install::test
