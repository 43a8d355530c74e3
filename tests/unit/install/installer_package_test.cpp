// NVIDIA's installers: the makeself header, the 7-Zip archive behind a Windows program (found
// outside libarchive's 0x27000-0x60000 window too), and a Windows installer laid out like a
// redist install. The installers are built by tests/integration/make_installers.py (mingw,
// p7zip), as the integration tests build them.
#include "store/store.h"
#include "install/error.h"
#include "install/installer_layout.h"
#include "install/installer_package.h"
#include "install/runfile.h"
#include "install/sevenzip_installer.h"
#include "install/store_install.h"
#include "test_util.h"

#include <lzma.h>

using namespace cvm::install;
using namespace cvm::install::test;
namespace fs = std::filesystem;

namespace {

std::string usage_error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const InstallError& e) {
        CHECK(e.exit_code() == 2);
        return e.what();
    }
    return "";
}

bool tools_present() {
    return shell("command -v 7z > /dev/null && command -v x86_64-w64-mingw32-gcc > /dev/null") == 0;
}

// Builds a Windows installer with the archive at `at` (0: right behind the program).
fs::path windows_installer(const TempDir& tmp, const std::string& name, unsigned at) {
    std::string mi =
        "python3 " + shell_quote((repo_root() / "tests/integration/make_installers.py").string());
    fs::path stub = tmp / "stub.exe";
    if (!fs::exists(stub)) REQUIRE(shell(mi + " stub " + shell_quote(stub.string())) == 0);
    fs::path out = tmp / name;
    REQUIRE(shell(mi + " windows " + shell_quote(out.string()) + " --version 11.2.2 --stub " +
                  shell_quote(stub.string()) + (at ? " --at " + std::to_string(at) : "")) == 0);
    return out;
}

} // namespace

TEST_CASE("makeself headers give the payload's offset and size", "[installer]") {
    std::string header = "#!/bin/sh\n# generated using Makeself 2.1.5\nlabel=\"CUDA Installer\"\n"
                         "filesizes=\"100 23\"\noffset=`head -n 7 \"$0\" | wc -c`\n";
    auto h = parse_makeself_header(header, "x.run");
    CHECK(h.header_lines == 7);
    CHECK(h.payload_size == 123);
    CHECK(h.label == "CUDA Installer");
    CHECK_THAT(
        usage_error_of([] { parse_makeself_header("#!/bin/sh\nfilesizes=\"5\"\n", "a.run"); }),
        Catch::Contains("a.run") && Catch::Contains("payload offset"));
    CHECK_THAT(usage_error_of([] { parse_makeself_header("#!/bin/sh\nhead -n 3 x\n", "b.run"); }),
               Catch::Contains("b.run") && Catch::Contains("payload size"));
    CHECK_THAT(usage_error_of([] {
                   parse_makeself_header("head -n 3\nfilesizes=\"99999999999999999999999\"\n", "c");
               }),
               Catch::Contains("impossible"));
}

TEST_CASE("installer names", "[installer]") {
    auto n = parse_installer_name("cuda_11.2.2_460.32.03_linux.run");
    REQUIRE(n);
    CHECK(n->version == "11.2.2");
    CHECK(n->driver == "460.32.03");
    CHECK(n->platform == "linux-x86_64");
    CHECK(!n->network);
    n = parse_installer_name("cuda_11.2.2_461.33_win10_network.exe");
    REQUIRE(n);
    CHECK(n->network);
    CHECK(n->platform == "windows-x86_64");
    CHECK(parse_installer_name("cuda_12.0.0_windows_network.exe")->network);
    CHECK(parse_installer_name("cuda_11.2.2_460.32.03_linux_sbsa.run")->platform == "linux-sbsa");
    CHECK(!parse_installer_name("cuda_11.2.2_460.32.03_linux.exe"));
    CHECK(!parse_installer_name("cudnn-11.2-linux-x64-v8.1.0.77.tgz"));
}

TEST_CASE("installer paths map to the redist layout", "[installer]") {
    auto L = InstallerFamily::LinuxRunfile;
    auto W = InstallerFamily::WindowsLocal;
    auto at = [](InstallerFamily f, const std::string& p, bool link = false) {
        auto placed = place_installer_path(f, p, link);
        return placed ? placed->component + ":" + placed->path : std::string("-");
    };
    CHECK(at(L, "builds/cuda_nvcc/bin/nvcc") == "cuda_nvcc:bin/nvcc");
    CHECK(at(L, "builds/cuda_cudart/lib64/libcudart.so") == "cuda_cudart:lib/libcudart.so");
    CHECK(at(L, "builds/cuda_cudart/targets/x86_64-linux/include/cuda.h") ==
          "cuda_cudart:include/cuda.h");
    CHECK(at(L, "builds/cuda_cudart/include", true) == "-");
    CHECK(at(L, "builds/cuda_samples/x.cu") == "-");
    CHECK(at(L, "builds/NVIDIA-Linux-x86_64-460.32.03.run") == "-");
    CHECK(at(L, "builds/nsight_compute/ncu") == "-");
    CHECK(at(L, "builds/cuda-toolkit/lib64/libcudart.so") == "cuda-toolkit:lib/libcudart.so");
    CHECK(at(L, "builds/cuda-toolkit/samples/a.cu") == "-");
    CHECK(at(L, "builds/cuda-toolkit/bin/nsight") == "-");
    CHECK(at(L, "builds/cublas/src/fortran.c") == "-");
    CHECK(at(W, "cuda_nvcc/nvcc/bin/nvcc.exe") == "cuda_nvcc:bin/nvcc.exe");
    CHECK(at(W, "libcublas/cublas_dev/lib/x64/cublas.lib") == "libcublas:lib/x64/cublas.lib");
    CHECK(at(W, "cuda_nvcc/nvcc/cuda_nvcc.nvi") == "-");
    CHECK(at(W, "Display.Driver/nvlddmkm.sys") == "-");
    CHECK(at(W, "cuda_documentation/Doc/EULA.txt") == "-");
    CHECK(installer_path_wanted(L, "builds/version.json"));
    CHECK(!installer_path_wanted(L, "builds/cuda_samples"));
    CHECK(installer_toolkit_version("{\"cuda\": {\"version\": \"11.2.2\"}}") == "11.2.2");
    CHECK(installer_toolkit_version("CUDA Version 10.2.89\n") == "10.2.89");
    CHECK(installer_toolkit_version("nothing").empty());
}

