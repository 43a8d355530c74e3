#!/usr/bin/env bash
# `cvm export lmod|tcl DIR` loaded by the real Lmod (Debian's lmod package): both kinds of
# module set exactly what `cvm exec` sets, unloading restores the previous environment, a cudnn
# module needs a compatible cuda module and excludes other cudnn modules.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_teams.sh"

need_lmod

T=$TEST_TMP
make_toolkit "$T/cuda-11.2.2" 11.2.2
make_toolkit "$T/cuda-11.2.1" 11.2.1
make_toolkit "$T/cuda-12.4.1" 12.4.1
make_cudnn "$T/cudnn-8.1.0" 8.1.0
make_cudnn "$T/cudnn-8.1.1" 8.1.1
make_cudnn "$T/cudnn-9.1.0" 9.1.0
for d in cuda-11.2.2 cuda-11.2.1 cuda-12.4.1; do
    "$CVM" import "$T/$d" 2>/dev/null
done
"$CVM" import --cuda 11.2 "$T/cudnn-8.1.0" 2>/dev/null
"$CVM" import --cuda 11.2 "$T/cudnn-8.1.1" 2>/dev/null
"$CVM" import --cuda 12 "$T/cudnn-9.1.0" 2>/dev/null
DNN=8.1.0-cuda11.2

expect_rc 0 "$CVM" export lmod "$T/modules/lua"
assert_contains "$ERR" "wrote 6 modules"
[[ -f $T/modules/lua/cuda/11.2.2.lua && -f $T/modules/lua/cudnn/$DNN.lua ]] || fail "Lua modules missing"
expect_rc 0 "$CVM" export tcl "$T/modules/tcl"
[[ -f $T/modules/tcl/cuda/11.2.2 && -f $T/modules/tcl/cudnn/$DNN ]] || fail "Tcl modules missing"
head -1 "$T/modules/tcl/cuda/11.2.2" | grep -qx '#%Module1.0' || fail "Tcl module lacks its header"
expect_rc 2 "$CVM" export yaml "$T/modules/x"

# The environment a program sees before any module: a previous CUDA_PATH and library folder
# that unloading must give back.
export CUDA_PATH=/previous/cuda LD_LIBRARY_PATH=/opt/other/lib
# `cvm env` also removes other toolkits' folders from PATH; a module leaves that to the module
# system (family). So the comparison starts from a PATH without any (a machine's own
# /usr/local/cuda/bin, say). System folders are never another toolkit's, even when they hold an
# nvcc (Debian's nvidia-cuda-toolkit puts one in /usr/bin): cvm leaves them where they are.
clean_path=
IFS=: read -ra parts <<<"$PATH"
for p in "${parts[@]}"; do
    # Lmod also drops duplicates from any list it edits.
    [[ -z $p || :$clean_path: == *":$p:"* ]] && continue
    [[ -e $p/nvcc ]] && ! is_system_folder "$p" && continue
    clean_path+=${clean_path:+:}$p
done
export PATH=$clean_path
VARS="CUDA_PATH CUDA_HOME CUDA_PATH_V11_2 CUDNN_PATH PATH LD_LIBRARY_PATH CVM_ACTIVE CUDACXX CUDNN_ROOT CUDNN_INCLUDE_DIR CUDNN_LIB_DIR CPATH LIBRARY_PATH"

# same_vars WHAT A B: A and B (env listings) agree on every variable of VARS.
# With a cudnn module on a cuda module, the view's bin comes first and the toolkit's own bin (the
# cuda module's) stays behind it, where `cvm exec` drops it: PATH is compared without it.
no_tk_bin() { sed -E "s#(^|:)$T/cuda-[0-9.]+/bin(:|\$)#\1#; s#:\$##" <<<"$1"; }
same_vars() {
    local v a b
    for v in $VARS; do
        a=$(value_in "$2" "$v") b=$(value_in "$3" "$v")
        if [[ $v == PATH && $a == "$CVM_ROOT/views/"* ]]; then a=$(no_tk_bin "$a") b=$(no_tk_bin "$b"); fi
        [[ $a == "$b" ]] || fail "$1: $v is [$a], expected [$b]"
        # Set versus unset matters too.
        [[ $(grep -c "^$v=" <<<"$2") == $(grep -c "^$v=" <<<"$3") ]] ||
            fail "$1: $v set in one and not the other"
    done
}

