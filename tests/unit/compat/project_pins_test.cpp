// The framework pins of a project's files (compat/project_pins.h), table by table: each file
// kind's text, the pins read from it (framework, clauses, CUDA, file:line), and the one-line
// error of a file that cannot be read.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "compat/project_pins.h"
#include "test_support.h"

using namespace cvm;
using namespace cvm::compat;
namespace fs = std::filesystem;

namespace {

const char* op_text(VersionClause::Op op) {
    switch (op) {
    case VersionClause::Op::Equal:
        return "==";
    case VersionClause::Op::Prefix:
        return "==*";
    case VersionClause::Op::NotEqual:
        return "!=";
    case VersionClause::Op::NotPrefix:
        return "!=*";
    case VersionClause::Op::Less:
        return "<";
    case VersionClause::Op::LessEqual:
        return "<=";
    case VersionClause::Op::Greater:
        return ">";
    case VersionClause::Op::GreaterEqual:
        return ">=";
    }
    return "?";
}

// "pytorch >=2.4 <2.6 +cu121 cuda12.1 @requirements.txt:3", one pin a line.
std::string show(const std::vector<ProjectPin>& pins) {
    std::string out;
    for (const auto& p : pins) {
        out += p.framework;
        for (const auto& c : p.clauses)
            out += std::string(" ") + op_text(c.op) + c.version.str();
        if (!p.cuda_tag.empty()) out += " +" + p.cuda_tag;
        if (p.cuda) out += " cuda" + p.cuda->str();
        out += " @" + p.where() + "\n";
    }
    return out;
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const ProjectFileError& e) {
        return e.what();
    }
    return "(no error)";
}

struct Row {
    const char* text;
    const char* pins;
};

} // namespace

TEST_CASE("requirements files: pins, ranges, extras, markers, options and comments") {
    const Row rows[] = {
        {"torch==2.4.1\n", "pytorch ==2.4.1 @r.txt:1\n"},
        {"# the model\nnumpy>=1.26\n\ntorch==2.4.1+cu121  # CUDA 12.1\n",
         "pytorch ==2.4.1 +cu121 @r.txt:4\n"},
        {"--index-url https://download.pytorch.org/whl/cu121\n-e .\ntorch>=2.4,<2.6\n",
         "pytorch >=2.4 <2.6 @r.txt:3\n"},
        {"tensorflow[and-cuda]==2.15.1; sys_platform == 'linux'\n", "tensorflow ==2.15.1 @r.txt:1\n"},
        {"tensorflow-gpu ~= 2.10.0\n", "tensorflow >=2.10.0 ==*2.10 @r.txt:1\n"},
        {"Tensorflow_GPU (>=2.8, !=2.9.*)\n", "tensorflow >=2.8 !=*2.9 @r.txt:1\n"},
        {"jax[cuda12]==0.4.30\njaxlib\n", "jax ==0.4.30 @r.txt:1\njax @r.txt:2\n"},
        {"torch \\\n  ==2.5.0 \\\n  --hash=sha256:abc\n", "pytorch ==2.5.0 @r.txt:1\n"},
        {"torch==2.6.*\n", "pytorch ==*2.6 @r.txt:1\n"},
        {"torch==2.4.0rc1\n", "pytorch ==2.4.0 @r.txt:1\n"},
        {"torch @ https://download.pytorch.org/whl/cu121/torch-2.4.1%2Bcu121-cp311-cp311-linux_x86_64.whl\n",
         "pytorch ==2.4.1 +cu121 @r.txt:1\n"},
        {"torchvision==0.19.1\ntorchaudio\ntensorflow-cpu==2.15\nhttps://example.org/x.whl\n./local\n", ""},
        {"torch\r\n", "pytorch @r.txt:1\n"},
    };
    for (const auto& row : rows) {
        INFO(row.text);
        CHECK(show(requirements_pins(row.text, "r.txt")) == row.pins);
    }
}

TEST_CASE("requirements files: -r includes one level, and bad lines name file:line") {
    IncludeReader include = [](const std::string& name, const std::string&) -> std::optional<std::string> {
        if (name == "base.txt") return std::string("numpy\ntorch>=2.3\n-r deeper.txt\n");
        return std::nullopt;
    };
    CHECK(show(requirements_pins("-r base.txt\ntensorflow==2.15\n", "requirements.txt", include)) ==
          "pytorch >=2.3 @base.txt:2\ntensorflow ==2.15 @requirements.txt:2\n");
    CHECK(error_of([&] { requirements_pins("\n-r missing.txt\n", "requirements.txt", include); }) ==
          "requirements.txt:2: -r missing.txt: missing.txt is not in the project folder");
    CHECK(error_of([] { requirements_pins("numpy\ntorch==two\n", "requirements.txt"); }) ==
          "requirements.txt:2: cannot read the version range of torch==two (write e.g. "
          "torch>=2.4,<2.6 or torch==2.4.1)");
    CHECK(error_of([] { requirements_pins("torch>=2.4+cu121\n", "r.txt"); }).rfind("r.txt:1: ", 0) == 0);
    CHECK(error_of([] { requirements_pins("torch @ git+https://github.com/pytorch/pytorch\n", "r.txt"); }) ==
          "r.txt:1: torch @ git+https://github.com/pytorch/pytorch: cvm reads a version only from a "
          "wheel's file name in a URL; pin torch==VERSION");
    // Other packages' lines are not judged.
    CHECK(show(requirements_pins("numpy==garbage\nfoo @ bar\n", "r.txt")).empty());
}

