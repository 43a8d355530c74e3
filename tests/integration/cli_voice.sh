#!/usr/bin/env bash
# Everything cvm says about its own command line is in its own words: every command's --help
# (examples, value names, no CLI11 labels), parse errors of every kind on every command
# (words after `--`, a value given to a flag, a number out of range, a command's command), a
# store root that is a file, and a mirror that cannot be reached.
source "$(dirname "$0")/lib.sh"
export CVM_REGISTRY_DIR="$CVM_SOURCE_DIR/registry"

# CLI11's own words and labels, which must appear in nothing cvm prints.
stock=("Print this help message" "Display program version" "The following argument" "were not expected"
    "required" "REQUIRED" "Excludes" "Needs:" "Positionals" "Subcommands" "SUBCOMMAND" "TEXT" "UINT"
    " INT" "Could not convert" "Expected exactly" "not in {" "not in range" "Value ")
no_stock_words() { # TEXT WHAT
    local phrase
    for phrase in "${stock[@]}"; do assert_not_contains "$1" "$phrase" "CLI11's wording in $2"; done
}

# The commands a user sees (names, not aliases), from the completion protocol.
commands=$("$CVM" __complete "" | grep -v '^:' | cut -f1 | grep -vx 'ls\|rm')
[[ $(wc -l <<<"$commands") -ge 20 ]] || fail "too few commands: $commands"

# ---- help: every command's, in cvm's words, with examples -----------------------------------
expect_rc 0 "$CVM" --help
no_stock_words "$OUT" "cvm --help"
assert_contains "$OUT" "Usage: cvm [OPTIONS] COMMAND"
assert_contains "$OUT" $'\nCommands:\n'
assert_contains "$OUT" "-h,--help                   show this help"
assert_contains "$OUT" "-V,--version                print cvm's version"
for cmd in $commands; do
    expect_rc 0 "$CVM" "$cmd" --help
    no_stock_words "$OUT" "cvm $cmd --help"
    assert_eq "$ERR" "" "stderr of cvm $cmd --help"
    [[ $cmd == help ]] || assert_contains "$OUT" $'\nExamples:\n  ' "cvm $cmd --help has examples"
done
# Values are named by what they are.
expect_rc 0 "$CVM" help use
assert_contains "$OUT" "Usage: cvm use [OPTIONS] [SPEC]"
assert_contains "$OUT" "  SPEC   "
assert_contains "$OUT" "cvm use --install 12.4+9"
expect_rc 0 "$CVM" help uninstall
assert_contains "$OUT" "Usage: cvm uninstall [OPTIONS] ID..."
expect_rc 0 "$CVM" help update
assert_contains "$OUT" "--max MAX "
expect_rc 0 "$CVM" help env
assert_contains "$OUT" "--shell SHELL "
expect_rc 0 "$CVM" help exec
assert_contains "$OUT" "--spec SPEC "
assert_contains "$OUT" "cvm exec 11.8 -- make"
# A command's own command: `cvm help cache clean` is `cvm cache clean --help`.
expect_rc 0 "$CVM" cache clean --help
clean_help=$OUT
assert_contains "$clean_help" "--all"
assert_contains "$clean_help" "cvm cache clean --all --json"
expect_rc 0 "$CVM" help cache clean
assert_eq "$OUT" "$clean_help" "cvm help cache clean"
# The man page carries the same examples.
assert_contains "$("$CVM" __man)" "cvm use \\-\\-install 12.4+9"

