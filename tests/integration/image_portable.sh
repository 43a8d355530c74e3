#!/usr/bin/env bash
# Issue 35, item 2: `cvm export --oci` gives the same image wherever the content came from. The
# same toolkit folder imported and the same cuDNN archive installed from two folders into two
# stores give one manifest digest, and no label, config field or file name of the image holds a
# path of either folder or store: an archive is named by its file name and digest ("a local file"
# for one given as a file), an import by what it was imported from in words.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_install.sh"
need_tools jq skopeo
trap 'cleanup_test_tmp' EXIT
export CVM_PROGRESS=plain
unset SOURCE_DATE_EPOCH
T=$TEST_TMP
CUDNN=cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz
mkdir -p "$T/made"
$MK cudnn-redist "$T/made/$CUDNN" --version 9.1.0
SUM=$(sha256sum "$T/made/$CUDNN" | cut -d' ' -f1)

# export_from WHO: the toolkit made and imported, the archive copied and installed, under
# $T/WHO-home (its own store), then exported; prints the manifest digest.
export_from() {
    local home="$T/$1-home"
    mkdir -p "$home/dl"
    make_toolkit "$home/dl/cuda-12.4" 12.4.1
    cp "$T/made/$CUDNN" "$home/dl/$CUDNN"
    export CVM_ROOT="$home/store"
    expect_rc 0 "$CVM" import "$home/dl/cuda-12.4"
    expect_rc 0 "$CVM" install "$home/dl/$CUDNN"
    expect_rc 0 "$CVM" export --oci "$home/image" 12.4.1+9.1.0.70 --json
    jq -r .manifest <<<"$OUT"
}
ALICE=$(export_from alice)
BOB=$(export_from bob)
[[ $ALICE == sha256:* ]] || fail "no manifest digest: [$ALICE]"
assert_eq "$BOB" "$ALICE" "the same content exported from two folders and stores"

# As a registry client reads them (skopeo): one digest, and labels without either home.
expect_rc 0 skopeo inspect "oci:$T/alice-home/image"
alice_seen=$OUT
expect_rc 0 skopeo inspect "oci:$T/bob-home/image"
assert_eq "$(jq -r .Digest <<<"$OUT")" "$(jq -r .Digest <<<"$alice_seen")" "skopeo's digests of the two exports"
assert_eq "$(jq -r .Digest <<<"$OUT")" "$ALICE" "skopeo's digest and cvm's"
assert_not_contains "$(jq -r '.Labels | tostring' <<<"$alice_seen")" "-home" "a home folder in the labels skopeo reads"

# The labels name the archive and the import without a path.
I="$T/alice-home/image"
manifest="$I/blobs/sha256/${ALICE#sha256:}"
config="$I/blobs/sha256/$(jq -r '.config.digest' "$manifest" | cut -d: -f2)"
label() { jq -r --arg k "$1" '.config.Labels[$k]' "$config"; }
assert_eq "$(label cvm.cuda.source)" "imported from a folder"
assert_eq "$(label cvm.cudnn.source)" "installed from 1 archive"
assert_eq "$(label "cvm.cudnn.archive.$CUDNN")" "a local file sha256:$SUM"

# Nothing of the image (index, manifest, config, the layer's names and files) holds a path of
# either home: the folders, the stores.
for who in alice bob; do
    I="$T/$who-home/image"
    m="$I/blobs/sha256/$(jq -r '.manifests[0].digest' "$I/index.json" | cut -d: -f2)"
    layer="$I/blobs/sha256/$(jq -r '.layers[-1].digest' "$m" | cut -d: -f2)"
    [[ -f $layer ]] || fail "$who's image has no layer $layer"
    for f in "$I/index.json" "$I"/blobs/sha256/*; do
        if [[ $f == "$layer" ]]; then gzip -dc "$f"; else cat "$f"; fi > "$T/plain"
        for home in alice-home bob-home; do
            ! grep -q -a -F "$home" "$T/plain" || fail "$f of $who's image holds $home: $(grep -a -o "$T/$home[^\"]*" "$T/plain" | head -3)"
        done
    done
done
echo "PASS"
