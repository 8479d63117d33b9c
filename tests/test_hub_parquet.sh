#!/usr/bin/env bash
# The Hub fallback reads the Parquet files of eight tasks: with the viewer down (404), each task
# downloads from the loopback server's Hub, where the file is a pyarrow-written fixture
# (tests/fixtures/parquet) at the repository path the real Hub serves; the cache must then hold
# exactly the task's canonical rows (tests/fixtures/data/<task>/<split>.jsonl). Also: a file
# missing from main is read from refs/convert/parquet, and a damaged file is refused.
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
FX=$HERE/fixtures/parquet
SERVER_PID=""
trap '[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null; rm -rf "$TMP"' EXIT
if ! command -v python3 >/dev/null; then skip hub_parquet "python3 is not installed"; finish; exit; fi
export XSA_HTTP_MAX_RETRIES=1 XSA_HTTP_BACKOFF_MS=50 XSA_HTTP_CONNECT_TIMEOUT=3 XSA_HTTP_MAX_TOTAL=20
unset HF_ENDPOINT XDG_CACHE_HOME

# task split repository-path (as source_hub.c asks for it) fixture-variant
PLANS="arc_easy test allenai/ai2_arc/resolve/main/ARC-Easy/test-00000-of-00001.parquet snappy
arc_challenge test allenai/ai2_arc/resolve/main/ARC-Challenge/test-00000-of-00001.parquet zstd_v2_plain
boolq validation aps/super_glue/resolve/main/boolq/validation-00000-of-00001.parquet gzip_v2_groups
hellaswag validation Rowan/hellaswag/resolve/refs%2Fconvert%2Fparquet/default/validation/0000.parquet snappy
openbookqa test allenai/openbookqa/resolve/main/main/test-00000-of-00001.parquet none_plain_groups
piqa validation baber/piqa/resolve/main/piqa_validation.parquet snappy
social_iqa validation lighteval/siqa/resolve/main/data/validation-00000-of-00001-90bb85eab85fcfa8.parquet zstd_v2_plain
winogrande validation allenai/winogrande/resolve/main/winogrande_xl/validation-00000-of-00001.parquet gzip_v2_groups"
REAL=()
while read -r task split path variant; do REAL+=(--real "datasets/$path=$FX/$task.$variant.parquet"); done <<<"$PLANS"
python3 "$HERE/http_server.py" --port-file "$TMP/port" --log "$TMP/log" --lifetime 100 "${REAL[@]}" 2>"$TMP/err" &
SERVER_PID=$!
for _ in $(seq 100); do [ -s "$TMP/port" ] && break; sleep 0.05; done
[ -s "$TMP/port" ] || { fail server "did not start: $(cat "$TMP/err")"; finish; exit; }
B=http://127.0.0.1:$(cat "$TMP/port")

# same_rows NAME CACHE_JSONL CANONICAL_JSONL: the same rows, fields in the same order.
same_rows() {
    local why
    why=$(python3 - "$2" "$3" <<'PY'
import json, sys
a = [json.loads(l, object_pairs_hook=list) for l in open(sys.argv[1], encoding="utf-8")]
b = [json.loads(l, object_pairs_hook=list) for l in open(sys.argv[2], encoding="utf-8") if l.strip()]
# Canonical rows hold SocialIQA's labels without the loader script's newline (whatever the copy).
if "social_iqa" in sys.argv[2]:
    b = [[(k, v.rstrip("\n") if k == "label" else v) for k, v in r] for r in b]
assert len(a) == len(b), "%d rows, wanted %d" % (len(a), len(b))
for i, (x, y) in enumerate(zip(a, b)):
    assert x == y, "row %d: %r != %r" % (i + 1, x, y)
PY
    ) 2>&1 && pass "$1" || fail "$1" "$why"
}

hub() { "$XSA_BIN" download --quiet --datasets-server "$B/noviewer/404/0" --originals-mirror "$B/noorig/404/0" \
            --source viewer,hub --allow-data-change "$@"; }
while read -r task split path variant; do
    C=$TMP/c_$task
    expect_exit "hub_parquet_$task" 0 "$task .*hub:$B/h/ok/0/datasets/$path" -- hub --tasks "$task" --cache-dir "$C" --hf-endpoint "$B/h/ok/0"
    same_rows "hub_parquet_rows_$task" "$C/$task/$split.jsonl" "$HERE/fixtures/data/$task/$split.jsonl"
done <<<"$PLANS"
grep -q '"dataset":[[:space:]]*"lighteval/siqa"' "$TMP/c_social_iqa/social_iqa/validation.manifest.json" && pass hub_parquet_dataset_recorded ||
    fail hub_parquet_dataset_recorded "$(grep '"dataset"' "$TMP/c_social_iqa/social_iqa/validation.manifest.json")"
grep -q '"revision":[[:space:]]*"0123456789abcdef' "$TMP/c_boolq/boolq/validation.manifest.json" && pass hub_parquet_revision ||
    fail hub_parquet_revision "X-Repo-Commit not in the manifest"

# Second server: ARC-Easy only on the conversion branch (main answers 404); PIQA's file cut short.
kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null
head -c -100 "$FX/piqa.snappy.parquet" > "$TMP/cut.parquet"
: > "$TMP/port"
python3 "$HERE/http_server.py" --port-file "$TMP/port" --log "$TMP/log" --lifetime 100 \
    --real "datasets/allenai/ai2_arc/resolve/refs%2Fconvert%2Fparquet/ARC-Easy/test/0000.parquet=$FX/arc_easy.gzip_v2_groups.parquet" \
    --real "piqa_validation.parquet=$TMP/cut.parquet" 2>"$TMP/err" &
SERVER_PID=$!
for _ in $(seq 100); do [ -s "$TMP/port" ] && break; sleep 0.05; done
B=http://127.0.0.1:$(cat "$TMP/port")
C=$TMP/conv
expect_exit hub_parquet_conversion_branch 0 "arc_easy .*hub:$B/cv/ok/0/datasets/allenai/ai2_arc/resolve/refs%2Fconvert%2Fparquet/ARC-Easy/test/0000.parquet" -- \
    hub --tasks arc_easy --cache-dir "$C" --hf-endpoint "$B/cv/ok/0" --source hub
same_rows hub_parquet_conversion_rows "$C/arc_easy/test.jsonl" "$HERE/fixtures/data/arc_easy/test.jsonl"
grep -q '"revision":[[:space:]]*"0123456789abcdef' "$C/arc_easy/test.manifest.json" && pass hub_parquet_conversion_revision ||
    fail hub_parquet_conversion_revision "X-Repo-Commit not in the manifest"

# A damaged file is refused with the reader's reason and nothing is cached.
C=$TMP/bad
expect_exit hub_parquet_damaged 3 "piqa: download failed: data from .*piqa_validation.parquet does not convert: .*not a Parquet file" -- \
    hub --tasks piqa --cache-dir "$C" --hf-endpoint "$B/bd/ok/0" --source hub
[ ! -e "$C/piqa/validation.jsonl" ] && pass hub_parquet_damaged_not_cached || fail hub_parquet_damaged_not_cached "a copy was stored"
finish
