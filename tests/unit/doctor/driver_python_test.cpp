#include "doctor/driver.h"
#include "doctor/python_env.h"
#include "doctor/wheel_metadata.h"

#include "binary/binary_test_support.h"

#include <catch2/catch.hpp>

using namespace cvm::doctor;
using namespace cvm::binary;
using namespace cvm::binary::test;

TEST_CASE("driver version from /proc/driver/nvidia/version", "[doctor][driver]") {
    CHECK(driver_version_from_proc(
              "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Oct  2 "
              "19:00:00 UTC 2025\nGCC version:  gcc version 12.2.0\n") ==
          std::optional<std::string>("580.159.04"));
    CHECK(driver_version_from_proc("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
                                   "535.104.05  Release Build  (dvs-builder@U16)\n") ==
          std::optional<std::string>("535.104.05"));
    CHECK(driver_version_from_proc("NVRM version: NVIDIA UNIX x86_64 Kernel Module  460.27.04\n") ==
          std::optional<std::string>("460.27.04"));
    CHECK_FALSE(driver_version_from_proc(""));
    CHECK_FALSE(driver_version_from_proc("GCC version: 12.2.0\n"));
}

TEST_CASE("GPUs and driver from nvidia-smi's CSV", "[doctor][driver]") {
    auto gpus = gpus_from_smi("NVIDIA H200, 580.159.04\nNVIDIA H200, 580.159.04\n");
    REQUIRE(gpus.size() == 2);
    CHECK(gpus[0].name == "NVIDIA H200");
    CHECK(gpus[0].driver == "580.159.04");
    CHECK(gpus_from_smi("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA "
                        "driver.\n")
              .empty());
}

TEST_CASE("detect_driver through the override file and a fake nvidia-smi", "[doctor][driver]") {
    TempDir t;
    write_file(t.str("version"),
               "NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.57.02  Tue\n");
    const std::string smi = t.str("nvidia-smi");
    write_file(smi, "#!/bin/sh\necho 'Tesla T4, 470.57.02'\n");
    fs::permissions(smi, fs::perms::owner_all);
    DriverProbe probe;
    probe.proc_version_file = t.str("version");
    probe.nvidia_smi = smi;
    auto info = detect_driver(probe);
    CHECK(info.version == std::optional<std::string>("470.57.02"));
    CHECK(info.source == t.str("version"));
    CHECK(info.gpus == std::vector<std::string>{"Tesla T4"});

    SECTION("no /proc file: the version comes from nvidia-smi") {
        probe.proc_version_file = t.str("absent");
        auto i2 = detect_driver(probe);
        CHECK(i2.version == std::optional<std::string>("470.57.02"));
        CHECK(i2.source == smi);
    }
    SECTION("a driver without GPUs") {
        write_file(smi, "#!/bin/sh\necho 'No devices were found'\nexit 6\n");
        probe.proc_version_file.clear();
        auto i2 = detect_driver(probe);
        CHECK_FALSE(i2.version);
        CHECK(i2.smi_ran);
        CHECK(i2.gpus.empty());
        REQUIRE_FALSE(i2.notes.empty());
        CHECK(i2.notes[0].find("No devices were found") != std::string::npos);
    }
}

