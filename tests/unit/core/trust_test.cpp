#include <catch2/catch.hpp>

#include "config/config.h"
#include "config/program_trust.h"
#include "config/trust.h"
#include "platform/platform.h"
#include "test_support.h"

using namespace cvm;

namespace {

platform::FileMeta meta(std::uint32_t uid, std::uint32_t mode, std::uint32_t gid = 12345) {
    platform::FileMeta m;
    m.type = platform::FileMeta::Type::Directory;
    m.uid = uid;
    m.gid = gid;
    m.mode = mode;
    return m;
}

} // namespace

TEST_CASE("trust: own and root's files pass; others', world- and group-writable ones do not") {
    if (platform::host_os() == platform::Os::Windows) return;
    const std::uint32_t me = platform::effective_uid();
    const std::uint32_t other = me == 4242 ? 4343 : 4242;
    const std::vector<std::uint32_t> none, listed{other};
    CHECK(doubt_of(meta(me, 0755), &none) == Doubt::None);
    CHECK(doubt_of(meta(0, 0644), &none) == Doubt::None);
    CHECK(doubt_of(meta(other, 0755), &none) == Doubt::Owner);
    CHECK(doubt_of(meta(other, 0755), &listed) == Doubt::None);
    // Everybody may write: refused whoever owns it, sticky or not.
    CHECK(doubt_of(meta(me, 0777), &listed) == Doubt::WorldWritable);
    CHECK(doubt_of(meta(0, 01777), &listed) == Doubt::WorldWritable);
    CHECK(doubt_of(meta(other, 0757), &listed) == Doubt::WorldWritable);
    // Group-writable: only for a listed owner (gid 12345 is nobody's private group).
    CHECK(doubt_of(meta(other, 0775), &listed) == Doubt::None);
    CHECK(doubt_of(meta(0, 0775), &none) == Doubt::GroupWritable);
    CHECK(doubt_of(meta(other, 0775), &none) == Doubt::Owner);
}

TEST_CASE("program trust: a program in a folder anyone may write, or reached through one, is skipped") {
    if (platform::host_os() == platform::Os::Windows) return;
    namespace fs = std::filesystem;
    cvm::test::TempDir t("program-trust");
    auto program = [](const fs::path& p) {
        platform::write_file_atomically(p, "#!/bin/sh\nexit 0\n");
        fs::permissions(p, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                               fs::perms::others_read | fs::perms::others_exec);
    };
    const fs::path good = t.mkdir("good"), open = t.mkdir("open"), links = t.mkdir("links");
    fs::permissions(good, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
    fs::permissions(links, fs::status(good).permissions());
    program(good / "tool");
    program(open / "tool");
    fs::permissions(open, fs::perms::all);
    fs::create_symlink(open / "tool", links / "tool");
    CHECK(program_doubt(good / "tool").empty());
    CHECK_THAT(program_doubt(open / "tool"),
               Catch::Contains("its folder " + open.u8string()) && Catch::Contains("every user"));
    CHECK_THAT(program_doubt(links / "tool"), Catch::Contains("a folder its link leads through"));
    CHECK(program_doubt(t / "missing").empty());
    // The lookup goes on past the untrusted ones.
    const std::string list = open.u8string() + ":" + links.u8string() + ":" + good.u8string();
    CHECK(find_trusted_program("tool", list) == good / "tool");
    CHECK(find_trusted_program("tool", open.u8string()).empty());
    // A world-writable program in a trusted folder.
    fs::permissions(good / "tool", fs::perms::all);
    CHECK_THAT(program_doubt(good / "tool"), Catch::Contains("it is writable by every user"));
}

TEST_CASE("trust: messages name the path, the owner and what to run") {
    std::string m = distrust_message("the store folder", "/nfs/cvm/cuda", meta(0, 0777), Doubt::WorldWritable);
    CHECK_THAT(m, Catch::Contains("refusing the store folder /nfs/cvm/cuda") && Catch::Contains("uid 0") &&
                      Catch::Contains("chmod o-w /nfs/cvm/cuda"));
    m = distrust_message("the config file", "/x.toml", meta(4242, 0644), Doubt::Owner);
    CHECK_THAT(m, Catch::Contains("owned by") && Catch::Contains("4242") && Catch::Contains("trusted_owners"));
    m = distrust_message("the machine config file", "/x.toml", meta(4242, 0644), Doubt::Owner, false);
    CHECK_THAT(m, !Catch::Contains("trusted_owners"));
}

TEST_CASE("config: trusted_owners takes names and uids, nothing else") {
    Config c = parse_config("trusted_owners = [\"cudaadmin\", 1234]\n", "/etc/cvm/config.toml");
    CHECK(c.trusted_owners == std::vector<std::string>{"cudaadmin", "1234"});
    auto error = [](const std::string& text) {
        try {
            parse_config(text, "/etc/cvm/config.toml");
        } catch (const ConfigError& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    CHECK_THAT(error("trusted_owners = \"root\"\n"), Catch::Contains("/etc/cvm/config.toml:1") &&
                                                         Catch::Contains("list of user names or uids"));
    CHECK_THAT(error("trusted_owners = [-1]\n"), Catch::Contains("user names in quotes or uids"));
    CHECK_THAT(error("trusted_owners = [\"\"]\n"), Catch::Contains("user names in quotes or uids"));
}
