#!/usr/bin/env bash
# cvm's libraries and unit tests compile as unity batches (CMakeLists.txt, tests/CMakeLists.txt):
# the files of one folder become parts of one larger file, where two files' own helpers of one
# name meet. With different parameters they
# silently become overloads of each other, or one hides a public function of the same name (how
# toolkit_layouts' multiarch_dirs(prefix) once took the calls meant for detect's multiarch_dirs(lib)
# and broke `cvm import` of NVIDIA's NCCL packages). This test fails when two source files of one
# folder define a function, type or constant of the same name at file level, apart from files
# that are never compiled together (one per OS, or per download backend).
source "$(dirname "$0")/lib.sh"
need_tools python3

python3 - "$CVM_SOURCE_DIR" <<'EOF' || fail "same-named file-level definitions in one library (above): rename one"
import collections, pathlib, re, sys

root = pathlib.Path(sys.argv[1])
# Files of which a build compiles only one.
alternatives = [
    ("os_posix.cpp", "os_windows.cpp"),
    ("_curl.cpp", "download_none.cpp"),  # the files of downloads with libcurl, and without
    ("sha256_openssl.cpp", "sha256_bcrypt.cpp"),
]
# An OS's own files (platform/posix/, platform/windows/): a build compiles one folder of the two.
os_folders = ("platform/posix/", "platform/windows/")
# Overloads on distinct enum types: no conversion can pick the wrong one.
overloads = {"to_string"}

function = re.compile(r"^(?:static\s+|inline\s+|constexpr\s+)*(?:const\s+)?[\w:<>,*&]+(?:<[^;{()]*>)?[\s*&]+(\w+)\s*\(", re.M)
constant = re.compile(r"^(?:static\s+)?(?:constexpr|const)\s+[\w:<>\s*]+?\s+(\w+)\s*(?:=|\[|\{)", re.M)
# (`using X = ...` aliases are left out: two of one name and type are allowed, of two types an error.)
type_name = re.compile(r"^(?:struct|class|enum class|enum)\s+(\w+)\s*[:{]", re.M)
keywords = {"if", "for", "while", "switch", "return", "catch", "defined", "main"}

def os_folder(f):
    return next((d for d in os_folders if f.startswith(d)), None)

def never_together(a, b):
    if os_folder(a) and os_folder(b) and os_folder(a) != os_folder(b):
        return True
    return any((a.endswith(x) and b.endswith(y)) or (a.endswith(y) and b.endswith(x)) for x, y in alternatives)

found = False
# The libraries' folders, and the unit tests' (one executable per folder, also in unity batches).
folders = [(base, p) for base in (root / "src", root / "tests" / "unit") for p in sorted(base.iterdir()) if p.is_dir()]
for base, folder in folders:
    names = collections.defaultdict(set)
    for cpp in sorted(folder.rglob("*.cpp")):
        text = cpp.read_text(encoding="utf-8", errors="replace")
        rel = cpp.relative_to(base).as_posix()
        for m in function.finditer(text):
            if m.group(1) not in keywords and m.group(1) not in overloads:
                names[m.group(1)].add(rel)
        for m in constant.finditer(text):
            names[m.group(1)].add(rel)
        for m in type_name.finditer(text):
            names[m.group(1)].add(rel)
    for name, files in sorted(names.items()):
        files = sorted(files)
        clash = [(a, b) for i, a in enumerate(files) for b in files[i + 1:] if not never_together(a, b)]
        if clash:
            found = True
            print(f"{name}: defined in {', '.join(files)}")
sys.exit(1 if found else 0)
EOF