TEST_CASE("pyproject.toml: PEP 621 and Poetry") {
    const Row rows[] = {
        {"[project]\nname = \"x\"\ndependencies = [\n  \"numpy\",\n  \"torch>=2.4,<2.6\",\n]\n",
         "pytorch >=2.4 <2.6 @pyproject.toml:5\n"},
        {"[project]\ndependencies = []\n[project.optional-dependencies]\ngpu = [\"tensorflow[and-cuda]==2.16.1\"]\n",
         "tensorflow ==2.16.1 @pyproject.toml:4\n"},
        {"[tool.poetry.dependencies]\npython = \"^3.10\"\ntorch = \"^2.4\"\n",
         "pytorch >=2.4 <3 @pyproject.toml:3\n"},
        {"[tool.poetry.dependencies]\ntorch = { version = \"~2.4.1\", source = \"pytorch\" }\n",
         "pytorch >=2.4.1 <2.5 @pyproject.toml:2\n"},
        {"[tool.poetry.dependencies]\ntensorflow = \">= 2.12, < 2.15\"\n",
         "tensorflow >=2.12 <2.15 @pyproject.toml:2\n"},
        {"[tool.poetry.group.gpu.dependencies]\njax = \"^0.4.30\"\ntorch = \"2.4.1\"\n",
         "jax >=0.4.30 <0.5 @pyproject.toml:2\npytorch ==2.4.1 @pyproject.toml:3\n"},
        {"[tool.poetry.dependencies]\ntorch = { git = \"https://github.com/pytorch/pytorch\" }\n", ""},
    };
    for (const auto& row : rows) {
        INFO(row.text);
        CHECK(show(pyproject_pins(row.text, "pyproject.toml")) == row.pins);
    }
    CHECK(error_of([] { pyproject_pins("[project]\ndependencies = [\"torch\"\n", "pyproject.toml"); })
              .rfind("pyproject.toml:", 0) == 0);
    CHECK(error_of([] { pyproject_pins("[tool.poetry.dependencies]\ntorch = \"^2.4 || ^2.6\"\n", "pyproject.toml"); })
              .rfind("pyproject.toml:2: cannot read the version of torch = \"^2.4 || ^2.6\"", 0) == 0);
}

TEST_CASE("environment.yml: conda pins, pytorch-cuda, the pip list") {
    const Row rows[] = {
        {"name: ml\nchannels:\n  - pytorch\n  - nvidia\ndependencies:\n  - python=3.11\n  - pytorch=2.4.1\n"
         "  - pytorch-cuda=12.1\n",
         "pytorch ==*2.4.1 cuda12.1 @environment.yml:7\n"},
        {"dependencies:\n- pytorch::pytorch==2.5.1=py3.11_cuda12.4_cudnn9.1.0_0  # pinned\n",
         "pytorch ==2.5.1 cuda12.4 @environment.yml:2\n"},
        {"dependencies:\n  - \"tensorflow-gpu >=2.8,<2.11\"\n", "tensorflow >=2.8 <2.11 @environment.yml:2\n"},
        {"dependencies:\n  - python\n  - pip\n  - pip:\n    - numpy\n    - torch==2.4.1  # wheels\n"
         "name: x\n",
         "pytorch ==2.4.1 @environment.yml:6\n"},
        {"dependencies: [python=3.10, 'pytorch 2.3.*']\n", "pytorch ==*2.3 @environment.yml:1\n"},
        {"name: x\ndependencies:\n  - pytorch-cuda=11.8\n", "pytorch cuda11.8 @environment.yml:3\n"},
    };
    for (const auto& row : rows) {
        INFO(row.text);
        CHECK(show(environment_pins(row.text, "environment.yml")) == row.pins);
    }
    CHECK(error_of([] { environment_pins("dependencies:\n\t- pytorch\n", "environment.yml"); }) ==
          "environment.yml:2: a tab in the indentation (YAML indents with spaces only)");
    CHECK(error_of([] { environment_pins("dependencies:\n  - 'pytorch=2.4\n", "environment.yml"); }) ==
          "environment.yml:2: an unterminated quote");
    CHECK(error_of([] { environment_pins("dependencies:\n  - pytorch-cuda=twelve\n", "environment.yml"); }) ==
          "environment.yml:2: cannot read the CUDA version of pytorch-cuda=twelve (write e.g. "
          "pytorch-cuda=12.1)");
    CHECK(error_of([] { environment_pins("dependencies:\n  - python\n   - torch\n", "environment.yml"); }) ==
          "environment.yml:3: this item is indented unlike the dependencies: list's others");
}

