#!/usr/bin/env bash
# Issue 39: every root cvm makes or links holds its component's whole tree as its source has it.
# NVIDIA's real wheels from PyPI (lib_wheels.sh: NCCL 2.32, cuDNN 9.28, the CUDA 13.5 runtime,
# nvcc and CCCL, which share nvidia/cu13/; CUDA 12.9's runtime with NCCL and cuDNN for CUDA 12)
# are installed by pip into a venv and imported as a user would (`cvm import SITE`); the folders
# a build is then given (CUDA_HOME, NCCL_HOME, CUDNN_ROOT and the merged view's include and
# library folders, from `cvm exec -- env`) are compared file by file with the wheels' folders
# (nccl_device/, include/cccl/, cccl/lib/cmake/, the sub-libraries cuDNN 9.2x added), and hold
# nothing else. NCCL in a toolkit folder (/usr/local/cuda-13.0) is compared with what its
# wheel's RECORD names; NCCL and cuDNN in apt-shaped /usr folders and a toolkit in a conda-shaped
# environment (targets/x86_64-linux/), each made of the wheels' files, with the
# files staged there (conda's channels and NVIDIA's apt repository are not reachable here). Bad input: a
# wheel pip left half-installed, a header folder that links out of the source or cannot be read.
# The first run downloads about 1.8 GB into CVM_TEST_CACHE; later runs take about 40 s.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_wheels.sh"
need_tools jq
unset CONDA_PREFIX VIRTUAL_ENV || true
export HOME="$TEST_TMP/home"
mkdir -p "$HOME"

