#!/usr/bin/env bash
# Sources as the real services behave, against the loopback fake (tests/http_server.py): the chain
# viewer down -> Hub down -> original for every task, the pinned canonical digests (real files of
# ../shared/benchdata served as the viewer's rows and as the authors' files), --strict-data, the
# viewer's X-Revision, SocialIQA's order, HF_TOKEN (sent to Hugging Face hosts only, never to the
# CDN host, never written), pacing, and `tasks` listing every task's sources.
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
SERVER_PIDS=""
trap 'for p in $SERVER_PIDS; do kill "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT
if ! command -v python3 >/dev/null; then skip sources "python3 is not installed"; finish; exit; fi
export XSA_HTTP_MAX_RETRIES=1 XSA_HTTP_BACKOFF_MS=50 XSA_HTTP_CONNECT_TIMEOUT=3 XSA_HTTP_MAX_TOTAL=30
unset XDG_CACHE_HOME HF_TOKEN HF_TOKEN_PATH
export HF_ENDPOINT=http://127.0.0.1:9/no-hub   # a Hub a test forgot to point at the fake: refused, never the real one
export HF_HOME=$TMP/hf-home   # no token file unless a test writes one

# start_server NAME ARGS..: sets URL_<NAME>.
start_server() {
    local name=$1; shift
    python3 "$HERE/http_server.py" --port-file "$TMP/$name.port" --log "$TMP/$name.log" --lifetime 150 "$@" \
        2>"$TMP/$name.err" &
    SERVER_PIDS="$SERVER_PIDS $!"
    for _ in $(seq 200); do [ -s "$TMP/$name.port" ] && break; sleep 0.05; done
    [ -s "$TMP/$name.port" ] || { fail "server_$name" "did not start: $(cat "$TMP/$name.err")"; return 1; }
    printf -v "URL_$name" "http://127.0.0.1:%s" "$(cat "$TMP/$name.port")"
}
N=120
SYNTH=(--rows allenai/ai2_arc/ARC-Easy/test=$N --rows allenai/ai2_arc/ARC-Challenge/test=$N
       --rows aps/super_glue/boolq/validation=$N --rows Rowan/hellaswag/default/validation=$N
       --rows EleutherAI/lambada_openai/default/test=$N --rows allenai/openbookqa/main/test=$N
       --rows baber/piqa/default/validation=$N --rows lighteval/siqa/default/validation=$N
       --rows allenai/winogrande/winogrande_xl/validation=$N --files ARC-V1-Feb2018.zip=$N --files BoolQ.zip=$N
       --files lambada_test.jsonl=$N --files OpenBookQA-V1-Sep2018.zip=$N
       --files valid.jsonl=$N --files valid-labels.lst=$N --files socialiqa-train-dev.zip=$N --files winogrande_1.1.zip=$N)
# The few-shot (train) splits, and HellaSwag's on the Hub's conversion branch only.
for ds in allenai/ai2_arc/ARC-Easy allenai/ai2_arc/ARC-Challenge aps/super_glue/boolq Rowan/hellaswag/default \
          allenai/openbookqa/main baber/piqa/default lighteval/siqa/default allenai/winogrande/winogrande_xl; do
    SYNTH+=(--rows "$ds/train=40")
done
HS=datasets/Rowan/hellaswag/resolve/refs%2Fconvert%2Fparquet/default
SYNTH+=(--real "$HS/train/0000.parquet=$HERE/fixtures/parquet/hellaswag.snappy.parquet"
        --real "$HS/validation/0000.parquet=$HERE/fixtures/parquet/hellaswag.snappy.parquet")
start_server syn "${SYNTH[@]}" || { finish; exit; }
B=$URL_syn
LOG=$TMP/syn.log