# ---- parse errors: one line, exit 2, the command's name, never CLI11's words ----------------
S=$'\x1f'
# Each row: STDERR (exact)|ARGS...
rows=(
    "cvm current: unexpected argument 'x'; see cvm help current${S}current${S}--${S}x"
    "cvm lock: unexpected argument 'x'; see cvm help lock${S}lock${S}--${S}x"
    "cvm rehash: unexpected argument 'x'; see cvm help rehash${S}rehash${S}--${S}x"
    "cvm install: unexpected argument 'x'; see cvm help install${S}install${S}--${S}x"
    "cvm which: unexpected argument '--'; see cvm help which${S}which${S}--"
    "cvm cache clean: unexpected argument 'x'; see cvm help cache${S}cache${S}clean${S}x"
    "cvm cache clean: unknown option '--al'; did you mean '--all'?${S}cache${S}clean${S}--al"
    "cvm cache: unknown command 'clen'; did you mean 'clean'? (see cvm help cache)${S}cache${S}clen"
    "cvm cache: unknown command 'clen'; did you mean 'clean'? (see cvm help cache)${S}help${S}cache${S}clen"
    "cvm exec: unknown option '--sepc'; did you mean '--spec'? (cvm's options go before CMD)${S}exec${S}--sepc=12${S}nvcc"
    "cvm list: --json takes no value; see cvm help list${S}list${S}--json=x"
    "cvm use: --global takes no value; see cvm help use${S}use${S}--global=x${S}12"
    "cvm use: --global takes no value; see cvm help use${S}use${S}--global=3${S}12"
    "cvm list: --json takes no value; see cvm help list${S}list${S}--json=1"
    "cvm uninstall: --yes takes no value; see cvm help uninstall${S}uninstall${S}--yes=no${S}12"
    "cvm update: '0' is not a valid --max (a whole number from 1 to 1000); see cvm help update${S}update${S}--max${S}0"
    "cvm update: 'abc' is not a valid --max (a whole number from 1 to 1000); see cvm help update${S}update${S}--max=abc"
)
for row in "${rows[@]}"; do
    IFS=$S read -r -a f <<<"$row"
    args=("${f[@]:1}")
    expect_rc 2 "$CVM" "${args[@]}"
    assert_eq "$ERR" "${f[0]}" "stderr of cvm ${args[*]}"
    assert_eq "$OUT" "" "stdout of cvm ${args[*]}"
done
# Every command, given words it cannot take: one line in cvm's voice.
for cmd in $commands; do
    [[ $cmd == exec || $cmd == help ]] && continue
    for extra in "--frob" "-- x y" "--json=x" "--shell" "--cuda" "-o"; do
        # shellcheck disable=SC2086
        rc=0
        OUT=$("$CVM" "$cmd" $extra </dev/null 2>"$TEST_TMP/err") || rc=$?
        ERR=$(cat "$TEST_TMP/err")
        [[ $rc == 0 ]] && continue # a value some command takes (`env --shell` has none to complete)
        no_stock_words "$ERR" "cvm $cmd $extra"
        assert_eq "$(wc -l <<<"$ERR")" "1" "lines of stderr of cvm $cmd $extra: $ERR"
        [[ $ERR == "cvm $cmd"* || $ERR == "cvm: "* ]] || fail "cvm $cmd $extra does not name cvm: $ERR"
    done
done

# ---- the next command after `use --unset` leaves nothing selected -------------------------------
mkdir -p "$TEST_TMP/unset" && cd "$TEST_TMP/unset"
expect_rc 0 "$CVM" use --force 12.4
expect_rc 0 "$CVM" use --unset
assert_contains "$ERR" "next: cvm use SPEC (nothing is selected here now)"
expect_rc 0 "$CVM" use -g --force 12.4
expect_rc 0 "$CVM" use --unset -g
assert_contains "$ERR" "next: cvm use --global SPEC (nothing is selected here now)"
expect_rc 0 "$CVM" use -g --force 12.4
expect_rc 0 "$CVM" use --force 11.8
expect_rc 0 "$CVM" use --unset
assert_contains "$ERR" "the selection here is now 12.4"
assert_not_contains "$ERR" "next:"
expect_rc 0 "$CVM" use --force 11.8
expect_rc 0 "$CVM" use --unset -g
assert_not_contains "$ERR" "next:" # ./.cudaversion still selects
cd "$TEST_TMP"

# ---- completion: exec's own options after a lone `-` ----------------------------------------
assert_eq "$("$CVM" __complete exec - | cut -f1 | LC_ALL=C sort | tr '\n' ' ')" "--help --quiet --spec --version -h -q :none "
assert_eq "$("$CVM" __complete exec -- -)" ":commands" # after --, the program

# ---- a store root that is a file: said, not taken for an empty store -------------------------
: > "$TEST_TMP/afile"
CVM_ROOT=$TEST_TMP/afile expect_rc 1 "$CVM" list
assert_eq "$ERR" "cvm: cannot read the folder $TEST_TMP/afile: a part of the path is a file, not a folder; CVM_ROOT ($TEST_TMP/afile) must be a folder; set it to one"
CVM_ROOT=$TEST_TMP/afile/sub expect_rc 1 "$CVM" list --json
assert_eq "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["error"]["code"])' <<<"$OUT")" "io"
assert_contains "$ERR" "CVM_ROOT ($TEST_TMP/afile/sub) must be a folder"

