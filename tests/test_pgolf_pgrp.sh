#!/usr/bin/env bash
# The per-group (PGRP) container of the 2026-04-27 9Hp record (model/pgolf_pgrp.c, model/lrzip.c):
# the fixture its own _serialize_pergroup wrote loads and scores (its references are checked by
# tests/test_model_exact.c); each kind of damage gives one line naming the file and the problem,
# exit 2; a missing lrzip program is exit 3 with how to install it; lrzip's output is bounded and
# checked; no temporary file is left behind. Fixtures: tools/fixtures/make_pgolf_fixtures.py
# (pgrp_0427) and tools/fixtures/make_pgolf_pgrp_bad.py (pgolf_pgrp_bad).
. "$(dirname "$0")/lib.sh"
P=tests/fixtures/pgolf/pgrp_0427/final_model.int6.ptz
B=tests/fixtures/pgolf_pgrp_bad
export TMPDIR="$TMP/tmp"
mkdir -p "$TMPDIR"

expect_exit info_pgrp 0 "format +pgolf-int6-pgrp" -- "$XSA_BIN" info --model $P
expect_exit info_pgrp_json 0 '"format":[[:space:]]*"pgolf-int6-pgrp"' -- "$XSA_BIN" info --model $P --json
expect_exit logprobs_pgrp 0 "greedy" -- "$XSA_BIN" logprobs --model $P --tokens 1,5,9,300,7 --device cpu

# The container's own checks (one file each from the record's serializer, one thing broken).
expect_exit perm_dup 2 "perm_dup.int6.ptz: the PGRP row order of 'tok_emb.weight.q' is not a permutation of its 24 rows" -- "$XSA_BIN" info --model $B/perm_dup.int6.ptz
expect_exit perm_extra 2 "perm_extra.int6.ptz: 2 bytes of PGRP row orders are left over" -- "$XSA_BIN" info --model $B/perm_extra.int6.ptz
expect_exit perm_short 2 "perm_short.int6.ptz: the PGRP row orders end before 'blocks.1.mlp.fc.weight.q'" -- "$XSA_BIN" info --model $B/perm_short.int6.ptz
expect_exit shape_size 2 "shape_size.int6.ptz: the lrzip header of its PGRP group 'mlp.fc.weight.q' says 256 bytes; its shapes need 272" -- "$XSA_BIN" info --model $B/shape_size.int6.ptz
expect_exit dup_name 2 "dup_name.int6.ptz: 'blocks.0.mlp.fc.weight.q' is both in a PGRP group and in its remainder" -- "$XSA_BIN" info --model $B/dup_name.int6.ptz
expect_exit no_shapes 2 "no_shapes.int6.ptz: PGRP group 'mlp.proj.weight.q' has data but no list of shapes" -- "$XSA_BIN" info --model $B/no_shapes.int6.ptz
expect_exit tok_two_shapes 2 "tok_two_shapes.int6.ptz: PGRP group '_tok_emb.weight.q' lists 2 shapes for its one tensor" -- "$XSA_BIN" info --model $B/tok_two_shapes.int6.ptz
expect_exit remainder_list 2 "remainder_list.int6.ptz: the PGRP remainder is not the record's \{r, m, s\} dict" -- "$XSA_BIN" info --model $B/remainder_list.int6.ptz
# A good container of tensors that are not a model gets past the container: its names are the
# record's (blocks.<i>.<group>), and the int6 reader then finds the scales missing.
expect_exit tiny_container 2 "tiny.int6.ptz: int6 tensor 'blocks.0.mlp.fc.weight' lacks its .q or .scale entry" -- "$XSA_BIN" info --model $B/tiny.int6.ptz

# Byte surgery on the tiny container: the stream table, truncation, trailing bytes, a stream
# that is not lrzip, and an lrzip stream whose body is damaged (lrzip's own check finds it).
python3 - "$B/tiny.int6.ptz" "$TMP" <<'EOF'
import struct, sys
blob = open(sys.argv[1], "rb").read()
out = sys.argv[2]
n = struct.unpack("<I", blob[4:8])[0]
lens = list(struct.unpack("<%dI" % n, blob[8:8 + 4 * n]))
body = blob[8 + 4 * n:]
def pack(lens, body):
    return b"PGRP" + struct.pack("<I", len(lens)) + struct.pack("<%dI" % len(lens), *lens) + body