# Viewer down (500 "not ready", retried), Hub down (500, retried): every task with an original
# comes from it, with the same canonical bytes the viewer gives; HellaSwag has no original.
EIGHT="arc_easy arc_challenge boolq lambada_openai openbookqa piqa social_iqa winogrande"
"$XSA_BIN" download --quiet --tasks all --cache-dir "$TMP/v" --datasets-server "$B/v/ok/0" --source viewer \
    --allow-data-change >"$TMP/v.out" 2>&1 && pass chain_viewer_reference || fail chain_viewer_reference "$(tail -3 "$TMP/v.out")"
for t in $EIGHT; do
    expect_exit "chain_${t}_to_original" 0 "$t .*downloaded +original:$B/o/ok/0/" -- "$XSA_BIN" download --quiet --tasks $t \
        --cache-dir "$TMP/o" --datasets-server "$B/vd/notready/99" --hf-endpoint "$B/hd/500/99" --originals-mirror "$B/o/ok/0" \
        --allow-data-change
    f=$(cd "$TMP/v/$t" && ls *.jsonl)
    cmp -s "$TMP/v/$t/$f" "$TMP/o/$t/$f" && pass "chain_${t}_same_bytes" || fail "chain_${t}_same_bytes" "$(diff "$TMP/v/$t/$f" "$TMP/o/$t/$f" | head -3)"
done
grep -q '"/vd/notready/99/rows.*"fault": "notready"' "$LOG" && grep -q '"/hd/500/99/datasets/.*"fault": "500"' "$LOG" &&
    pass chain_sources_were_down || fail chain_sources_were_down "the viewer or the Hub was not asked"
expect_exit chain_hellaswag_hub_only 3 "hellaswag: download failed: GET [^ ]*/vd/notready/99/rows.*HTTP 500.* \(and the hub source, tried last: GET [^ ]*/hd/500/99/.*HTTP 500.*\); check the network" -- "$XSA_BIN" download --quiet --tasks hellaswag \
    --cache-dir "$TMP/o" --datasets-server "$B/vd/notready/99" --hf-endpoint "$B/hd/500/99" --originals-mirror "$B/o/ok/0"

# Few-shot splits: downloaded, verified and cached like the evaluated one (`download --fewshot`, or
# on demand by `run --num-fewshot`), so `--num-fewshot 5 --tasks all` runs from the cache alone.
M=tests/fixtures/parity/models/gpt2_bpe
expect_exit fewshot_download 0 "arc_easy/train +40 rows .*downloaded +viewer:.*split=train" -- "$XSA_BIN" download --quiet \
    --tasks all --fewshot --cache-dir "$TMP/v" --datasets-server "$B/v/ok/0" --hf-endpoint "$B/nohub/404/0" --allow-data-change
for t in arc_easy arc_challenge boolq hellaswag openbookqa piqa social_iqa winogrande; do
    [ "$(wc -l <"$TMP/v/$t/train.jsonl" 2>/dev/null)" = 40 ] && pass "fewshot_cached_$t" || fail "fewshot_cached_$t" "no 40-row train.jsonl"
done
expect_exit fewshot_all_from_cache 0 "" -- "$XSA_BIN" run --model $M --tasks all --num-fewshot 5 --limit 2 --offline \
    --cache-dir "$TMP/v" --allow-data-change --output "$TMP/fs_out" --quiet
expect_exit fewshot_missing_offline 3 "openbookqa: train split not available offline.*xsa-eval download --tasks openbookqa --cache-dir $TMP/o --fewshot" -- \
    "$XSA_BIN" run --model $M --tasks openbookqa --num-fewshot 2 --limit 2 --offline --cache-dir "$TMP/o" --allow-data-change --output "$TMP/fs_out"
expect_exit fewshot_on_demand 0 "" -- "$XSA_BIN" run --model $M --tasks openbookqa --num-fewshot 2 --limit 2 --cache-dir "$TMP/fd" \
    --datasets-server "$B/fd/ok/0" --hf-endpoint "$B/fdh/404/0" --allow-data-change --output "$TMP/fs_out" --quiet
