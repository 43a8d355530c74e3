#!/usr/bin/env bash
# The command line itself: help, aliases, -V, "did you mean", and parse errors in cvm's voice.
source "$(dirname "$0")/lib.sh"

# No output of these cases may carry CLI11's own wording.
no_stock_words() {
    local text="$OUT$ERR"
    for phrase in "The following argument" "required" "A subcommand is required" "Could not convert" \
        "Expected exactly" "not in {"; do
        assert_not_contains "$text" "$phrase" "CLI11's wording after [$*]"
    done
}
# expect_line RC LINE CMD...: CMD exits RC with exactly LINE on stderr and nothing on stdout.
expect_line() {
    local rc=$1 line=$2; shift 2
    expect_rc "$rc" "$@"
    assert_eq "$ERR" "$line" "stderr of [$*]"
    assert_eq "$OUT" "" "stdout of [$*]"
    no_stock_words "$@"
}

# Help: `cvm help`, bare `cvm` and `cvm --help` print the same text on stdout and exit 0.
expect_rc 0 "$CVM" help
help=$OUT
assert_eq "$ERR" "" "stderr of cvm help"
for word in "Examples:" "cvm use 12.4+9" "CVM_ROOT" "CVM_VERSION" "CVM_MIRROR" "uninstall" "help"; do
    assert_contains "$help" "$word" "cvm help"
done
no_stock_words help
expect_rc 0 "$CVM"
assert_eq "$OUT" "$help" "bare cvm"
expect_rc 0 "$CVM" --help
assert_eq "$OUT" "$help" "cvm --help"
for words in "help help" "help --help" "-h"; do
    expect_rc 0 "$CVM" $words
    assert_eq "$OUT" "$help" "cvm $words"
done

# One command's help, by name or alias, is that command's --help.
expect_rc 0 "$CVM" help use
assert_contains "$OUT" "--global"
assert_not_contains "$OUT" "CVM_MIRROR" "cvm help use shows the top-level footer"
use_help=$OUT
expect_rc 0 "$CVM" use --help
assert_eq "$OUT" "$use_help" "cvm use --help"
expect_rc 0 "$CVM" help ls
assert_contains "$OUT" "--available"
expect_rc 0 "$CVM" help rm
assert_contains "$OUT" "uninstall"
expect_rc 0 "$CVM" help install # answered by cvm-install where install lives there
assert_contains "$OUT" "--components"
expect_line 2 "cvm: unknown command 'nosuch' (see cvm help)" "$CVM" help nosuch
expect_line 2 "cvm: unknown command 'lsit'; did you mean 'list'? (see cvm help)" "$CVM" help lsit

# -V is --version.
expect_rc 0 "$CVM" --version
version=$OUT
[[ $version == "cvm "[0-9]* ]] || fail "cvm --version printed [$version]"
expect_rc 0 "$CVM" -V
assert_eq "$OUT" "$version" "cvm -V"

# Aliases: ls is list, rm is uninstall.
make_toolkit "$TEST_TMP/cuda-11.2" 11.2.2
expect_rc 0 "$CVM" import "$TEST_TMP/cuda-11.2"
expect_rc 0 "$CVM" list --json
list_json=$OUT
expect_rc 0 "$CVM" ls --json
assert_eq "$OUT" "$list_json" "cvm ls --json"
expect_rc 0 "$CVM" rm 11.2.2
assert_contains "$ERR" "forgot cuda 11.2.2"
expect_rc 1 "$CVM" rm 11.2.2
assert_contains "$ERR" "not installed"

# Did you mean: commands (names and aliases), then options of the command typed.
expect_line 2 "cvm: unknown command 'usee'; did you mean 'use'? (see cvm help)" "$CVM" usee 12
expect_line 2 "cvm: unknown command 'isntall'; did you mean 'install'? (see cvm help)" "$CVM" isntall 12.4
expect_line 2 "cvm: unknown command 'USE'; did you mean 'use'? (see cvm help)" "$CVM" USE 12
expect_line 2 "cvm: unknown command 'frobnicate' (see cvm help)" "$CVM" frobnicate
expect_line 2 "cvm use: unknown option '--globl'; did you mean '--global'?" "$CVM" use --globl 12
expect_line 2 "cvm use: unknown option '--globl'; did you mean '--global'?" "$CVM" use --globl
expect_line 2 "cvm list: unknown option '--jsno'; did you mean '--json'?" "$CVM" list --jsno
expect_line 2 "cvm list: unknown option '--frob'; see cvm help list" "$CVM" list --frob
expect_line 2 "cvm: unknown option '--verison'; did you mean '--version'?" "$CVM" --verison
expect_line 2 "cvm: unknown option '-v'; did you mean '-V'?" "$CVM" -v
expect_line 2 "cvm: unknown option '-x'; see cvm help" "$CVM" -x

