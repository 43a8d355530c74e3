#!/usr/bin/env bash
# Files cvm writes outside its store are new files renamed into place, never written through a
# link a cloned project holds at that name: activation scripts (`cvm script`, `-o FILE`),
# `.cudaversion`, `cvm.lock`, and `cvm export`'s modules, which never follow a linked cuda/ or
# cudnn/ folder out of the export's folder.
source "$(dirname "$0")/lib.sh"
T=$TEST_TMP
make_toolkit "$T/cuda-12.4" 12.4.1
make_cudnn "$T/cudnn-9.1" 9.1.0
"$CVM" import "$T/cuda-12.4" 2>/dev/null || fail "import"
"$CVM" import --cuda 12 "$T/cudnn-9.1" 2>/dev/null || fail "import cudnn"
mkdir -p "$T/p"
cd "$T/p"
precious() { echo "the user's own $1" > "$T/$1"; }
unchanged() { assert_eq "$(cat "$T/$1")" "the user's own $1" "$2 wrote through a link to $1"; }

precious bashrc
ln -s "$T/bashrc" activate_cuda124.sh
expect_rc 0 "$CVM" script 12.4 --shell bash
unchanged bashrc "cvm script"
[[ -f activate_cuda124.sh && ! -L activate_cuda124.sh ]] || fail "the script is not a file of its own"
assert_contains "$(cat activate_cuda124.sh)" "CUDA_PATH"

precious profile
ln -s "$T/profile" mine.sh
expect_rc 0 "$CVM" script 12.4 --shell bash -o mine.sh
unchanged profile "cvm script -o"
[[ ! -L mine.sh ]] || fail "-o FILE kept the link"

precious gitconfig
ln -s "$T/gitconfig" .cudaversion
expect_rc 0 "$CVM" use 12.4
unchanged gitconfig "cvm use"
assert_eq "$(cat .cudaversion)" "12.4"

precious npmrc
ln -s "$T/npmrc" cvm.lock
expect_rc 0 "$CVM" lock
unchanged npmrc "cvm lock"
[[ -f cvm.lock && ! -L cvm.lock ]] || fail "cvm.lock is not a file of its own"

# cvm export: a module file that is a link is replaced; a linked cudnn/ folder is refused, and
# what it points to (which holds an old module of cvm's, by its marker) is neither written nor
# removed.
E="$T/modules"
mkdir -p "$E/cuda" "$T/elsewhere"
precious ssh-config
ln -s "$T/ssh-config" "$E/cuda/12.4.1.lua"
printf -- '-- cvm-generated module cudnn/1.0.0-cuda12\n' > "$T/elsewhere/1.0.0-cuda12.lua"
ln -s "$T/elsewhere" "$E/cudnn"
expect_rc 1 "$CVM" export lmod "$E"
assert_contains "$ERR" "$E/cudnn is a link"
[[ -f $T/elsewhere/1.0.0-cuda12.lua ]] || fail "export removed a file through a linked folder"
unchanged ssh-config "cvm export"
rm "$E/cudnn"
expect_rc 0 "$CVM" export lmod "$E"
unchanged ssh-config "cvm export"
[[ -f $E/cuda/12.4.1.lua && ! -L $E/cuda/12.4.1.lua ]] || fail "the module is not a file of its own"
[[ -f $E/cudnn/9.1.0-cuda12.lua ]] || fail "the cuDNN module is missing"