grep -q '"split":[[:space:]]*"train"' "$TMP/fd/openbookqa/train.manifest.json" 2>/dev/null && pass fewshot_on_demand_cached ||
    fail fewshot_on_demand_cached "no train manifest"
grep -q '"/fdh/404/0/datasets/allenai/openbookqa/resolve/refs%2Fconvert%2Fparquet/main/train/0000.parquet' "$LOG" &&
    pass fewshot_hub_first || fail fewshot_hub_first "the few-shot split was not asked of the Hub first"
expect_exit fewshot_hub_conversion 0 "hellaswag/train .*downloaded +hub:$B/fh/ok/0/$HS/train/0000.parquet" -- "$XSA_BIN" download \
    --quiet --tasks hellaswag --fewshot --cache-dir "$TMP/fh" --datasets-server "$B/nv/404/0" --hf-endpoint "$B/fh/ok/0" \
    --source viewer,hub --allow-data-change

# ARC's zip is read by Range only (the end, the central directory when it is not in the end's
# bytes, the member): never a whole-file GET; a server that ignores Range is refused.
python3 - "$LOG" <<'PY' && pass arc_range_only || fail arc_range_only "a whole-zip GET or no Range"
import json, sys
r = [json.loads(l) for l in open(sys.argv[1]) if "ARC-V1-Feb2018.zip" in l and '"/o/ok/0/' in l]
assert len(r) == 4 and all(x["range"] and x["range"] != "bytes=0-" for x in r), r  # 2 per task, 2 tasks
assert all(x["range"].startswith("bytes=-") for x in r[::2]), r
PY
start_server zc "${SYNTH[@]}" --zip-comment 65535 || { finish; exit; }
expect_exit arc_range_far_directory 0 "arc_easy .*downloaded +original:" -- "$XSA_BIN" download --quiet --tasks arc_easy \
    --cache-dir "$TMP/zc" --originals-mirror "$URL_zc/o/ok/0" --source original --allow-data-change
[ "$(grep -c ARC-V1-Feb2018.zip "$TMP/zc.log")" = 3 ] && pass arc_range_three_requests || fail arc_range_three_requests "$(grep -c ARC "$TMP/zc.log") requests"
cmp -s "$TMP/v/arc_easy/test.jsonl" "$TMP/zc/arc_easy/test.jsonl" && pass arc_range_same_rows || fail arc_range_same_rows "rows differ"
expect_exit arc_range_ignored 3 "asked for bytes -65557, got HTTP 200 \(the server ignores Range\)" -- "$XSA_BIN" download --quiet \
    --tasks arc_easy --cache-dir "$TMP/nr" --originals-mirror "$B/nr/norange/0" --source original --allow-data-change
[ ! -e "$TMP/nr/arc_easy/test.jsonl" ] && [ ! -e "$TMP/nr/raw/arc_easy/ARC-V1-Feb2018.zip" ] && pass arc_range_ignored_nothing_kept ||
    fail arc_range_ignored_nothing_kept "$(find "$TMP/nr" -type f)"
# The same from a zip larger than the part asked for: curl stops at its length, and the message
# still says why.
expect_exit arc_range_ignored_large_zip 3 "asked for bytes -65557, got HTTP 200 with the whole file \(the server ignores Range" -- \
    "$XSA_BIN" download --quiet --tasks arc_easy --cache-dir "$TMP/nrz" --originals-mirror "$URL_zc/o/norange/0" \
    --source original --allow-data-change

# The viewer as the real one: "not ready" (500) once is retried on the viewer; pages never ask for
# more than the 100 rows it allows (more is a 422).
expect_exit viewer_not_ready_retried 0 "openbookqa .*downloaded +viewer:" -- "$XSA_BIN" download --quiet --tasks openbookqa \
    --cache-dir "$TMP/nr1" --datasets-server "$B/nr1/notready/1" --source viewer --allow-data-change
