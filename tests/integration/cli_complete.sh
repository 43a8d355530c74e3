#!/usr/bin/env bash
# `cvm __complete` (the protocol the completion scripts use), `cvm completions`, and the man
# page, all made from the same command definitions.
source "$(dirname "$0")/lib.sh"

import_sample_store "$TEST_TMP"

# values WORDS...: the candidates' values, one a line, then the directive line.
values() { "$CVM" __complete "$@" | cut -f1; }
# has/lacks VALUE WORDS...
has() { local v=$1; shift; grep -qx -- "$v" <<<"$(values "$@")" || fail "[$*] does not offer $v: $(values "$@" | tr '\n' ' ')"; }
lacks() { local v=$1; shift; ! grep -qx -- "$v" <<<"$(values "$@")" || fail "[$*] offers $v"; }

# Commands and aliases, with descriptions; the answer ends with its directive.
out=$("$CVM" __complete "")
assert_contains "$out" $'use\tSelect CUDA[+CUDNN]'
assert_contains "$out" $'\nls\t'
assert_contains "$out" $'\ncompletions\t'
assert_not_contains "$out" "__complete"
assert_eq "$(tail -n1 <<<"$out")" ":none"
assert_eq "$(values us)" $'use\n:none'

# Only the options a command has.
has --global use --; has -g use -; has --unset use --; lacks --shell use --
has --check lock --; lacks --global lock --
has --detect import --; has --benchmark probe --
has --quiet exec --; lacks --global exec --
lacks --global use --global --   # given once already
has --components install --      # answered by cvm-install, which has install's options
has --shell env --

# Values: installed ids, the versions users type, shells, choices, releases.
assert_eq "$(values uninstall "")" $'12.4.1\n11.2.2\n9.1.0.70-cuda12\n:none'    # newest first
has 12.4 use ""; has 12 use ""; has 12.4.1 use ""; has system use ""; has 12.4+9 use ""
has 12.4.1+9.1.0.70-cuda12 use 12.4.1+
lacks 11.2+9 use ""              # no cuDNN 9 serves CUDA 11.2
assert_eq "$(values use 12.4+)" $'12.4+9\n:none'
assert_eq "$("$CVM" __complete use 12.4 | grep -P '^12.4\t')" $'12.4\tCUDA 12.4.1 (imported from '"$TEST_TMP"'/cuda-12.4)'
has 12.4 exec --spec ""; has 11.2 probe ""; has 11.2.2 env --shell bash ""
assert_eq "$(values env --shell f)" $'fish\n:none'
assert_eq "$(values env --shell=f)" $'--shell=fish\n:none'
assert_eq "$(values env --shell = f)" $'fish\n:none'   # as bash splits --shell=f
has cmd env --shell ""; lacks cmd init ""; has pwsh init ""
assert_eq "$(values list "")" $'cuda\ncudnn\nnccl\n:none'
has powershell completions ""
has use help ""
has nvcc which ""
has cuda install ""; has cudnn install ""; has 12.4.1 install cuda 12.; lacks cuda install cuda ""
has 9.1.0.70 install cudnn 9.1.0
assert_eq "$(tail -n1 <<<"$(values install "")")" ":files"
assert_eq "$(values import "")" ":dirs"
# exec: cvm's options, then the program, then the program's own words.
assert_eq "$(values exec "")" ":commands"
assert_eq "$(values exec 12.4+)" $'12.4+9\n:commands'   # cvm exec SPEC -- CMD
assert_eq "$(values exec -- "")" ":commands"
assert_eq "$(values exec -- nvcc -)" ":files"
assert_eq "$(values exec --spec 12 nvcc "")" ":files"
# PowerShell 5 drops empty arguments: `""` stands for one.
assert_eq "$(values uninstall '""')" "$(values uninstall "")"
# A store that cannot be read gives no values, not an error.
OUT=$(CVM_ROOT=/dev/null/x "$CVM" __complete uninstall "") || fail "__complete failed on a bad store"
assert_eq "$OUT" ":none"