def put(name, data):
    open("%s/%s.int6.ptz" % (out, name), "wb").write(data)
put("count8", b"PGRP" + struct.pack("<I", 8) + blob[8:])
put("truncated", blob[:-40])
put("trailing", blob + b"\0" * 5)
put("short_header", blob[:6])
g0 = bytearray(body[:lens[0]])
g0[:4] = b"LRZX"
put("not_lrzip", pack(lens, bytes(g0) + body[lens[0]:]))
g0 = bytearray(body[:lens[0]])
for k in range(len(g0) - 60, len(g0) - 40):
    g0[k] ^= 0xA5
put("lrzip_damaged", pack(lens, bytes(g0) + body[lens[0]:]))
EOF
expect_exit count8 2 "count8.int6.ptz: a PGRP container of 8 streams; the 2026-04-27 record writes 9" -- "$XSA_BIN" info --model "$TMP/count8.int6.ptz"
expect_exit truncated 2 "truncated.int6.ptz: PGRP stream 8 of [0-9]+ bytes runs past the end of the file" -- "$XSA_BIN" info --model "$TMP/truncated.int6.ptz"
expect_exit trailing 2 "trailing.int6.ptz: 5 bytes after the last PGRP stream" -- "$XSA_BIN" info --model "$TMP/trailing.int6.ptz"
expect_exit short_header 2 "short_header.int6.ptz: a PGRP container of 6 bytes, too short for its header" -- "$XSA_BIN" info --model "$TMP/short_header.int6.ptz"
expect_exit not_lrzip 2 "not_lrzip.int6.ptz: its PGRP group '_tok_emb.weight.q' is not an lrzip stream \(no LRZI header\)" -- "$XSA_BIN" info --model "$TMP/not_lrzip.int6.ptz"
expect_exit lrzip_damaged 2 "lrzip_damaged.int6.ptz: lrzip failed on its PGRP group '_tok_emb.weight.q' \(exit 1: MD5 CHECK FAILED.\); the artifact may be damaged" -- "$XSA_BIN" info --model "$TMP/lrzip_damaged.int6.ptz"

# The lrzip program: missing (exit 3, how to install it), and stand-ins that write too little
# or past the bound (a child that writes more than the header's size is stopped by SIGXFSZ).
# A stand-in fails every stream alike, and which failure is seen first depends on timing: the
# messages name any group.
expect_exit lrzip_missing 3 "P?GRP.*needs the lrzip program \(.*/nonexistent/lrzip not found\); install it \(Debian: apt-get install lrzip\) or set XSA_EVAL_LRZIP" -- env XSA_EVAL_LRZIP="$TMP/nonexistent/lrzip" "$XSA_BIN" info --model $P
# A bare name is looked up on PATH, as a shell does; a bad CPU limit is named before lrzip runs.
expect_exit lrzip_bare_name 0 "format +pgolf-int6-pgrp" -- env XSA_EVAL_LRZIP=lrzip "$XSA_BIN" info --model $P
for v in 0 1000001 abc; do
    expect_exit "lrzip_cpu_s_$v" 2 "XSA_EVAL_LRZIP_CPU_S=$v: expected whole seconds from 1 to 1000000" -- env XSA_EVAL_LRZIP_CPU_S="$v" "$XSA_BIN" info --model $P
