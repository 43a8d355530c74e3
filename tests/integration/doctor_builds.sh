#!/usr/bin/env bash
# `cvm doctor` tells the truth about what a build and a program here see (issue 21): cvm's shims
# folder is no toolkit; the same file reached through a view is not "not selected"; a cuDNN built
# for another CUDA major that a program would load is an error whether or not the selection
# names a cuDNN; the cudnn.h a build in this shell would compile against is named when it is not
# the selection's; no fix pins the shell to one version.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_doctor.sh"
T=$TEST_TMP
export SHELL=/bin/bash

# lib OUT SOURCE: a real shared library; cuDNN 9 keeps the names it loads in its read-only data.
lib() {
    mkdir -p "$(dirname "$1")"
    printf '%s\n' "$2" > "$1.c"
    "$CC_BIN" -shared -fPIC -o "$1" "$1.c" -Wl,-soname,"$(basename "$1" | sed -E 's/(\.so\.[0-9]+).*/\1/')" || fail "cannot build $1"
}
loads() { printf 'const char* cvm_loads = "%s";\nint cvm_fn(void) { return 1; }\n' "$1"; }
version_h() { printf '#define CUDNN_MAJOR %s\n#define CUDNN_MINOR %s\n#define CUDNN_PATCHLEVEL %s\n' "$@"; }

doctor_toolkit "$T/cuda-11.8" 11.8.0 11.8.89
expect_rc 0 "$CVM" import "$T/cuda-11.8"
# A cuDNN 9 built for CUDA 13 in the machine's own library folder (as NVIDIA's apt package puts
# it): what any program of an 11.8 project that dlopens libcudnn.so.9 gets.
lib "$TEST_TMP/system/lib/libcudnn.so.9.14.0" "$(loads libnvrtc.so.13)"
lib "$TEST_TMP/system/lib/libcudnn_adv.so.9.14.0" "$(loads libcublasLt.so.13)"
for s in "" _adv; do ln -s "libcudnn$s.so.9.14.0" "$TEST_TMP/system/lib/libcudnn$s.so.9"; done

mkdir -p "$T/p" && cd "$T/p"
expect_rc 0 "$CVM" use 11.8

# 1. A shell set up as the README says (shims first): the shims folder is no second toolkit, and
# a cuDNN for CUDA 13 that programs here load is an error, with a fix that selects one.
export PATH="$CVM_ROOT/shims:$T/cuda-11.8/bin:/usr/bin:/bin"
rc=0; "$CVM" doctor --json > "$T/d1.json" 2>/dev/null || rc=$?
OUT=$(cat "$T/d1.json")
assert_not_contains "$(finding_codes)" "several-cuda-on-path" "the shims folder counted as a toolkit"
assert_contains "$(finding_codes)" "error:library-cuda-mismatch"
msg=$(finding_message library-cuda-mismatch)
assert_contains "$msg" "libcudnn.so.9 from $TEST_TMP/system/lib/libcudnn.so.9, a cuDNN built for CUDA 13"
assert_contains "$msg" "not for the selected CUDA 11.8.0"
assert_contains "$(json_get '[f["fix"] for f in d["findings"] if f["code"] == "library-cuda-mismatch"][0]')" "cvm use 11.8.0+CUDNN"
[[ $rc == 1 ]] || fail "doctor with a cuDNN of another CUDA exited $rc"
# Two real toolkits on PATH still count as two.
doctor_toolkit "$T/cuda-12.4" 12.4.0 12.4.99
rc=0; PATH="$CVM_ROOT/shims:$T/cuda-11.8/bin:$T/cuda-12.4/bin:/usr/bin:/bin" "$CVM" doctor --json > "$T/d2.json" 2>/dev/null || rc=$?
OUT=$(cat "$T/d2.json")
assert_contains "$(finding_codes)" "warning:several-cuda-on-path"
assert_contains "$(finding_message several-cuda-on-path)" "2 CUDA toolkits' folders are on PATH ($T/cuda-11.8/bin, $T/cuda-12.4/bin)"
# No fix anywhere pins the shell with `cvm env`.
for f in "$T/d1.json" "$T/d2.json"; do
    assert_not_contains "$(cat "$f")" 'eval \"$(cvm env)\"' "a fix that pins the shell"
done

# 2. With a cuDNN of its own for CUDA 11 selected: the program loads it, no mismatch.
D11=$T/cudnn-linux-x86_64-9.1.0.70_cuda11-archive
mkdir -p "$D11/include"
version_h 9 1 0 > "$D11/include/cudnn_version.h"
echo '#include "cudnn_version.h"' > "$D11/include/cudnn.h"
lib "$D11/lib/libcudnn.so.9.1.0" "$(loads libnvrtc.so.11.2)"
lib "$D11/lib/libcudnn_adv.so.9.1.0" "$(loads libcublasLt.so.11)"
for s in "" _adv; do ln -s "libcudnn$s.so.9.1.0" "$D11/lib/libcudnn$s.so.9"; done
expect_rc 0 "$CVM" import "$D11"
expect_rc 0 "$CVM" use 11.8+9.1
eval "$("$CVM" env --shell bash)"
rc=0; "$CVM" doctor --json > "$T/d3.json" 2>/dev/null || rc=$?
OUT=$(cat "$T/d3.json")
assert_not_contains "$(finding_codes)" "library-cuda-mismatch"
# In the activated shell a build sees the selection's cudnn.h (the view's nvcc, CPATH).
assert_not_contains "$(finding_codes)" "cudnn-header-elsewhere"
# The same file through the view's folder and through the toolkit's own is not "not selected".
LD_LIBRARY_PATH="$T/cuda-11.8/lib64:$LD_LIBRARY_PATH" "$CVM" doctor --json > "$T/d4.json" 2>/dev/null || true
OUT=$(cat "$T/d4.json")
assert_not_contains "$(json_get '" ".join(f["message"] for f in d["findings"] if f["code"] == "library-not-selected")')" "libcudart"
cvm_deactivate

# 3. A shell that runs the toolkit's own nvcc, with another release's cudnn.h on CPATH (where a
# distribution's /usr/include would be): the doctor names the file a build would compile against.
mkdir -p "$T/other-include"
version_h 9 14 0 > "$T/other-include/cudnn_version.h"
echo '#include "cudnn_version.h"' > "$T/other-include/cudnn.h"
rc=0; PATH="$T/cuda-11.8/bin:/usr/bin:/bin" CPATH="$T/other-include" "$CVM" doctor --json > "$T/d5.json" 2>/dev/null || rc=$?
OUT=$(cat "$T/d5.json")
assert_contains "$(finding_codes)" "warning:cudnn-header-elsewhere"
msg=$(finding_message cudnn-header-elsewhere)
assert_contains "$msg" "compiles against $T/other-include/cudnn.h (cuDNN 9.14.0), not the selected cuDNN 9.1.0"
fix=$(json_get '[f["fix"] for f in d["findings"] if f["code"] == "cudnn-header-elsewhere"][0]')
assert_contains "$fix" 'eval "$(cvm init bash)"'
# Through the shims the build is cvm's: nothing to say.
PATH="$CVM_ROOT/shims:/usr/bin:/bin" CPATH="$T/other-include" "$CVM" doctor --json > "$T/d6.json" 2>/dev/null || true
OUT=$(cat "$T/d6.json")
assert_not_contains "$(finding_codes)" "cudnn-header-elsewhere"
