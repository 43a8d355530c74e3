# Helpers for the probe's integration tests (sourced). Needs CVM_BIN and CVM_SOURCE_DIR.

: "${CVM_SOURCE_DIR:?set CVM_SOURCE_DIR to the repository root}"
: "${CVM_BIN:?set CVM_BIN to the folder holding cvm-probe}"
PROBE="$CVM_BIN/cvm-probe"
FAKES_SRC="$CVM_SOURCE_DIR/tests/probe_fakes"

probe_fail() {
    echo "FAIL: $*" >&2
    exit 1
}

probe_need_tools() {
    [ -x "$PROBE" ] || probe_fail "no cvm-probe at $PROBE"
    command -v "${CC:-cc}" >/dev/null || { echo "SKIP: no C compiler" >&2; exit 77; }
    command -v jq >/dev/null || { echo "SKIP: jq is not installed" >&2; exit 77; }
}

# probe_compile OUT SONAME FLAGS... : one shared library from fake_cudnn.c or fake_cudart.c.
probe_compile() {
    local out=$1 soname=$2 source=$3
    shift 3
    # The fakes are plain C and never built with the sanitizers of the program under test.
    "${CC:-cc}" -shared -fPIC -O2 -w -o "$out" -Wl,-soname,"$soname" "$@" "$FAKES_SRC/$source" \
        || probe_fail "could not build $out"
}

# probe_build_fakes DIR [MAJOR [EXTRA CFLAGS...]] : a fake cuDNN of generation MAJOR (9, 8, 7) with
# its sub-libraries, and a fake CUDA runtime for it, in DIR. EXTRA CFLAGS go to the front library
# (for example -DFAKE_OMIT_FORWARD).
probe_build_fakes() {
    local dir=$1 major=${2:-9}
    shift 2 || shift $#
    mkdir -p "$dir"
    local cudart_version cudart_soname
    case $major in
    9) cudart_version=13000 cudart_soname=libcudart.so.13 ;;
    8) cudart_version=12020 cudart_soname=libcudart.so.12 ;;
    7) cudart_version=10020 cudart_soname=libcudart.so.10.2 ;;
    *) probe_fail "no fake for cuDNN $major" ;;
    esac
    local common=(-DFAKE_MAJOR="$major" -DFAKE_CUDART_VERSION="$cudart_version")
    probe_compile "$dir/$cudart_soname" "$cudart_soname" fake_cudart.c \
        -DFAKE_RUNTIME_VERSION="$cudart_version"
    local front=libcudnn.so.$major
    case $major in
    9)
        probe_compile "$dir/$front" "$front" fake_cudnn.c "${common[@]}" -DFAKE_FRONT "$@" \
            -Wl,-rpath,'$ORIGIN' -Wl,--enable-new-dtags -ldl
        probe_compile "$dir/libcudnn_graph.so.9" libcudnn_graph.so.9 fake_cudnn.c "${common[@]}" \
            -DFAKE_WITH_GRAPH
        probe_compile "$dir/libcudnn_ops.so.9" libcudnn_ops.so.9 fake_cudnn.c "${common[@]}" \
            -DFAKE_WITH_OPS
        probe_compile "$dir/libcudnn_cnn.so.9" libcudnn_cnn.so.9 fake_cudnn.c "${common[@]}" \
            -DFAKE_WITH_CNN
        for sub in adv heuristic engines_precompiled engines_runtime_compiled; do
            probe_compile "$dir/libcudnn_$sub.so.9" "libcudnn_$sub.so.9" fake_cudnn.c "${common[@]}"
        done
        ;;
    8)
        probe_compile "$dir/$front" "$front" fake_cudnn.c "${common[@]}" -DFAKE_FRONT "$@" \
            -Wl,-rpath,'$ORIGIN' -Wl,--enable-new-dtags -ldl
        probe_compile "$dir/libcudnn_ops_infer.so.8" libcudnn_ops_infer.so.8 fake_cudnn.c \
            "${common[@]}" -DFAKE_WITH_GRAPH -DFAKE_WITH_OPS
        probe_compile "$dir/libcudnn_cnn_infer.so.8" libcudnn_cnn_infer.so.8 fake_cudnn.c \
            "${common[@]}" -DFAKE_WITH_CNN
        for sub in ops_train cnn_train adv_infer adv_train; do
            probe_compile "$dir/libcudnn_$sub.so.8" "libcudnn_$sub.so.8" fake_cudnn.c "${common[@]}"
        done
        ;;
    7)
        probe_compile "$dir/$front" "$front" fake_cudnn.c "${common[@]}" -DFAKE_WITH_GRAPH \
            -DFAKE_WITH_OPS -DFAKE_WITH_CNN "$@"
        ;;
    esac
}

# probe_run OUTFILE [ARGS...] : runs cvm-probe, stdout to OUTFILE; sets PROBE_RC. A death by
# signal (rc > 128) fails the test at once: the probe must never crash.
probe_run() {
    local out=$1
    shift
    PROBE_RC=0
    "$PROBE" "$@" >"$out" 2>"$out.err" || PROBE_RC=$?
    if [ "$PROBE_RC" -gt 128 ]; then
        cat "$out" "$out.err" >&2
        probe_fail "cvm-probe $* died with status $PROBE_RC"
    fi
}

# probe_expect_rc WANT WHAT OUTFILE
probe_expect_rc() {
    if [ "$PROBE_RC" != "$1" ]; then
        cat "$3" "$3.err" >&2
        probe_fail "$2: exit status $PROBE_RC, expected $1"
    fi
}

# probe_jq OUTFILE FILTER WHAT : fails unless the jq filter is true for the JSON report.
probe_jq() {
    jq -e "$2" "$1" >/dev/null || {
        cat "$1" >&2
        probe_fail "$3 (jq: $2)"
    }
}

# probe_build_nccl DIR [VERSION [CODE [CUDA]]] : a fake libnccl.so.2 (a link to
# libnccl.so.VERSION, as NVIDIA's packages lay it out) carrying NCCL's banner, in DIR.
probe_build_nccl() {
    local dir=$1 version=${2:-2.28.9} code=${3:-22809} cuda=${4:-13.0}
    mkdir -p "$dir"
    probe_compile "$dir/libnccl.so.$version" libnccl.so.2 fake_nccl.c \
        -DFAKE_NCCL_VERSION="\"$version\"" -DFAKE_NCCL_CODE="$code" -DFAKE_NCCL_CUDA="\"$cuda\""
    ln -sf "libnccl.so.$version" "$dir/libnccl.so.2"
}