done
printf '#!/bin/sh\nhead -c 10 /dev/zero > "$5"\n' > "$TMP/short_lrzip"
printf '#!/bin/sh\nexec head -c 100000000 /dev/zero > "$5"\n' > "$TMP/long_lrzip"
printf '#!/bin/sh\necho "stand-in failure" >&2\nexit 4\n' > "$TMP/failing_lrzip"
printf '#!/bin/sh\nexit 0\n' > "$TMP/silent_lrzip"
printf '#!/bin/sh\nkill -TERM $$\n' > "$TMP/stopped_lrzip"
chmod +x "$TMP/short_lrzip" "$TMP/long_lrzip" "$TMP/failing_lrzip" "$TMP/silent_lrzip" "$TMP/stopped_lrzip"
expect_exit lrzip_short_output 2 "lrzip decompressed its PGRP group '[a-z_.]+' to 10 bytes, not the [0-9]+" -- env XSA_EVAL_LRZIP="$TMP/short_lrzip" "$XSA_BIN" info --model $P
expect_exit lrzip_long_output 2 "lrzip wrote more than the header's size reading its PGRP group" -- env XSA_EVAL_LRZIP="$TMP/long_lrzip" "$XSA_BIN" info --model $P
expect_exit lrzip_message 2 "lrzip failed on its PGRP group '[a-z_.]+' \(exit 4: stand-in failure\)" -- env XSA_EVAL_LRZIP="$TMP/failing_lrzip" "$XSA_BIN" info --model $P
expect_exit lrzip_no_output 3 "silent_lrzip exited 0 but wrote nothing for its PGRP group '[a-z_.]+'" -- env XSA_EVAL_LRZIP="$TMP/silent_lrzip" "$XSA_BIN" info --model $P
expect_exit lrzip_terminated 130 "interrupted while lrzip read its PGRP group" -- env XSA_EVAL_LRZIP="$TMP/stopped_lrzip" "$XSA_BIN" info --model $P

# A stream whose decoder never ends is stopped by the CPU bound (XSA_EVAL_LRZIP_CPU_S here: 1 s).
printf '#!/bin/sh\nwhile :; do :; done\n' > "$TMP/spinning_lrzip"
# One stream failing stops the others at once; so does SIGTERM to xsa-eval (exit 130). Either
# way no lrzip is left running and the temporary folder goes.
# (a stand-in that was not stopped touches its marker after its sleep; no timing is measured)
printf '#!/bin/sh\ncase "$6" in */0.lrz) exit 4 ;; esac\nsleep 31.7; touch "%s/slept1"\n' "$TMP" > "$TMP/one_failing_lrzip"
printf '#!/bin/sh\ntouch "%s/started2"; sleep 32.3; touch "%s/slept2"\n' "$TMP" "$TMP" > "$TMP/sleeping_lrzip"
chmod +x "$TMP/spinning_lrzip" "$TMP/one_failing_lrzip" "$TMP/sleeping_lrzip"
expect_exit lrzip_cpu_bound 2 "lrzip used more than 1 s of CPU on its PGRP group" -- env XSA_EVAL_LRZIP_CPU_S=1 XSA_EVAL_LRZIP="$TMP/spinning_lrzip" "$XSA_BIN" info --model $P
expect_exit lrzip_first_failure 2 "lrzip failed on its PGRP group '_tok_emb.weight.q' \(exit 4" -- env XSA_EVAL_LRZIP="$TMP/one_failing_lrzip" "$XSA_BIN" info --model $P
expect_exit first_failure_stops_others 0 "^stopped$" -- bash -c "[ ! -e '$TMP/slept1' ] && ! pgrep -f 'slee[p] 31.7' >/dev/null && echo stopped"
env XSA_EVAL_LRZIP="$TMP/sleeping_lrzip" "$XSA_BIN" info --model $P > "$TMP/term.out" 2>&1 &
pid=$!
for _ in $(seq 600); do [ -e "$TMP/started2" ] && break; sleep 0.1; done  # (the signal once lrzip runs)
kill -TERM $pid; wait $pid; rc=$?
expect_exit sigterm_exit_130 0 "^130 interrupted while lrzip read its streams$" -- bash -c "echo $rc \$(grep -o 'interrupted while lrzip read its streams' '$TMP/term.out')"
expect_exit sigterm_stops_children 0 "^stopped$" -- bash -c "[ ! -e '$TMP/slept2' ] && ! pgrep -f 'slee[p] 32.3' >/dev/null && echo stopped"
# Too few file descriptors: lrzip cannot be started, and nothing is left behind.
expect_exit fd_limit 3 "cannot start lrzip \(pipe: Too many open files\)" -- bash -c "ulimit -n 5; exec '$XSA_BIN' info --model $P"

# Every run above removed its temporary folder.
left=$(ls -A "$TMPDIR")
expect_exit no_temp_left 0 "^clean$" -- bash -c "[ -z '$left' ] && echo clean || echo 'left: $left'"
finish