TEST_CASE("reading framework files", "[doctor][python]") {
    CHECK(python_string_assignment("__version__ = '2.1.2+cu121'\ndebug = False\n"
                                   "cuda: Optional[str] = '12.1'\n",
                                   "cuda") == std::optional<std::string>("12.1"));
    CHECK(python_string_assignment("__version__ = '1.7.1'\ncuda = '10.2'\n", "__version__") ==
          std::optional<std::string>("1.7.1"));
    CHECK_FALSE(python_string_assignment("cuda: Optional[str] = None\n", "cuda"));
    CHECK_FALSE(python_string_assignment("cudart = '1'\n", "cuda"));
    CHECK(build_info_value("build_info = {'cuda_version': '11.2', 'cudnn_version': '8', "
                           "'is_cuda_build': True}",
                           "cudnn_version") == std::optional<std::string>("8"));
    CHECK(build_info_value("cuda_version_number = '10.1'\n", "cuda_version") ==
          std::optional<std::string>("10.1"));
    // The form real wheels write since TensorFlow 2.4 (2.5's build_info.py): pairs of an
    // OrderedDict.
    const std::string tf25 = "import collections\nbuild_info = "
                             "collections.OrderedDict([('cpu_compiler', '/dt7/usr/bin/gcc'), "
                             "('cuda_compute_capabilities', ['sm_35', 'sm_50', 'sm_60', 'sm_70', "
                             "'sm_75', 'compute_80']), "
                             "('cuda_version', '11.2'), ('cudnn_version', '8'), ('is_cuda_build', "
                             "True), ('is_rocm_build', False)])\n";
    CHECK(build_info_value(tf25, "cuda_version") == std::optional<std::string>("11.2"));
    CHECK(build_info_value(tf25, "cudnn_version") == std::optional<std::string>("8"));
    CHECK_FALSE(build_info_value("build_info = {'cuda_version_note': 'x'}", "cuda_version"));
}

TEST_CASE("wheel METADATA: a requirement's specifier, its pin and its lower bound", "[doctor][python]") {
    // The headers of jax-cuda13-plugin 0.10.2's METADATA (abridged), then its description.
    const std::string jax_plugin = "Metadata-Version: 2.4\nName: jax-cuda13-plugin\nVersion: 0.10.2\n"
                                   "Requires-Dist: jax-cuda13-pjrt==0.10.2\n"
                                   "Provides-Extra: with-cuda\n"
                                   "Requires-Dist: nvidia-cuda-runtime>=13.0.48; sys_platform == \"linux\" and extra == "
                                   "\"with-cuda\"\n"
                                   "Requires-Dist: nvidia-cudnn-cu13<10.0,>=9.12.0.46; sys_platform == \"linux\" and "
                                   "extra == \"with-cuda\"\n"
                                   "Requires-Dist: nvidia-nvvm; extra == \"with-cuda\"\n"
                                   "\nRequires-Dist: nvidia-cudnn-cu12>=1.0 (in the description: not a header)\n";
    struct Row {
        const char* text;
        const char* prefix;
        std::optional<std::string> specifier, pin, floor;
    };
    const std::string torch = "Name: torch\nRequires-Dist: nvidia-cudnn-cu13==9.26.0.51; platform_system == "
                              "\"Linux\"\nRequires-Dist: nvidia-nccl-cu13 (==2.30.7)\n";
    const std::vector<Row> rows = {
        {jax_plugin.c_str(), "nvidia-cudnn-cu", "<10.0,>=9.12.0.46", std::nullopt, "9.12.0.46"},
        {jax_plugin.c_str(), "nvidia-cuda-runtime", ">=13.0.48", std::nullopt, "13.0.48"},
        {jax_plugin.c_str(), "jax-cuda13-pjrt", "==0.10.2", "0.10.2", "0.10.2"},
        {jax_plugin.c_str(), "nvidia-nvvm", "", std::nullopt, std::nullopt},   // any release
        {jax_plugin.c_str(), "nvidia-cublas", std::nullopt, std::nullopt, std::nullopt}, // not required
        {torch.c_str(), "nvidia-cudnn-cu", "==9.26.0.51", "9.26.0.51", "9.26.0.51"},
        {torch.c_str(), "nvidia-nccl-cu", "==2.30.7", "2.30.7", "2.30.7"}, // the old form in parentheses
        {"Requires-Dist: nvidia-cudnn-cu12[extra] >= 9.1 , < 10\n", "nvidia-cudnn-cu", ">= 9.1 , < 10", std::nullopt,
         "9.1"},
        {"Requires-Dist: nvidia-cudnn-cu12===9.1.0.70\n", "nvidia-cudnn-cu", "===9.1.0.70", std::nullopt, std::nullopt},
        {"Requires-Dist: nvidia-cudnn-cu12>=\n", "nvidia-cudnn-cu", ">=", std::nullopt, std::nullopt},
        {"", "nvidia-cudnn-cu", std::nullopt, std::nullopt, std::nullopt},
        {"\xff\xfe\nRequires-Dist", "nvidia-cudnn-cu", std::nullopt, std::nullopt, std::nullopt},
    };
    for (const auto& row : rows) {
        CAPTURE(row.text, row.prefix);
        auto spec = metadata_requirement(row.text, row.prefix);
        CHECK(spec == row.specifier);
        if (!spec) continue;
        CHECK(specifier_pin(*spec) == row.pin);
        CHECK(specifier_floor(*spec) == row.floor);
    }
}

