#!/usr/bin/env bash
# cvm export --oci against layouts another local user prepared (red-team issue 33: root runs cvm,
# another user can write a folder cvm reads or writes): links in the layout exported into, a
# linked or foreign index.json, hostile --base blobs (a FIFO, /dev/zero, no tar, a damaged layer
# in the same layout), a deeply nested index.json, a killed export's leftovers, and a file name
# that is no UTF-8. Every refusal is one line, exit 2, with the layout as it was.
# HOSTILE_CASES="2 3" runs only those findings' cases.
source "$(dirname "$0")/lib.sh"
need_tools skopeo umoci jq
trap 'cleanup_test_tmp' EXIT
export CVM_PROGRESS=plain
unset SOURCE_DATE_EPOCH
WAIT=${HOSTILE_WAIT:-60} # a bounded wait for what could hang or read forever
wants() { [[ -z ${HOSTILE_CASES:-} || " $HOSTILE_CASES " == *" $1 "* ]]; }

make_toolkit "$TEST_TMP/import/cuda-11.8" 11.8.0
expect_rc 0 "$CVM" import "$TEST_TMP/import/cuda-11.8"
P="$TEST_TMP/project"
mkdir -p "$P"
cd "$P"
expect_rc 0 "$CVM" use 11.8
I="$TEST_TMP/images"
mkdir -p "$I"

