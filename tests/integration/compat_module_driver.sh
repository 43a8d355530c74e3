#!/usr/bin/env bash
# Modules of `cvm export` check the node's driver when loaded (real Lmod, Lua and Tcl modules):
# below CUDA 11.2.2's own floor (460.32.03) a warning, below CUDA 11's minor-version
# compatibility floor (450.80.02) a refusal, and nothing at all where no driver answers. The
# driver comes from /proc/driver/nvidia/version (CVM_PROC_DRIVER_VERSION names a copy here) or
# from nvidia-smi on PATH (fakes printing the real program's output).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_teams.sh"

need_lmod

T=$TEST_TMP
make_toolkit "$T/cuda-11.2.2" 11.2.2
"$CVM" import "$T/cuda-11.2.2" 2>/dev/null
expect_rc 0 "$CVM" export lmod "$T/modules/lua"
expect_rc 0 "$CVM" export tcl "$T/modules/tcl"

# smi VERSION: a fake nvidia-smi answering like the real one of that driver.
mkdir -p "$T/smi"
smi() {
    cat > "$T/smi/nvidia-smi" <<EOS
#!/bin/sh
if [ "\$1" = "--query-gpu=driver_version" ]; then echo "$1"; exit 0; fi
cat <<'BANNER'
Mon Dec  1 04:14:24 2026
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI $1              Driver Version: $1      CUDA Version: 11.4     |
|-----------------------------------------+------------------------+----------------------+
BANNER
EOS
    chmod +x "$T/smi/nvidia-smi"
}
NO_PROC="$T/no-such-proc-file"

for fmt in lua tcl tcl-tclsh; do
    M="$T/modules/${fmt%-tclsh}"
    if [[ $fmt == tcl-tclsh ]]; then export LMOD_FAST_TCL_INTERP=no; else unset LMOD_FAST_TCL_INTERP; fi
    # load PROC_FILE: loads cuda/11.2.2 with the fake nvidia-smi first on PATH; prints stderr,
    # then the CVM_ACTIVE it left.
    load() {
        in_lmod "$M" "export PATH=\"$T/smi:\$PATH\" CVM_PROC_DRIVER_VERSION=\"$1\"; module load cuda/11.2.2 2>&1 || true; echo \"ACTIVE=\${CVM_ACTIVE:-}\"" 2>&1 || true
    }

    smi 470.57.02
    out=$(load "$NO_PROC")
    assert_contains "$out" "ACTIVE=11.2.2" "$fmt: a new enough driver"
    assert_not_contains "$out" "driver" "$fmt: a new enough driver is not mentioned"

    smi 455.45.01
    out=$(load "$NO_PROC")
    assert_contains "$out" "ACTIVE=11.2.2" "$fmt: below the release floor still loads"
    assert_contains "$out" "this node's NVIDIA driver 455.45.01 is older than CUDA 11.2.2's 460.32.03" "$fmt: the warning"

    smi 418.67
    out=$(load "$NO_PROC")
    assert_contains "$out" "cuda/11.2.2 needs NVIDIA driver 450.80.02 or newer" "$fmt: the refusal"
    assert_contains "$out" "this node has 418.67" "$fmt: the refusal names the driver"
    assert_not_contains "$out" "ACTIVE=11.2.2" "$fmt: refused, yet loaded"

    # /proc/driver/nvidia/version answers before nvidia-smi (the proprietary and the open module).
    printf 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  440.33.01  Wed Nov 13 00:00:22 UTC 2019\nGCC version:  gcc version 7.3.0 (GCC)\n' > "$T/proc-old"
    printf 'NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  460.32.03  Release Build  (dvs-builder@U16-T02-35-3)  Sun Jan 10 00:00:00 UTC 2021\nGCC version:  gcc version 9.3.0\n' > "$T/proc-floor"
    smi 470.57.02
    out=$(load "$T/proc-old")
    assert_contains "$out" "this node has 440.33.01" "$fmt: the kernel module's version"
    assert_not_contains "$out" "ACTIVE=11.2.2" "$fmt: refused by /proc"
    out=$(load "$T/proc-floor")
    assert_contains "$out" "ACTIVE=11.2.2" "$fmt: exactly the floor"
    assert_not_contains "$out" "driver" "$fmt: exactly the floor is not mentioned"

    # No driver at all (a login or build node): silent.
    rm -f "$T/smi/nvidia-smi"
    out=$(load "$NO_PROC")
    assert_contains "$out" "ACTIVE=11.2.2" "$fmt: no driver"
    assert_not_contains "$out" "driver" "$fmt: no driver is not mentioned"

    # Unloading under an old driver is never refused.
    smi 418.67
    out=$(in_lmod "$M" "export CVM_PROC_DRIVER_VERSION=\"$NO_PROC\"; module load cuda/11.2.2; export PATH=\"$T/smi:\$PATH\"; module unload cuda/11.2.2 2>&1; echo \"ACTIVE=\${CVM_ACTIVE:-}\"" 2>&1 || true)
    assert_contains "$out" "ACTIVE=" "$fmt: unload"
    assert_not_contains "$out" "ACTIVE=11.2.2" "$fmt: unloaded"
    assert_not_contains "$out" "needs NVIDIA driver" "$fmt: unloading checks nothing"
    rm -f "$T/smi/nvidia-smi"
done
echo "compat_module_driver: ok"
