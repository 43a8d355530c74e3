#!/usr/bin/env python3
"""Builds the archives the install tests need, in every family NVIDIA ships, plus hostile ones.

    make_archives.py cudnn-legacy OUT (.tgz|.zip) --version 8.1.0 [--windows] [--skip LIB]
    make_archives.py cudnn-redist OUT (.tar.xz|.zip) --version 9.1.0 [--folder NAME] [--skip LIB]
                                       [--big MB] [--files N] [--no-links]
    make_archives.py cudnn-wheel OUT.whl --version 9.1.0.70 --project nvidia-cudnn-cu12
    make_archives.py component OUT.tar.xz --folder TOP [--tool bin/NAME] [--lib NAME] [--header NAME]
                                          [--cuda-h VERSION] [--big MB]
    make_archives.py hostile OUT KIND      (dotdot absolute symlink-out symlink-chain hardlink-out
                                            device fifo zip-dotdot zip-absolute)
    make_archives.py manifest OUT.json --product cuda|cudnn --base DIR --entry KEY=VERSION=RELPATH[=VARIANT]...
    make_archives.py nccl OUT.txz --version 2.21.5 --cuda 12.4 [--banner-version V] [--header-version V]
                                  [--folder NAME] [--revision 1]
    make_archives.py nccl-wheel OUT.whl --version 2.28.9 --cuda 13.0 --project nvidia-nccl-cu13
    make_archives.py nccl-lib OUT.so --version 2.21.5 --cuda 12.4 [--code N]

NCCL's library is tests/probe_fakes/fake_nccl.c compiled here ($CC, else cc): a real shared
object carrying NCCL's banner "NCCL version X.Y.Z+cudaM.m" and ncclGetVersion, as NVIDIA's does.

Library files are copies of a real ELF binary of this machine (/bin/true), so the platform check
sees a Linux build; Windows DLLs get a PE header.
"""
import argparse
import hashlib
import io
import json
import os
import sys
import tarfile
import zipfile

ELF = open("/bin/true", "rb").read()
PE = b"MZ" + b"\0" * 0x3A + b"\x40\0\0\0" + b"PE\0\0" + b"\x64\x86" + b"\0" * 400


def cudnn_header(version):
    major, minor, patch = version.split(".")[:3]
    factor = 10000 if int(major) >= 9 else 1000
    return ("#define CUDNN_MAJOR %s\n#define CUDNN_MINOR %s\n#define CUDNN_PATCHLEVEL %s\n"
            "#define CUDNN_VERSION (CUDNN_MAJOR * %d + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n"
            % (major, minor, patch, factor)).encode()


def subs(major):
    if major == 8:
        return ["", "_ops_infer", "_ops_train", "_cnn_infer", "_cnn_train", "_adv_infer", "_adv_train"]
    if major >= 9:
        return ["", "_ops", "_cnn", "_adv", "_graph", "_heuristic", "_engines_precompiled",
                "_engines_runtime_compiled"]
    return [""]


class Writer:
    """Collects entries, then writes a tar (gz/xz) or zip."""

    def __init__(self):
        self.entries = []  # (name, kind, data_or_target, mode)

    def file(self, name, data, mode=0o644):
        self.entries.append((name, "file", data, mode))

    def symlink(self, name, target):
        self.entries.append((name, "symlink", target, 0o777))

    def hardlink(self, name, target):
        self.entries.append((name, "hardlink", target, 0o644))

    def special(self, name, kind):
        self.entries.append((name, kind, None, 0o644))

    def write(self, out):
        if out.endswith((".zip", ".whl")):
            with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
                for name, kind, data, mode in self.entries:
                    info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
                    info.create_system = 3
                    if kind == "symlink":
                        info.external_attr = (0o120777 << 16)
                        z.writestr(info, data)
                    else:
                        info.external_attr = ((0o100000 | mode) << 16)
                        info.compress_type = zipfile.ZIP_DEFLATED
                        z.writestr(info, data)
            return
        compression = "xz" if out.endswith((".xz", ".txz")) else "gz" if out.endswith((".tgz", ".gz")) else ""
        with tarfile.open(out, "w:" + compression if compression else "w", format=tarfile.PAX_FORMAT) as t:
            for name, kind, data, mode in self.entries:
                info = tarfile.TarInfo(name)
                info.mtime = 1700000000
                info.mode = mode
                if kind == "file":
                    info.size = len(data)
                    t.addfile(info, io.BytesIO(data))
                    continue
                if kind == "symlink":
                    info.type, info.linkname = tarfile.SYMTYPE, data
                elif kind == "hardlink":
                    info.type, info.linkname = tarfile.LNKTYPE, data
                elif kind == "chr":
                    info.type, info.devmajor, info.devminor = tarfile.CHRTYPE, 1, 3
                elif kind == "fifo":
                    info.type = tarfile.FIFOTYPE
                t.addfile(info)