# A base layout made with umoci: one gzip layer holding a file.
umoci init --layout "$TEST_TMP/base" > /dev/null
umoci new --image "$TEST_TMP/base:latest" > /dev/null
umoci unpack --image "$TEST_TMP/base:latest" "$TEST_TMP/bb" > /dev/null
mkdir -p "$TEST_TMP/bb/rootfs/etc"
echo base > "$TEST_TMP/bb/rootfs/etc/base-release"
umoci repack --image "$TEST_TMP/base:latest" "$TEST_TMP/bb" > /dev/null
BASE="$TEST_TMP/base"
manifest_of() { jq -r '.manifests[0].digest' "$1/index.json" | sed 's/^sha256:/blobs\/sha256\//'; }
BASE_LAYER=$(jq -r '.layers[0].digest' "$BASE/$(manifest_of "$BASE")")
BASE_LAYER=${BASE_LAYER#sha256:}

# The files of a folder, links and modes and owners included, and what each file holds.
snap() { (cd "$1" && find . -printf '%p %y %l %m %u\n' | sort && find . -type f -exec sha256sum {} + | sort); }
# forge_base SRC DST FILE [MEDIATYPE]: a copy of the layout SRC whose first layer is FILE (digest,
# size and media type made to match, so that only its content can be wrong).
forge_base() {
    local src=$1 dst=$2 file=$3 media=${4:-}
    cp -a "$src" "$dst"
    local b="$dst/blobs/sha256" man ldig lsize cdig ncdig nm
    man="$dst/$(manifest_of "$dst")"
    ldig="sha256:$(sha256sum < "$file" | cut -d' ' -f1)"
    lsize=$(stat -c %s "$file")
    cp "$file" "$b/${ldig#sha256:}"
    cdig=$(jq -r .config.digest "$man")
    jq -c --arg d "$ldig" '.rootfs.diff_ids[0]=$d' "$b/${cdig#sha256:}" > "$TEST_TMP/cfg"
    ncdig="sha256:$(sha256sum < "$TEST_TMP/cfg" | cut -d' ' -f1)"
    cp "$TEST_TMP/cfg" "$b/${ncdig#sha256:}"
    jq -c --arg d "$ldig" --argjson s "$lsize" --arg c "$ncdig" --argjson cs "$(stat -c %s "$TEST_TMP/cfg")" \
        --arg m "$media" '.layers[0].digest=$d | .layers[0].size=$s | .config.digest=$c | .config.size=$cs
            | if $m != "" then .layers[0].mediaType=$m else . end' "$man" > "$TEST_TMP/man"
    nm="sha256:$(sha256sum < "$TEST_TMP/man" | cut -d' ' -f1)"
    cp "$TEST_TMP/man" "$b/${nm#sha256:}"
    jq -c --arg d "$nm" --argjson s "$(stat -c %s "$TEST_TMP/man")" \
        '.manifests[0].digest=$d | .manifests[0].size=$s' "$dst/index.json" > "$TEST_TMP/idx"
    cp "$TEST_TMP/idx" "$dst/index.json"
}
# A layout of this selection to export into again.
expect_rc 0 "$CVM" export --oci "$I/good" --tag first
# The error is one line, the last (progress lines may come before it).
export_error_alone() {
    (($(grep -c '^cvm export: ' <<<"$ERR") == 1)) && [[ $(tail -1 <<<"$ERR") == "cvm export: "* ]] ||
        fail "not one line: $ERR"
}

# Finding 2: a layout whose blobs/sha256 (or blobs) is a link to a folder another user chose (a
# stand-in for /etc/cron.d) gets nothing written there; nor does one whose folders are another
# user's or writable by everybody. Base layers must be tar streams.
if wants 2; then
    CROND="$TEST_TMP/crond"
    mkdir -p "$CROND"
    chown nobody "$CROND"
    cp -a "$I/good" "$I/l2"
    mv "$I/l2/blobs/sha256" "$TEST_TMP/l2-sha256"
    ln -s "$CROND" "$I/l2/blobs/sha256"
    before=$(snap "$I/l2")
    expect_rc 2 "$CVM" export --oci "$I/l2" --base "$BASE:latest" --tag t
    assert_contains "$ERR" "$I/l2/blobs/sha256 is a link"
    export_error_alone
    assert_eq "$(ls -A "$CROND")" "" "the folder the link names"
    assert_eq "$(snap "$I/l2")" "$before" "the layout after the refusal"
    rm "$I/l2/blobs/sha256"
    mv "$TEST_TMP/l2-sha256" "$I/l2/blobs/sha256"
    mv "$I/l2/blobs" "$TEST_TMP/l2-blobs"
    mkdir "$CROND/sha256"
    chown nobody "$CROND/sha256"
    ln -s "$CROND" "$I/l2/blobs"
    before=$(snap "$I/l2")
    expect_rc 2 "$CVM" export --oci "$I/l2" --tag t
    assert_contains "$ERR" "$I/l2/blobs is a link"
    assert_eq "$(ls -A "$CROND/sha256")" "" "the folder the link names"
    assert_eq "$(snap "$I/l2")" "$before" "the layout after the refusal"
    rm "$I/l2/blobs"
    mv "$TEST_TMP/l2-blobs" "$I/l2/blobs"
    # Another user's folders, or ones anybody may write.
    chown nobody "$I/l2/blobs/sha256"
    before=$(snap "$I/l2")
    expect_rc 2 "$CVM" export --oci "$I/l2" --tag t
    assert_contains "$ERR" "$I/l2/blobs/sha256 is owned by nobody"
    export_error_alone
    assert_eq "$(snap "$I/l2")" "$before" "the layout after the refusal"
    chown root "$I/l2/blobs/sha256"
    chmod 0777 "$I/l2/blobs/sha256"
    expect_rc 2 "$CVM" export --oci "$I/l2" --tag t
    assert_contains "$ERR" "$I/l2/blobs/sha256 is writable by every user"
    chmod 0755 "$I/l2/blobs/sha256"
    chown nobody "$I/l2"
    before=$(snap "$I/l2")
    expect_rc 2 "$CVM" export --oci "$I/l2" --tag t
    assert_contains "$ERR" "$I/l2 is owned by nobody"
    assert_eq "$(snap "$I/l2")" "$before" "the layout after the refusal"
    chown root "$I/l2"
    mkdir "$I/foreign-empty"
    chown nobody "$I/foreign-empty"
    expect_rc 2 "$CVM" export --oci "$I/foreign-empty"
    assert_contains "$ERR" "$I/foreign-empty is owned by nobody"
    assert_eq "$(ls -A "$I/foreign-empty")" "" "the other user's empty folder"
    ln -s "$I/l2" "$I/l2-link"
    expect_rc 2 "$CVM" export --oci "$I/l2-link" --tag t
    assert_contains "$ERR" "$I/l2-link is a link"
    expect_rc 0 "$CVM" export --oci "$I/l2" --tag t
    # A base "layer" that is a shell script for cron, with the right digest and size: no tar.
    printf '* * * * * root /tmp/x\n' > "$TEST_TMP/cron-job"
    forge_base "$BASE" "$TEST_TMP/base-script" "$TEST_TMP/cron-job"
    expect_rc 2 "$CVM" export --oci "$I/from-script" --base "$TEST_TMP/base-script:latest"
    assert_contains "$ERR" "is not a application/vnd.oci.image.layer.v1.tar+gzip (a tar stream, compressed so)"
    export_error_alone
    [[ ! -e $I/from-script ]] || fail "a refused export made $I/from-script"
    # A plain tar declared as gzip is refused too; as a plain tar layer it is taken, and so is zstd.
    tar -C "$TEST_TMP/bb/rootfs" -cf "$TEST_TMP/plain.tar" etc
    forge_base "$BASE" "$TEST_TMP/base-mislabeled" "$TEST_TMP/plain.tar"
    expect_rc 2 "$CVM" export --oci "$I/from-mislabeled" --base "$TEST_TMP/base-mislabeled:latest"
    assert_contains "$ERR" "is not a application/vnd.oci.image.layer.v1.tar+gzip"
    forge_base "$BASE" "$TEST_TMP/base-plain" "$TEST_TMP/plain.tar" application/vnd.oci.image.layer.v1.tar
    expect_rc 0 "$CVM" export --oci "$I/from-plain" --base "$TEST_TMP/base-plain:latest" --tag t
    expect_rc 0 skopeo inspect "oci:$I/from-plain:t"
    if command -v zstd > /dev/null; then
        zstd -q -c "$TEST_TMP/plain.tar" > "$TEST_TMP/plain.tar.zst"
        forge_base "$BASE" "$TEST_TMP/base-zstd" "$TEST_TMP/plain.tar.zst" application/vnd.oci.image.layer.v1.tar+zstd
        expect_rc 0 "$CVM" export --oci "$I/from-zstd" --base "$TEST_TMP/base-zstd:latest" --tag t
    fi
    expect_rc 0 "$CVM" export --oci "$I/from-base" --base "$BASE:latest" --tag t
    expect_rc 0 skopeo inspect "oci:$I/from-base:t"
fi

# Finding 3: an index.json (or oci-layout) that links to a root-only file (credentials, 0600) is
# refused, not read and rewritten 0644; another user's index.json keeps only an index's fields.
if wants 3; then
    printf '{"auths":{"registry.example":{"auth":"c2VjcmV0"}},"manifests":[]}' > "$TEST_TMP/config.json"
    chmod 0600 "$TEST_TMP/config.json"
    secret_before=$(snap "$TEST_TMP" | grep ' ./config.json' || true)
    cp -a "$I/good" "$I/l3"
    rm "$I/l3/index.json"
    ln -s "$TEST_TMP/config.json" "$I/l3/index.json"
    before=$(snap "$I/l3")
    expect_rc 2 "$CVM" export --oci "$I/l3" --tag t
    assert_contains "$ERR" "$I/l3/index.json is a link"
    export_error_alone
    assert_eq "$(snap "$I/l3")" "$before" "the layout after the refusal"
    assert_eq "$(snap "$TEST_TMP" | grep ' ./config.json' || true)" "$secret_before" "the linked file"
    cp -a "$I/good" "$I/l3b"
    mv "$I/l3b/oci-layout" "$TEST_TMP/oci-layout"
    ln -s "$TEST_TMP/oci-layout" "$I/l3b/oci-layout"
    expect_rc 2 "$CVM" export --oci "$I/l3b" --tag t
    assert_contains "$ERR" "$I/l3b/oci-layout is a link"
    # Another user's index.json: its unknown fields are not carried into the one cvm writes.
    cp -a "$I/good" "$I/l3c"
    jq -c '.auths = {"registry.example": {"auth": "c2VjcmV0"}} | .annotations = {"a": "b"}' \
        "$I/good/index.json" > "$I/l3c/index.json"
    chown nobody "$I/l3c/index.json"
    expect_rc 0 "$CVM" export --oci "$I/l3c" --tag t
    assert_eq "$(jq -c 'keys' "$I/l3c/index.json")" '["annotations","manifests","mediaType","schemaVersion"]' \
        "the fields of the index written over another user's"
    # The user's own index.json keeps its fields.
    cp -a "$I/good" "$I/l3d"
    jq -c '.extra = 1' "$I/good/index.json" > "$I/l3d/index.json"
    expect_rc 0 "$CVM" export --oci "$I/l3d" --tag t
    assert_eq "$(jq -c .extra "$I/l3d/index.json")" "1" "the user's own field"
fi

# Finding 6: a hostile --base reads within bounds: a FIFO blob is not waited for, a blob linked
# to /dev/zero is not read, a blob longer than the manifest says is read no further.
if wants 6; then
    cp -a "$BASE" "$TEST_TMP/base-fifo"
    rm "$TEST_TMP/base-fifo/blobs/sha256/$BASE_LAYER"
    mkfifo "$TEST_TMP/base-fifo/blobs/sha256/$BASE_LAYER"
    expect_rc 2 timeout "$WAIT" "$CVM" export --oci "$I/from-fifo" --base "$TEST_TMP/base-fifo:latest"
    assert_contains "$ERR" "the blob sha256:$BASE_LAYER is not a regular file"
    export_error_alone
    [[ ! -e $I/from-fifo ]] || fail "a refused export made $I/from-fifo"
    cp -a "$BASE" "$TEST_TMP/base-zero"
    ln -sf /dev/zero "$TEST_TMP/base-zero/blobs/sha256/$BASE_LAYER"
    expect_rc 2 timeout "$WAIT" "$CVM" export --oci "$I/from-zero" --base "$TEST_TMP/base-zero:latest"
    assert_contains "$ERR" "the blob sha256:$BASE_LAYER is a link"
    [[ ! -e $I/from-zero ]] || fail "a refused export made $I/from-zero"
    cp -a "$BASE" "$TEST_TMP/base-long"
    head -c 1000000 /dev/zero >> "$TEST_TMP/base-long/blobs/sha256/$BASE_LAYER"
    expect_rc 2 timeout "$WAIT" "$CVM" export --oci "$I/from-long" --base "$TEST_TMP/base-long:latest"
    assert_contains "$ERR" "is larger than its manifest says"
    [[ ! -e $I/from-long ]] || fail "a refused export made $I/from-long"
fi

# Finding 7: 100,000 levels of '[' in the manifests of the index.json of the layout exported into: one line, exit
# 2, no blob renamed in.
if wants 7; then
    cp -a "$I/good" "$I/l7"
    { printf '{"schemaVersion":2,"manifests":['; head -c 100000 /dev/zero | tr '\0' '['
      head -c 100000 /dev/zero | tr '\0' ']'; printf ']}'; } > "$I/l7/index.json"
    before=$(snap "$I/l7")
    expect_rc 2 "$CVM" export --oci "$I/l7" --tag t
    [[ -n ${HOSTILE_DEBUG:-} ]] && echo "ERR: $ERR" >&2
    assert_contains "$ERR" "$I/l7/index.json is nested deeper than 64 levels"
    export_error_alone
    assert_eq "$(snap "$I/l7")" "$before" "the layout after the refusal"
fi

# Finding 9: --base L:TAG inside L itself: its layers are checked by digest, not by size only.
if wants 9; then
    # damaged_copy NAME: a copy of the base layout whose base layer has one byte changed mid-file.
    damaged_copy() {
        cp -a "$BASE" "$I/$1"
        local f="$I/$1/blobs/sha256/$BASE_LAYER"
        printf 'X' | dd of="$f" bs=1 seek=$(($(stat -c %s "$f") / 2)) conv=notrunc status=none
    }
    damaged_copy l9
    before=$(snap "$I/l9")
    expect_rc 2 "$CVM" export --oci "$I/l9" --base "$I/l9:latest" --tag cuda
    assert_contains "$ERR" "the layer sha256:$BASE_LAYER of --base $I/l9 does not match its digest"
    export_error_alone
    assert_eq "$(snap "$I/l9")" "$before" "the layout after the refusal"
    cp "$BASE/blobs/sha256/$BASE_LAYER" "$I/l9/blobs/sha256/$BASE_LAYER"
    expect_rc 0 "$CVM" export --oci "$I/l9" --base "$I/l9:latest" --tag cuda
    expect_rc 0 skopeo inspect "oci:$I/l9:cuda"
    # DIR (another layout) holds a damaged blob under the base layer's name: checked as a copy
    # would be, not taken for the base's by its name.
    damaged_copy d9
    before=$(snap "$I/d9")
    expect_rc 2 "$CVM" export --oci "$I/d9" --base "$BASE:latest" --tag cuda
    assert_contains "$ERR" "the layer sha256:$BASE_LAYER of $I/d9 does not match its digest"
    export_error_alone
    assert_eq "$(snap "$I/d9")" "$before" "the layout after the refusal"
fi

# Finding 19: what an export killed with -9 left (blobs/sha256/.NAME.tmp<pid>, that pid gone): an
# empty folder holding only that is taken as empty; in a layout it is removed at the next export.
if wants 19; then
    sh -c 'exit 0' &
    dead=$!
    wait "$dead"
    ! kill -0 "$dead" 2> /dev/null || fail "pid $dead still runs"
    mkdir -p "$I/e19/blobs/sha256"
    head -c 1000 /dev/urandom > "$I/e19/blobs/sha256/.layer.tmp$dead"
    : > "$I/e19/blobs/sha256/.config.tmp$dead"
    expect_rc 0 "$CVM" export --oci "$I/e19"
    [[ -z $(find "$I/e19" -name '.*.tmp*') ]] || fail "leftovers stayed: $(find "$I/e19" -name '.*.tmp*')"
    expect_rc 0 skopeo inspect "oci:$I/e19:cuda11.8.0"
    mkdir -p "$I/e19b/blobs/sha256"
    expect_rc 0 "$CVM" export --oci "$I/e19b"
    cp -a "$I/good" "$I/l19"
    head -c 1000 /dev/urandom > "$I/l19/blobs/sha256/.layer.tmp$dead"
    : > "$I/l19/.index.json.tmp$dead"
    : > "$I/l19/blobs/sha256/.layer.tmp$$" # a process that runs: kept
    expect_rc 0 "$CVM" export --oci "$I/l19" --tag t
    [[ ! -e $I/l19/blobs/sha256/.layer.tmp$dead && ! -e $I/l19/.index.json.tmp$dead ]] ||
        fail "a dead export's leftovers stayed in the layout"
    [[ -e $I/l19/blobs/sha256/.layer.tmp$$ ]] || fail "a running process's file was removed"
    # Anything else there is still not an empty folder.
    mkdir -p "$I/e19c/blobs/sha256"
    : > "$I/e19c/blobs/sha256/.layer.tmp$$"
    expect_rc 2 "$CVM" export --oci "$I/e19c"
    assert_contains "$ERR" "is a folder holding blobs, not an OCI image layout"
fi

# Finding 10: a file name that is no UTF-8 travels as its bytes.
if wants 10; then
    odd=$'notes-\xe9.txt'
    make_toolkit "$TEST_TMP/import/cuda-11.7" 11.7.1
    echo notes > "$TEST_TMP/import/cuda-11.7/$odd"
    expect_rc 0 "$CVM" import "$TEST_TMP/import/cuda-11.7"
    expect_rc 0 "$CVM" export --oci "$I/l10" 11.7 --tag odd
    umoci unpack --image "$I/l10:odd" "$TEST_TMP/b10" > /dev/null || fail "umoci unpack of the layer"
    [[ -f $TEST_TMP/b10/rootfs/opt/cvm/cuda/11.7.1/$odd ]] ||
        fail "umoci did not unpack $odd: $(ls "$TEST_TMP/b10/rootfs/opt/cvm/cuda/11.7.1" | od -c | head -5)"
    m=$(jq -r '.manifests[0].digest' "$I/l10/index.json")
    l=$(jq -r '.layers[-1].digest' "$I/l10/blobs/sha256/${m#sha256:}")
    mkdir "$TEST_TMP/t10"
    tar -C "$TEST_TMP/t10" -xzf "$I/l10/blobs/sha256/${l#sha256:}"
    [[ -f $TEST_TMP/t10/opt/cvm/cuda/11.7.1/$odd ]] || fail "tar did not unpack $odd"
fi
echo "image_hostile_layouts: ok"