TEST_CASE("pixi.toml and Pipfile") {
    CHECK(show(pixi_pins("[project]\nname = \"x\"\n[dependencies]\npytorch = \"2.4.*\"\n"
                         "pytorch-cuda = \"12.1.*\"\n[pypi-dependencies]\njax = { version = \">=0.4\", "
                         "extras = [\"cuda12\"] }\n",
                         "pixi.toml")) ==
          "pytorch ==*2.4 cuda12.1 @pixi.toml:4\njax >=0.4 @pixi.toml:7\n");
    CHECK(show(pixi_pins("[feature.gpu.pypi-dependencies]\ntorch = \"==2.5.1\"\n"
                         "[target.linux-64.dependencies]\ntensorflow = { version = \">=2.15\", build = \"cuda*\" }\n",
                         "pixi.toml")) ==
          "pytorch ==2.5.1 @pixi.toml:2\ntensorflow >=2.15 @pixi.toml:4\n");
    CHECK(show(pipfile_pins("[[source]]\nurl = \"https://pypi.org/simple\"\n[packages]\ntorch = \"==2.4.1\"\n"
                            "[dev-packages]\ntensorflow = {version = \"*\", extras = [\"and-cuda\"]}\n"
                            "[requires]\npython_version = \"3.11\"\n",
                            "Pipfile")) ==
          "pytorch ==2.4.1 @Pipfile:4\ntensorflow @Pipfile:6\n");
    CHECK(error_of([] { pipfile_pins("[packages]\ntorch = \"=>2.4\"\n", "Pipfile"); }) ==
          "Pipfile:2: cannot read the version of torch = \"=>2.4\" (write e.g. torch = \"==2.4.1\")");
}

TEST_CASE("a range admits a release series when some release of it meets every clause") {
    struct RangeRow {
        const char* requirement;
        const char* allowed;     // of 2.3, 2.4, 2.5, 2.6
    };
    const RangeRow rows[] = {
        {"torch>=2.4,<2.6", "2.4 2.5"}, {"torch>2.4", "2.4 2.5 2.6"},  {"torch<=2.4.1", "2.3 2.4"},
        {"torch<2.5.1", "2.3 2.4 2.5"}, {"torch~=2.4", "2.4 2.5 2.6"}, {"torch~=2.4.0", "2.4"},
        {"torch!=2.5.*", "2.3 2.4 2.6"}, {"torch!=2.5.0", "2.3 2.4 2.5 2.6"}, {"torch==2.*", "2.3 2.4 2.5 2.6"},
        {"torch==2.5.1", "2.5"},         {"torch", "2.3 2.4 2.5 2.6"},
    };
    for (const auto& row : rows) {
        INFO(row.requirement);
        auto pins = requirements_pins(row.requirement, "r.txt");
        REQUIRE(pins.size() == 1);
        std::string got;
        for (const char* r : {"2.3", "2.4", "2.5", "2.6"})
            if (series_allowed(pins[0].clauses, *parse_version(r)))
                got += (got.empty() ? "" : " ") + std::string(r);
        CHECK(got == row.allowed);
    }
}

TEST_CASE("a project folder is read in its stated order, includes inside it only") {
    cvm::test::TempDir dir;
    auto write = [&](const std::string& name, const std::string& text) {
        cvm::test::write_file(dir.path / name, text);
    };
    write("Pipfile", "[packages]\ntorch = \"*\"\n");
    write("requirements-dev.txt", "-r requirements.txt\npytest\n");
    write("requirements.txt", "torch==2.4.1\n");
    write("environment.yml", "dependencies:\n  - pytorch=2.4\n");
    write("req/base.txt", "torch<2.6\n");
    std::vector<std::string> read;
    CHECK(show(read_project_pins(dir.path, &read)) ==
          "pytorch ==2.4.1 @requirements.txt:1\npytorch ==*2.4 @environment.yml:2\npytorch @Pipfile:2\n");
    CHECK(read == std::vector<std::string>{"requirements.txt", "requirements-dev.txt", "environment.yml", "Pipfile"});
    write("requirements-dev.txt", "-r req/base.txt\n");
    CHECK(show(read_project_pins(dir.path)).find("pytorch <2.6 @req/base.txt:1\n") != std::string::npos);
    write("requirements-dev.txt", "-r ../elsewhere.txt\n");
    CHECK(error_of([&] { read_project_pins(dir.path); }) ==
          "requirements-dev.txt:1: ../elsewhere.txt is outside the project folder; cvm reads includes "
          "inside it only");
}