TEST_CASE("7-Zip start headers are checked by their CRC", "[installer]") {
    unsigned char h[32] = {'7', 'z', 0xBC, 0xAF, 0x27, 0x1C, 0, 4};
    h[12] = 0x10; // next header at +16 after the start header, 5 bytes long
    h[20] = 5;
    std::uint32_t crc = lzma_crc32(h + 12, 20, 0);
    for (int i = 0; i < 4; ++i)
        h[8 + i] = static_cast<unsigned char>(crc >> (8 * i));
    std::uint64_t end = 0;
    CHECK(parse_7z_start_header(h, &end));
    CHECK(end == 32 + 16 + 5);
    h[20] = 6; // the CRC no longer holds: a stray signature
    CHECK(!parse_7z_start_header(h, &end));
}

TEST_CASE("7-Zip archives behind a Windows program, inside and outside libarchive's window",
          "[installer]") {
    if (!tools_present()) {
        WARN("7z (p7zip-full) or x86_64-w64-mingw32-gcc missing (scripts/deps.sh): skipping");
        return;
    }
    TempDir tmp;
    for (unsigned at : {0u, 0x30000u, 0x70000u}) {
        fs::path exe = windows_installer(tmp, "cuda_11.2.2_461.33_win10.exe", at);
        EmbeddedArchive found = find_7z_archive(exe);
        CHECK(found.format == EmbeddedArchive::Format::SevenZip);
        if (at != 0) CHECK(found.offset == at);
        CHECK(found.offset + found.length == fs::file_size(exe));
        // The program holds a decoy signature; the archive found is the real one.
        CHECK(found.offset >= fs::file_size(tmp / "stub.exe"));
        fs::remove(exe);
    }
    fs::path exe = windows_installer(tmp, "cut.exe", 0);
    fs::resize_file(exe, fs::file_size(exe) - 10);
    CHECK_THAT(usage_error_of([&] { find_7z_archive(exe); }),
               Catch::Contains("cut.exe is truncated"));
    CHECK_THAT(usage_error_of([&] { find_7z_archive(tmp / "stub.exe"); }),
               Catch::Contains("stub.exe holds no 7-Zip archive"));
}

TEST_CASE("a Windows local installer installs like a redist toolkit", "[installer]") {
    if (!tools_present()) {
        WARN("7z (p7zip-full) or x86_64-w64-mingw32-gcc missing (scripts/deps.sh): skipping");
        return;
    }
    TempDir tmp;
    fs::path exe = windows_installer(tmp, "cuda_11.2.2_461.33_win10.exe", 0);
    cvm::Store store({tmp / "store"});
    fs::create_directories(tmp / "store");
    StoreInstallerOptions options;
    options.host_platform = "windows-x86_64";
    StoreInstaller installer(store, options);
    // The contents of the Windows installer, as a manifest install would lay them out.
    InstallResult r = installer.install_file(exe);
    CHECK(r.id == "11.2.2");
    fs::path root = r.path;
    for (const char* f :
         {"bin/nvcc.exe", "bin/cudart64_110.dll", "bin/cublas64_11.dll", "include/cuda_runtime.h",
          "include/cublas_v2.h", "include/crt/host_defines.h", "lib/x64/cudart.lib",
          "lib/x64/cublas.lib", "nvvm/bin/nvvm64_40_0.dll", "licenses/cuda_nvcc/EULA.txt",
          "version.json"})
        CHECK(fs::is_regular_file(root / f));
    for (const char* f :
         {"bin/nvprof.exe", "Doc", "nvlddmkm.sys", "ncu.exe", "cuda_nvcc.nvi", "lib64"})
        CHECK(!fs::exists(fs::symlink_status(root / f)));
    auto entry = store.find(cvm::Kind::Cuda, "11.2.2");
    REQUIRE(entry);
    CHECK(entry->lib_dirs == std::vector<std::string>{"lib/x64"});
    CHECK(std::find(entry->components.begin(), entry->components.end(), "libcublas") !=
          entry->components.end());
    CHECK(read_file(root / "version.json").find("11.2.152") != std::string::npos);

    // --components, and one that the installer lacks.
    StoreInstallerOptions again = options;
    again.reinstall = true;
    StoreInstaller reinstaller(store, again);
    CHECK_THAT(usage_error_of([&] {
                   reinstaller.install_installer(exe, {"cuda_nvcc", "cublas"});
               }),
               Catch::Contains("\"cublas\"") && Catch::Contains("libcublas"));
    r = reinstaller.install_installer(exe, {"cuda_nvcc", "cuda_nvprof"});
    CHECK(fs::is_regular_file(r.path / "bin/nvprof.exe"));
    CHECK(!fs::exists(r.path / "include/cublas_v2.h"));
}
