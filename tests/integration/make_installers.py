#!/usr/bin/env python3
"""Builds NVIDIA-style CUDA installers for the install tests, in their real layouts.

    make_installers.py runfile OUT.run --version 11.2.2 [--layout 11|10|10.0] [--compress xz|gz]
                                       [--skip-lines N]
    make_installers.py windows OUT.exe --version 11.2.2 --stub STUB.exe [--at OFFSET]
    make_installers.py stub OUT.exe      (a small PE program, built with x86_64-w64-mingw32-gcc)

A runfile is a makeself archive: a shell header whose `head -n N "$0"` and filesizes="..."
locate a compressed tar payload (./builds/<component>/... in 11.x, ./builds/cuda-toolkit/ and
./builds/cublas/ in 10.1/10.2, ./run_files/*.run before). A Windows local installer is a PE
program followed by a 7-Zip archive written by p7zip (`7z a`), holding <component>/<part>/...;
--at pads the program so the archive starts at OFFSET. --skip-lines makes the header claim more
lines than the file has (a payload offset past the end).
"""
import argparse
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

ELF = open("/bin/true", "rb").read()
PE = b"MZ" + b"\0" * 0x3A + b"\x40\0\0\0" + b"PE\0\0" + b"\x64\x86" + b"\0" * 400


def tree_11(version, driver):
    """Linux 11.x payload: one folder per component below builds/."""
    major = version.split(".")[0]
    files = {
        "cuda-installer": ELF,
        "install.sh": b"#!/bin/sh\n",
        "builds/version.json": json.dumps({
            "cuda": {"name": "CUDA SDK", "version": version},
            "cuda_nvcc": {"name": "CUDA NVCC", "version": version.rsplit(".", 1)[0] + ".152"},
            "cuda_cudart": {"name": "CUDA Runtime (cudart)", "version": version.rsplit(".", 1)[0] + ".146"},
            "libcublas": {"name": "CUDA cuBLAS", "version": major + ".4.1.1043"},
        }, indent=3).encode(),
        "builds/cuda_nvcc/bin/nvcc": ELF,
        "builds/cuda_nvcc/bin/ptxas": ELF,
        "builds/cuda_nvcc/include/crt/host_defines.h": b"/* host_defines */\n",
        "builds/cuda_nvcc/nvvm/bin/cicc": ELF,
        "builds/cuda_nvcc/nvvm/lib64/libnvvm.so.4.0.0": ELF,
        "builds/cuda_nvcc/EULA.txt": b"EULA\n",
        "builds/cuda_cudart/targets/x86_64-linux/include/cuda_runtime.h": b"/* cuda_runtime */\n",
        "builds/cuda_cudart/targets/x86_64-linux/include/cuda.h": ("#define CUDA_VERSION %d%03d\n" % (
            int(major), int(version.split(".")[1]) * 10)).encode(),
        "builds/cuda_cudart/targets/x86_64-linux/lib/libcudart.so.%s.0" % major: ELF,
        "builds/cuda_cudart/targets/x86_64-linux/lib/stubs/libcuda.so": ELF,
        "builds/libcublas/targets/x86_64-linux/include/cublas_v2.h": b"/* cublas */\n",
        "builds/libcublas/targets/x86_64-linux/lib/libcublas.so.%s.4.1.1043" % major: ELF,
        "builds/cuda_gdb/bin/cuda-gdb": ELF,
        "builds/cuda_samples/0_Simple/vectorAdd/vectorAdd.cu": b"// sample\n",
        "builds/cuda_documentation/Doc/index.html": b"<html/>\n",
        "builds/nsight_compute/ncu": ELF,
        "builds/integration/Sanitizer/readme": b"x\n",
        "builds/NVIDIA-Linux-x86_64-%s.run" % driver: b"#!/bin/sh\n# the driver\n",
    }
    links = {
        "builds/cuda_cudart/include": "targets/x86_64-linux/include",
        "builds/cuda_cudart/lib64": "targets/x86_64-linux/lib",
        "builds/cuda_cudart/targets/x86_64-linux/lib/libcudart.so": "libcudart.so.%s.0" % major,
        "builds/libcublas/include": "targets/x86_64-linux/include",
        "builds/libcublas/lib64": "targets/x86_64-linux/lib",
        "builds/libcublas/targets/x86_64-linux/lib/libcublas.so.%s" % major: "libcublas.so.%s.4.1.1043" % major,
        "builds/libcublas/targets/x86_64-linux/lib/libcublas.so": "libcublas.so.%s" % major,
    }
    return files, links