# ---- a failed removal names the file that stayed, once ---------------------------------------
if [[ $(id -u) == 0 ]] && id nobody > /dev/null 2>&1; then
    chmod 711 "$TEST_TMP" # nobody may pass through to its own folder (removed with the rest)
    shared=$TEST_TMP/shared
    mkdir -m 755 "$shared"
    mkdir -p "$shared/root/cache/downloads"
    : > "$shared/root/cache/downloads/x.tgz"
    chown -R nobody "$shared/root"
    chmod 555 "$shared/root/cache/downloads"
    # as_nobody ARGS...: cvm ARGS as nobody with the store in $shared/root; sets rc and err.
    as_nobody() {
        rc=0
        err=$(cd "$shared" && su nobody -s /bin/bash -c \
            "CVM_ROOT=$shared/root CVM_CONFIG=$shared/c.toml CVM_SYSTEM_CONFIG=$shared/s.toml $CVM $*" 2>&1) || rc=$?
    }
    as_nobody cache clean
    assert_eq "$rc" "1" "exit of cache clean in a read-only folder"
    assert_eq "$err" "cvm: cannot remove $shared/root/cache/downloads/x.tgz: permission denied; check that you can write to $shared/root (CVM_ROOT), or set CVM_ROOT to a folder you own"
    # An import into a store nobody may write: the store is named, not the staging folder made in it.
    make_toolkit "$shared/cuda-12.4" 12.4.1
    mkdir -p "$shared/root"
    chown -R nobody "$shared"
    chmod 555 "$shared/root"
    as_nobody import "$shared/cuda-12.4"
    assert_eq "$rc" "1" "exit of an import into a read-only store"
    assert_eq "$err" "cvm: cannot write in $shared/root: permission denied; check that you can write to $shared/root (CVM_ROOT), or set CVM_ROOT to a folder you own"
fi

# ---- offline: the reason in cvm's words, with the hint ---------------------------------------
# A name under .invalid never resolves (RFC 6761); a closed loopback port refuses at once.
CVM_MIRROR=https://cvm-test.invalid CVM_RETRY_DELAY_MS=1 expect_rc 1 "$CVM" install cuda 12.4.1
assert_contains "$ERR" "the host cvm-test.invalid was not found (DNS lookup failed) (after 2 attempts); no network? Set CVM_MIRROR"
assert_not_contains "$ERR" "Could not resolve"
CVM_MIRROR=http://127.0.0.1:9 CVM_RETRY_DELAY_MS=1 expect_rc 1 "$CVM" install cuda 12.4.1 --json
assert_contains "$ERR" "cannot connect to 127.0.0.1:9 (connection refused, or no route to it) (after 2 attempts)"
assert_not_contains "$ERR" "Couldn't"
assert_contains "$OUT" '"code": "network"'
# What to fetch by other means, named once: a toolkit's manifest (and its archives) laid out as the
# server, one cuDNN archive and the command that installs it; `cvm update` installs nothing.
CVM_MIRROR=http://127.0.0.1:9 CVM_RETRY_DELAY_MS=1 expect_rc 1 "$CVM" install cuda 12.4.1
assert_contains "$ERR" "; or download http://127.0.0.1:9/cuda/redist/redistrib_12.4.1.json and the archives it lists for linux-x86_64 elsewhere into a folder DIR, each where it lies under http://127.0.0.1:9, and run \`CVM_MIRROR=file://DIR cvm install cuda 12.4.1\`"
[[ $(grep -v retrying <<< "$ERR" | grep -o 'redistrib_12.4.1.json' | wc -l) == 2 ]] || fail "the manifest is named more than in the line and its fix: $ERR"
CVM_MIRROR=http://127.0.0.1:9 CVM_RETRY_DELAY_MS=1 expect_rc 1 "$CVM" install cudnn 8.1.0 --cuda 11.2
assert_contains "$ERR" "; or download http://127.0.0.1:9/redist/cudnn/v8.1.0/cudnn-11.2-linux-x64-v8.1.0.77.tgz elsewhere and run \`cvm install ./cudnn-11.2-linux-x64-v8.1.0.77.tgz\`"
assert_not_contains "$ERR" "cvm install FILE"
CVM_MIRROR=http://127.0.0.1:9 CVM_RETRY_DELAY_MS=1 expect_rc 1 "$CVM" update
assert_contains "$ERR" "no network? Set CVM_MIRROR to a mirror you can reach; nothing was changed"
assert_not_contains "$ERR" "cvm install"
echo "cli_voice: ok"