# The scripts.
expect_rc 0 "$CVM" completions bash
assert_contains "$OUT" "complete -F _cvm_complete cvm"
expect_rc 0 "$CVM" completions zsh
assert_contains "$OUT" "#compdef cvm"
expect_rc 0 "$CVM" completions fish
assert_contains "$OUT" "complete -c cvm -f -a '(__cvm_complete)'"
expect_rc 0 "$CVM" completions powershell
ps=$OUT
assert_contains "$ps" "Register-ArgumentCompleter -Native -CommandName cvm"
assert_contains "$ps" '& cvm __complete @words $current'
assert_contains "$ps" "CompletionResult]::new("
expect_rc 0 "$CVM" completions pwsh
assert_eq "$OUT" "$ps"
expect_rc 2 "$CVM" completions tcsh
assert_eq "$ERR" "cvm completions: 'tcsh' is not one of bash, zsh, fish, powershell; e.g. cvm completions bash"
expect_rc 2 "$CVM" completions
assert_eq "$ERR" "cvm completions: missing SHELL; e.g. cvm completions bash"
# cvm init carries the same script.
expect_rc 0 "$CVM" init bash
# ... with cvm's own absolute path where `cvm completions` runs `cvm` from PATH (issue 33).
self=$(readlink -f "$CVM")
assert_contains "$OUT" "$("$CVM" completions bash | sed "s|command cvm __complete|command '$self' __complete|")"
if command -v bash > /dev/null; then bash -n <("$CVM" completions bash) || fail "the bash script does not parse"; fi
if command -v zsh > /dev/null; then zsh -n <("$CVM" completions zsh) || fail "the zsh script does not parse"; fi
if command -v fish > /dev/null; then fish -n <("$CVM" completions fish) || fail "the fish script does not parse"; fi

# The man page: every command and option, the variables; it formats without a warning.
page="$TEST_TMP/cvm.1"
expect_rc 0 "$CVM" __man "$page"
man_text=$(grep -v '^\.\\"' "$page")
for cmd in install import uninstall list use current which exec env script init rehash completions; do
    assert_contains "$man_text" ".SS \"cvm $cmd\""
done
assert_contains "$man_text" '\fB\-\-detect\fR'
assert_contains "$man_text" '\fB\-\-components\fR'   # install's, from cvm-install
for v in CVM_ROOT CVM_VERSION CVM_MIRROR NO_COLOR; do assert_contains "$man_text" "\\fB$v\\fR"; done
assert_contains "$man_text" '\fICMD [ARGS...]\fR'   # exec's program
if command -v groff > /dev/null; then
    warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
    assert_eq "$warnings" "" "groff warnings"
fi
if command -v man > /dev/null; then
    shown=$(MANWIDTH=80 man -l "$page" 2>/dev/null) || fail "man -l cannot show cvm.1"
    assert_contains "$shown" "cvm - side-by-side CUDA toolkits"
    assert_contains "$shown" "--unset"
fi
expect_rc 1 "$CVM" __man /dev/null/cvm.1
assert_contains "$ERR" "cannot write /dev/null/cvm.1"
[[ ! -e "$CVM_BUILD_DIR/cvm.1" ]] || cmp -s "$CVM_BUILD_DIR/cvm.1" <("$CVM" __man) ||
    fail "the build's cvm.1 differs from cvm __man"

# --help: examples and variables, wrapped to the terminal's width.
OUT=$(COLUMNS=60 "$CVM" --help)
assert_contains "$OUT" "CVM_MIRROR"
assert_contains "$OUT" "cvm use 12.4+9"
long=$(awk 'length > 60' <<<"$OUT" | grep -v 'https://' || true)
assert_eq "$long" "" "help lines longer than COLUMNS=60"
OUT=$(COLUMNS=200 "$CVM" help use)
assert_contains "$OUT" "the global default (\$CVM_ROOT/version) instead of ./.cudaversion"
# --quiet (any command, before or after its name) leaves out hints, and `cvm use`'s report that
# it did what was asked: it prints nothing when it works, as `pyenv local`.
mkdir -p "$TEST_TMP/project"
cd "$TEST_TMP/project"
expect_rc 0 "$CVM" use 12.4
assert_contains "$ERR" "selected 12.4.1"
assert_contains "$ERR" "cuDNN 9.1.0.70-cuda12 is installed for this toolkit but not selected"
for form in "use -q 12.4" "use --quiet 12.4" "-q use 12.4"; do
    # shellcheck disable=SC2086
    expect_rc 0 "$CVM" $form
    assert_eq "$ERR" "" "cvm $form printed something"
done

# NO_COLOR (set and not empty) turns colour off on a terminal.
if command -v script > /dev/null 2>&1; then
    coloured=$(env -u NO_COLOR script -qec "$CVM doctor" /dev/null || true)
    assert_contains "$coloured" $'\x1b[' "cvm doctor on a terminal is not coloured"
    plain=$(NO_COLOR=1 script -qec "$CVM doctor" /dev/null || true)
    assert_not_contains "$plain" $'\x1b[' "NO_COLOR=1 cvm doctor"
    coloured=$(NO_COLOR= script -qec "$CVM doctor" /dev/null || true)
    assert_contains "$coloured" $'\x1b[' "an empty NO_COLOR turned colour off"
fi
echo "PASS: completion protocol, scripts and man page"