grep -q '"/nr1/notready/1/rows.*"fault": "notready"' "$LOG" && pass viewer_not_ready_was_served || fail viewer_not_ready_was_served "no 500"
python3 - "$LOG" <<'PY' && pass viewer_length_at_most_100 || fail viewer_length_at_most_100 "a page asked for more than 100 rows"
import json, re, sys
n = [int(m.group(1)) for l in open(sys.argv[1]) for m in [re.search(r"/rows\?.*length=(\d+)", json.loads(l)["path"])] if m]
assert n and max(n) <= 100, max(n or [0])
PY

# SocialIQA: lighteval/siqa first (what lm-eval main reads); the loader-script copy only after it fails.
grep -E '"/v/ok/0/rows\?dataset=(lighteval|allenai)%2F(siqa|social_i_qa)' "$LOG" | head -1 | grep -q lighteval &&
    pass siqa_lighteval_first || fail siqa_lighteval_first "$(grep -E 'siqa|social_i_qa' "$LOG" | head -2)"
expect_exit siqa_alt_after_failure 3 "lighteval%2Fsiqa.*HTTP 500.*trying allenai/social_i_qa" -- "$XSA_BIN" download \
    --tasks social_iqa --cache-dir "$TMP/sq" --datasets-server "$B/sq/500/99" --source viewer
grep -q '"dataset":[[:space:]]*"lighteval/siqa"' "$TMP/v/social_iqa/validation.manifest.json" && pass siqa_dataset_recorded ||
    fail siqa_dataset_recorded "$(grep dataset "$TMP/v/social_iqa/validation.manifest.json")"

# The viewer's X-Revision is the manifest's revision; a revision that changes between pages stops.
grep -q '"revision":[[:space:]]*"6b8c8596030cfad104cb90bdfd86b04d9dddb9b6"' "$TMP/v/openbookqa/test.manifest.json" &&
    pass viewer_revision_recorded || fail viewer_revision_recorded "$(grep revision "$TMP/v/openbookqa/test.manifest.json")"
expect_exit viewer_revision_changed 3 "dataset changed during the download" -- "$XSA_BIN" download --quiet --tasks openbookqa \
    --cache-dir "$TMP/rc" --datasets-server "$B/rc/revchange/0" --source viewer --allow-data-change
[ ! -e "$TMP/rc/openbookqa/test.jsonl" ] && pass viewer_revision_changed_not_cached || fail viewer_revision_changed_not_cached "stored"

# Pins: synthetic rows are not the pinned ones: a warning naming both digests, "NOT-PINNED", and
# `tasks` says so; --strict-data refuses them.
expect_exit pin_mismatch_warns 0 "warning: openbookqa: canonical SHA-256 [0-9a-f]{64} differs from the pinned b3a19cc89b1a02e0" -- \
    "$XSA_BIN" download --quiet --tasks openbookqa --cache-dir "$TMP/p" --datasets-server "$B/v/ok/0" --allow-data-change
expect_exit pin_mismatch_listed 0 "openbookqa .*NOT-PINNED" -- "$XSA_BIN" download --quiet --tasks openbookqa --cache-dir "$TMP/p" --allow-data-change --offline
expect_exit pin_mismatch_tasks 0 "openbookqa .*NOT the pinned rows" -- "$XSA_BIN" tasks --cache-dir "$TMP/p"
expect_exit pin_strict_refuses 3 "openbookqa: .*pinned b3a19cc89b1a02e0.*--strict-data" -- "$XSA_BIN" download --quiet \
    --tasks openbookqa --cache-dir "$TMP/p2" --datasets-server "$B/v/ok/0" --allow-data-change --strict-data --source viewer
[ ! -e "$TMP/p2/openbookqa/test.jsonl" ] && pass pin_strict_not_cached || fail pin_strict_not_cached "stored"
expect_exit pin_strict_cached_copy 3 "--strict-data" -- "$XSA_BIN" download --quiet --tasks openbookqa --cache-dir "$TMP/p" \
    --allow-data-change --strict-data --offline