# same_tree SOURCE ROOT [ALSO...]: every file below SOURCE (links followed; a wheel's __init__.py
# and __pycache__ left out) is the same file at its place below ROOT (and below each ALSO), and
# every file below ROOT is one of SOURCE's or of the other folders named by SAME_TREE_OTHERS.
same_tree() {
    python3 - "$@" << 'EOF' || fail "the root is not its source's tree (above)"
import os, sys
src, root, also = sys.argv[1], sys.argv[2], sys.argv[3:]
others = [p for p in os.environ.get("SAME_TREE_OTHERS", "").split(":") if p]
skip = {"__init__.py", "__pycache__", ".cvm-view"}  # the last: the view's own mark
def files(top):
    for d, dirs, names in os.walk(top, followlinks=True):
        dirs[:] = [x for x in dirs if x not in skip]
        for n in names:
            if n not in skip:
                yield os.path.relpath(os.path.join(d, n), top)
bad = []
want = sorted(files(src))
if not want:
    bad.append("%s holds no files" % src)
for rel in want:
    for top in [root] + also:
        p = os.path.join(top, rel)
        if not os.path.exists(p) or not os.path.samefile(p, os.path.join(src, rel)):
            bad.append("%s is missing (its source has %s)" % (p, os.path.join(src, rel)))
mine = [os.path.realpath(x) for x in [src] + others]
for rel in files(root):
    real = os.path.realpath(os.path.join(root, rel))
    if not any(real == m or real.startswith(m + os.sep) for m in mine):
        bad.append("%s is not its source's (%s)" % (os.path.join(root, rel), real))
for b in bad[:10]:
    print("  " + b, file=sys.stderr)
if bad:
    print("  %d problems, %d files in %s" % (len(bad), len(want), src), file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
}
# env_of SPEC: the environment a build gets from cvm for SPEC, as NAME=VALUE lines in $ENV_OF.
env_of() {
    expect_rc 0 "$CVM" exec "$1" -- env
    ENV_OF=$OUT
}
var() { sed -n "s/^$1=//p" <<< "$ENV_OF"; }

# --- CUDA 13: the toolkit from three wheels sharing nvidia/cu13, NCCL and cuDNN beside it. ---
wheel_venv_cuda13
site13=$WHEEL_SITE
export CVM_ROOT="$TEST_TMP/s13"
expect_rc 0 "$CVM" import "$site13"
assert_contains "$ERR" "imported cuda 13.5.37 from $site13/nvidia"
assert_contains "$ERR" "imported nccl 2.32.6-cuda13"
assert_contains "$ERR" "imported cudnn 9.28.1.4-cuda13"
env_of 13.5+9.28+nccl2.32
cuda_home=$(var CUDA_HOME) nccl_home=$(var NCCL_HOME) cudnn_root=$(var CUDNN_ROOT)
[[ -n $cuda_home && -n $nccl_home && -n $cudnn_root ]] || fail "cvm exec gave no CUDA_HOME/NCCL_HOME/CUDNN_ROOT: $ENV_OF"
# NCCL: its root, and the view's folders a Makefile or CMake is pointed at. nccl-tests failed on
# nccl_device.h's #include "nccl_device/impl/..." when the root held nccl_device.h alone.
same_tree "$site13/nvidia/nccl" "$nccl_home"
[[ -f $nccl_home/include/nccl_device/impl/comm__funcs.h || -n $(ls "$nccl_home/include/nccl_device/impl") ]] ||
    fail "NCCL_HOME lacks include/nccl_device/impl"
SAME_TREE_OTHERS="$site13/nvidia" same_tree "$site13/nvidia/nccl/include" "$(var NCCL_INCLUDE_DIR)"
SAME_TREE_OTHERS="$site13/nvidia" same_tree "$site13/nvidia/nccl/lib" "$(var NCCL_LIB_DIR)"
# cuDNN: every sub-library the wheel has (9.2x added engines_tensor_ir and ext), its headers.
same_tree "$site13/nvidia/cudnn" "$cudnn_root"
SAME_TREE_OTHERS="$site13/nvidia" same_tree "$site13/nvidia/cudnn/lib" "$(var CUDNN_LIB_DIR)"
ls "$(var CUDNN_LIB_DIR)/libcudnn_ext.so.9" > /dev/null || fail "the view lacks cuDNN 9.28's libcudnn_ext"
# The toolkit: nvidia/cu13's whole tree in CUDA_HOME (include/cccl/, cccl/lib/cmake/, lib/ as
# the wheels' nvcc.profile names it), its libraries in lib64/ too.
SAME_TREE_OTHERS="$site13/nvidia" same_tree "$site13/nvidia/cu13" "$cuda_home"
SAME_TREE_OTHERS="$site13/nvidia" same_tree "$site13/nvidia/cu13/lib" "$cuda_home/lib64"
[[ -d $cuda_home/cccl/lib/cmake/cub && -f $cuda_home/include/cccl/cub/cub.cuh ]] || fail "CUDA_HOME lacks CCCL's tree"
# Its store root, before the view merges cuDNN and NCCL in: the toolkit alone.
troot="$CVM_ROOT/cuda/13.5.37/root"
same_tree "$site13/nvidia/cu13" "$troot"
[[ ! -e $troot/include/nccl.h && ! -e $troot/include/cudnn.h ]] || fail "the toolkit's root took NCCL's or cuDNN's headers"
# The real nvcc of the wheels compiles and links through that root with nothing given by hand: its
# nvcc.profile takes -I$(TOP)/include, -isystem $(TOP)/include/cccl and -L$(TOP)/lib (the lib/ the
# root now has beside lib64/), and thrust comes from CCCL's wheel.
mkdir -p "$TEST_TMP/nvcc13" && cd "$TEST_TMP/nvcc13"
cat > t.cu << 'EOF'
#include <thrust/device_vector.h>
#include <cuda_runtime.h>
__global__ void k(int* p) { p[threadIdx.x] = threadIdx.x; }
int main() { thrust::device_vector<int> v(4); k<<<1, 4>>>(thrust::raw_pointer_cast(v.data())); return 0; }
EOF
expect_rc 0 "$CVM" exec 13.5 -- nvcc -arch=sm_90 -cudart shared -o t t.cu
readelf -d t | grep -q 'NEEDED.*libcudart.so.13' || fail "nvcc 13.5 of the wheels made no program linked to libcudart.so.13"
cudart=$("$CVM" exec 13.5 -- sh -c 'ldd ./t' | sed -n 's/.*libcudart.so.13 => \([^ ]*\).*/\1/p')
[[ -n $cudart && $(readlink -f "$cudart") == "$site13"/nvidia/cu13/lib/* ]] ||
    fail "the program does not load the wheel's libcudart under cvm exec (ldd: $cudart)"
cd "$TEST_TMP"
expect_rc 0 "$CVM" verify
assert_not_contains "$OUT$ERR" "DAMAGED"
# Hints name only selections that resolve: the cuDNN part before the NCCL part (it was put after,
# a spec cvm refuses), and an NCCL built with CUDA 13.5 named by its major where no toolkit 13.5
# is installed (`cvm use 13.5+nccl2.32.6` named none).
mkdir -p "$TEST_TMP/p13" && cd "$TEST_TMP/p13"
expect_rc 0 "$CVM" use 13.5+nccl2.32
assert_contains "$ERR" "to use it: cvm use 13.5+9.28.1.4+nccl2.32"
CVM_ROOT="$TEST_TMP/nccl-only" expect_rc 0 "$CVM" import "$site13/nvidia/nccl"
assert_contains "$ERR" "next: cvm install 13 (no CUDA 13 toolkit is installed; then cvm use 13+nccl2.32.6)"
cd "$TEST_TMP"

# --- CUDA 12: one folder per toolkit component (nvidia/cuda_runtime). ---
wheel_venv_cuda12
site12=$WHEEL_SITE
export CVM_ROOT="$TEST_TMP/s12"
expect_rc 0 "$CVM" import "$site12"
assert_contains "$ERR" "imported cuda 12.9"
assert_contains "$ERR" "imported nccl 2.32.3-cuda12"
env_of 12.9+9.28+nccl2.32
same_tree "$site12/nvidia/nccl" "$(var NCCL_HOME)"
same_tree "$site12/nvidia/cudnn" "$(var CUDNN_ROOT)"
SAME_TREE_OTHERS="$site12/nvidia" same_tree "$site12/nvidia/cuda_runtime/include" "$(var CUDA_HOME)/include"
SAME_TREE_OTHERS="$site12/nvidia" same_tree "$site12/nvidia/cuda_runtime/lib" "$(var CUDA_HOME)/lib64"

# --- A conda environment laid out as conda's cuda-* packages do (targets/x86_64-linux/ for their
# headers and libraries, links in lib/, conda-meta/), made of the real CUDA 12.9 runtime wheel's
# files beside the environment's own python files: the root holds the whole targets tree's headers
# (cooperative_groups/ and all) and libraries, and nothing of the environment's other packages. ---
c=$TEST_TMP/conda-env
ct=$c/targets/x86_64-linux
mkdir -p "$ct" "$c/lib" "$c/include/python3.12" "$c/conda-meta" "$c/bin"
cp -al "$site12/nvidia/cuda_runtime/include" "$ct/include"
cp -al "$site12/nvidia/cuda_runtime/lib" "$ct/lib"
rm -f "$ct/include/__init__.py" "$ct/lib/__init__.py"
ln -s ../targets/x86_64-linux/lib/libcudart.so.12 "$c/lib/libcudart.so.12"
echo x > "$c/lib/libpython3.12.so.1.0" && echo x > "$c/include/python3.12/Python.h"
echo '{"name": "cuda-cudart", "version": "12.9.79", "depends": ["cuda-version >=12.9,<12.10.0a0"]}' > "$c/conda-meta/cuda-cudart-12.9.79-0.json"
echo '{"name": "cuda-version", "version": "12.9"}' > "$c/conda-meta/cuda-version-12.9-3.json"
echo '{"name": "python", "version": "3.12.3"}' > "$c/conda-meta/python-3.12.3-0.json"
export CVM_ROOT="$TEST_TMP/sconda"
expect_rc 0 "$CVM" import "$c"
assert_contains "$ERR" "imported cuda 12.9"
croot=$(echo "$CVM_ROOT"/cuda/12.9*/root)
same_tree "$ct/include" "$croot/include"
SAME_TREE_OTHERS="$ct" same_tree "$ct/lib" "$croot/lib64"
[[ ! -e $croot/include/python3.12 && ! -e $croot/lib64/libpython3.12.so.1.0 ]] || fail "the conda root took the environment's python files"

# --- NCCL in a toolkit folder laid out from NVIDIA's wheels: what its wheel's RECORD names. ---
cuda130=/usr/local/cuda-13.0
if [[ -f $cuda130/include/nccl.h ]] && compgen -G "$cuda130/dist-info/nvidia_nccl_cu13-*.dist-info/RECORD" > /dev/null; then
    export CVM_ROOT="$TEST_TMP/s130"
    expect_rc 0 "$CVM" import "$cuda130"
    env_of "13.0+nccl2.28"
    nroot=$(var NCCL_HOME)
    [[ $nroot == "$CVM_ROOT"/nccl/* ]] || fail "the NCCL in $cuda130 got no assembled root: NCCL_HOME=$nroot"
    python3 - "$cuda130" "$nroot" << 'EOF' || fail "the NCCL root of $cuda130 lacks files its RECORD names"
import csv, glob, os, sys
top, root = sys.argv[1], sys.argv[2]
rec = glob.glob(os.path.join(top, "dist-info", "nvidia_nccl_cu13-*.dist-info", "RECORD"))[0]
missing, n = [], 0
for row in csv.reader(open(rec)):
    p = row[0]
    if not p.startswith("nvidia/nccl/") or p.endswith("__init__.py") or "/__pycache__/" in p:
        continue
    rel = p[len("nvidia/nccl/"):]
    n += 1
    if not os.path.exists(os.path.join(root, rel)):
        missing.append(rel)
print("  %d files named, %d missing %s" % (n, len(missing), missing[:5]), file=sys.stderr)
sys.exit(1 if missing or n == 0 else 0)
EOF
    [[ ! -e $nroot/include/cuda.h ]] || fail "the NCCL root took the toolkit's headers"
else
    echo "note: $cuda130 with its NCCL wheel's record is absent; its case is not run" >&2
fi

# copy_tree SRC DST: a copy of a folder for a test to change (hard links where the file system
# allows, so the copy costs no space).
copy_tree() { mkdir -p "$(dirname "$2")"; cp -al "$1" "$2" 2> /dev/null || cp -a "$1" "$2"; }

# --- An apt-shaped /usr (libnccl2, libnccl-dev): a root of NCCL's files, header folders whole. ---
m=$TEST_TMP/machine
mkdir -p "$m/usr/lib/x86_64-linux-gnu" "$m/usr/include" "$m/var/lib/dpkg"
for f in "$site13"/nvidia/nccl/include/*; do copy_tree "$f" "$m/usr/include/${f##*/}"; done
echo '#define OTHER 1' > "$m/usr/include/zlib_like.h"
mkdir -p "$m/usr/include/other_dir" && echo x > "$m/usr/include/other_dir/x.h"
cp -l "$site13/nvidia/nccl/lib/libnccl.so.2" "$m/usr/lib/x86_64-linux-gnu/libnccl.so.2.32.6" 2> /dev/null ||
    cp "$site13/nvidia/nccl/lib/libnccl.so.2" "$m/usr/lib/x86_64-linux-gnu/libnccl.so.2.32.6"
ln -s libnccl.so.2.32.6 "$m/usr/lib/x86_64-linux-gnu/libnccl.so.2"
ln -s libnccl.so.2 "$m/usr/lib/x86_64-linux-gnu/libnccl.so"
echo x > "$m/usr/lib/x86_64-linux-gnu/libz.so.1"
printf 'Package: libnccl2\nStatus: install ok installed\nArchitecture: amd64\nVersion: 2.32.6-1+cuda13.0\n\nPackage: libnccl-dev\nStatus: install ok installed\nArchitecture: amd64\nVersion: 2.32.6-1+cuda13.0\n\n' > "$m/var/lib/dpkg/status"
export CVM_ROOT="$TEST_TMP/sapt"
expect_rc 0 "$CVM" import "$m/usr"
assert_contains "$ERR" "imported nccl 2.32.6-cuda13"
aroot=$(echo "$CVM_ROOT"/nccl/2.32.6-*/root)
SAME_TREE_OTHERS="$m/usr/include" same_tree "$site13/nvidia/nccl/include" "$aroot/include"
[[ ! -e $aroot/include/zlib_like.h && ! -e $aroot/include/other_dir && ! -e $aroot/lib/libz.so.1 ]] ||
    fail "the apt root took files that are not NCCL's: $(ls "$aroot/include" "$aroot/lib")"

# --- cuDNN as NVIDIA's apt packages lay it out (libcudnn9-cuda-13, libcudnn9-dev-cuda-13), made of
# the real 9.28 wheel's files: versioned libraries and headers in shared folders. The root holds
# every library of the release (9.2x's libcudnn_ext, _engines_tensor_ir included: read off the
# folder) and every header under its plain name, and nothing else of /usr. ---
a=$TEST_TMP/aptcudnn
al=$a/usr/lib/x86_64-linux-gnu ai=$a/usr/include/x86_64-linux-gnu
mkdir -p "$al" "$ai" "$a/var/lib/dpkg"
for f in "$site13"/nvidia/cudnn/lib/libcudnn*.so.9; do
    b=${f##*/}
    cp -l "$f" "$al/${b%.9}.9.28.1" 2> /dev/null || cp "$f" "$al/${b%.9}.9.28.1"
    ln -s "${b%.9}.9.28.1" "$al/$b"
    ln -s "$b" "$al/${b%.9}"
done
for f in "$site13"/nvidia/cudnn/include/cudnn*_v9.h "$site13"/nvidia/cudnn/include/cudnn_v9.h; do
    cp -l "$f" "$ai/" 2> /dev/null || cp "$f" "$ai/"
done
ln -sf x86_64-linux-gnu/cudnn_v9.h "$a/usr/include/cudnn.h"
echo x > "$al/libz.so.1" && echo x > "$a/usr/include/zlib.h"
printf 'Package: libcudnn9-cuda-13\nStatus: install ok installed\nArchitecture: amd64\nVersion: 9.28.1.4-1\n\nPackage: libcudnn9-dev-cuda-13\nStatus: install ok installed\nArchitecture: amd64\nVersion: 9.28.1.4-1\n\n' > "$a/var/lib/dpkg/status"
export CVM_ROOT="$TEST_TMP/saptcudnn"
expect_rc 0 "$CVM" import "$a/usr"
assert_contains "$ERR" "imported cudnn 9.28.1.4-cuda13"
croot=$CVM_ROOT/cudnn/9.28.1.4-cuda13/root
for f in "$site13"/nvidia/cudnn/lib/libcudnn*.so.9; do
    [[ $(readlink -f "$croot/lib/${f##*/}") == "$al/"* && -e $croot/lib/${f##*/} ]] || fail "the apt cuDNN root lacks lib/${f##*/}"
done
for f in "$site13"/nvidia/cudnn/include/cudnn*_v9.h; do
    n=${f##*/}
    [[ -e $croot/include/${n%_v9.h}.h ]] || fail "the apt cuDNN root lacks include/${n%_v9.h}.h"
done
[[ ! -e $croot/lib/libz.so.1 && ! -e $croot/include/zlib.h ]] || fail "the apt cuDNN root took files that are not cuDNN's"

# --- Bad input: nothing registered, nothing half-assembled left. ---
# refused DIR TEXT: `cvm import DIR` exits 2 with one line holding TEXT and leaves the store empty.
refused() {
    local store="$TEST_TMP/refused.$RANDOM"
    CVM_ROOT=$store expect_refused "$2" "$CVM" import "$1"
    [[ ! -e $store/nccl && ! -e $store/cuda && ! -e $store/cudnn ]] || fail "a refused import left $(find "$store" -maxdepth 3)"
    [[ -z $(find "$store" -name '*.tmp*' -o -name '.stage*' 2> /dev/null) ]] || fail "a refused import left a stage"
}
half=$TEST_TMP/half/site-packages
copy_tree "$site13/nvidia/nccl" "$half/nvidia/nccl"
copy_tree "$site13/nvidia_nccl_cu13-2.32.6.dist-info" "$half/nvidia_nccl_cu13-2.32.6.dist-info"
rm "$half/nvidia_nccl_cu13-2.32.6.dist-info/RECORD"
refused "$half" "nvidia_nccl_cu13-2.32.6.dist-info in $half is half-installed: it has no readable RECORD"
assert_contains "$ERR" "pip install --force-reinstall nvidia-nccl-cu13==2.32.6"
cp "$site13/nvidia_nccl_cu13-2.32.6.dist-info/RECORD" "$half/nvidia_nccl_cu13-2.32.6.dist-info/RECORD"
rm "$half/nvidia/nccl/include/nccl_device/impl/"$(ls "$half/nvidia/nccl/include/nccl_device/impl" | head -n 1)
refused "$half" "half-installed: its RECORD names nvidia/nccl/include/nccl_device/impl/"
# The same for cuDNN's wheel (a sub-library gone) and the toolkit's (a header of the runtime's gone).
half2=$TEST_TMP/half2/site-packages
copy_tree "$site13/nvidia/cudnn" "$half2/nvidia/cudnn"
copy_tree "$site13/nvidia_cudnn_cu13-9.28.1.4.dist-info" "$half2/nvidia_cudnn_cu13-9.28.1.4.dist-info"
rm "$half2/nvidia/cudnn/lib/libcudnn_ext.so.9"
refused "$half2" "half-installed: its RECORD names nvidia/cudnn/lib/libcudnn_ext.so.9, which is not there"
assert_contains "$ERR" "pip install --force-reinstall nvidia-cudnn-cu13==9.28.1.4"
half3=$TEST_TMP/half3/site-packages
copy_tree "$site13/nvidia/cu13" "$half3/nvidia/cu13"
for d in "$site13"/nvidia_cuda_*.dist-info; do copy_tree "$d" "$half3/${d##*/}"; done
rm "$half3/nvidia/cu13/include/cuda_runtime_api.h"
refused "$half3" "half-installed: its RECORD names nvidia/cu13/include/cuda_runtime_api.h, which is not there"
assert_contains "$ERR" "pip install --force-reinstall nvidia-cuda-runtime==13.5.37"
# A header folder that links out of the source.
rm -rf "$m/usr/include/nccl_device"
copy_tree "$site13/nvidia/nccl/include/nccl_device" "$TEST_TMP/elsewhere/nccl_device"
ln -s "$TEST_TMP/elsewhere/nccl_device" "$m/usr/include/nccl_device"
refused "$m/usr" "the folder $m/usr/include/nccl_device is a link out of $m/usr"
# One that cannot be read (by the user running cvm: root reads everything).
rm "$m/usr/include/nccl_device"
copy_tree "$site13/nvidia/nccl/include/nccl_device" "$m/usr/include/nccl_device"
chmod 000 "$m/usr/include/nccl_device/impl"
if [[ $(id -u) != 0 ]]; then
    refused "$m/usr" "the folder $m/usr/include/nccl_device/impl cannot be read"
elif command -v setpriv > /dev/null; then
    chmod -R go+rX "$TEST_TMP" && chmod 000 "$m/usr/include/nccl_device/impl" && chmod 755 "$TEST_TMP"
    store="$TEST_TMP/nobody"
    mkdir -p "$store" && chown nobody "$store"
    rc=0
    err=$(setpriv --reuid=nobody --regid=nogroup --clear-groups -- env HOME="$store" CVM_ROOT="$store/s" \
        "$CVM" import "$m/usr" 2>&1) || rc=$?
    assert_eq "$rc" 2 "an unreadable header folder"
    assert_contains "$err" "the folder $m/usr/include/nccl_device/impl cannot be read"
    [[ ! -e $store/s/nccl ]] || fail "a refused import registered an NCCL"
fi
chmod 755 "$m/usr/include/nccl_device/impl"
echo "PASS"