# The commands of pyenv, mise and nvm that cvm has under another name: cvm's command, not a guess
# (`activate` is no typo of `deactivate`; issue 35).
expect_line 2 "cvm: unknown command 'versions'; to list what is installed, run \`cvm list\` (see cvm help list)" "$CVM" versions
expect_line 2 "cvm: unknown command 'version'; to show the selection here, run \`cvm current\`; cvm's own version: \`cvm --version\`" "$CVM" version
expect_line 2 "cvm: unknown command 'local'; to select a version for this folder, run \`cvm use SPEC\` (writes .cudaversion; see cvm help use)" "$CVM" local 12.4
expect_line 2 "cvm: unknown command 'global'; to select the default version, run \`cvm use --global SPEC\` (see cvm help use)" "$CVM" global 12.4
expect_line 2 "cvm: unknown command 'ls-remote'; to list what cvm can install, run \`cvm list --available\` (see cvm help list)" "$CVM" ls-remote
expect_line 2 "cvm: unknown command 'activate'; to activate the selection in this shell, run \`eval \"\$(cvm env)\"\` or \`cvm shell SPEC\`; for every new shell, put \`cvm init SHELL\` in its rc file (see cvm help init)" "$CVM" activate
expect_line 2 "cvm: unknown command 'versions'; to list what is installed, run \`cvm list\` (see cvm help list)" "$CVM" help versions
for o in --list -l; do
    expect_line 2 "cvm install: unknown option '$o'; to list what cvm can install, run \`cvm list --available\` (see cvm help list)" "$CVM" install $o
done
# ... and each command named there is one.
for c in list current use init env shell; do expect_rc 0 "$CVM" help $c; done
expect_rc 0 "$CVM" help list
assert_contains "$OUT" "--available"
expect_rc 0 "$CVM" help use
assert_contains "$OUT" "--global"

# Other parse errors: one line naming the command, the value and what to run.
# (Bare `cvm use` is no error: it prints the selection; cli_exec_use.sh covers it.)
expect_line 2 "cvm which: missing TOOL; e.g. cvm which nvcc" "$CVM" which
expect_line 2 "cvm uninstall: missing ID; e.g. cvm uninstall 12.4.1" "$CVM" rm
expect_line 2 "cvm use: unexpected argument '13'; see cvm help use" "$CVM" use 12 13
expect_line 2 "cvm list: 'foo' is not a valid KIND (cuda, cudnn or nccl); see cvm help list" "$CVM" list foo
expect_line 2 "cvm install: --cuda needs a value; see cvm help install" "$CVM" install --cuda
expect_line 2 "cvm export: missing DIR; e.g. cvm export lmod ~/modulefiles" "$CVM" export lmod
expect_line 2 "cvm exec: nothing to run; usage: cvm exec [SPEC] -- CMD [ARGS...] or cvm exec [--spec SPEC] CMD [ARGS...]" "$CVM" exec
expect_line 2 "cvm doctor: unexpected argument 'extra'; see cvm help doctor" "$CVM" doctor extra
if "$CVM" help env >/dev/null 2>&1; then
    expect_line 2 "cvm env: --shell needs a value; see cvm help env" "$CVM" env --shell
    expect_line 2 "cvm script: --output needs a value; see cvm help script" "$CVM" script -o
fi
# The man page names its files and the variables cvm reads (issue 35, item 17).
man=$("$CVM" __man)
assert_contains "$man" ".SH FILES"
for word in cudaversion CVM_ROOT/version CVM_STORE_PATH CVM_CONFIG CVM_SYSTEM_CONFIG CVM_PYTHON CVM_PROGRESS CVM_ALLOW_HTTP; do
    assert_contains "$man" "$word" "the man page"
done
# ... as man itself renders it, where man is installed: FILES is a section of its own.
if command -v man > /dev/null; then
    printf '%s\n' "$man" > "$TEST_TMP/cvm.1"
    rendered=$(MANWIDTH=80 man -l "$TEST_TMP/cvm.1" 2> /dev/null)
    grep -qx 'FILES' <<< "$rendered" || fail "man -l shows no FILES section"
    assert_contains "$rendered" "CVM_STORE_PATH" "the man page as man renders it"
fi
# A help's example whose command leaves too little room beside it keeps the command whole on its
# own line, what it does below it.
expect_rc 0 env COLUMNS=50 "$CVM" help export
assert_contains "$OUT$ERR" "  cvm export --oci ./images 12.4+9 --base ./debian:12 --runtime"$'\n'"      its libraries on a distribution image"
expect_rc 0 env COLUMNS=50 "$CVM" help export
assert_contains "$OUT$ERR" "  cvm export lmod ~/modulefiles"$'\n'"      Lmod modules for every installed build"
# The help of use and current gives the selection order; export names its two forms; exec says
# whose exit code cvm gives.
for c in use current; do
    expect_rc 0 env COLUMNS=1000 "$CVM" help $c
    assert_contains "$OUT$ERR" "The selection order: CVM_VERSION (cvm shell), then the nearest .cudaversion from this folder upward, then the global default (cvm use -g)" "help $c"
done
expect_rc 0 env COLUMNS=1000 "$CVM" help export
assert_contains "$OUT$ERR" "Forms: cvm export FORMAT DIR, cvm export --oci DIR [SPEC]"
expect_rc 0 env COLUMNS=1000 "$CVM" help exec
assert_contains "$OUT$ERR" "cvm exits with CMD's exit code"
echo "cli_help: ok"