def tree_10(version, driver):
    """Linux 10.1/10.2 payload: one merged toolkit tree, cuBLAS beside it."""
    t = "builds/cuda-toolkit/"
    files = {
        "cuda-installer": ELF,
        t + "bin/nvcc": ELF,
        t + "bin/nvvp": b"#!/bin/sh\n",
        t + "version.txt": ("CUDA Version %s\n" % version).encode(),
        t + "EULA.txt": b"EULA\n",
        t + "targets/x86_64-linux/include/cuda.h": b"#define CUDA_VERSION 10020\n",
        t + "targets/x86_64-linux/include/cuda_runtime.h": b"/* cuda_runtime */\n",
        t + "targets/x86_64-linux/lib/libcudart.so.%s" % version: ELF,
        t + "nvvm/bin/cicc": ELF,
        t + "extras/CUPTI/lib64/libcupti.so.%s" % version: ELF,
        t + "doc/html/index.html": b"<html/>\n",
        t + "samples/0_Simple/vectorAdd/vectorAdd.cu": b"// sample\n",
        t + "libnsight/nsight": ELF,
        t + "nsight-systems-2019.5.2/bin/nsys": ELF,
        "builds/cublas/include/cublas_v2.h": b"/* cublas */\n",
        "builds/cublas/lib64/libcublas.so.%s" % version: ELF,
        "builds/cublas/src/fortran.c": b"/* src */\n",
        "builds/cublas/EULA.txt": b"cuBLAS EULA\n",
        "builds/NVIDIA-Linux-x86_64-%s.run" % driver: b"#!/bin/sh\n",
    }
    links = {
        t + "include": "targets/x86_64-linux/include",
        t + "lib64": "targets/x86_64-linux/lib",
        t + "targets/x86_64-linux/lib/libcudart.so": "libcudart.so.%s" % version,
    }
    return files, links


def tree_100(version, driver):
    """Linux 10.0 and older: installers inside the installer."""
    return {"run_files/cuda-linux.%s-24817639.run" % version: b"#!/bin/sh\n",
            "run_files/NVIDIA-Linux-x86_64-%s.run" % driver: b"#!/bin/sh\n"}, {}


def tar_payload(files, links, compress):
    buf = io.BytesIO()
    mode = "w:xz" if compress == "xz" else "w:gz"
    with tarfile.open(fileobj=buf, mode=mode, format=tarfile.GNU_FORMAT) as tar:
        dirs = set()
        for name in list(files) + list(links):
            parts = name.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                dirs.add("/".join(parts[:i]))
        for d in sorted(dirs):
            info = tarfile.TarInfo("./" + d)
            info.type = tarfile.DIRTYPE
            info.mode = 0o755
            tar.addfile(info)
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo("./" + name)
            info.size = len(data)
            info.mode = 0o755 if data[:4] in (b"\x7fELF", b"#!/b") else 0o644
            tar.addfile(info, io.BytesIO(data))
        for name, target in sorted(links.items()):
            info = tarfile.TarInfo("./" + name)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            tar.addfile(info)
    return buf.getvalue()


# The header, as makeself writes it: N lines of script, then the payload. `head -n N "$0"`
# gives the payload's offset; filesizes its length (several payloads: several numbers).
HEADER = r'''#!/bin/sh
# This script was generated using Makeself 2.1.5
CRCsum="0000000000"
MD5="@MD5@"
TMPROOT=${TMPDIR:=/tmp}

label="CUDA Installer"
script="./cuda-installer"
scriptargs=""
licensetxt=""
targetdir="pkg"
filesizes="@SIZES@"
keep="n"
quiet="n"

MS_dd()
{
    blocks=`expr $3 / 1024`
    bytes=`expr $3 % 1024`
    dd if="$1" ibs=$2 skip=1 obs=1024 conv=sync 2> /dev/null | \
    { test $blocks -gt 0 && dd ibs=1024 obs=1024 count=$blocks ; \
      test $bytes  -gt 0 && dd ibs=1 obs=1024 count=$bytes ; } 2> /dev/null
}

case "$1" in
--list)
	offset=`head -n @SKIP@ "$0" | wc -c | tr -d " "`
	for s in $filesizes
	do
	    MS_dd "$0" $offset $s | eval "@UNPACK@" | tar tf -
	    offset=`expr $offset + $s`
	done
	exit 0
	;;
esac

echo "this test runfile is never run by cvm" >&2
offset=`head -n @SKIP@ "$0" | wc -c | tr -d " "`
exit 1
'''


