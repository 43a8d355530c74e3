#!/usr/bin/env bash
# On the GPU machine (issue 40): PyTorch's own check under cvm, with its own cuDNN selected and
# with another, beside what cvm predicted from files before it ran.
#   For each cuDNN (the torch wheel's own nvidia/cudnn, NVIDIA's apt cuDNN in /usr, the toolkit
#   folder's when it has one), selected with the toolkit: `cvm use TK+CUDNN` (its one-line warning
#   or "error ahead"), `cvm doctor --json`'s framework finding, then under `cvm exec` PyTorch's
#   `torch.backends.cudnn.version()`, a convolution on the GPU compared with the CPU's, and the
#   cuDNN files the process maps; then `cvm probe --python` (every framework PYTHON has: PyTorch's
#   and JAX's checks and convolutions), its JSON kept in OUT; then the same checks under every way cvm
#   starts programs (cvm exec, cvm env, the prompt hook, cvm shell, an activation script, Lmod modules
#   where Lmod is installed). Two tables at the end.
#
#   scripts/gpu-frameworks.sh BUILD_DIR   (bin/cvm, bin/cvm-shim; or the folder of them)
#
# Variables: CUDA_DIR (default /usr/local/cuda), PYTHON (default /opt/torch/.venv/bin/python), OUT
# (folder for the reports; default a temporary one). Needs no network.
set -uo pipefail
BUILD=${1:?give the build folder (with bin/cvm and bin/cvm-shim)}
BIN=$BUILD
[ -x "$BIN/cvm" ] || BIN=$BUILD/bin
[ -x "$BIN/cvm" ] || { echo "gpu-frameworks: no cvm in $BUILD or $BUILD/bin" >&2; exit 2; }
BIN=$(cd "$BIN" && pwd)
CUDA_DIR=${CUDA_DIR:-/usr/local/cuda}
PYTHON=${PYTHON:-/opt/torch/.venv/bin/python}
OUT_DIR=${OUT:-$(mktemp -d)}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
[ -x "$PYTHON" ] || { echo "gpu-frameworks: no Python at $PYTHON; set PYTHON" >&2; exit 2; }
export CVM_ROOT=$WORK/root HOME=$WORK/home CVM_PYTHON=$PYTHON
mkdir -p "$HOME" "$WORK/project" "$OUT_DIR"
cvm() { "$BIN/cvm" "$@"; }

own=$("$PYTHON" -I -c 'import nvidia.cudnn as m; print(list(m.__path__)[0])' 2>/dev/null)
echo "== machine"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
"$PYTHON" -I -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
readelf -d "$own/lib/libcudnn.so.9" 2>/dev/null | grep -iE 'rpath|runpath'
echo "== imports"
cvm import "$CUDA_DIR"
cvm import "$own"
cvm import /usr
cvm list | tee "$OUT_DIR/list.txt"
TK=$(awk '/^cuda/{getline; print $1; exit}' "$OUT_DIR/list.txt")
CUDNNS=$(awk '/^cudnn/{f=1; next} /^[a-z]/{f=0} f && NF {print $1}' "$OUT_DIR/list.txt")
echo "toolkit $TK; cuDNN builds: $(echo $CUDNNS)"

