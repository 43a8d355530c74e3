#!/usr/bin/env bash
# The folders' layering rule (docs/architecture.md, "Floors"), checked on the sources: every
# `#include "folder/..."` under src/ and shims/ must name a folder below the including one in
# the floors written there (or one of those an off-the-line folder lists: the shim, the probe
# helper), and no two files of one folder may include each other in a loop (a room is a header
# with its .cpp: store.cpp including entry_trust.h, whose header includes store.h, is a loop).
# Fails naming the file and line of each include that breaks the rule.
source "$(dirname "$0")/lib.sh"
need_tools python3

python3 - "$CVM_SOURCE_DIR" <<'EOF' || fail "includes against the layering rule (above): move the code to the floor it belongs to"
import collections, pathlib, re, sys

root = pathlib.Path(sys.argv[1])
# Loops known and being broken, each with where its fix is tracked; a loop not listed fails.
known_loops = {
}

# The floors, bottom up, from the one place they are written.
doc = (root / "docs/architecture.md").read_text(encoding="utf-8")
block = re.search(r"^```floors\n(.*?)^```", doc, re.M | re.S)
if not block:
    sys.exit("docs/architecture.md has no ```floors block")
floor = {}        # folder -> its height in the tower
allowed = {}      # folder off the line -> the folders it may include
for line in block.group(1).splitlines():
    line = line.split("#", 1)[0].strip()
    if not line:
        continue
    name, _, rest = line.partition(":")
    if _:
        allowed[name.strip()] = set(rest.split())
    else:
        floor[name.strip()] = len(floor)

def may_include(a, b):
    if a in allowed:
        return b in allowed[a]
    return a in floor and b in floor and floor[b] < floor[a]

include = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
folders = {p.name for p in (root / "src").iterdir() if p.is_dir()}
bad = []
rooms = collections.defaultdict(lambda: collections.defaultdict(list))  # folder -> room -> [(room, where)]
sources = [p for base in ("src", "shims") for p in sorted((root / base).rglob("*"))
           if p.suffix in (".h", ".hpp", ".c", ".cpp")]
for path in sources:
    rel = path.relative_to(root).as_posix()
    parts = pathlib.PurePosixPath(rel).parts
    folder = parts[0] if parts[0] == "shims" else parts[1]
    if folder not in floor and folder not in allowed:
        bad.append(f"{rel}: the folder {folder} is not in docs/architecture.md's floors")
        continue
    base = root / ("shims" if folder == "shims" else "src/" + folder)
    room = path.relative_to(base).with_suffix("").as_posix()
    for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        m = include.match(line)
        if not m:
            continue
        target = m.group(1)
        if (path.parent / target).is_file():       # "x.h" beside the file
            included = (path.parent / target).resolve()
        elif target.split("/")[0] in folders and (root / "src" / target).is_file():
            included = (root / "src" / target).resolve()
        else:
            continue                                # a library's header (toml++/toml.h)
        to_rel = included.relative_to(root.resolve()).parts
        to_folder = to_rel[0] if to_rel[0] == "shims" else to_rel[1]
        where = f"{rel}:{n}: #include \"{target}\""
        if to_folder != folder:
            if not may_include(folder, to_folder):
                bad.append(f"{where}: {folder} may not include {to_folder} (not below it in the floors)")
            continue
        to_room = included.relative_to((base).resolve()).with_suffix("").as_posix()
        if to_room != room:
            rooms[folder][room].append((to_room, where))

# Loops between rooms of one folder: the strongly connected parts of its include graph.
found_loops = set()
for folder, graph in sorted(rooms.items()):
    index, low, stack, on_stack, parts = {}, {}, [], set(), []
    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w, _ in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                part.add(w)
                if w == v:
                    break
            if len(part) > 1:
                parts.append(part)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    for part in parts:
        names = frozenset(f"{folder}/{r}" for r in part)
        found_loops.add(names)
        if names in known_loops:
            print(f"known loop ({known_loops[names]}): {', '.join(sorted(names))}")
            continue
        bad.append(f"{folder}: {', '.join(sorted(part))} include each other in a loop:")
        for r in sorted(part):
            for to_room, where in graph[r]:
                if to_room in part:
                    bad.append(f"  {where}")

for names in known_loops.keys() - found_loops:
    bad.append(f"the known loop {', '.join(sorted(names))} is gone: take it off known_loops in this test")
for line in bad:
    print(line)
sys.exit(1 if bad else 0)
EOF
