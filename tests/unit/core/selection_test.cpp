#include <catch2/catch.hpp>

#include <filesystem>

#include "project/selection.h"
#include "test_support.h"

using namespace cvm;
namespace fs = std::filesystem;

using cvm::test::TempDir;
using cvm::test::write_file;

TEST_CASE("version file text: BOM, CRLF, comments, blanks") {
    int line = 0;
    CHECK(spec_text_of("11.2\n", &line) == "11.2");
    CHECK(line == 1);
    CHECK(spec_text_of("\xEF\xBB\xBF  11.2+8.1  \r\n", &line) == "11.2+8.1");
    CHECK(spec_text_of("# a comment\n\n   \r\n12.4 # trailing\r\nignored\n", &line) == "12.4");
    CHECK(line == 4);
    CHECK_FALSE(spec_text_of("# only a comment\n\n", &line));
    CHECK_FALSE(spec_text_of("", &line));
    CHECK(spec_text_of("\t11.8\t", &line) == "11.8");
}

TEST_CASE("bad version files name the file and line") {
    TempDir t;
    write_file(t.path / ".cudaversion", "# project\n\n../../etc/passwd\n");
    try {
        read_version_file(t.path / ".cudaversion", Selection::Origin::ProjectFile);
        FAIL("no error");
    } catch (const SelectionError& e) {
        std::string msg = e.what();
        CHECK(msg.find((t.path / ".cudaversion").string() + ":3") != std::string::npos);
        CHECK(msg.find("path separator") != std::string::npos);
    }
    write_file(t.path / ".cudaversion", "11.2; rm -rf /\n");
    CHECK_THROWS_AS(read_version_file(t.path / ".cudaversion", Selection::Origin::ProjectFile), SelectionError);
    write_file(t.path / ".cudaversion", "\"11.2\"\n");
    CHECK_THROWS_AS(read_version_file(t.path / ".cudaversion", Selection::Origin::ProjectFile), SelectionError);
}

TEST_CASE("precedence: CVM_VERSION > nearest .cudaversion > global") {
    TempDir t;
    fs::path global = t.path / "root" / "version";
    write_file(global, "10.2\n");
    fs::path deep = t.path / "a" / "b" / "c" / "d" / "e" / "f";
    fs::create_directories(deep);
    CHECK(find_selection(deep, std::nullopt, global).origin == Selection::Origin::Global);
    CHECK(find_selection(deep, std::nullopt, global).spec.str() == "10.2");
    write_file(t.path / "a" / ".cudaversion", "11.2\n");
    write_file(t.path / "a" / "b" / "c" / ".cudaversion", "12.4+9\n");
    Selection s = find_selection(deep, std::nullopt, global);
    CHECK(s.origin == Selection::Origin::ProjectFile);
    CHECK(s.spec.str() == "12.4+9");
    CHECK(s.file == t.path / "a" / "b" / "c" / ".cudaversion");
    // A folder given with a trailing separator walks the same way.
    CHECK(find_selection(deep / "", std::nullopt, global).file == t.path / "a" / "b" / "c" / ".cudaversion");
    // An empty (comments only) file is skipped in favour of the next one up.
    write_file(t.path / "a" / "b" / "c" / ".cudaversion", "# nothing\n");
    CHECK(find_selection(deep, std::nullopt, global).spec.str() == "11.2");
    CHECK(find_selection(deep, std::string("13.0"), global).origin == Selection::Origin::Variable);
    CHECK(find_selection(deep, std::string(""), global).spec.str() == "11.2"); // empty = unset
    CHECK_THROWS_WITH(find_selection(deep, std::string("1/2"), global), Catch::Contains("CVM_VERSION"));
    fs::remove(global);
    fs::remove(t.path / "a" / ".cudaversion");
    fs::remove(t.path / "a" / "b" / "c" / ".cudaversion");
    CHECK(find_selection(deep, std::nullopt, global).origin == Selection::Origin::None);
}

TEST_CASE("write_version_file round-trips") {
    TempDir t;
    write_version_file(t.path / ".cudaversion", parse_spec("11.2+8.1.0.77"));
    auto s = read_version_file(t.path / ".cudaversion", Selection::Origin::ProjectFile);
    REQUIRE(s);
    CHECK(s->spec.str() == "11.2+8.1.0.77");
}

TEST_CASE("a spec given on the command line is named as such, not as CVM_VERSION") {
    Selection given;
    given.origin = Selection::Origin::Argument;
    given.spec = parse_spec("11.2");
    CHECK(given.origin_text() == "the command line");
    CHECK(given.not_installed_text("CUDA 11.2 is not installed") ==
          "CUDA 11.2 is not installed (selected by the command line)");
    Selection variable = given;
    variable.origin = Selection::Origin::Variable;
    CHECK(variable.origin_text() == "CVM_VERSION");
}
