#!/usr/bin/env bash
# One launch plan (activation/launch_plan.h, issue 42): the shim, `cvm which` and `cvm exec` (whose
# PATH has the selection's bin, then the shims) take the same branch
# for every case of one table, run or name the same program, and refuse with the same line and
# exit code: nothing selected, `system`, a selection not installed, a tool of another toolkit, a
# tool of no toolkit (on PATH or not), the launcher itself among the toolkit's programs, a
# toolkit's program another user could change, a toolkit's name (import --as), a copy of the
# shim first on PATH.
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
export PATH="$S:/usr/local/bin:/usr/bin:/bin:$later" CVM

# activated ACT SPEC TOOL DIR: runs TOOL in a bash activated by `cvm ACT` for SPEC (the folder
# DIR's .cudaversion; `cvm shell` gets SPEC itself in a folder that selects nothing); what TOOL
# prints follows a line --run--.
activated() {
    local act=$1 spec=$2 tool=$3 dir=$4
    case $act in
        env) (cd "$dir" && bash -c 'set -e; code=$("$CVM" env --shell bash); eval "$code"; echo --run--; "$1"' - "$tool") ;;
        script) (cd "$dir" && "$CVM" script --shell bash -o "$dir/activate.sh" \
                     && bash -c 'source "$1"; echo --run--; "$2"' - "$dir/activate.sh" "$tool") ;;
        hook) (cd "$dir" && bash -c 'eval "$("$CVM" init bash)"; _cvm_hook; echo --run--; "$1"' - "$tool") ;;
        shell) (cd "$T" && bash -c 'eval "$("$CVM" init bash)"; _cvm_hook
                   if [[ -n $1 ]]; then cvm shell "$1" || exit; fi; echo --run--; "$2"' - "$spec" "$tool") ;;
    esac
}

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
    # A copy of cvm-shim under the tool's name first on PATH (~/bin/nvcc): it is the shim there.
    "|nowhere|refuse:no CUDA version is selected here and nowhere is not on PATH outside cvm's shims|copy"
    "12.4|nvcc|run:fake nvcc 12.4.1|copy"
    "12.4|sysonly|run:the machine's sysonly|copy"
)
n=0
for row in "${cases[@]}"; do
    IFS='|' read -r spec tool want copy <<< "$row"
    dir=$T/case$((n += 1))
    mkdir -p "$dir"
    start=$S/$tool
    if [[ -n $copy ]]; then
        mkdir -p "$dir/copy"
        cp "$shim" "$dir/copy/$tool"
        start=$dir/copy/$tool
        PATH=$dir/copy:$PATH
    fi
    [[ -z $spec ]] || echo "$spec" > "$dir/.cudaversion"
    cd "$dir"
    where="case $n ($spec, $tool)"
    src=0 wrc=0
    sout=$("$start" 2>&1) || src=$?
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
    # The activations (cvm env, cvm script, the prompt hook, cvm shell): a bash that took the
    # selection's environment runs the tool by its name, as a user types it.
    acts=() arcs=() aouts=()
    for act in env script hook shell; do
        arc=0
        aout=$(activated "$act" "$spec" "$tool" "$dir" 2>&1) || arc=$?
        # What activates "the selection" asks for one when nothing is selected, as exec does,
        # and a script for `system` would change nothing.
        line=
        [[ -n $spec || $act != @(env|script) ]] || line="no CUDA version is selected here; run \`cvm use SPEC\`"
        [[ $spec != system || $act != script ]] || line="cvm script: 'system' changes nothing"
        if [[ -n $line ]]; then
            [[ $arc != 0 ]] || fail "$where: cvm $act activated: $aout"
            assert_contains "$aout" "$line" "$where: cvm $act"
            continue
        fi
        acts+=("$act") arcs+=("$arc") aouts+=("$aout")
    done
    case $want in
        run:*)
            [[ $src == 0 && $wrc == 0 && $erc == 0 ]] || fail "$where: exit $src from the shim, $wrc from which, $erc from exec: $sout / $wout / $eout"
            assert_contains "$sout" "${want#run:}" "$where: the shim ran"
            assert_eq "$("$wout" 2>&1 | head -1)" "$(head -1 <<< "$sout")" "$where: the program which names prints"
            assert_eq "$(head -1 <<< "$eout")" "$(head -1 <<< "$sout")" "$where: the program exec ran"
            for i in "${!acts[@]}"; do
                act=${acts[i]} arc=${arcs[i]} aout=${aouts[i]}
                [[ $arc == 0 ]] || fail "$where: exit $arc after cvm $act: $aout"
                assert_eq "$(sed -n '/^--run--$/{n;p;q}' <<< "$aout")" "$(head -1 <<< "$sout")" "$where: the program run after cvm $act"
            done
            ;;
        refuse:*)
            [[ $src != 0 && $wrc != 0 && $erc != 0 ]] || fail "$where: exit $src from the shim, $wrc from which, $erc from exec"
            assert_contains "$sout" "${want#refuse:}" "$where: the shim's line"
            assert_eq "$wout" "$sout" "$where: which's line"
            assert_contains "$eout" "${want#refuse:}" "$where: exec's line"
            for i in "${!acts[@]}"; do
                act=${acts[i]} arc=${arcs[i]} aout=${aouts[i]}
                [[ $arc != 0 ]] || fail "$where: ran after cvm $act: $aout"
                assert_contains "$aout" "${want#refuse:}" "$where: the line after cvm $act"
            done
            ;;
    esac
    [[ -z $copy ]] || PATH=${PATH#"$dir/copy:"}
done

# all_refuse WHAT LINE: in case6 (12.4), every caller refuses nvcc with exit 2 and the shim's one
# line, which holds LINE; the activations refuse the selection at once.
all_refuse() {
    local what=$1 line=$2 src=0 wrc=0 erc=0 sout wout eout act arc aout
    cd "$T/case6" # 12.4
    sout=$("$S/nvcc" 2>&1) || src=$?
    wout=$("$CVM" which nvcc 2>&1) || wrc=$?
    eout=$("$CVM" exec -- nvcc 2>&1) || erc=$?
    [[ $src == 2 && $wrc == 2 && $erc == 2 ]] || fail "$what: exit $src from the shim, $wrc from which, $erc from exec"
    assert_contains "$sout" "$line"
    assert_eq "$wout" "$sout" "which's line for $what"
    assert_eq "$eout" "$sout" "exec's line for $what"
    for act in env script hook shell; do
        arc=0
        aout=$(activated "$act" 12.4 nvcc "$T/case6" 2>&1) || arc=$?
        [[ $arc == 2 ]] || fail "$what: exit $arc after cvm $act: $aout"
        assert_eq "$(tail -1 <<< "$aout")" "$sout" "the line after cvm $act for $what"
    done
}
# A toolkit's program another user could change: every caller refuses it with the shim's line.
# What puts the toolkit's folder first on PATH (exec, env, script) refuses the selection at once.
chmod o+w "$T/cuda-12.4/bin/nvcc"
all_refuse "a changeable nvcc" "refusing a file of cuda 12.4.1 $T/cuda-12.4/bin/nvcc: the file is writable by every user"
chmod o-w "$T/cuda-12.4/bin/nvcc"
# A program of the toolkit that is not the one asked for: handed over all the same by what puts the
# folder on PATH, never by the shim, which runs only the tool it stands for.
chmod o+w "$T/cuda-12.4/bin/ptxas"
sout=$("$S/nvcc" 2>&1) || fail "the shim refused nvcc for a changeable ptxas: $sout"
erc=0
eout=$("$CVM" exec -- nvcc 2>&1) || erc=$?
[[ $erc == 2 ]] || fail "exec handed over a changeable ptxas: $eout"
assert_contains "$eout" "refusing a file of cuda 12.4.1 $T/cuda-12.4/bin/ptxas"
chmod o-w "$T/cuda-12.4/bin/ptxas"
# A folder of the toolkit another user could change: every caller refuses the selection.
chmod o+w "$T/cuda-12.4/bin"
all_refuse "a changeable bin folder" "refusing a folder of cuda 12.4.1 $T/cuda-12.4/bin: the folder is writable by every user"
chmod o-w "$T/cuda-12.4/bin"
echo "shim_launch_plan: ${#cases[@]} cases x 7 callers + a changeable program and folder ok"
