#include <catch2/catch.hpp>

#include <cstdlib>
#include <optional>

#include "config/config.h"
#include "text/toml_input.h"
#include <string_view>
#include "store/store.h"
#include "test_support.h"
#include "platform/platform.h"

using namespace cvm;

namespace {

std::string error_of(const std::string& text) {
    try {
        parse_config(text, "/etc/cvm/config.toml");
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "accepted";
}

} // namespace

TEST_CASE("config: store_path lists absolute folders; ~/ is the home folder") {
    Config c = parse_config("# shared stores\nstore_path = [\n  \"/nfs/cvm\",\n  \"/opt/a/../b\", # team\n  \"~/s\",\n]\n",
                            "config.toml");
    REQUIRE(c.store_path.size() == 3);
    CHECK(c.store_path[0] == fs::path("/nfs/cvm"));
    CHECK(c.store_path[1] == fs::path("/opt/b"));
    CHECK(c.store_path[2] == (platform::home_dir() / "s").lexically_normal());
    CHECK(parse_config("", "x").store_path.empty());
    CHECK(parse_config("\xEF\xBB\xBFstore_path = []\r\n", "x").store_path.empty());
}

TEST_CASE("config: mistakes are refused with the file and line") {
    CHECK_THAT(error_of("\nstore_paths = [\"/a\"]\n"),
               Catch::Contains("/etc/cvm/config.toml:2") && Catch::Contains("unknown setting 'store_paths'") &&
                   Catch::Contains("store_path"));
    CHECK_THAT(error_of("store_path = \"/a\"\n"),
               Catch::Contains(":1") && Catch::Contains("must be a list of folders"));
    CHECK_THAT(error_of("store_path = [\n\"/a\",\n\"relative/b\"]\n"),
               Catch::Contains(":3") && Catch::Contains("'relative/b' is relative"));
    CHECK_THAT(error_of("store_path = [1]\n"), Catch::Contains(":1") && Catch::Contains("in quotes"));
    CHECK_THAT(error_of("store_path = [\"\"]\n"), Catch::Contains("in quotes"));
    CHECK_THAT(error_of("\n\nstore_path = [\"/a\"\n"),
               Catch::Contains("/etc/cvm/config.toml:") && Catch::Contains("TOML"));
    CHECK_THAT(error_of("[store]\npath = [\"/a\"]\n"), Catch::Contains("unknown setting 'store'"));
}

namespace {

// Sets (or with nullptr, unsets) a variable for one scope.
struct ScopedEnv {
    std::string name;
    std::optional<std::string> saved;
    ScopedEnv(const char* n, const char* value) : name(n), saved(platform::get_env(n)) {
        if (value) ::setenv(n, value, 1);
        else ::unsetenv(n);
    }
    ~ScopedEnv() {
        if (saved) ::setenv(name.c_str(), saved->c_str(), 1);
        else ::unsetenv(name.c_str());
    }
};

} // namespace

TEST_CASE("config: the user's and the machine's files add read-only stores after CVM_ROOT") {
    cvm::test::TempDir t("config");
    ScopedEnv root("CVM_ROOT", (t.path / "root").c_str());
    ScopedEnv store_path("CVM_STORE_PATH", (t.path / "from-variable").c_str());
    ScopedEnv xdg("XDG_CONFIG_HOME", (t.path / "xdg").c_str());
    ScopedEnv user("CVM_CONFIG", nullptr);
    ScopedEnv system("CVM_SYSTEM_CONFIG", (t.path / "etc.toml").c_str());
    CHECK(config_files() == std::vector<fs::path>{t.path / "xdg" / "cvm" / "config.toml", t.path / "etc.toml"});
    // Neither file exists yet.
    CHECK(Store::from_environment().layers() == std::vector<fs::path>{t.path / "root", t.path / "from-variable"});
    cvm::test::write_file(t.path / "xdg" / "cvm" / "config.toml",
                          "store_path = [\"" + (t.path / "mine").string() + "\", \"" +
                              (t.path / "from-variable").string() + "\"]\n");
    cvm::test::write_file(t.path / "etc.toml", "store_path = [\"" + (t.path / "cluster").string() + "\"]\n");
    CHECK(Store::from_environment().layers() ==
          std::vector<fs::path>{t.path / "root", t.path / "from-variable", t.path / "mine", t.path / "cluster"});
    {
        ScopedEnv off("CVM_SYSTEM_CONFIG", "");
        CHECK(config_files() == std::vector<fs::path>{t.path / "xdg" / "cvm" / "config.toml"});
        CHECK(Store::from_environment().layers().size() == 3);
    }
    cvm::test::write_file(t.path / "etc.toml", "store_path = [\"cluster\"]\n");
    CHECK_THROWS_WITH(Store::from_environment(),
                      Catch::Contains((t.path / "etc.toml").string() + ":1") && Catch::Contains("relative"));
}

TEST_CASE("config: download limits; variables win over the user's file, which wins over the machine's") {
    Config c = parse_config("[download]\nmin_rate = \"10k\"\nrate_window = 5\nmax_size = \"1.5G\"\n"
                            "deadline_rate = 4096\n",
                            "config.toml");
    CHECK(c.download.min_rate == std::uint64_t{10240});
    CHECK(c.download.rate_window == 5L);
    CHECK(c.download.max_size == std::uint64_t{3} << 29);
    CHECK(c.download.deadline_rate == std::uint64_t{4096});
    CHECK_FALSE(c.download.deadline);
    CHECK_THAT(error_of("[download]\nmin_rates = 1\n"),
               Catch::Contains("config.toml:2") && Catch::Contains("download.min_rates") &&
                   Catch::Contains("min_rate, rate_window"));
    CHECK_THAT(error_of("[download]\nrate_window = \"10k\"\n"),
               Catch::Contains(":2") && Catch::Contains("seconds"));
    CHECK_THAT(error_of("[download]\nmin_rate = -1\n"), Catch::Contains("k, M, G"));
    CHECK_THAT(error_of("download = 3\n"), Catch::Contains(":1") && Catch::Contains("[download]"));
    CHECK_FALSE(parse_byte_amount("10x"));
    CHECK_FALSE(parse_byte_amount(".5k"));
    CHECK(parse_byte_amount("2M") == std::uint64_t{2} << 20);

    cvm::test::TempDir t("config");
    ScopedEnv user("CVM_CONFIG", (t.path / "user.toml").c_str());
    ScopedEnv system("CVM_SYSTEM_CONFIG", (t.path / "etc.toml").c_str());
    ScopedEnv rate("CVM_DOWNLOAD_MIN_RATE", nullptr);
    ScopedEnv window("CVM_DOWNLOAD_RATE_WINDOW", nullptr);
    cvm::test::write_file(t.path / "user.toml", "[download]\nmin_rate = 100\n");
    cvm::test::write_file(t.path / "etc.toml", "[download]\nmin_rate = 200\nrate_window = 7\n");
    DownloadSettings s = download_settings();
    CHECK(s.min_rate == std::uint64_t{100});
    CHECK(s.rate_window == 7L);
    {
        ScopedEnv set("CVM_DOWNLOAD_MIN_RATE", "1k");
        CHECK(download_settings().min_rate == std::uint64_t{1024});
    }
    ScopedEnv bad("CVM_DOWNLOAD_RATE_WINDOW", "soon");
    CHECK_THROWS_WITH(download_settings(),
                      Catch::Contains("CVM_DOWNLOAD_RATE_WINDOW=\"soon\"") && Catch::Contains("seconds"));
}

TEST_CASE("TOML input: toml++ only ever sees ASCII; strings keep their values, lines their numbers") {
    auto problem = [](std::string_view text) {
        std::string out;
        auto p = ascii_toml(text, out);
        return p ? std::to_string(p->line) + ": " + p->what : std::string();
    };
    auto ascii = [](std::string_view text) {
        std::string out;
        REQUIRE_FALSE(ascii_toml(text, out));
        for (unsigned char c : out) REQUIRE(c < 0x80);
        return out;
    };
    // Inputs the fuzzers found (toml++ 3.3 reaches __builtin_unreachable on them).
    CHECK(problem("\xEF\xBB\xBB#") == "1: a non-ASCII character outside quotes");
    CHECK(problem("\n\xEF\xBB\xBE") == "2: a non-ASCII character outside quotes");
    CHECK(problem("s = \"\"\"\\\n\xCC\xAA\"\"\"\n") == "2: a non-ASCII character in a multi-line string");
    CHECK(problem("s = '''\n\xC2\xA7'''\n") == "2: a non-ASCII character in a multi-line string");
    CHECK(problem("a = 1\nb = 2 \xC2\xA0\n") == "2: a non-ASCII character outside quotes");
    CHECK(problem("a = \"\\\xC2\xA7\"") == "1: a backslash before a non-ASCII character");
    CHECK(problem("a = \"\xC3\"\n") == "1: text that is not UTF-8");
    CHECK(problem("a = \"\xED\xA0\x80\"\n") == "1: text that is not UTF-8"); // a surrogate
    CHECK(problem("a = \"\xC0\xAF\"\n") == "1: text that is not UTF-8");     // overlong
    // A table header without a key: toml++ 3.3 asserts one follows (a Debug build aborted).
    const std::string headerless = "a table header without a name (write [name] or [[name]])";
    for (const char* text : {"[!]\n", "[[!]]\n", "[ #]\n", "[\n", "[[[a]]]\n", "[[ [a]]]\n"})
        CHECK(problem(text) == "1: " + headerless);
    CHECK(problem("a = 1\n  [\t!]\n") == "2: " + headerless);
    CHECK(problem("s = \"\"\"\n[!]\n\"\"\"\n# x\n[!]\n") == "5: " + headerless);
    // Arrays are not headers; "[ [" is an error toml++ reports itself.
    CHECK(ascii("a = [\n  [+1],\n  [{b = 1}],\n  [ # c\n 2]]\n[t]\n") ==
          "a = [\n  [+1],\n  [{b = 1}],\n  [ # c\n 2]]\n[t]\n");
    CHECK(problem("[ [a]]\n").empty());
    // A "}" where an array expects a value: toml++ 3.3 asserts there is none.
    const std::string brace = "a '}' where an array expects a value or ']'";
    for (const char* text : {"s=[}", "a = [1, }]", "a = [[}]]", "a = {b = [}]}"}) CHECK(problem(text) == "1: " + brace);
    CHECK(problem("a = [1,\n# c\n}]\n") == "3: " + brace);
    CHECK(problem("a = [{}}]").empty()); // toml++ says so
    // A date, a space and one digit: toml++ 3.3 scans for the rest of a time and asserts it is there.
    const std::string date = "a date followed by a lone digit (a time is written HH:MM:SS)";
    for (const char* text : {"a = 2020-01-01 0\n", "a = 2020-01-01 0}", "a = [2020-01-01 0]", "a = {b = 2020-01-01 1 }",
                             "a = 2020_-01-01 0#", "a=7060-1[-0e 0}77"})
        CHECK(problem(text) == "1: " + date);
    CHECK(problem("x = 1\na = [\n# c\n1979-05-27 7,\n]\n") == "4: " + date);
    CHECK(problem("a = 2020-01-01 0").empty()); // toml++ says so
    CHECK(ascii("a = 2020-01-01\nb = [1979-05-27 07:32:00Z, 1]\n") == "a = 2020-01-01\nb = [1979-05-27 07:32:00Z, 1]\n");
    CHECK(ascii("a = [\n  \"}\", # ]\n  {b = [1]}, {},\n]\n") == "a = [\n  \"}\", # ]\n  {b = [1]}, {},\n]\n");
    CHECK_THROWS_WITH(parse_config("[!]\n", "/etc/cvm/config.toml"),
                      Catch::Contains("/etc/cvm/config.toml:1: " + headerless));
    // Quotes inside bare tokens (invalid TOML) still give toml++ nothing but ASCII.
    ascii("sth =0[\"\xEF\xB7\xBF]\nt?.% ");
    ascii("lock_vc = 3u-aaa.1\"a'.''.'$eaa\xEF\xBB\xB6x");
    // Values: escapes for the letters, literal strings as basic ones, comments without letters.
    CHECK(ascii("\xEF\xBB\xBF" "a = \"Zo\xC3\xAB\xF0\x9F\x98\x80\" # \xC2\xA7\n") ==
          "a = \"Zo\\u00EB\\U0001F600\" # \n");
    CHECK(ascii("b = 'C:\\Users\\Zo\xC3\xAB \"x\"'\n") == "b = \"C:\\\\Users\\\\Zo\\u00EB \\\"x\\\"\"\n");
    CHECK(ascii("c = \"q\\\"\" # '\n'd' = '''x\\y'''\n") == "c = \"q\\\"\" # '\n\"d\" = '''x\\y'''\n");
    // Through the readers: the value comes back as written; a problem names the file and line.
    Config c = parse_config("store_path = [\"/Zo\xC3\xAB/\xE6\x97\xA5\", '/w\\x'] # \xC2\xA7\n", "x");
    REQUIRE(c.store_path.size() == 2);
    CHECK(c.store_path[0] == fs::u8path("/Zo\xC3\xAB/\xE6\x97\xA5"));
    CHECK(c.store_path[1] == fs::path("/w\\x"));
    CHECK_THROWS_WITH(parse_config("store_path = [\"/a\"]\n\xEF\xBB\xBB#\n", "/etc/cvm/config.toml"),
                      Catch::Contains("/etc/cvm/config.toml:2") && Catch::Contains("non-ASCII"));
}
