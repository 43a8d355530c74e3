#!/usr/bin/env bash
# One launch plan (core/launch_plan.h, issue 42): the shim, `cvm which` and `cvm exec` (whose
# PATH has the selection's bin, then the shims) take the same branch
# for every case of one table, run or name the same program, and refuse with the same line and
# exit code: nothing selected, `system`, a selection not installed, a tool of another toolkit, a
# tool of no toolkit (on PATH or not), the launcher itself among the toolkit's programs, a
# toolkit's program another user could change, a toolkit's name (import --as).
source "$(dirname "$0")/lib.sh"

T=$TEST_TMP
make_toolkit "$T/cuda-12.4" 12.4.1
make_toolkit "$T/cuda-11.8" 11.8.0
make_toolkit "$T/named" 11.8.0
sed -i 's/fake nvcc/named nvcc/' "$T/named/bin/nvcc"
printf '#!/bin/sh\necho "ncu of 11.8"\n' > "$T/cuda-11.8/bin/ncu"
chmod +x "$T/cuda-11.8/bin/ncu"
for d in cuda-12.4 cuda-11.8; do expect_rc 0 "$CVM" import "$T/$d"; done
expect_rc 0 "$CVM" import "$T/named" --as mine
S=$CVM_ROOT/shims
# A tool only the machine has, late on PATH, and shims for tools no toolkit or nothing has.
later=$T/later
mkdir -p "$later"
printf '#!/bin/sh\necho "the machine'"'"'s sysonly"\n' > "$later/sysonly"
chmod +x "$later/sysonly"
shim=$(readlink "$S/nvcc")
for n in sysonly nowhere; do ln -sf "$shim" "$S/$n"; done
# The launcher itself among a toolkit's programs (a link to the shim under a tool's name).
ln -s "$shim" "$T/cuda-12.4/bin/selfloop"
ln -sf "$shim" "$S/selfloop"
printf '#!/bin/sh\necho "the machine'"'"'s selfloop"\n' > "$later/selfloop"
chmod +x "$later/selfloop"
export PATH="$S:/usr/local/bin:/usr/bin:/bin:$later"

# The table: folder selection | tool | what both must do (run:TEXT the shim prints TEXT and which
# names a file that prints it; refuse:LINE both exit non-zero with LINE).
cases=(
    "|nowhere|refuse:no CUDA version is selected here and nowhere is not on PATH outside cvm's shims"
    "|sysonly|run:the machine's sysonly"
    "system|sysonly|run:the machine's sysonly"
    "system|nowhere|refuse:nowhere is not installed outside cvm ('system' is selected by"
    "12.9|nvcc|refuse:CUDA 12.9 is not installed; run \`cvm install 12.9\`"
    "12.4|nvcc|run:fake nvcc 12.4.1"
    "12.4|ncu|refuse:ncu is not part of CUDA 12.4.1 (selected by"
    "12.4|sysonly|run:the machine's sysonly"
    "12.4|nowhere|refuse:nowhere is not part of CUDA 12.4.1 (selected by"
    "12.4|selfloop|run:the machine's selfloop"
    "11.8|ncu|run:ncu of 11.8"
    "mine|nvcc|run:named nvcc 11.8.0"
    "nosuch|nvcc|refuse:no toolkit is named nosuch"
)
n=0
for row in "${cases[@]}"; do
    IFS='|' read -r spec tool want <<< "$row"
    dir=$T/case$((n += 1))
    mkdir -p "$dir"
    [[ -z $spec ]] || echo "$spec" > "$dir/.cudaversion"
    cd "$dir"
    where="case $n ($spec, $tool)"
    src=0 wrc=0
    sout=$("$S/$tool" 2>&1) || src=$?
    wout=$("$CVM" which "$tool" 2>&1) || wrc=$?
    # cvm exec: the selection's bin first on PATH, then the shims, as an activated shell has it.
    erc=0
    eout=$("$CVM" exec -- "$tool" 2>&1) || erc=$?
    if [[ -z $spec ]]; then
        # Nothing selected: exec runs "in the selected environment" and asks for one.
        [[ $erc == 1 ]] || fail "$where: exec ran with nothing selected: $eout"
        assert_contains "$eout" "no CUDA version is selected here; run \`cvm use SPEC\`"
        erc=$([[ $want == run:* ]] && echo 0 || echo 1) eout=$sout
    fi
    case $want in
        run:*)
            [[ $src == 0 && $wrc == 0 && $erc == 0 ]] || fail "$where: exit $src from the shim, $wrc from which, $erc from exec: $sout / $wout / $eout"
            assert_contains "$sout" "${want#run:}" "$where: the shim ran"
            assert_eq "$("$wout" 2>&1 | head -1)" "$(head -1 <<< "$sout")" "$where: the program which names prints"
            assert_eq "$(head -1 <<< "$eout")" "$(head -1 <<< "$sout")" "$where: the program exec ran"
            ;;
        refuse:*)
            [[ $src != 0 && $wrc != 0 && $erc != 0 ]] || fail "$where: exit $src from the shim, $wrc from which, $erc from exec"
            assert_contains "$sout" "${want#refuse:}" "$where: the shim's line"
            assert_eq "$wout" "$sout" "$where: which's line"
            assert_contains "$eout" "${want#refuse:}" "$where: exec's line"
            ;;
    esac
done

# A toolkit's program another user could change: both refuse it with the same line.
chmod o+w "$T/cuda-12.4/bin/nvcc"
cd "$T/case6" # 12.4
src=0 wrc=0
sout=$("$S/nvcc" 2>&1) || src=$?
wout=$("$CVM" which nvcc 2>&1) || wrc=$?
[[ $src != 0 && $wrc != 0 ]] || fail "a changeable nvcc ran: $src $wrc"
assert_contains "$sout" "$T/cuda-12.4/bin/nvcc"
assert_eq "$wout" "$sout" "the changeable program's line"
chmod o-w "$T/cuda-12.4/bin/nvcc"
echo "shim_launch_plan: ${#cases[@]} cases + trust ok"