# Tcl modules twice: through Lmod's built-in Tcl interpreter (the default) and through tclsh.
for fmt in lua tcl tcl-tclsh; do
    M="$T/modules/${fmt%-tclsh}"
    if [[ $fmt == tcl-tclsh ]]; then export LMOD_FAST_TCL_INTERP=no; else unset LMOD_FAST_TCL_INTERP; fi
    # Each scenario: a fresh shell; `cvm exec` inside it gives the expected environment.
    run() { in_lmod "$M" "$1"; }

    base=$(run 'env')
    out=$(run "module load cuda/11.2.2; echo ===; env; echo ===; \"$CVM\" exec --version 11.2.2 -- env")
    got=$(awk '/^===$/{n++; next} n==1' <<<"$out")
    want=$(awk '/^===$/{n++; next} n==2' <<<"$out")
    same_vars "$fmt cuda/11.2.2" "$got" "$want"
    assert_eq "$(value_in "$got" CUDA_PATH)" "$T/cuda-11.2.2" "$fmt: CUDA_PATH"

    out=$(run "module load cuda/11.2.2; module load cudnn/$DNN; echo ===; env; echo ===; \"$CVM\" exec --version 11.2.2+$DNN -- env")
    got=$(awk '/^===$/{n++; next} n==1' <<<"$out")
    want=$(awk '/^===$/{n++; next} n==2' <<<"$out")
    same_vars "$fmt cuda/11.2.2 + cudnn/$DNN" "$got" "$want"
    assert_eq "$(value_in "$got" CUDA_PATH)" "$CVM_ROOT/views/11.2.2+$DNN" "$fmt: CUDA_PATH names the merged view"
    assert_eq "$(value_in "$got" CUDNN_PATH)" "$T/cudnn-8.1.0" "$fmt: CUDNN_PATH"
    [[ -e $(value_in "$got" CUDA_PATH)/lib64/libcudnn.so.8 ]] || fail "$fmt: the view lacks libcudnn"

    # Unloading cudnn gives the cuda module's environment back; unloading cuda the original one.
    out=$(run "module load cuda/11.2.2; echo ===; env; echo ===; module load cudnn/$DNN; module unload cudnn; env")
    same_vars "$fmt unload cudnn" "$(awk '/^===$/{n++; next} n==2' <<<"$out")" "$(awk '/^===$/{n++; next} n==1' <<<"$out")"
    out=$(run "module load cuda/11.2.2; module load cudnn/$DNN; module unload cudnn; module unload cuda; env")
    same_vars "$fmt unload both" "$out" "$base"
    assert_eq "$(value_in "$out" CUDA_PATH)" /previous/cuda "$fmt: CUDA_PATH restored"

    # cudnn alone loads the newest compatible toolkit, and unloads it again.
    out=$(run "module load cudnn/$DNN; module -t list 2>&1; echo ===; env; echo ===; \"$CVM\" exec --version 11.2.2+$DNN -- env")
    assert_contains "$(awk '/^===$/{exit} 1' <<<"$out")" "cuda/11.2.2" "$fmt: cudnn loads its cuda"
    same_vars "$fmt cudnn alone" "$(awk '/^===$/{n++; next} n==1' <<<"$out")" "$(awk '/^===$/{n++; next} n==2' <<<"$out")"
    out=$(run "module load cudnn/$DNN; module unload cudnn; module -t list 2>&1; echo ===; env")
    assert_not_contains "$(awk '/^===$/{exit} 1' <<<"$out")" "cuda/" "$fmt: the cuda it loaded is unloaded"
    same_vars "$fmt cudnn alone, unloaded" "$(awk '/^===$/{n++; next} n==1' <<<"$out")" "$base"

    # With an older compatible toolkit loaded, the cudnn module uses that one's view.
    out=$(run "module load cuda/11.2.1; module load cudnn/$DNN; echo ===; env; echo ===; \"$CVM\" exec --version 11.2.1+$DNN -- env")
    same_vars "$fmt cuda/11.2.1 + cudnn" "$(awk '/^===$/{n++; next} n==1' <<<"$out")" "$(awk '/^===$/{n++; next} n==2' <<<"$out")"

    # An incompatible toolkit: refused, naming what to load.
    out=$(run "module load cuda/12.4.1; module load cudnn/$DNN 2>&1 || echo REFUSED; module -t list 2>&1; env" 2>&1 || true)
    assert_contains "$out" "built for CUDA 11.2" "$fmt: incompatible cuda"
    assert_not_contains "$out" "CVM_ACTIVE=12.4.1+" "$fmt: incompatible cudnn was loaded"
    assert_contains "$out" "CVM_ACTIVE=12.4.1" "$fmt: the loaded cuda stays"

    # Another cudnn module: never two at once (Lua: family swaps; Tcl: conflict refuses).
    out=$(run "module load cuda/11.2.2; module load cudnn/$DNN; module load cudnn/8.1.1-cuda11.2 2>&1 || true; module -t list 2>&1; echo ===; env" 2>&1 || true)
    n=$(awk '/^===$/{exit} 1' <<<"$out" | grep -c '^cudnn/' || true)
    assert_eq "$n" 1 "$fmt: cudnn modules loaded at once"
    loaded=$(awk '/^===$/{exit} 1' <<<"$out" | grep '^cudnn/')
    active=$(value_in "$(awk '/^===$/{n++; next} n==1' <<<"$out")" CVM_ACTIVE)
    assert_eq "$active" "11.2.2+${loaded#cudnn/}" "$fmt: CVM_ACTIVE follows the loaded cudnn"

    # Two cuda modules at once: never.
    out=$(run "module load cuda/11.2.2; module load cuda/12.4.1 2>&1 || true; module -t list 2>&1" 2>&1 || true)
    assert_eq "$(grep -c '^cuda/' <<<"$out")" 1 "$fmt: cuda modules loaded at once"

    # help and whatis.
    out=$(run "module help cuda/11.2.2 2>&1; module whatis cudnn/$DNN 2>&1")
    assert_contains "$out" "NVIDIA CUDA toolkit 11.2.2" "$fmt: help"
    assert_contains "$out" "CUDA_PATH=$T/cuda-11.2.2" "$fmt: help lists the values"
    assert_contains "$out" "built for CUDA 11.2" "$fmt: whatis"
done

# Exporting again after an uninstall removes the module of what is gone, and nothing else.
echo 'help("site")' > "$T/modules/lua/cuda/site.lua"
"$CVM" uninstall 12.4.1 2>/dev/null
expect_rc 0 "$CVM" export lmod "$T/modules/lua"
[[ ! -e $T/modules/lua/cuda/12.4.1.lua ]] || fail "stale module kept"
[[ -e $T/modules/lua/cuda/site.lua ]] || fail "a module cvm did not write was removed"
assert_contains "$ERR" "skipped cudnn 9.1.0-cuda12"
echo "teams_lmod: ok"
