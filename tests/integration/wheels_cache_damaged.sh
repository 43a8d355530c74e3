#!/usr/bin/env bash
# Bad input for the tests' own wheel cache (issue 40): what a download cut short or a failing disk
# leaves there is found and made again, saying so, never installed from or used as it is:
#  - a cached wheel that is not a whole zip is downloaded again before pip installs from it;
#  - a cached venv marked complete that lost a file its RECORD names, or its python, is made again;
#  - a whole cache is used as it is, with nothing said.
# Uses NVIDIA's smallest wheel (nvidia-cuda-crt, 172 kB) in a cache of its own.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_wheels.sh"
real_cache=$CVM_TEST_CACHE
export CVM_TEST_CACHE=$TEST_TMP/cache
name=${CUDA_CRT_13%%==*} version=${CUDA_CRT_13##*==}
dir=$CVM_TEST_CACHE/wheels/$name/$version
mkdir -p "$dir"
seed=$(compgen -G "$real_cache/wheels/$name/$version/*.whl" | head -n 1) || true
if [[ -z $seed ]]; then
    seed=$(CVM_TEST_CACHE=$real_cache wheel_file "$CUDA_CRT_13") || exit
fi
wheel=$dir/$(basename "$seed")
# Cut short, as a killed download leaves it.
head -c 50000 "$seed" > "$wheel"

# venv_says: wheel_venv for the crt wheel in this shell; what it said on stderr in $SAID.
venv_says() {
    wheel_venv crt "$CUDA_CRT_13" 2> "$TEST_TMP/said"
    SAID=$(cat "$TEST_TMP/said")
}
venv_says
assert_eq "$SAID" "note: the cached wheel $wheel is damaged (not a whole zip); downloading it again" "a wheel cut short"
"$WHEEL_PY" -m zipfile -t "$wheel" > /dev/null || fail "the wheel downloaded again is not whole"
header=$WHEEL_SITE/nvidia/cu13/include/crt/host_runtime.h
[[ -f $WHEEL_VENV/.complete && -f $header ]] || fail "no venv made from the wheel downloaded again"

# A file the venv's RECORD names is gone (a failing disk, a hand that cleaned up).
rm "$header"
venv_says
assert_eq "$SAID" "note: the cached venv $WHEEL_VENV is damaged ($header is missing); making it again" "a venv without a file"
[[ -f $header ]] || fail "the venv made again lacks $header"

# Its python is gone.
rm "$WHEEL_VENV"/bin/python*
venv_says
assert_eq "$SAID" "note: the cached venv $WHEEL_VENV is damaged (its python does not run); making it again" "a venv without python"
[[ -x $WHEEL_VENV/bin/python && -f $header ]] || fail "the venv was not made again"

# Whole: used as it is.
touch -d '2001-01-01' "$WHEEL_VENV/.complete"
venv_says
assert_eq "$SAID" "" "a whole cache"
[[ $(stat -c %Y "$WHEEL_VENV/.complete") == $(date -d '2001-01-01' +%s) ]] || fail "a whole venv was made again"
echo PASS