# `tasks` lists each task's sources in order, and their pins.
expect_exit tasks_sources_siqa 0 "social_iqa +viewer lighteval/siqa/default, else allenai/social_i_qa/default" -- "$XSA_BIN" tasks --cache-dir "$TMP/p"
expect_exit tasks_sources_hellaswag 0 "hub Rowan/hellaswag refs/convert/parquet default/validation/0000.parquet" -- "$XSA_BIN" tasks --cache-dir "$TMP/p"
expect_exit tasks_sources_arc_original 0 "original ARC-V1-Feb2018.zip!ARC-Easy-Test.jsonl" -- "$XSA_BIN" tasks --cache-dir "$TMP/p"
expect_exit tasks_json_sources 0 '"original":[[:space:]]*"winogrande_1.1.zip!dev.jsonl, dev-labels.lst"' -- "$XSA_BIN" tasks --json --cache-dir "$TMP/p"
expect_exit tasks_json_pin 0 '"pinned_sha256":[[:space:]]*"7c73345800fdb847' -- "$XSA_BIN" tasks --json --cache-dir "$TMP/p"
"$XSA_BIN" tasks --json --cache-dir "$TMP/p" | python3 -c '
import json, sys
t = {o["task"]: o for o in json.load(sys.stdin)}
assert t["openbookqa"]["cached"] and t["openbookqa"]["pinned"] is False, t["openbookqa"]
assert t["hellaswag"]["pinned_sha256"] is None and "pinned" not in t["hellaswag"]
assert t["social_iqa"]["sources"]["hub"].startswith("lighteval/siqa data/validation-")' && pass tasks_json_pinned_state ||
    fail tasks_json_pinned_state "tasks --json pin fields"

# HF_TOKEN: sent as a bearer token to the viewer and the Hub, not to the authors' hosts, not to the
# Hub's CDN on another host (the 302 of an LFS file), and written nowhere.
start_server cdn "${SYNTH[@]}" || { finish; exit; }
start_server hub "${SYNTH[@]}" --cdn-base "$URL_cdn" || { finish; exit; }
TOKEN=hf_SecretTokenForTests123
expect_exit token_viewer 0 "openbookqa .*downloaded" -- env HF_TOKEN=$TOKEN "$XSA_BIN" download --quiet --tasks openbookqa \
    --cache-dir "$TMP/t1" --datasets-server "$URL_hub/tv/ok/0" --allow-data-change
expect_exit token_hub_cdn 0 "lambada_openai .*downloaded +hub:" -- env HF_TOKEN=$TOKEN "$XSA_BIN" download --quiet --tasks lambada_openai \
    --cache-dir "$TMP/t2" --hf-endpoint "$URL_hub/th/lfs/0" --source hub --allow-data-change
expect_exit token_original 0 "lambada_openai .*downloaded +original:" -- env HF_TOKEN=$TOKEN "$XSA_BIN" download --quiet \
    --tasks lambada_openai --cache-dir "$TMP/t3" --originals-mirror "$URL_hub/to/ok/0" --source original --allow-data-change
python3 - "$TMP/hub.log" "$TMP/cdn.log" "$TOKEN" <<'PY' && pass token_sent_only_to_hf || fail token_sent_only_to_hf "see $TMP/hub.log"
import json, sys
hub = [json.loads(l) for l in open(sys.argv[1])]
cdn = [json.loads(l) for l in open(sys.argv[2])]
want = "Bearer " + sys.argv[3]
tv = [r for r in hub if r["path"].startswith("/tv/")]
th = [r for r in hub if r["path"].startswith("/th/")]
to = [r for r in hub if r["path"].startswith("/to/")]
assert tv and all(r["auth"] == want for r in tv), "viewer pages without the token"
assert th and all(r["auth"] == want for r in th), "Hub request without the token"
assert to and all(r["auth"] is None for r in to), "the token went to an original host"
assert cdn and all(r["auth"] is None for r in cdn), "the token followed the redirect to the CDN host"
PY
grep -q '"revision":[[:space:]]*"fedcba9876543210' "$TMP/t2/lambada_openai/test.manifest.json" && pass hub_cdn_revision_recorded ||
    fail hub_cdn_revision_recorded "the X-Repo-Commit of the Hub's 302 is not the manifest's revision"