TEST_CASE("nvcuda.dll's file version gives the driver version", "[doctor][driver]") {
    CHECK(driver_version_from_nvcuda(15, 3623) == std::optional<std::string>("536.23"));
    CHECK(driver_version_from_nvcuda(14, 5239) == std::optional<std::string>("452.39"));
    CHECK(driver_version_from_nvcuda(15, 8001) == std::optional<std::string>("580.01"));
    CHECK_FALSE(driver_version_from_nvcuda(15, 12345));
}

TEST_CASE("frameworks found in a site-packages folder", "[doctor][python]") {
    TempDir t;
    const std::string site = t.mkdir("lib/python3.10/site-packages").string();
    write_file(site + "/torch/version.py",
               "__version__ = '2.1.2+cu121'\ncuda: Optional[str] = '12.1'\n");
    t.mkdir("lib/python3.10/site-packages/torch/lib");
    write_file(site + "/nvidia/cudnn/lib/libcudnn.so.8", "");
    t.mkdir("lib/python3.10/site-packages/nvidia_cudnn_cu12-8.9.2.26.dist-info");
    write_file(site + "/tensorflow/python/platform/build_info.py",
               "build_info = {'cuda_version': '11.2', 'cudnn_version': '8'}\n");
    t.mkdir("lib/python3.10/site-packages/tensorflow-2.10.1.dist-info");
    RealFileSystem view;
    auto found = find_frameworks({t.str("nowhere"), site}, view);
    REQUIRE(found.size() == 2);
    CHECK(found[0].name == "pytorch");
    CHECK(found[0].version == "2.1.2+cu121");
    CHECK(found[0].cuda == std::optional<std::string>("12.1"));
    CHECK(found[0].own_cudnn_dir == std::optional<std::string>(site + "/nvidia/cudnn/lib"));
    CHECK(found[0].own_cudnn_version == std::optional<std::string>("8.9.2.26"));
    CHECK(found[1].name == "tensorflow");
    CHECK(found[1].version == "2.10.1");
    CHECK(found[1].cuda == std::optional<std::string>("11.2"));
    CHECK(found[1].cudnn == std::optional<std::string>("8"));

    SECTION("JAX with its CUDA 13 plugin and cuDNN wheel, as the real wheels install them") {
        write_file(site + "/jax/version.py", "_version = \"0.10.2\"\n_release_version: str = '0.10.2'\n"
                                             "  if _release_version is not None:\n");
        write_file(site + "/jax_cuda13_plugin/__init__.py", "");
        write_file(site + "/jax_cuda13_plugin-0.10.2.dist-info/METADATA",
                   "Name: jax-cuda13-plugin\nRequires-Dist: nvidia-cuda-runtime>=13.0.48; extra == \"with-cuda\"\n"
                   "Requires-Dist: nvidia-cudnn-cu13<10.0,>=9.12.0.46; extra == \"with-cuda\"\n");
        write_file(site + "/jax_plugins/xla_cuda13/__init__.py", "");
        auto jax = find_frameworks({site}, view);
        REQUIRE(jax.size() == 3);
        CHECK(jax[2].name == "jax");
        CHECK(jax[2].version == "0.10.2");
        CHECK(jax[2].location == site + "/jax");
        CHECK(jax[2].cuda == std::optional<std::string>("13.0"));
        CHECK(jax[2].cudnn == std::optional<std::string>("9.12.0.46"));
        CHECK(jax[2].own_cudnn_dir == std::optional<std::string>(site + "/nvidia/cudnn/lib"));
        CHECK(jax[2].own_cudnn_version == std::optional<std::string>("8.9.2.26"));
        CHECK_FALSE(jax[2].own_cudnn_rpath); // an empty file: no ELF, no RPATH
    }
    SECTION("torch and TensorFlow half-installed: the folder without its version file is damaged") {
        fs::remove(site + "/torch/version.py");
        fs::remove(site + "/tensorflow/python/platform/build_info.py");
        t.mkdir("lib/python3.10/site-packages/torch-2.1.2.dist-info");
        auto half = find_frameworks({site}, view);
        REQUIRE(half.size() == 2);
        CHECK(half[0].name == "pytorch");
        CHECK(half[0].version == "2.1.2"); // from its dist-info's name
        CHECK(half[0].damaged == site + "/torch/version.py is missing or unreadable");
        CHECK_FALSE(half[0].cuda);
        CHECK(half[1].name == "tensorflow");
        CHECK(half[1].damaged == site + "/tensorflow/python/platform/build_info.py is missing or unreadable");
        CHECK(reinstall_fix(half[0], "/v/bin/python") ==
              "reinstall it: `/v/bin/python -m pip install --force-reinstall --no-deps torch==2.1.2` (from the index it "
              "came from)");
        // A bare folder called torch, with neither __init__.py nor a dist-info, is not a package.
        fs::remove_all(site + "/torch-2.1.2.dist-info");
        auto bare = find_frameworks({site}, view);
        REQUIRE(bare.size() == 1);
        CHECK(bare[0].name == "tensorflow");
    }
    SECTION("JAX's bad files: no version file, an unreadable dist-info; reported with what is known") {
        t.mkdir("lib/python3.10/site-packages/jax");
        write_file(site + "/jax/__init__.py", "raise SystemExit('never run')\n");
        t.mkdir("lib/python3.10/site-packages/jax-0.9.1.dist-info");
        t.mkdir("lib/python3.10/site-packages/jax_cuda12_plugin");
        // The plugin's dist-info is a file (its METADATA cannot be read): the CUDA its name says.
        write_file(site + "/jax_cuda12_plugin-0.9.1.dist-info", "not a folder");
        auto jax = find_frameworks({site}, view);
        REQUIRE(jax.size() == 3);
        CHECK(jax[2].version == "0.9.1"); // from jax's dist-info name
        CHECK(jax[2].cuda == std::optional<std::string>("12"));
        CHECK_FALSE(jax[2].cudnn);
        fs::remove(site + "/jax-0.9.1.dist-info");
        fs::remove_all(site + "/jax_cuda12_plugin");
        auto cpu = find_frameworks({site}, view);
        REQUIRE(cpu.size() == 3);
        CHECK(cpu[2].version.empty());
        CHECK_FALSE(cpu[2].cuda); // no plugin: a CPU-only JAX
        CHECK_FALSE(cpu[2].own_cudnn_dir);
    }
    SECTION("through a Python interpreter (a fake that prints its search path)") {
        const std::string python = t.str("bin/python3");
        write_file(python, "#!/bin/sh\necho '{\"version\": \"3.10.12\", \"path\": [\"\", \"" +
                               site + "\"]}'\n");
        fs::permissions(python, fs::perms::owner_all);
        auto info = inspect_python(python, view);
        REQUIRE(info);
        CHECK(info->version == "3.10.12");
        CHECK(info->search_path == std::vector<std::string>{site});
        CHECK(info->frameworks.size() == 2);
    }
    SECTION("a real python3, when there is one") {
        auto python = find_program("python3");
        if (!python) return;
        auto info = inspect_python(*python, view);
        REQUIRE(info);
        CHECK_FALSE(info->version.empty());
        CHECK_FALSE(info->search_path.empty());
    }
}
