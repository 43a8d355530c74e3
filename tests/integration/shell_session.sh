#!/usr/bin/env bash
# `cvm shell`, `cvm deactivate` and `cvm env` as commands: without the cvm function of `cvm init`
# at a terminal they say so; `cvm use` under a session override says it still wins; `cvm env`
# speaks the language of the shell that runs it; `cvm init --no-hook` leaves the hook out.
source "$(dirname "$0")/lib.sh"
need_tools script fish
make_toolkit "$TEST_TMP/cuda-11.2" 11.2.2
"$CVM" import "$TEST_TMP/cuda-11.2" 2> /dev/null || fail "import"
mkdir -p "$TEST_TMP/w"
cd "$TEST_TMP/w"

# At a terminal (stdout is one), without the function: one line, exit 2, how to enable it in
# the shell that runs cvm (`script` runs the command in $SHELL, which starts cvm).
for sh in bash zsh fish; do
    case $sh in
        bash) hint='`eval "$(cvm init bash)"` to ~/.bashrc' ;;
        zsh) hint='`eval "$(cvm init zsh)"` to ~/.zshrc' ;;
        fish) hint='`cvm init fish | source` to ~/.config/fish/config.fish' ;;
    esac
    for cmd in "shell 11.2" "deactivate"; do
        rc=0
        out=$(SHELL=$(command -v $sh) script -qec "$CVM $cmd" /dev/null) || rc=$?
        assert_eq "$rc" 2 "cvm $cmd at a terminal of $sh without the function"
        out=${out//$'\r'/}
        assert_eq "$(grep -c . <<< "$out")" 1 "lines from cvm $cmd at a terminal of $sh"
        assert_contains "$out" "shell integration is not enabled"
        assert_contains "$out" "$hint"
    done
done

# Through the function's way (--shell), the code.
expect_rc 0 "$CVM" shell 11.2 --shell bash
assert_eq "$OUT" "export CVM_VERSION='11.2'"
expect_rc 0 "$CVM" shell --unset --shell fish
assert_eq "$OUT" "set -e CVM_VERSION"
expect_rc 1 "$CVM" shell 10.1 --shell bash
assert_contains "$ERR" "cvm install 10.1"
assert_eq "$OUT" ""
expect_rc 2 "$CVM" shell 'a b' --shell bash
expect_rc 2 "$CVM" shell 11.2 --unset --shell bash
expect_rc 2 "$CVM" shell 11.2 --shell cmd
CVM_VERSION=11.2 expect_rc 0 "$CVM" shell
assert_contains "$ERR" "CVM_VERSION=11.2"
# In pipes (eval "$(cvm deactivate)") deactivate still prints the restore code.
expect_rc 0 "$CVM" deactivate
assert_contains "$OUT" "cvm_deactivate"

# cvm use under a session override.
CVM_VERSION=11.2 expect_rc 0 "$CVM" use 11.2
assert_contains "$ERR" "still wins"
expect_rc 0 "$CVM" use 11.2
assert_not_contains "$ERR" "still wins"

# cvm env speaks the language of the shell running it, whatever SHELL says.
out=$(SHELL=/bin/bash fish --no-config -c "$CVM env 11.2 | source; echo \$CVM_ACTIVE" 2>&1) ||
    fail "cvm env | source in fish: $out"
assert_eq "$out" "11.2.2" "cvm env in fish with SHELL=bash"
out=$(SHELL=/usr/bin/fish bash --norc -c "eval \"\$($CVM env 11.2)\"; echo \$CVM_ACTIVE" 2>&1)
assert_eq "$out" "11.2.2" "cvm env in bash with SHELL=fish"
# `cvm env; ...; cvm_deactivate` works without init (scripts, CI).
out=$(bash --norc -c "eval \"\$($CVM env --shell bash 11.2)\"; cvm_deactivate; echo \${CVM_ACTIVE-none}")
assert_eq "$out" "none"

# init with and without the hook.
expect_rc 0 "$CVM" init bash
assert_contains "$OUT" "_cvm_hook"
assert_contains "$OUT" "cvm() {"
expect_rc 0 "$CVM" init fish --no-hook
assert_not_contains "$OUT" "_cvm_hook"
assert_contains "$OUT" "function cvm"
# In a real bash: with --no-hook a project's .cudaversion changes nothing at the prompt, and
# `cvm shell` only sets CVM_VERSION (the shims follow it); with the hook the same prompt applies it.
mkdir -p "$TEST_TMP/proj"
printf '11.2\n' > "$TEST_TMP/proj/.cudaversion"
for hook in --no-hook ""; do
    out=$(cd "$TEST_TMP" && bash --norc --noprofile -c '
        eval "$("$1" init bash $2)"; cd proj; eval "${PROMPT_COMMAND-}"
        echo "active=${CVM_ACTIVE-none}"; cvm shell 11.2 2> /dev/null; echo "version=${CVM_VERSION-none}"' _ "$CVM" "$hook") ||
        fail "bash with cvm init bash $hook: $out"
    if [[ -n $hook ]]; then
        assert_eq "$out" $'active=none\nversion=11.2' "cvm init bash --no-hook at a prompt in a project"
    else
        assert_eq "$out" $'active=11.2.2\nversion=11.2' "cvm init bash at a prompt in a project"
    fi
done
# `cvm deactivate` turns the prompt hook off in this shell, `cvm shell` on again: each says so on
# stderr, stdout stays code for the shell (issue 35). Without the hook (--no-hook), nothing is said.
off='cvm: the prompt hook is now off in this shell: the environment no longer follows `cd` or .cudaversion; `cvm shell --unset` turns it on again'
still='cvm: the prompt hook stays off in this shell; `cvm shell --unset` turns it on again'
on='cvm: the prompt hook is on again in this shell: the environment follows `cd` and .cudaversion (`cvm deactivate` turns it off)'
steps='cvm deactivate; echo "off=${CVM_ACTIVE-none}"; cvm deactivate; cvm shell --unset; echo "on=${CVM_ACTIVE-none}"; cvm shell --unset; cvm deactivate; cvm shell 11.2; cvm shell --unset'
want="$off"$'\noff=none\n'"$still"$'\n'"$on"$'\non=11.2.2\n'"$off"$'\n'"$on"
out=$(cd "$TEST_TMP/proj" && bash --norc --noprofile -c 'eval "$("$1" init bash)"; eval "${PROMPT_COMMAND-}"; '"$steps" _ "$CVM" 2>&1)
assert_eq "$out" "$want" "what cvm deactivate and cvm shell say of the hook in bash"
out=$(cd "$TEST_TMP/proj" && zsh -f -c 'eval "$("$1" init zsh)"; _cvm_hook; '"$steps" _ "$CVM" 2>&1)
assert_eq "$out" "$want" "what cvm deactivate and cvm shell say of the hook in zsh"
fsteps='cvm deactivate; echo "off=$CVM_ACTIVE"; cvm deactivate; cvm shell --unset; echo "on=$CVM_ACTIVE"; cvm shell --unset; cvm deactivate; cvm shell 11.2; cvm shell --unset'
out=$(cd "$TEST_TMP/proj" && fish --no-config -c "$CVM init fish | source; $fsteps" 2>&1)
assert_eq "$out" "${want/off=none/off=}" "what cvm deactivate and cvm shell say of the hook in fish"
out=$(cd "$TEST_TMP/proj" && bash --norc --noprofile -c 'eval "$("$1" init bash --no-hook)"; cvm deactivate; cvm shell --unset; echo done' _ "$CVM" 2>&1)
assert_eq "$out" "done" "cvm deactivate and cvm shell without the hook"
# The code itself: only the assignments on stdout, the line on stderr.
expect_rc 0 "$CVM" shell --unset --shell bash --prompt-hook off
assert_eq "$OUT" "unset CVM_VERSION"
assert_eq "$ERR" "$on"
expect_rc 0 "$CVM" deactivate --shell bash --prompt-hook on
assert_eq "$ERR" "$off"
assert_contains "$OUT" "cvm_deactivate"
expect_rc 2 "$CVM" deactivate --shell bash --prompt-hook maybe
# And the help says it (read with its lines joined: it is wrapped to the terminal).
expect_rc 0 "$CVM" help deactivate
assert_contains "$(tr -s '\n ' '  ' <<<"$OUT")" "turns the hook off in this shell (it says so): the environment no longer follows \`cd\` until \`cvm shell --unset\`"
expect_rc 0 "$CVM" help shell
assert_contains "$(tr -s '\n ' '  ' <<<"$OUT")" "\`cvm shell SPEC\` and \`cvm shell --unset\` turn the hook on again, and say so"
assert_not_contains "$OUT" "--prompt-hook"

# The hook step itself is quiet where nothing is selected, applies what is, and refuses cmd.
mkdir -p "$TEST_TMP/none"
(cd "$TEST_TMP/none" && expect_rc 0 "$CVM" hook-env --shell bash && assert_eq "$OUT" "")
expect_rc 0 "$CVM" hook-env --shell bash
assert_contains "$OUT" "export CVM_ACTIVE='11.2.2'"
assert_contains "$OUT" "export _CVM_HOOK="
expect_rc 2 "$CVM" hook-env --shell cmd
expect_rc 2 "$CVM" hook-env --shell bash --pid '../x'
# A broken config file: one line at the first prompt, none at the next ones, the prompt goes on
# (exit 0, no code); the line comes again once it is fixed and broken anew.
mkdir -p "$(dirname "$CVM_CONFIG")"
printf 'store_path = "not a list"\n' > "$CVM_CONFIG"
expect_rc 0 "$CVM" hook-env --shell bash --pid 4242
assert_eq "$OUT" "" "hook-env code with a broken config"
assert_contains "$ERR" "$CVM_CONFIG:1: store_path must be a list of folders"
assert_contains "$ERR" "(the environment stays as it is)"
for _ in 1 2; do
    expect_rc 0 "$CVM" hook-env --shell bash --pid 4242
    assert_eq "$ERR" "" "hook-env said the broken config again"
done
rm "$CVM_CONFIG"
expect_rc 0 "$CVM" hook-env --shell bash --pid 4242
assert_contains "$OUT" "export CVM_ACTIVE='11.2.2'"
printf 'store_path = "not a list"\n' > "$CVM_CONFIG"
expect_rc 0 "$CVM" hook-env --shell bash --pid 4242
assert_contains "$ERR" "store_path must be a list of folders"
rm "$CVM_CONFIG"

# A .cudaversion its reader cannot read (root reads anything: as nobody): one line, no change.
if [[ $(id -u) == 0 ]] && command -v setpriv > /dev/null; then
    chmod a+x "$TEST_TMP"
    nb="$TEST_TMP/nb"
    mkdir -p "$nb/bin" "$nb/root" "$nb/proj"
    cp "$CVM" "$nb/bin/cvm"
    chmod -R a+rx "$nb/bin"
    chown nobody "$nb/root"
    printf '11.2\n' > "$nb/proj/.cudaversion"
    chmod 000 "$nb/proj/.cudaversion"
    rc=0
    out=$(cd "$nb/proj" && setpriv --reuid=nobody --regid=nogroup --clear-groups --reset-env -- \
        env HOME=/nonexistent CVM_ROOT="$nb/root" PATH=/usr/bin:/bin "$nb/bin/cvm" hook-env --shell bash 2>&1) || rc=$?
    assert_eq "$rc" 0 "hook-env on an unreadable .cudaversion"
    assert_eq "$out" "cvm: cannot read $nb/proj/.cudaversion; fix its permissions or remove it (the environment stays as it is)"
fi
echo "PASS: shell session"