def add_cudnn(w, prefix, version, windows, lib_folder, skip):
    major = int(version.split(".")[0])
    full = ".".join(version.split(".")[:3])
    w.file(prefix + "include/cudnn_version.h", cudnn_header(version))
    w.file(prefix + "include/cudnn.h", b'#include "cudnn_version.h"\n')
    for sub in subs(major):
        if windows:
            dll = "cudnn%s64_%d.dll" % (sub, major)
            if dll != skip:
                w.file(prefix + "bin/" + dll, PE, 0o755)
            w.file(prefix + lib_folder + "cudnn%s.lib" % sub, b"import library")
        else:
            so = "libcudnn%s.so" % sub
            if "%s.%d" % (so, major) == skip:
                continue
            w.file(prefix + lib_folder + so + "." + full, ELF, 0o755)
            w.symlink(prefix + lib_folder + so + ".%d" % major, so + "." + full)
            w.symlink(prefix + lib_folder + so, so + ".%d" % major)
    w.file(prefix + "LICENSE", b"NVIDIA cuDNN license\n")


def nccl_library(version, cuda, code=None):
    """fake_nccl.c compiled with NCCL's banner for VERSION and CUDA."""
    import subprocess
    import tempfile
    x, y, z = (int(n) for n in version.split("."))
    if code is None:
        code = x * 1000 + y * 100 + z if (x <= 2 and y <= 8) else x * 10000 + y * 100 + z
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "probe_fakes", "fake_nccl.c")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "libnccl.so")
        subprocess.run([os.environ.get("CC", "cc"), "-shared", "-fPIC", "-O2", "-w", "-o", out,
                        "-Wl,-soname,libnccl.so.2", '-DFAKE_NCCL_VERSION="%s"' % version,
                        "-DFAKE_NCCL_CODE=%d" % code, '-DFAKE_NCCL_CUDA="%s"' % cuda, src], check=True)
        return open(out, "rb").read()


def nccl_header(version):
    x, y, z = version.split(".")
    return ("#define NCCL_MAJOR %s\n#define NCCL_MINOR %s\n#define NCCL_PATCH %s\n#define NCCL_SUFFIX \"\"\n"
            % (x, y, z)).encode()


def add_nccl(w, prefix, lib_version, header_version, cuda, wheel=False):
    lib = nccl_library(lib_version, cuda)
    w.file(prefix + "include/nccl.h", nccl_header(header_version))
    w.file(prefix + "include/nccl_net.h", b"/* net plugin API */\n")
    if wheel:
        # Wheels hold no links: NVIDIA's has the library itself as lib/libnccl.so.2.
        w.file(prefix + "lib/libnccl.so.2", lib, 0o755)
        w.file(prefix + "__init__.py", b"")
        return
    w.file(prefix + "lib/libnccl.so." + lib_version, lib, 0o755)
    w.symlink(prefix + "lib/libnccl.so.2", "libnccl.so." + lib_version)
    w.symlink(prefix + "lib/libnccl.so", "libnccl.so.2")
    w.file(prefix + "lib/libnccl_static.a", b"!<arch>\n")
    w.file(prefix + "lib/pkgconfig/nccl.pc", b"Name: nccl\n")



def wheel_record(w, dist):
    """The dist-info's RECORD, as pip's wheels carry it: every file with its sha256 (urlsafe
    base64, unpadded) and size, RECORD itself without."""
    import base64
    lines = []
    for name, kind, data, _mode in w.entries:
        if kind != "file":
            continue
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        lines.append("%s,sha256=%s,%d" % (name, digest, len(data)))
    lines.append(dist + "RECORD,,")
    w.file(dist + "RECORD", ("\n".join(lines) + "\n").encode())