! grep -rq "$TOKEN" "$TMP/t1" "$TMP/t2" "$TMP/t3" && pass token_not_written || fail token_not_written "$(grep -rl "$TOKEN" "$TMP"/t?)"
mkdir -p "$HF_HOME" && printf '%s\n' "hf_FromTheTokenFile" >"$HF_HOME/token"
expect_exit token_file 0 "downloaded" -- "$XSA_BIN" download --quiet --tasks openbookqa --cache-dir "$TMP/t4" \
    --datasets-server "$URL_hub/tf/ok/0" --source viewer --allow-data-change
grep '"/tf/ok/0/' "$TMP/hub.log" | head -1 | grep -q '"auth": "Bearer hf_FromTheTokenFile"' && pass token_file_sent ||
    fail token_file_sent "$(grep '"/tf/' "$TMP/hub.log" | head -1)"
rm -f "$HF_HOME/token"
out=$(HF_TOKEN="bad token$TOKEN" "$XSA_BIN" download --quiet --tasks openbookqa --cache-dir "$TMP/t5" \
      --datasets-server "$URL_hub/tb/ok/0" 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "token in HF_TOKEN holds a character no token has" && ! echo "$out" | grep -q "$TOKEN" &&
    pass token_bad_refused_unprinted || fail token_bad_refused_unprinted "exit $rc: $out"

# Pacing: at most one request a second to Hugging Face hosts, over the whole process (two tasks,
# two pages each): the 4 requests are at least a second apart.
expect_exit paced_download 0 "downloaded" -- env XSA_HTTP_HF_RATE=1 XSA_HTTP_HF_WINDOW=1 "$XSA_BIN" download --quiet \
    --tasks arc_easy,arc_challenge --cache-dir "$TMP/pc" --datasets-server "$B/pc/ok/0" --source viewer --allow-data-change
python3 - "$LOG" <<'PY' && pass paced_requests_spread || fail paced_requests_spread "requests not spread"
import json, sys
t = sorted(json.loads(l)["t"] for l in open(sys.argv[1]) if '"/pc/ok/0/' in l)
assert len(t) == 4, t
for i in range(1, len(t)):
    assert t[i] - t[i - 1] >= 0.95, ("two requests within a second", t)
PY
expect_exit pace_env_checked 2 "XSA_HTTP_HF_RATE=0: not a whole number from 1 to 100000" -- env XSA_HTTP_HF_RATE=0 "$XSA_BIN" \
    download --quiet --tasks openbookqa --cache-dir "$TMP/pe" --datasets-server "$B/pe/ok/0"

# The pinned digests, against real content (../shared/benchdata): the fake serves the real rows as
# the viewer does (converted in Python as the Hugging Face loaders do) and the real files as their
# authors publish them (zips built from the real members): both give exactly the pinned digests.
SH=${XSA_SHARED:-../shared}/benchdata
if [ -f "$SH/arc_easy/ARC-Easy-Test.jsonl" ] && [ -f "$SH/winogrande/dev.jsonl" ] && [ -f "$SH/siqa/dev.jsonl" ]; then
    REAL=(--real-rows "allenai/ai2_arc/ARC-Easy/test=$SH/arc_easy" --real-rows "allenai/ai2_arc/ARC-Challenge/test=$SH/arc_challenge"
          --real-rows "aps/super_glue/boolq/validation=$SH/boolq" --real-rows "EleutherAI/lambada_openai/default/test=$SH/lambada_openai"
          --real-rows "allenai/openbookqa/main/test=$SH/openbookqa" --real-rows "baber/piqa/default/validation=$SH/piqa"
          --real-rows "lighteval/siqa/default/validation=$SH/siqa" --real-rows "allenai/winogrande/winogrande_xl/validation=$SH/winogrande"
          --real-zip "ARC-V1-Feb2018.zip=ARC-V1-Feb2018-2/ARC-Easy/ARC-Easy-Test.jsonl:$SH/arc_easy/ARC-Easy-Test.jsonl,ARC-V1-Feb2018-2/ARC-Challenge/ARC-Challenge-Test.jsonl:$SH/arc_challenge/ARC-Challenge-Test.jsonl"
          --real-zip "OpenBookQA-V1-Sep2018.zip=OpenBookQA-V1-Sep2018/Data/Main/test.jsonl:$SH/openbookqa/test.jsonl"
          --real-zip "winogrande_1.1.zip=winogrande_1.1/dev.jsonl:$SH/winogrande/dev.jsonl,winogrande_1.1/dev-labels.lst:$SH/winogrande/dev-labels.lst"
          --real "valid.jsonl=$SH/piqa/valid.jsonl" --real "valid-labels.lst=$SH/piqa/valid-labels.lst"
          --real "lambada_test.jsonl=$SH/lambada_openai/lambada_test.jsonl")
    # SocialIQA's zip itself is pinned: only the published one will do.
    ORIG="arc_easy arc_challenge lambada_openai openbookqa piqa winogrande"
    [ -f "$SH/siqa/socialiqa-train-dev.zip" ] && REAL+=(--real "socialiqa-train-dev.zip=$SH/siqa/socialiqa-train-dev.zip") &&
        ORIG="$ORIG social_iqa"
    start_server real "${REAL[@]}" || { finish; exit; }
    R=$URL_real
    for t in $EIGHT; do
        expect_exit "pinned_viewer_$t" 0 "^$t .*downloaded +viewer:.* pinned\$" -- "$XSA_BIN" download --quiet --tasks $t \
            --cache-dir "$TMP/rv" --datasets-server "$R/v/ok/0" --source viewer --strict-data
    done
    # The same rows in a --data-dir JSONL whose writer sorted the keys (json.dumps(sort_keys=True),
    # nested objects too) are still the pinned rows: --strict-data takes them.
    for t in arc_easy social_iqa winogrande; do
        src=$(ls "$TMP"/rv/$t/*.jsonl | head -1)
        mkdir -p "$TMP/sorted/$t"
        python3 -c 'import json,sys; [print(json.dumps(json.loads(l), sort_keys=True, ensure_ascii=False)) for l in open(sys.argv[1])]' \
            "$src" > "$TMP/sorted/$t/$(basename "$src")"
        head -c 300 "$TMP/sorted/$t/$(basename "$src")" | grep -q '^{"' || fail "sorted_keys_written_$t" "$src"
        expect_exit "pinned_sorted_keys_$t" 0 "" -- "$XSA_BIN" run --quiet --model demo/sa --tasks $t --limit 1 --device cpu \
            --data-dir "$TMP/sorted" --strict-data --offline --cache-dir "$TMP/rs" --output "$TMP/rs_out"
    done
    # BoolQ's original is SuperGLUE's val.jsonl, not at hand (benchdata has Google's dev.jsonl).
    for t in $ORIG; do
        expect_exit "pinned_original_$t" 0 "^$t .*downloaded +original:.* pinned\$" -- "$XSA_BIN" download --quiet --tasks $t \
            --cache-dir "$TMP/ro" --datasets-server "$R/vd/404/0" --hf-endpoint "$R/hd/404/0" --originals-mirror "$R/o/ok/0" --strict-data
    done
else
    skip pinned_real "../shared/benchdata absent"
fi
finish
