// The examples at the end of each command's --help (and of its part of the man page): a few
// lines a user can type as they are, with what each does.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <map>
#include <string>

#include "cli/usage.h"

namespace cvm::cli {

namespace {

const std::map<std::string, std::vector<HelpItem>>& command_examples() {
    static const std::map<std::string, std::vector<HelpItem>> table{
        {"install",
         {{"cvm install", "install what .cudaversion here selects"},
          {"cvm install 12.4+9", "CUDA 12.4 and the newest cuDNN 9 built for it"},
          {"cvm install cudnn 8.9 --cuda 12", "a cuDNN build for CUDA 12"},
          {"cvm install nccl 2.21 --cuda 12",
           "an NCCL build for CUDA 12 from NVIDIA's public folder"},
          {"cvm install ~/Downloads/cudnn.tar.xz", "an archive already downloaded"}}},
        {"verify", {{"cvm verify", "check every entry"}, {"cvm verify 12.4.1", "check one"}}},
        {"update",
         {{"cvm update", "look for new releases"},
          {"cvm update --max 5", "fetch at most 5 manifests"}}},
        {"import",
         {{"cvm import /usr/local/cuda-12.4", "register a toolkit folder"},
          {"cvm import --detect", "register everything the machine has"}}},
        {"uninstall",
         {{"cvm uninstall 12.4", "remove the installed 12.4.x"},
          {"cvm uninstall cudnn 9.2", "remove the installed cuDNN 9.2.x"},
          {"cvm rm 9.1 11.8.0 --yes", "remove two, without asking"}}},
        {"list",
         {{"cvm list", "what is installed"},
          {"cvm list --available 12", "CUDA 12 releases and the cuDNN builds for them"},
          {"cvm ls cudnn --json", "installed cuDNN builds, as JSON"}}},
        {"latest",
         {{"cvm latest 12", "the newest CUDA 12 cvm can install"},
          {"cvm latest cudnn --installed", "the newest cuDNN installed"}}},
        {"use",
         {{"cvm use 12.4+9", "select CUDA 12.4 with cuDNN 9 in this folder"},
          {"cvm use -g 11.8", "the global default"},
          {"cvm use --install 12.4+9", "install what is missing, then select it"},
          {"cvm use", "show the selection here"},
          {"cvm use --unset", "remove ./.cudaversion"}}},
        {"current", {{"cvm current", "what is selected here, and why"}}},
        {"which", {{"cvm which nvcc", "the nvcc the shim runs here"}}},
        {"exec",
         {{"cvm exec nvcc --version", "run nvcc with the selection"},
          {"cvm exec 11.8 -- make", "run make with CUDA 11.8"},
          {"cvm exec --spec 12.4+9 make", "the same, the spec given as an option"}}},
        {"env",
         {{"eval \"$(cvm env)\"", "activate the selection in bash or zsh"},
          {"cvm env --shell fish 12.4 | source", "activate CUDA 12.4 in fish"}}},
        {"deactivate", {{"eval \"$(cvm deactivate)\"", "undo `eval \"$(cvm env)\"`"}}},
        {"script",
         {{"cvm script", "write activate_cudaXY.sh for the selection"},
          {"cvm script 11.2 --shell pwsh", "write activate_cuda112.ps1"},
          {"cvm script -o -", "print the script instead"}}},
        {"init", {{"eval \"$(cvm init bash)\"", "in ~/.bashrc: shims, completion, prompt hook"}}},
        {"shell",
         {{"cvm shell 11.8", "CUDA 11.8 in this shell only"},
          {"cvm shell --unset", "back to the files"}}},
        {"rehash", {{"cvm rehash", "make the shims again"}}},
        {"cache",
         {{"cvm cache clean", "remove downloaded archives"},
          {"cvm cache clean --all", "and the registry overlay"}}},
        {"cache clean",
         {{"cvm cache clean", "remove downloaded archives"},
          {"cvm cache clean --all --json", "empty the whole cache; say what went, as JSON"}}},
        {"doctor", {{"cvm doctor", "what loads, what is wrong, how to fix it"}}},
        {"probe",
         {{"cvm probe", "run convolutions with the selection"},
          {"cvm probe 12.4+9 --json", "with another spec"},
          {"cvm probe --nccl", "and NCCL's all-reduce over every GPU"},
          {"cvm probe --python", "PyTorch's, JAX's and TensorFlow's own checks in this Python"}}},
        {"export",
         {{"cvm export lmod ~/modulefiles", "Lmod modules for every installed build"},
          {"cvm export --oci ./images", "the selection here as an OCI image (oci:./images:TAG)"},
          {"cvm export --oci ./images 12.4+9 --base ./debian:12 --runtime", "its libraries on a distribution image"}}},
        {"lock",
         {{"cvm lock", "write cvm.lock beside .cudaversion"},
          {"cvm lock --check", "is cvm.lock still what is selected?"},
          {"cvm install --locked", "install exactly what cvm.lock names"}}},
        {"completions",
         {{"cvm completions zsh > ~/.zfunc/_cvm", "zsh completion (a folder on $fpath)"}}},
    };
    return table;
}

std::string pad(const std::string& s, std::size_t width) {
    return s.size() + 1 >= width ? s + "  " : s + std::string(width - s.size(), ' ');
}

} // namespace

std::string items_text(const std::vector<HelpItem>& items, std::size_t width) {
    std::string out;
    for (const auto& e : items) out += "  " + pad(e.text, width) + e.meaning + "\n";
    return out;
}

std::string examples_text(const std::vector<HelpItem>& items, std::size_t width) {
    return "Examples:\n" + items_text(items, width);
}

void add_command_examples(CLI::App& app, const std::string& path) {
    for (CLI::App* cmd : app.get_subcommands([](CLI::App*) { return true; })) {
        std::string name = path.empty() ? cmd->get_name() : path + " " + cmd->get_name();
        add_command_examples(*cmd, name); // its own commands: "cache clean"
        auto found = command_examples().find(name);
        if (found == command_examples().end()) continue;
        std::string footer = cmd->get_footer();
        if (!footer.empty() && footer.back() != '\n') footer += "\n";
        if (!footer.empty()) footer += "\n";
        std::size_t width = 0;
        for (const auto& e : found->second) width = std::max(width, e.text.size() + 2);
        cmd->footer(footer + examples_text(found->second, std::min<std::size_t>(width, 40)));
    }
}

} // namespace cvm::cli