def main():
    p = argparse.ArgumentParser()
    p.add_argument("what")
    p.add_argument("out")
    p.add_argument("kind", nargs="?")
    p.add_argument("--version", default="9.1.0")
    p.add_argument("--header-version")
    p.add_argument("--windows", action="store_true")
    p.add_argument("--skip", default="")
    p.add_argument("--folder")
    p.add_argument("--project", default="nvidia-cudnn-cu12")
    p.add_argument("--tool", action="append", default=[])
    p.add_argument("--lib", action="append", default=[])
    p.add_argument("--header", action="append", default=[])
    p.add_argument("--cuda-h")
    p.add_argument("--big", type=int, default=0)
    p.add_argument("--files", type=int, default=0)
    p.add_argument("--no-links", action="store_true")  # library links become copies
    p.add_argument("--product")
    p.add_argument("--base")
    p.add_argument("--entry", action="append", default=[])
    p.add_argument("--cuda", default="12.4")
    p.add_argument("--banner-version")
    p.add_argument("--revision", default="1")
    p.add_argument("--code", type=int)
    a = p.parse_args()
    w = Writer()
    header_version = a.header_version or a.version
    if a.what == "cudnn-legacy":
        add_cudnn(w, "cuda/", header_version, a.windows, "lib/x64/" if a.windows else "lib64/", a.skip)
        w.file("cuda/NVIDIA_SLA_cuDNN_Support.txt", b"sla\n")
    elif a.what == "cudnn-redist":
        folder = a.folder or os.path.basename(a.out).rsplit(".tar", 1)[0].rsplit(".zip", 1)[0]
        add_cudnn(w, folder + "/", header_version, a.windows, "lib/x64/" if a.windows else "lib/", a.skip)
        if a.big:
            w.file(folder + "/lib/big.bin", os.urandom(a.big << 20))
        for i in range(a.files):
            w.file(folder + "/share/doc/f%05d.txt" % i, b"x" * 1000)
        if a.no_links:
            w.entries = [(n, "file", ELF, 0o755) if k == "symlink" else (n, k, d, m)
                         for n, k, d, m in w.entries]
    elif a.what == "cudnn-wheel":
        add_cudnn(w, "nvidia/cudnn/", header_version, False, "lib/", a.skip)
        w.file("nvidia/__init__.py", b"")
        dist = a.project.replace("-", "_") + "-" + a.version + ".dist-info/"
        w.file(dist + "METADATA", ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n\nbody\n"
                                   % (a.project, a.version)).encode())
        w.file(dist + "WHEEL", b"Wheel-Version: 1.0\nTag: py3-none-manylinux2014_x86_64\n")
        wheel_record(w, dist)
    elif a.what == "nccl":
        folder = a.folder or "nccl_%s-%s+cuda%s_x86_64" % (a.version, a.revision, a.cuda)
        add_nccl(w, folder + "/", a.banner_version or a.version, a.header_version or a.version, a.cuda)
        w.file(folder + "/LICENSE.txt", b"NCCL license\n")
    elif a.what == "nccl-wheel":
        add_nccl(w, "nvidia/nccl/", a.banner_version or a.version, a.header_version or a.version, a.cuda, True)
        w.file("nvidia/__init__.py", b"")
        dist = a.project.replace("-", "_") + "-" + a.version + ".dist-info/"
        w.file(dist + "METADATA", ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n\nbody\n"
                                   % (a.project, a.version)).encode())
        w.file(dist + "WHEEL", b"Wheel-Version: 1.0\nTag: py3-none-manylinux_2_18_x86_64\n")
        wheel_record(w, dist)
    elif a.what == "nccl-lib":
        with open(a.out, "wb") as f:
            f.write(nccl_library(a.banner_version or a.version, a.cuda, a.code))
        os.chmod(a.out, 0o755)
        return
    elif a.what == "component":
        top = a.folder + "/"
        for tool in a.tool:
            w.file(top + tool, ELF, 0o755)
        for lib in a.lib:
            w.file(top + "lib/" + lib + ".1.0", ELF, 0o755)
            w.symlink(top + "lib/" + lib, lib + ".1.0")
        for h in a.header:
            w.file(top + "include/" + h, b"/* header */\n")
        if a.cuda_h:
            major, minor = a.cuda_h.split(".")[:2]
            w.file(top + "include/cuda.h", b"#define CUDA_VERSION %d\n" % (int(major) * 1000 + int(minor) * 10))
        if a.big:
            # Incompressible data, for tests that need the install to take a while.
            w.file(top + "lib/big.bin", os.urandom(a.big << 20))
        w.file(top + "LICENSE", b"license of " + a.folder.encode() + b"\n")
    elif a.what == "hostile":
        k = a.kind
        w.file("ok/file", b"fine")
        if k in ("dotdot", "zip-dotdot"):
            w.file("ok/../../evil", b"x")
        elif k in ("absolute", "zip-absolute"):
            w.file(os.path.join(os.path.dirname(os.path.abspath(a.out)), "abs-evil"), b"x")
        elif k == "symlink-out":
            w.symlink("ok/link", "../../outside")
            w.file("ok/link/evil", b"x")
        elif k == "symlink-chain":
            w.symlink("a/l1", "..")
            w.symlink("b", "a/l1/..")
        elif k == "hardlink-out":
            w.hardlink("ok/h", "../../etc/passwd")
        elif k == "device":
            w.special("ok/dev", "chr")
        elif k == "fifo":
            w.special("ok/fifo", "fifo")
        else:
            sys.exit("unknown hostile kind " + k)
    elif a.what == "manifest":
        doc = {"release_date": "2024-04-01", "release_label": "x", "release_product": a.product}
        for e in a.entry:
            parts = e.split("=")
            key, version, rel = parts[0], parts[1], parts[2]
            variant = parts[3] if len(parts) > 3 else None
            data = open(os.path.join(a.base, rel), "rb").read() if os.path.exists(os.path.join(a.base, rel)) else b""
            art = {"relative_path": rel, "sha256": hashlib.sha256(data).hexdigest(),
                   "md5": hashlib.md5(data).hexdigest(), "size": str(len(data))}
            comp = doc.setdefault(key, {"name": key, "license": "NVIDIA", "version": version})
            if variant:
                comp.setdefault("cuda_variant", []).append(variant)
                comp.setdefault("linux-x86_64", {})["cuda" + variant] = art
            else:
                comp["linux-x86_64"] = art
        with open(a.out, "w") as f:
            json.dump(doc, f, indent=4)
        return
    else:
        sys.exit("unknown: " + a.what)
    w.write(a.out)


if __name__ == "__main__":
    main()