ROWS=()
CUBLAS_ROWS=()
for id in $CUDNNS; do
    version=${id%%-*}
    spec=$TK+$version
    echo
    echo "== $spec"
    said=$(cd "$WORK/project" && cvm use "$spec" 2>&1)
    echo "$said"
    use_line=$(grep -oE 'warning: PyTorch|error ahead: PyTorch' <<< "$said" | head -n 1)
    code=$(CVM_VERSION=$spec cvm doctor --json 2>/dev/null |
        "$PYTHON" -c 'import json, sys; d = json.load(sys.stdin); print(",".join(f["severity"] + ":" + f["code"] for f in d["findings"] if f["code"].startswith("framework-") and "cudnn" in f["code"]))')
    echo "doctor: $code"
    torch_out=$(cvm exec "$spec" -- "$PYTHON" -I -W ignore -c '
import os, torch
try:
    v = torch.backends.cudnn.version()
    print("version", v)
except RuntimeError as e:
    print("RAISED", str(e).splitlines()[0][:160])
try:
    x = torch.randn(8, 16, 32, 32); w = torch.randn(32, 16, 3, 3)
    with torch.backends.cudnn.flags(enabled=True):
        y = torch.nn.functional.conv2d(x.cuda(), w.cuda(), padding=1).cpu()
    ref = torch.nn.functional.conv2d(x, w, padding=1)
    print("conv", "ok" if torch.allclose(y, ref, atol=1e-2, rtol=1e-2) else "WRONG")
except Exception as e:
    print("conv FAILED", str(e).splitlines()[0][:160])
print("maps", " ".join(sorted({l.split()[-1] for l in open("/proc/self/maps") if "libcudnn" in l})))
print("cublas", " ".join(sorted({l.split()[-1] for l in open("/proc/self/maps") if "libcublas" in l})))
' 2>&1)
    echo "$torch_out"
    # Which cuBLAS doctor predicts each framework loads, beside the files PyTorch mapped above.
    cublas_code=$(CVM_VERSION=$spec cvm doctor --json 2>/dev/null |
        "$PYTHON" -c 'import json, sys; d = json.load(sys.stdin); print("; ".join(f["severity"] + ":" + f["code"] + " (" + f["message"][:90] + ")" for f in d["findings"] if "cublas" in f["code"]))')
    echo "doctor cuBLAS: $cublas_code"
    CUBLAS_ROWS+=("$spec|${cublas_code:-none}|$(sed -n 's/^cublas //p' <<< "$torch_out" | tr ' ' '\n' | xargs -r -n1 dirname | sort -u | tr '\n' ' ')")
    # cvm's own run of the frameworks' checks (every framework in PYTHON: PyTorch, JAX, TensorFlow).
    cvm probe "$spec" --python --json > "$OUT_DIR/probe-python-$version.json" 2>/dev/null
    cvm probe "$spec" --python 2>&1 | tail -n 12
    probe_line=$("$PYTHON" -I -c '
import json, sys
d = json.load(open(sys.argv[1]))
parts = ["%s cuDNN %s conv %s" % (f["name"], f.get("cudnn_version"), (f.get("convolution") or {}).get("max_error"))
         for f in d.get("frameworks", [])]
kinds = sorted({p["kind"] for p in d.get("problems", [])} | {w["kind"] for w in d.get("warnings", [])})
print(("OK" if d.get("ok") else "FAILED") + ": " + "; ".join(parts) + (" [" + ",".join(kinds) + "]" if kinds else ""))
' "$OUT_DIR/probe-python-$version.json" 2>&1 | head -n 1)
    ROWS+=("$spec|${use_line:-nothing}|${code:-none}|$(grep -E '^(version|RAISED)' <<< "$torch_out" | head -n 1)|$(grep '^conv' <<< "$torch_out" | head -n 1)|$probe_line")
done
# The one-command way out: `cvm use --for .` imports the framework's own cuDNN and NCCL wheels and
# selects them with the toolkit it was built for; then the frameworks' checks under it.
echo
echo "== cvm use --for ."
(cd "$WORK/project" && rm -f .cudaversion && cvm use --for . 2>&1 && echo "wrote: $(cat .cudaversion)")
for_spec=$(cd "$WORK/project" && grep -v '^#' .cudaversion 2>/dev/null | head -n 1 | awk '{print $1}')
if [ -n "$for_spec" ]; then
    (cd "$WORK/project" && cvm probe --python --json > "$OUT_DIR/probe-python-for.json" 2>/dev/null; cvm probe --python 2>&1 | tail -n 12)
    ROWS+=("$for_spec (use --for .)|-|$(CVM_VERSION=$for_spec cvm doctor --json 2>/dev/null |
        "$PYTHON" -c 'import json, sys; d = json.load(sys.stdin); print(",".join(f["severity"] + ":" + f["code"] for f in d["findings"] if f["code"].startswith("framework-") and "cudnn" in f["code"]))')|-|-|$("$PYTHON" -I -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(("OK" if d.get("ok") else "FAILED") + ": " + "; ".join("%s cuDNN %s conv %s" % (f["name"], f.get("cudnn_version"), (f.get("convolution") or {}).get("max_error")) for f in d.get("frameworks", [])))
' "$OUT_DIR/probe-python-for.json" 2>&1 | head -n 1)")
fi
# Every way cvm starts programs, for each cuDNN: PyTorch's check and convolution and JAX's
# convolution (where JAX is installed), one line per way (lmod only where Lmod is installed).
cat > "$WORK/ways.py" << 'EOF'
import sys
out = []
try:
    import torch
    try:
        out.append("torch %s" % torch.backends.cudnn.version())
    except RuntimeError as e:
        out.append("torch RAISED")
    try:
        x = torch.randn(8, 16, 32, 32); w = torch.randn(32, 16, 3, 3)
        y = torch.nn.functional.conv2d(x.cuda(), w.cuda(), padding=1).cpu()
        out.append("conv " + ("ok" if torch.allclose(y, torch.nn.functional.conv2d(x, w, padding=1), atol=1e-2, rtol=1e-2) else "WRONG"))
    except Exception as e:
        out.append("conv FAILED")
except ImportError:
    out.append("no torch")
try:
    import jax, numpy
    gpus = [d for d in jax.devices() if d.platform == "gpu"]
    if gpus:
        x = numpy.random.default_rng(1).standard_normal((4, 16, 32, 32), dtype=numpy.float32)
        w = numpy.random.default_rng(2).standard_normal((32, 16, 3, 3), dtype=numpy.float32)
        f = lambda a, b: jax.lax.conv_general_dilated(a, b, (1, 1), "SAME", precision=jax.lax.Precision.HIGHEST)
        got = numpy.asarray(f(jax.device_put(x, gpus[0]), jax.device_put(w, gpus[0])))
        ref = numpy.asarray(f(jax.device_put(x, jax.devices("cpu")[0]), jax.device_put(w, jax.devices("cpu")[0])))
        out.append("jax " + ("ok" if numpy.allclose(got, ref, atol=1e-3, rtol=1e-3) else "WRONG"))
    else:
        out.append("jax no GPU")
except ImportError:
    pass
except Exception as e:
    out.append("jax FAILED")
print("WAYS " + ", ".join(out))
EOF
LMOD_INIT=""
for f in /usr/share/lmod/lmod/init/bash /opt/lmod/lmod/init/bash; do [ -f "$f" ] && LMOD_INIT=$f && break; done
WAYS=()
for id in $CUDNNS; do
    spec=$TK+${id%%-*}
    (cd "$WORK/project" && cvm use "$spec" > /dev/null 2>&1)
    (cd "$WORK/project" && cvm script --shell bash -o "$WORK/activate.sh" > /dev/null 2>&1)
    rm -rf "$WORK/modules" && cvm export lmod "$WORK/modules" > /dev/null 2>&1
    py="'$PYTHON' -I -W ignore '$WORK/ways.py'"
    for way in exec env hook shell script lmod; do
        case $way in
            exec) cmd="cd '$WORK/project' && '$BIN/cvm' exec -- $py" ;;
            env) cmd="cd '$WORK/project' && eval \"\$('$BIN/cvm' env --shell bash)\" && cd / && $py" ;;
            hook) cmd="cd '$WORK/project' && eval \"\$('$BIN/cvm' init bash)\" && $py" ;;
            shell) cmd="cd / && eval \"\$('$BIN/cvm' init bash)\" && cvm shell '$spec' && $py" ;;
            script) cmd="cd / && . '$WORK/activate.sh' && $py" ;;
            lmod)
                [ -n "$LMOD_INIT" ] || continue
                cmd="source '$LMOD_INIT' && export MODULEPATH='$WORK/modules' && module load cuda/$TK cudnn/$id && cd / && $py" ;;
        esac
        got=$(env -u CVM_VERSION bash --noprofile --norc -c "$cmd" 2> "$OUT_DIR/way-$way-${id%%-*}.err" | sed -n 's/^WAYS //p' | head -n 1)
        echo "$spec under $way: ${got:-nothing (see $OUT_DIR/way-$way-${id%%-*}.err)}"
        WAYS+=("$spec|$way|${got:-nothing}")
    done
done

echo
echo "== every way"
printf '%-22s | %-6s | %s\n' "selection" "way" "PyTorch's check, its convolution, JAX's convolution"
for r in "${WAYS[@]}"; do IFS='|' read -r a b c <<< "$r"; printf '%-22s | %-6s | %s\n' "$a" "$b" "$c"; done

echo
echo "== table"
printf '%-22s | %-22s | %-34s | %-40s | %-16s | %s\n' "selection" "cvm use said" "cvm doctor" "torch.backends.cudnn.version()" "conv on the GPU" "cvm probe --python"
for r in "${ROWS[@]}"; do IFS='|' read -r a b c d e f <<< "$r"; printf '%-22s | %-22s | %-34s | %-40s | %-16s | %s\n' "$a" "$b" "$c" "$d" "$e" "$f"; done

echo
echo "cuBLAS: doctor's prediction beside the folders PyTorch's process mapped libcublas* from"
printf '%-22s | %-100s | %s\n' "selection" "cvm doctor (cuBLAS)" "libcublas* mapped from"
for row in "${CUBLAS_ROWS[@]}"; do
    IFS='|' read -r a b c <<< "$row"
    printf '%-22s | %-100s | %s\n' "$a" "$b" "$c"
done