def runfile(args):
    layout = {"11": tree_11, "10": tree_10, "10.0": tree_100}[args.layout]
    files, links = layout(args.version, args.driver)
    payload = tar_payload(files, links, args.compress)
    header = HEADER.replace("@MD5@", hashlib.md5(payload).hexdigest())
    header = header.replace("@SIZES@", str(len(payload)))
    header = header.replace("@UNPACK@", "xz -d" if args.compress == "xz" else "gzip -cd")
    lines = header.count("\n") + args.skip_lines
    header = header.replace("@SKIP@", str(lines))
    with open(args.out, "wb") as f:
        f.write(header.encode() + payload)
    os.chmod(args.out, 0o755)


def tree_windows(version):
    major = version.split(".")[0]
    return {
        "version.json": json.dumps({"cuda": {"name": "CUDA SDK", "version": version},
                                    "cuda_nvcc": {"name": "CUDA NVCC", "version": version.rsplit(".", 1)[0] + ".152"}},
                                   indent=3).encode(),
        "cuda_nvcc/nvcc/bin/nvcc.exe": PE,
        "cuda_nvcc/nvcc/bin/ptxas.exe": PE,
        "cuda_nvcc/nvcc/include/crt/host_defines.h": b"/* host_defines */\n",
        "cuda_nvcc/nvcc/nvvm/bin/nvvm64_40_0.dll": PE,
        "cuda_nvcc/nvcc/EULA.txt": b"EULA\n",
        "cuda_nvcc/nvcc/cuda_nvcc.nvi": b"<nvi/>\n",
        "cuda_cudart/cudart/bin/cudart64_110.dll": PE,
        "cuda_cudart/cudart/include/cuda_runtime.h": b"/* cuda_runtime */\n",
        "cuda_cudart/cudart/include/cuda.h": b"#define CUDA_VERSION 11020\n",
        "cuda_cudart/cudart/lib/x64/cudart.lib": b"!<arch>\n",
        "libcublas/cublas/bin/cublas64_%s.dll" % major: PE,
        "libcublas/cublas/bin/cublasLt64_%s.dll" % major: PE,
        "libcublas/cublas_dev/include/cublas_v2.h": b"/* cublas */\n",
        "libcublas/cublas_dev/lib/x64/cublas.lib": b"!<arch>\n",
        "cuda_nvprof/nvprof/bin/nvprof.exe": PE,
        "cuda_documentation/Doc/EULA.txt": b"EULA\n",
        "cuda_samples/0_Simple/vectorAdd/vectorAdd.cu": b"// sample\n",
        "Display.Driver/nvlddmkm.sys": PE,
        "nsight_compute/ncu.exe": PE,
        "visual_studio_integration/CUDAVisualStudioIntegration/extras/README": b"x\n",
    }


def windows(args):
    stub = open(args.stub, "rb").read()
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "tree")
        for name, data in tree_windows(args.version).items():
            path = os.path.join(src, *name.split("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(data)
        archive = os.path.join(tmp, "payload.7z")
        subprocess.run(["7z", "a", "-t7z", "-bd", "-y", archive, "."], cwd=src, check=True,
                       stdout=subprocess.DEVNULL)
        data = open(archive, "rb").read()
    at = args.at if args.at is not None else len(stub)
    if at < len(stub):
        sys.exit("--at %d is inside the %d-byte program" % (at, len(stub)))
    with open(args.out, "wb") as f:
        f.write(stub + b"\0" * (at - len(stub)) + data)


STUB_C = r'''
#include <stdio.h>
/* Bytes that look like a 7-Zip signature but start no archive (their start header's CRC fails). */
static const unsigned char decoy[40] = {'7', 'z', 0xBC, 0xAF, 0x27, 0x1C, 0, 4, 1, 2, 3, 4};
int main(void) {
    printf("This installer is a test stub (%d).\n", decoy[6]);
    return 0;
}
'''


def stub(args):
    with tempfile.TemporaryDirectory() as tmp:
        c = os.path.join(tmp, "stub.c")
        with open(c, "w") as f:
            f.write(STUB_C)
        subprocess.run(["x86_64-w64-mingw32-gcc", "-O1", "-s", "-o", args.out, c], check=True)


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("runfile")
    r.add_argument("out")
    r.add_argument("--version", required=True)
    r.add_argument("--driver", default="460.32.03")
    r.add_argument("--layout", default="11", choices=["11", "10", "10.0"])
    r.add_argument("--compress", default="xz", choices=["xz", "gz"])
    r.add_argument("--skip-lines", type=int, default=0)
    w = sub.add_parser("windows")
    w.add_argument("out")
    w.add_argument("--version", required=True)
    w.add_argument("--stub", required=True)
    w.add_argument("--at", type=lambda s: int(s, 0))
    s = sub.add_parser("stub")
    s.add_argument("out")
    a = p.parse_args()
    {"runfile": runfile, "windows": windows, "stub": stub}[a.cmd](a)


if __name__ == "__main__":
    main()
