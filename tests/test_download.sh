#!/usr/bin/env bash
# Downloads, cache and integrity against the loopback server tests/http_server.py, which
# serves synthetic rows and files and injects faults. After every failure the cache must hold
# nothing new (or the previous good copy), never a partial file. Runs in well under a minute.
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
SERVER_PIDS=""
trap 'for p in $SERVER_PIDS; do kill "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT
if ! command -v python3 >/dev/null; then skip download "python3 is not installed"; finish; exit; fi

# Small limits so every fault resolves in a second or two.
export XSA_HTTP_MAX_RETRIES=2 XSA_HTTP_BACKOFF_MS=50 XSA_HTTP_LOW_SPEED_TIME=1 XSA_HTTP_CONNECT_TIMEOUT=3 XSA_HTTP_MAX_TOTAL=20
unset HF_ENDPOINT XDG_CACHE_HOME

ROWS=(--rows allenai/openbookqa/main/test=500 --rows lighteval/siqa/default/validation=1954
      --files lambada_test.jsonl=5153 --files winogrande_1.1.zip=1267)

# start_server NAME [ARGS..]: starts a server, sets URL_<NAME> to its base URL.
start_server() {
    local name=$1; shift
    python3 "$HERE/http_server.py" --port-file "$TMP/$name.port" --log "$TMP/$name.log" --lifetime 600 --stall 3 \
        "${ROWS[@]}" "$@" 2>"$TMP/$name.err" &
    SERVER_PIDS="$SERVER_PIDS $!"
    for _ in $(seq 100); do [ -s "$TMP/$name.port" ] && break; sleep 0.05; done
    [ -s "$TMP/$name.port" ] || { fail "server_$name" "did not start: $(cat "$TMP/$name.err")"; return 1; }
}
start_server plain || { finish; exit; }
B=http://127.0.0.1:$(cat "$TMP/plain.port")
LOG=$TMP/plain.log

# Defaults keep every source on the loopback server (404 there); a test's own flags come later and win.
dl() { "$XSA_BIN" download --quiet --hf-endpoint "$B/nohub/404/0" --originals-mirror "$B/noorig/404/0" "$@"; }
dl_env() { env "$1" "$XSA_BIN" download --quiet --hf-endpoint "$B/nohub/404/0" --originals-mirror "$B/noorig/404/0" "${@:2}"; }
hits() { grep -c "\"$1/" "$LOG" 2>/dev/null; true; }   # requests under a URL prefix

# cache_valid NAME DIR TASK SPLIT ROWS: manifest present, file digest and line count agree with it.
cache_valid() {
    local why
    why=$(python3 - "$2/$3/$4" "$5" <<'PY'
import hashlib, json, sys
base, rows = sys.argv[1], int(sys.argv[2])
m = json.load(open(base + ".manifest.json"))
data = open(base + ".jsonl", "rb").read()
assert m["sha256"] == hashlib.sha256(data).hexdigest(), "digest differs from the manifest"
assert m["rows"] == rows == data.count(b"\n"), "rows %s / lines %d, wanted %d" % (m["rows"], data.count(b"\n"), rows)
for k in ("url", "source", "raw_sha256", "time"):
    assert m[k], "manifest lacks " + k
PY
    ) 2>&1 && pass "$1" || fail "$1" "$why"
}
# cache_clean NAME DIR TASK: no data, manifest or temp file for TASK.
cache_clean() {
    local left
    left=$(find "$2/$3" -type f ! -name .lock 2>/dev/null)
    [ -z "$left" ] && pass "$1" || fail "$1" "left behind: $left"
}

C=$TMP/c1
expect_exit viewer_download 0 "openbookqa +500 rows .*downloaded +viewer:" -- dl --tasks openbookqa --cache-dir "$C" --datasets-server "$B/a/ok/0"
cache_valid viewer_cache_valid "$C" openbookqa test 500
before=$(hits /a/ok/0)
# (a dead writer's temp beside the valid copy, as an interrupted --force leaves it, goes too)
dead=$(sh -c 'echo $$'); touch "$C/openbookqa/test.jsonl.tmp.$dead"
expect_exit cached_second_time 0 "openbookqa .*cached" -- dl --tasks openbookqa --cache-dir "$C" --datasets-server "$B/a/ok/0"
[ ! -e "$C/openbookqa/test.jsonl.tmp.$dead" ] && pass cached_sweeps_dead_temp || fail cached_sweeps_dead_temp "test.jsonl.tmp.$dead is still there"
[ "$(hits /a/ok/0)" = "$before" ] && pass cached_no_network || fail cached_no_network "the second download touched the network"
[ "$before" = 5 ] && pass viewer_five_pages || fail viewer_five_pages "$before requests for 500 rows"
# Another task's copy moved into a task's folder is not that task's, whatever its rows.
mkdir -p "$TMP/c1x/arc_easy" && cp "$C"/openbookqa/test.jsonl "$C"/openbookqa/test.manifest.json "$TMP/c1x/arc_easy/"
mkdir -p "$TMP/c1x/openbookqa" && cp "$C"/openbookqa/test.manifest.json "$TMP/c1x/openbookqa/" && echo '{}' > "$TMP/c1x/openbookqa/test.jsonl"
expect_exit cache_other_task 3 "arc_easy/test.manifest.json: the manifest is openbookqa's test split, not arc_easy's test" -- \
    dl --tasks arc_easy --cache-dir "$TMP/c1x" --offline
grep -q '"ua": "xsa-eval/[0-9]' "$LOG" && pass user_agent || fail user_agent "no xsa-eval User-Agent in $LOG"
sha=$(sha256sum "$C/openbookqa/test.jsonl" | cut -c1-12)
expect_exit tasks_shows_cached 0 "openbookqa .* 500 +allenai/openbookqa/main +500 rows, sha256 $sha" -- "$XSA_BIN" tasks --cache-dir "$C"
expect_exit tasks_shows_missing 0 "arc_easy .*ARC-Easy +no" -- "$XSA_BIN" tasks --cache-dir "$C"
# A damaged copy: the command that replaces it names this cache, not the default one.
expect_exit tasks_shows_invalid 0 "openbookqa .* no: invalid copy \(run xsa-eval download --force --tasks openbookqa --cache-dir $TMP/c1x\)" -- "$XSA_BIN" tasks --cache-dir "$TMP/c1x"
expect_exit tasks_json 0 '"cached":[[:space:]]*true' -- "$XSA_BIN" tasks --cache-dir "$C" --json
expect_exit offline_cached 0 "openbookqa .*cached" -- dl --tasks openbookqa --cache-dir "$C" --offline
expect_exit offline_missing 3 "arc_easy: not available offline.*xsa-eval download --tasks arc_easy" -- dl --tasks arc_easy --cache-dir "$C" --offline
expect_exit xdg_cache_home 0 "downloaded" -- env XDG_CACHE_HOME="$TMP/xdg" "$XSA_BIN" download --quiet --tasks openbookqa --datasets-server "$B/a/ok/0"
cache_valid xdg_cache_layout "$TMP/xdg/xsa-eval" openbookqa test 500

# Transient faults: retried, then a valid copy.
expect_exit retry_after_500 0 "downloaded" -- dl --tasks openbookqa --cache-dir "$TMP/c2" --datasets-server "$B/r500/500/1"
grep -q '"/r500/500/1/rows.*"fault": "500"' "$LOG" && pass retry_500_was_injected || fail retry_500_was_injected "no 500 served"
expect_exit retry_after_429 0 "downloaded" -- dl --tasks openbookqa --cache-dir "$TMP/c3" --datasets-server "$B/r429/429/1"
gap=$(grep '"/r429/429/1/rows' "$LOG" | sed -n 2p | sed -E 's/.*"gap": ([0-9.]+).*/\1/')
python3 -c "import sys; sys.exit(0 if float('$gap') >= 0.9 else 1)" 2>/dev/null && pass retry_after_honoured || fail retry_after_honoured "retried after ${gap}s, Retry-After said 1"
expect_exit reset_mid_body_retried 0 "downloaded" -- dl --tasks openbookqa --cache-dir "$TMP/c4" --datasets-server "$B/rst/reset/1"
cache_valid reset_cache_valid "$TMP/c4" openbookqa test 500
expect_exit range_resume 0 "lambada_openai +5153 rows .*hub:" -- dl --tasks lambada_openai --cache-dir "$TMP/c5" --hf-endpoint "$B/rr/reset/1" --source hub --allow-data-change
grep -q '"/rr/reset/1/datasets.*"range": "bytes=[1-9][0-9]*-"' "$LOG" && pass range_request_sent || fail range_request_sent "no Range request after the reset"
cache_valid resume_cache_valid "$TMP/c5" lambada_openai test 5153
grep -q '"revision":[[:space:]]*"0123456789abcdef' "$TMP/c5/lambada_openai/test.manifest.json" && pass hub_revision_recorded || fail hub_revision_recorded "X-Repo-Commit not in the manifest"

# Persistent faults: exit 3 naming the URL and the error; nothing new in the cache.
C=$TMP/c6
expect_exit short_body 3 "GET $B/sh/short/99/rows.*curl error 18.*check the network" -- dl --tasks openbookqa --cache-dir "$C" --datasets-server "$B/sh/short/99"
cache_clean short_body_clean "$C" openbookqa
expect_exit stall_timeout 3 "GET $B/st/stall/99/rows.*curl error 28" -- env XSA_HTTP_MAX_RETRIES=1 "$XSA_BIN" download --quiet --source viewer --tasks openbookqa --cache-dir "$C" --datasets-server "$B/st/stall/99"
cache_clean stall_clean "$C" openbookqa
expect_exit server_errors_exhausted 3 "HTTP 500.*retries exhausted" -- dl --tasks openbookqa --cache-dir "$C" --datasets-server "$B/e500/500/99"
[ "$(hits /e500/500/99)" = 3 ] && pass retries_bounded || fail retries_bounded "$(hits /e500/500/99) tries, wanted 3"
expect_exit wrong_row_count 3 "openbookqa: .*499 rows, expected 500.*--allow-data-change" -- dl --tasks openbookqa --cache-dir "$C" --datasets-server "$B/wc/wrongcount/0"
cache_clean wrong_row_count_clean "$C" openbookqa
expect_exit wrong_digest 3 "SHA-256 mismatch: expected 4aa8d02cd17c719165fc8a7887fddd641f43fcafa4b1c806ca8abc31fabdb226, found [0-9a-f]{64}" -- dl --tasks lambada_openai --cache-dir "$C" --hf-endpoint "$B/wd/ok/0" --source hub
# Bad data, not the network: the message gives no network hint (decided on the source's flag,
# not on the message's wording).
out=$(dl --tasks lambada_openai --cache-dir "$C" --hf-endpoint "$B/wd/ok/0" --source hub 2>&1)
case $out in *"check the network"*) fail wrong_digest_no_network_hint "$out" ;; *) pass wrong_digest_no_network_hint ;; esac
cache_clean wrong_digest_clean "$C" lambada_openai
[ -z "$(ls "$C/raw/lambada_openai" 2>/dev/null)" ] && pass wrong_digest_raw_removed || fail wrong_digest_raw_removed "$(ls "$C/raw/lambada_openai")"
expect_exit not_found 3 "does not serve allenai/openbookqa/main/test.*HTTP 404" -- dl --tasks openbookqa --cache-dir "$C" --datasets-server "$B/nf/404/0"
expect_exit redirect_loop 3 "GET $B/lp/loop/0/rows.*redirects" -- dl --tasks openbookqa --cache-dir "$C" --datasets-server "$B/lp/loop/0"
cache_clean redirect_loop_clean "$C" openbookqa

# A failed re-download keeps the previous good copy.
C=$TMP/c7
dl --tasks openbookqa --cache-dir "$C" --datasets-server "$B/a/ok/0" >/dev/null 2>&1
old=$(sha256sum "$C/openbookqa/test.jsonl")
expect_exit force_redownload_fails 3 "HTTP 500" -- dl --tasks openbookqa --cache-dir "$C" --datasets-server "$B/f500/500/99" --force
[ "$(sha256sum "$C/openbookqa/test.jsonl")" = "$old" ] && pass previous_copy_kept || fail previous_copy_kept "the cached file changed"
cache_valid previous_copy_valid "$C" openbookqa test 500

# --allow-data-change accepts a changed split; without it the cached copy is refused.
C=$TMP/c8
expect_exit allow_data_change 0 "499 rows" -- "$XSA_BIN" download --tasks openbookqa --cache-dir "$C" --datasets-server "$B/ad/wrongcount/0" --allow-data-change
expect_exit changed_cache_refused 3 "499 rows, expected 500" -- dl --tasks openbookqa --cache-dir "$C" --offline

# Original authors' zip through a mirror; HF_ENDPOINT honoured; siqa's alternate viewer copy.
expect_exit original_zip 0 "winogrande +1267 rows .*original:$B/oz/ok/0/storage.googleapis.com/" -- dl --tasks winogrande --cache-dir "$TMP/c9" --originals-mirror "$B/oz/ok/0" --source original --allow-data-change
cache_valid original_cache_valid "$TMP/c9" winogrande validation 1267
expect_exit hf_endpoint_env 0 "lambada_openai .*hub:$B/he/ok/0/datasets/EleutherAI/lambada_openai/resolve/main/data/lambada_test.jsonl" -- env HF_ENDPOINT="$B/he/ok/0" "$XSA_BIN" download --quiet --tasks lambada_openai --cache-dir "$TMP/c10" --source hub --allow-data-change
expect_exit viewer_alternate_dataset 0 "social_iqa +1954 rows .*dataset=lighteval%2Fsiqa" -- dl --tasks social_iqa --cache-dir "$TMP/c11" --datasets-server "$B/sq/ok/0" --source viewer
grep -q '"dataset":[[:space:]]*"lighteval/siqa"' "$TMP/c11/social_iqa/validation.manifest.json" && pass viewer_alternate_dataset_recorded ||
    fail viewer_alternate_dataset_recorded "$(grep '"dataset"' "$TMP/c11/social_iqa/validation.manifest.json")"
expect_exit fallback_to_next_source 0 "winogrande .*original:" -- dl --tasks winogrande --cache-dir "$TMP/c12" --datasets-server "$B/fb/404/0" --originals-mirror "$B/fb2/ok/0" --allow-data-change

# Two concurrent downloads of one task: one waits on the lock, one valid copy, pages fetched once.
C=$TMP/c13
dl --tasks openbookqa --cache-dir "$C" --datasets-server "$B/cc/slow/0" >"$TMP/cc1.out" 2>&1 & p1=$!
dl --tasks openbookqa --cache-dir "$C" --datasets-server "$B/cc/slow/0" >"$TMP/cc2.out" 2>&1 & p2=$!
wait $p1; r1=$?; wait $p2; r2=$?
[ "$r1$r2" = 00 ] && pass concurrent_both_succeed || fail concurrent_both_succeed "exit $r1 and $r2: $(cat "$TMP"/cc*.out)"
cache_valid concurrent_one_valid_copy "$C" openbookqa test 500
[ "$(hits /cc/slow/0)" = 5 ] && pass concurrent_fetched_once || fail concurrent_fetched_once "$(hits /cc/slow/0) page requests, wanted 5"

# Ctrl-C in the middle of the pages: the process dies of SIGINT and leaves nothing in the cache;
# the next run completes. A background job of a non-interactive shell starts with SIGINT
# ignored (and `trap - INT` cannot undo that), so the wrapper restores the default first.
C=$TMP/c14
python3 -c 'import signal,os,sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])' \
    "$XSA_BIN" download --quiet --source viewer --tasks openbookqa --cache-dir "$C" --datasets-server "$B/ci/slow/0" >/dev/null 2>&1 & p=$!
for _ in $(seq 200); do [ "$(hits /ci/slow/0)" -ge 1 ] && break; sleep 0.05; done   # mid-download: a page is on its way
kill -INT $p; wait $p; rc=$?
[ $rc = 130 ] && pass interrupt_kills || fail interrupt_kills "exit $rc after SIGINT, wanted 130 (killed by SIGINT)"
left=$(find "$C" -type f ! -name .lock 2>/dev/null)
[ -z "$left" ] && pass interrupt_leaves_nothing || fail interrupt_leaves_nothing "left behind: $left"
expect_exit after_interrupt 0 "openbookqa +500 rows" -- dl --tasks openbookqa --cache-dir "$C" --datasets-server "$B/a/ok/0"
# SIGKILL while holding the lock: the kernel releases the flock; the next run neither waits nor fails.
C=$TMP/c24
"$XSA_BIN" download --quiet --tasks openbookqa --cache-dir "$C" --datasets-server "$B/ki/slow/0" >/dev/null 2>&1 & p=$!
# (once it holds the lock and a page is on its way, however long it took to start)
for _ in $(seq 400); do [ -f "$C/openbookqa/.lock" ] && [ "$(hits /ki/slow/0)" -ge 1 ] && break; sleep 0.05; done
kill -KILL $p; wait $p 2>/dev/null
[ -f "$C/openbookqa/.lock" ] && pass killed_lock_file_left || fail killed_lock_file_left "no lock file: the kill came too early to test anything"
out=$(timeout 20 "$XSA_BIN" download --tasks openbookqa --cache-dir "$C" --datasets-server "$B/a/ok/0" 2>&1); rc=$?
[ $rc = 0 ] && ! echo "$out" | grep -q "waiting" && pass killed_lock_released || fail killed_lock_released "exit $rc: $out"
cache_valid killed_then_valid "$C" openbookqa test 500

# Viewer quirks: rows out of order within a page are placed by row_idx; truncated cells, a
# partial conversion, a total that changes between pages, an absurd total and an oversized page
# are refused (the last two after one request, before anything is kept in memory).
expect_exit viewer_rows_out_of_order 0 "openbookqa +500 rows" -- dl --tasks openbookqa --cache-dir "$TMP/q1" --datasets-server "$B/sf/shuffle/0"
cmp -s "$TMP/q1/openbookqa/test.jsonl" "$TMP/c1/openbookqa/test.jsonl" && pass viewer_order_restored || fail viewer_order_restored "differs from the in-order download"
expect_exit viewer_truncated_cells 3 "row 0 has truncated cells \(question_stem" -- dl --tasks openbookqa --cache-dir "$TMP/q2" --datasets-server "$B/tc/truncated/0"
cache_clean viewer_truncated_clean "$TMP/q2" openbookqa
expect_exit viewer_partial 3 "partial conversion" -- dl --tasks openbookqa --cache-dir "$TMP/q3" --datasets-server "$B/pa/partial/0"
expect_exit viewer_total_changes 3 "num_rows_total changed between pages" -- dl --tasks openbookqa --cache-dir "$TMP/q4" --datasets-server "$B/gr/growing/0"
expect_exit viewer_total_absurd 3 "data mismatch: 1000000 rows, expected 500" -- dl --tasks openbookqa --cache-dir "$TMP/q5" --datasets-server "$B/hu/huge/0"
[ "$(hits /hu/huge/0)" = 1 ] && pass viewer_total_checked_first || fail viewer_total_checked_first "$(hits /hu/huge/0) requests"
expect_exit viewer_page_too_big 3 "larger than the 16777216-byte limit" -- dl --tasks openbookqa --cache-dir "$TMP/q6" --datasets-server "$B/bp/bigpage/0"
cache_clean viewer_bounds_clean "$TMP/q6" openbookqa

# A failed file download leaves no partial file: an endless body trips the Hub's 256 MiB cap (an
# original's: 64 MiB), a
# write error (a file size limit) stops another. Only a dropped connection keeps its .part,
# says so, and the next run resumes it with Range.
C=$TMP/c25
expect_exit endless_file_capped 3 "response larger than the 268435456-byte limit" -- dl --tasks lambada_openai --cache-dir "$C" --hf-endpoint "$B/en/endless/0" --source hub
expect_exit endless_original_capped 3 "response larger than the 67108864-byte limit" -- dl --tasks lambada_openai --cache-dir "$C" --originals-mirror "$B/eo/endless/0" --source original
left=$(find "$C" -name '*.part' -printf '%p (%s bytes) ')
[ -z "$left" ] && pass endless_no_part_left || fail endless_no_part_left "$left"
expect_exit part_write_error 3 "write failed: File too large" -- bash -c 'trap "" XFSZ; ulimit -f 40; exec "$@"' _ "$XSA_BIN" download --quiet --source hub --tasks lambada_openai --cache-dir "$C" --hf-endpoint "$B/we/ok/0" --allow-data-change
left=$(find "$C" -name '*.part' -printf '%p (%s bytes) ')
[ -z "$left" ] && pass write_error_no_part_left || fail write_error_no_part_left "$left"
# A write error in the raw folder (a full disk) is this machine's, not the network's: said as
# a storing failure with its fix and no network hint, and no further source is tried (none
# could store either). Also for a zip member extracted after a complete download.
out=$(bash -c 'trap "" XFSZ; ulimit -f 40; exec "$@"' _ "$XSA_BIN" download --quiet --tasks lambada_openai --cache-dir "$C" \
      --datasets-server "$B/wv/404/0" --hf-endpoint "$B/wh/ok/0" --originals-mirror "$B/wo/ok/0" --allow-data-change 2>&1); rc=$?
[ $rc = 3 ] && echo "$out" | grep -qE "^xsa-eval: lambada_openai: storing the download failed: .*lambada_test.jsonl.part: write failed: File too large \(past the file-size limit" &&
    ! echo "$out" | grep -q "check the network" && [ "$(hits /wo/ok/0)" = 0 ] && pass part_write_error_is_local ||
    fail part_write_error_is_local "exit $rc, $(hits /wo/ok/0) requests to the original: $out"
out=$(bash -c 'trap "" XFSZ; ulimit -f 40; exec "$@"' _ "$XSA_BIN" download --quiet --tasks winogrande --cache-dir "$C" \
      --source original --originals-mirror "$B/wz/ok/0" --allow-data-change 2>&1); rc=$?
[ $rc = 3 ] && echo "$out" | grep -qE "^xsa-eval: winogrande: storing the download failed: .*dev.jsonl: write failed: File too large" &&
    ! echo "$out" | grep -q "check the network" && pass zip_extract_write_error_is_local || fail zip_extract_write_error_is_local "exit $rc: $out"
C=$TMP/c26
expect_exit part_kept_said 3 "Connection reset.*[0-9]+ bytes kept in .*lambada_test.jsonl.part; the next download resumes from there" -- dl --tasks lambada_openai --cache-dir "$C" --hf-endpoint "$B/kp/reset/99" --source hub --allow-data-change
kept=$(stat -c %s "$C/raw/lambada_openai/lambada_test.jsonl.part" 2>/dev/null || echo 0)
full=$(stat -c %s "$TMP/c5/raw/lambada_openai/lambada_test.jsonl")
[ "$kept" -gt 0 ] && [ "$kept" -lt "$full" ] && pass part_kept_partial || fail part_kept_partial "$kept of $full bytes kept"
expect_exit part_kept_resumed 0 "lambada_openai +5153 rows" -- dl --tasks lambada_openai --cache-dir "$C" --hf-endpoint "$B/kq/ok/0" --source hub --allow-data-change
grep -q "\"/kq/ok/0/datasets.*\"range\": \"bytes=$kept-\"" "$LOG" && pass part_kept_range_sent || fail part_kept_range_sent "no Range: bytes=$kept- request"
cmp -s "$C/raw/lambada_openai/lambada_test.jsonl" "$TMP/c5/raw/lambada_openai/lambada_test.jsonl" && pass part_kept_resumed_exact || fail part_kept_resumed_exact "raw file differs"

# Rows that `run` would refuse never reach the cache: each row goes through the task's own
# row->doc parser before the commit, and the error names the source and the row. A NUL in a
# field (which would cut the C string short) and a split with no rows are refused too.
expect_exit viewer_bad_utf8_refused 3 "openbookqa: download failed: viewer row 43 \(.*offset=0&length=100\): field 'question_stem' is not valid UTF-8$" -- dl --tasks openbookqa --cache-dir "$TMP/q7" --datasets-server "$B/bu/badutf8/0" --source viewer
cache_clean viewer_bad_utf8_clean "$TMP/q7" openbookqa
expect_exit viewer_bad_schema_refused 3 "viewer row 43 \(.*\): field 'question_stem' missing" -- dl --tasks openbookqa --cache-dir "$TMP/q8" --datasets-server "$B/bs/badschema/0" --source viewer --allow-data-change
cache_clean viewer_bad_schema_clean "$TMP/q8" openbookqa
expect_exit viewer_nul_refused 3 "offset=0&length=100: rows\[42\]\.row\.question_stem holds a NUL character" -- dl --tasks openbookqa --cache-dir "$TMP/q9" --datasets-server "$B/nu/nul/0" --source viewer
cache_clean viewer_nul_clean "$TMP/q9" openbookqa
expect_exit viewer_zero_rows 3 "openbookqa: download failed: no rows \(.*\); an empty split cannot be evaluated" -- dl --tasks openbookqa --cache-dir "$TMP/q10" --datasets-server "$B/em/empty/0" --source viewer --allow-data-change
cache_clean viewer_zero_rows_clean "$TMP/q10" openbookqa

# Memory holds the pages in flight and the one being parsed, not the split: 60 pages of 2 MB
# (120 MB served) are streamed to the cache's temp file; peak RSS stays well under the total.
# Under AddressSanitizer its quarantine of freed blocks (256 MB) would be measured instead: off here.
C=$TMP/c27
rss=$(python3 -c 'import resource,subprocess,sys; r=subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)' \
      env XSA_HTTP_PARALLEL=4 ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0" "$XSA_BIN" download --quiet --source viewer --tasks openbookqa --cache-dir "$C" --datasets-server "$B/ft/fat/0" --allow-data-change)
served=$(( $(stat -c %s "$C/openbookqa/test.jsonl" 2>/dev/null || echo 0) >> 20 ))
[ "${rss%% *}" = 0 ] && [ "$served" -ge 100 ] && [ "${rss##* }" -lt $((served / 2)) ] && pass viewer_memory_bounded ||
    fail viewer_memory_bounded "exit ${rss%% *}, peak RSS ${rss##* } MB for $served MB of rows"
cache_valid viewer_streamed_valid "$C" openbookqa test 6000

# `run` downloads on demand: the viewer's streamed rows are read back from the copy just stored,
# a file source's rows come straight from memory; both stored copies are valid.
C=$TMP/c32
expect_exit run_downloads_on_demand 0 "\| openbookqa \| acc " -- "$XSA_BIN" run --model tests/fixtures/parity/models/gpt2_bpe --tasks openbookqa,lambada_openai --cache-dir "$C" --datasets-server "$B/a/ok/0" --hf-endpoint "$B/he/ok/0" --allow-data-change --limit 2 --output "$TMP/run32"
cache_valid run_viewer_copy_valid "$C" openbookqa test 500
cache_valid run_hub_copy_valid "$C" lambada_openai test 5153

# Only the temp files our own writers name (<file>.tmp.<pid>) are swept, and only when that
# process is gone: a user's notes.tmp.txt and a live writer's temp stay.
C=$TMP/c28
dead=$(sh -c 'echo $$')
mkdir -p "$C/raw/winogrande" && touch "$C/raw/winogrande/notes.tmp.txt" "$C/raw/winogrande/dev.jsonl.tmp.$dead" "$C/raw/winogrande/dev.jsonl.tmp.$$"
expect_exit sweep_download 0 "winogrande +1267 rows" -- dl --tasks winogrande --cache-dir "$C" --originals-mirror "$B/sw/ok/0" --source original --allow-data-change
[ -f "$C/raw/winogrande/notes.tmp.txt" ] && pass sweep_keeps_user_file || fail sweep_keeps_user_file "notes.tmp.txt was deleted"
[ -f "$C/raw/winogrande/dev.jsonl.tmp.$$" ] && pass sweep_keeps_live_writer || fail sweep_keeps_live_writer "a live process's temp was deleted"
[ ! -e "$C/raw/winogrande/dev.jsonl.tmp.$dead" ] && pass sweep_removes_dead_writer || fail sweep_removes_dead_writer "dev.jsonl.tmp.$dead is still there"

# Resume: a .part left by an earlier run is resumed with Range (and If-Range: the ETag its bytes
# came with, in .part.etag); a server that ignores Range (200) restarts it from zero, one that
# answers another range (206) too; never appended wrongly.
C=$TMP/c19
etag_of() { printf '"%s"' "$(sha256sum "$1" | cut -c1-32)"; }  # the test server's ETag of a file
mkdir -p "$C/raw/lambada_openai" && printf 'GARBAGE' > "$C/raw/lambada_openai/lambada_test.jsonl.part"
printf '"x"' > "$C/raw/lambada_openai/lambada_test.jsonl.part.etag"
expect_exit range_ignored 0 "lambada_openai +5153 rows" -- dl --tasks lambada_openai --cache-dir "$C" --hf-endpoint "$B/nr/norange/0" --source hub --allow-data-change
grep -q '"/nr/norange/0/.*"range": "bytes=7-"' "$LOG" && pass range_ignored_was_asked || fail range_ignored_was_asked "no Range: bytes=7- request"
cmp -s "$C/lambada_openai/test.jsonl" "$TMP/c5/lambada_openai/test.jsonl" && pass range_ignored_not_appended || fail range_ignored_not_appended "canonical file differs"
rm -rf "$C" && mkdir -p "$C/raw/lambada_openai" && head -c 20 "$TMP/c5/raw/lambada_openai/lambada_test.jsonl" > "$C/raw/lambada_openai/lambada_test.jsonl.part"
etag_of "$TMP/c5/raw/lambada_openai/lambada_test.jsonl" > "$C/raw/lambada_openai/lambada_test.jsonl.part.etag"
expect_exit range_misaligned 0 "lambada_openai +5153 rows" -- dl --tasks lambada_openai --cache-dir "$C" --hf-endpoint "$B/or/offrange/0" --source hub --allow-data-change
cmp -s "$C/raw/lambada_openai/lambada_test.jsonl" "$TMP/c5/raw/lambada_openai/lambada_test.jsonl" && pass range_misaligned_restarted || fail range_misaligned_restarted "raw file differs"
# A .part of another version of the file (its ETag is not the server's now) is not appended to:
# the server answers If-Range with the whole file. A .part of unknown version (no .part.etag) is
# started over without a Range; no validator is left behind.
rm -rf "$C" && mkdir -p "$C/raw/lambada_openai" && printf 'GARBAGE' > "$C/raw/lambada_openai/lambada_test.jsonl.part"
printf '"old"' > "$C/raw/lambada_openai/lambada_test.jsonl.part.etag"
expect_exit part_other_version 0 "lambada_openai +5153 rows" -- dl --tasks lambada_openai --cache-dir "$C" --hf-endpoint "$B/ov/ok/0" --source hub --allow-data-change
grep -q '"/ov/ok/0/.*"range": "bytes=7-"' "$LOG" && cmp -s "$C/raw/lambada_openai/lambada_test.jsonl" "$TMP/c5/raw/lambada_openai/lambada_test.jsonl" &&
    [ ! -e "$C/raw/lambada_openai/lambada_test.jsonl.part.etag" ] && pass part_other_version_whole ||
    fail part_other_version_whole "$(grep '/ov/ok/0/' "$LOG" | head -2)"
rm -rf "$C" && mkdir -p "$C/raw/lambada_openai" && printf 'GARBAGE' > "$C/raw/lambada_openai/lambada_test.jsonl.part"
expect_exit part_unknown_version 0 "lambada_openai +5153 rows" -- dl --tasks lambada_openai --cache-dir "$C" --hf-endpoint "$B/uv/ok/0" --source hub --allow-data-change
! grep '"/uv/ok/0/' "$LOG" | grep -q '"range": "bytes' && cmp -s "$C/raw/lambada_openai/lambada_test.jsonl" "$TMP/c5/raw/lambada_openai/lambada_test.jsonl" &&
    pass part_unknown_version_restarted || fail part_unknown_version_restarted "$(grep '/uv/ok/0/' "$LOG" | head -2)"
# A symlinked .part is not followed (its target stays untouched).
rm -rf "$C" && mkdir -p "$C/raw/lambada_openai" && echo keep > "$TMP/victim" && ln -s "$TMP/victim" "$C/raw/lambada_openai/lambada_test.jsonl.part"
expect_exit part_symlink_refused 3 "lambada_test.jsonl.part: cannot open for writing" -- dl --tasks lambada_openai --cache-dir "$C" --hf-endpoint "$B/sy/ok/0" --source hub --allow-data-change
[ "$(cat "$TMP/victim")" = keep ] && pass part_symlink_target_kept || fail part_symlink_target_kept "the symlink target was written"

# The Hub sends X-Repo-Commit on its redirect, not on the CDN's answer: the manifest keeps it.
expect_exit hub_redirect 0 "lambada_openai +5153 rows" -- dl --tasks lambada_openai --cache-dir "$TMP/c20" --hf-endpoint "$B/lf/lfs/0" --source hub --allow-data-change
grep -q '"revision":[[:space:]]*"fedcba98' "$TMP/c20/lambada_openai/test.manifest.json" && pass hub_redirect_revision || fail hub_redirect_revision "$(grep revision "$TMP/c20/lambada_openai/test.manifest.json")"

# Retry-After as an HTTP-date.
expect_exit retry_after_date 0 "downloaded" -- dl --tasks openbookqa --cache-dir "$TMP/c21" --datasets-server "$B/rd/429date/1"
gap=$(grep '"/rd/429date/1/rows' "$LOG" | sed -n 2p | sed -E 's/.*"gap": ([0-9.]+).*/\1/')
python3 -c "import sys; sys.exit(0 if float('$gap') >= 0.9 else 1)" 2>/dev/null && pass retry_after_date_honoured || fail retry_after_date_honoured "retried after ${gap}s"

# The time limit covers a transfer in flight, not only the scheduling of retries.
expect_exit time_limit_in_flight 3 "curl error 28.*the 1 s limit" -- env XSA_HTTP_LOW_SPEED_TIME=30 XSA_HTTP_MAX_TOTAL=1 "$XSA_BIN" download --quiet --source viewer --tasks openbookqa --cache-dir "$TMP/c22" --datasets-server "$B/tl/stall/99"
[ "$(hits /tl/stall/99)" = 1 ] && pass time_limit_no_retry || fail time_limit_no_retry "$(hits /tl/stall/99) requests"

# A write error (here: a file size limit, as a full disk would) keeps the previous copy valid.
C=$TMP/c7
expect_exit disk_full 3 "openbookqa: storing the download failed: .*write failed: File too large \(past the file-size limit, ulimit -f, or the filesystem's\)$" -- bash -c 'trap "" XFSZ; ulimit -f 40; exec "$@"' _ "$XSA_BIN" download --quiet --force --source viewer --tasks openbookqa --cache-dir "$C" --datasets-server "$B/a/ok/0"
cache_valid disk_full_previous_copy_valid "$C" openbookqa test 500
[ -z "$(find "$C/openbookqa" -name '*.tmp.*')" ] && pass disk_full_no_temp_left || fail disk_full_no_temp_left "$(ls "$C/openbookqa")"

# A cache path that is a file: exit 2 (the user's choice of path) saying so and what to do.
touch "$TMP/afile"
expect_exit cache_not_a_folder 2 "afile: the dataset cache is not a folder; pass --cache-dir DIR" -- dl --tasks openbookqa --cache-dir "$TMP/afile" --datasets-server "$B/a/ok/0"
if [ "$(id -u)" != 0 ]; then
    mkdir -p "$TMP/ro" && chmod 555 "$TMP/ro"
    expect_exit cache_read_only 3 "Permission denied; the cache folder must be writable" -- dl --tasks openbookqa --cache-dir "$TMP/ro" --datasets-server "$B/a/ok/0"
    chmod 755 "$TMP/ro"
else
    skip cache_read_only "running as root: permissions do not apply"
fi

# Offline with missing data: one message with the exact command for every missing task.
expect_exit offline_run_all_missing 3 "9 of 9 tasks .*run \`xsa-eval download --tasks arc_easy,arc_challenge,boolq,hellaswag,lambada_openai,openbookqa,piqa,social_iqa,winogrande --cache-dir $TMP/empty\`" -- "$XSA_BIN" run --model tests/fixtures/models/gpt2_tiny --tasks all --offline --cache-dir "$TMP/empty"
expect_exit offline_run_some_missing 3 "8 of 9 tasks .*run \`xsa-eval download --tasks arc_easy,arc_challenge,boolq,hellaswag,lambada_openai,piqa,social_iqa,winogrande --cache-dir $TMP/c1\`" -- "$XSA_BIN" run --model tests/fixtures/models/gpt2_tiny --tasks all --offline --cache-dir "$TMP/c1"

# TLS: a self-signed certificate is refused; --ca-bundle trusts it. No flag turns verification off.
if command -v openssl >/dev/null && openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
    -addext subjectAltName=IP:127.0.0.1 -keyout "$TMP/key.pem" -out "$TMP/cert.pem" >/dev/null 2>&1 &&
    start_server tls --tls "$TMP/cert.pem" "$TMP/key.pem" --redirect-base "$B/x/ok/0"; then
    S=https://127.0.0.1:$(cat "$TMP/tls.port")
    expect_exit https_self_signed_refused 3 "GET $S/t/ok/0/rows.*(certificate|SSL).*curl error 60" -- dl --tasks openbookqa --cache-dir "$TMP/c15" --datasets-server "$S/t/ok/0"
    cache_clean https_refused_clean "$TMP/c15" openbookqa
    expect_exit https_ca_bundle 0 "openbookqa +500 rows .*downloaded" -- dl --tasks openbookqa --cache-dir "$TMP/c15" --datasets-server "$S/t/ok/0" --ca-bundle "$TMP/cert.pem"
    # The variables requests and curl read for a private CA, when --ca-bundle is not given.
    expect_exit https_requests_ca_bundle 0 "openbookqa +500 rows .*downloaded" -- dl_env REQUESTS_CA_BUNDLE="$TMP/cert.pem" \
        --tasks openbookqa --cache-dir "$TMP/c_req_ca" --datasets-server "$S/t/ok/0"
    expect_exit https_ssl_cert_file 0 "openbookqa +500 rows .*downloaded" -- dl_env SSL_CERT_FILE="$TMP/cert.pem" \
        --tasks openbookqa --cache-dir "$TMP/c_ssl_ca" --datasets-server "$S/t/ok/0"
    expect_exit https_to_http_redirect_refused 3 "redirect from https to plain http was refused" -- dl --tasks openbookqa --cache-dir "$TMP/c23" --datasets-server "$S/aw/away/0" --ca-bundle "$TMP/cert.pem"
else
    skip https "the openssl command is not installed"
fi

# Real files (../shared/benchdata) through the original-source path: the pinned digests match.
SH=${XSA_SHARED:-../shared}/benchdata
if [ -f "$SH/piqa/valid.jsonl" ] && [ -f "$SH/siqa/socialiqa-train-dev.zip" ] && [ -f "$SH/lambada_openai/lambada_test.jsonl" ]; then
    ROWS=(--real "valid.jsonl=$SH/piqa/valid.jsonl" --real "valid-labels.lst=$SH/piqa/valid-labels.lst"
          --real "socialiqa-train-dev.zip=$SH/siqa/socialiqa-train-dev.zip" --real "lambada_test.jsonl=$SH/lambada_openai/lambada_test.jsonl")
    start_server real && R=http://127.0.0.1:$(cat "$TMP/real.port") &&
    out=$(dl --tasks piqa,social_iqa,lambada_openai --cache-dir "$TMP/c17" --originals-mirror "$R/o/ok/0" --source original 2>&1); rc=$?
    [ $rc = 0 ] && [ "$(echo "$out" | grep -cE '^(piqa +1838|social_iqa +1954|lambada_openai +5153) rows .*downloaded +original:')" = 3 ] &&
        pass real_originals_pinned || fail real_originals_pinned "exit $rc: $out"
    expect_exit real_hub_pinned 0 "lambada_openai +5153 rows" -- dl --tasks lambada_openai --cache-dir "$TMP/c18" --hf-endpoint "$R/h/ok/0" --source hub
    cmp -s "$TMP/c17/lambada_openai/test.jsonl" "$TMP/c18/lambada_openai/test.jsonl" && pass real_hub_equals_original || fail real_hub_equals_original "canonical files differ"
    # --force fetches the authors' files again even where the copy kept matches its pin.
    before=$(grep -c 'valid.jsonl' "$TMP/real.log")
    dl --tasks piqa --cache-dir "$TMP/c17" --originals-mirror "$R/o/ok/0" --source original --force >/dev/null 2>&1
    [ "$(grep -c 'valid.jsonl' "$TMP/real.log")" -gt "$before" ] && pass force_refetches_pinned_original ||
        fail force_refetches_pinned_original "no new request for valid.jsonl"
else
    skip real_originals "../shared/benchdata absent"
fi

# The nine datasets as the real viewer serves them (their schemas and features: ClassLabel ints
# for BoolQ/PIQA, HellaSwag's string label, SIQA's "1\n" labels, ARC's dict-of-lists choices)
# and the same rows in the original authors' files: both sources give byte-identical canonical
# files, and a run builds a doc from every row (--limit 1 still builds them all).
N=120
ROWS=(--rows allenai/ai2_arc/ARC-Easy/test=$N --rows allenai/ai2_arc/ARC-Challenge/test=$N
      --rows aps/super_glue/boolq/validation=$N --rows Rowan/hellaswag/default/validation=$N
      --rows EleutherAI/lambada_openai/default/test=$N --rows allenai/openbookqa/main/test=$N
      --rows baber/piqa/default/validation=$N --rows allenai/social_i_qa/default/validation=$N
      --rows allenai/winogrande/winogrande_xl/validation=$N --files ARC-V1-Feb2018.zip=$N --files BoolQ.zip=$N
      --files hellaswag_val.jsonl=$N --files lambada_test.jsonl=$N --files OpenBookQA-V1-Sep2018.zip=$N
      --files valid.jsonl=$N --files valid-labels.lst=$N --files socialiqa-train-dev.zip=$N --files winogrande_1.1.zip=$N)
if start_server nine; then
    R=http://127.0.0.1:$(cat "$TMP/nine.port")
    dl --tasks all --cache-dir "$TMP/v9" --datasets-server "$R/v/ok/0" --source viewer --allow-data-change >"$TMP/v9.out" 2>&1 &&
        pass nine_viewer_download || fail nine_viewer_download "$(tail -3 "$TMP/v9.out")"
    # HellaSwag has no original any more (taken down): eight tasks from their authors' files.
    EIGHT=arc_easy,arc_challenge,boolq,lambada_openai,openbookqa,piqa,social_iqa,winogrande
    dl --tasks $EIGHT --cache-dir "$TMP/o9" --originals-mirror "$R/o/ok/0" --source original --allow-data-change >"$TMP/o9.out" 2>&1 &&
        pass nine_original_download || fail nine_original_download "$(tail -3 "$TMP/o9.out")"
    # The raw originals kept in <cache>/raw/<task>/ are a --data-dir of the third layout (SocialIQA's
    # too, kept as raw/social_iqa/ where an author's layout says siqa/).
    expect_exit raw_originals_as_data_dir 0 "social_iqa .*acc" -- "$XSA_BIN" run --model tests/fixtures/parity/models/gpt2_bpe \
        --tasks social_iqa --data-dir "$TMP/o9/raw" --allow-data-change --limit 1 --output "$TMP/raw9" --quiet
    expect_exit hellaswag_no_original 2 "hellaswag: none of the sources 'original' has this task" -- \
        dl --tasks hellaswag --cache-dir "$TMP/o9" --originals-mirror "$R/o/ok/0" --source original
    for f in arc_easy/test arc_challenge/test boolq/validation lambada_openai/test openbookqa/test \
             piqa/validation social_iqa/validation winogrande/validation; do
        cmp -s "$TMP/v9/$f.jsonl" "$TMP/o9/$f.jsonl" && pass "viewer_equals_original_${f%%/*}" ||
            fail "viewer_equals_original_${f%%/*}" "$(diff "$TMP/v9/$f.jsonl" "$TMP/o9/$f.jsonl" 2>&1 | head -3)"
    done
    out=$("$XSA_BIN" run --model tests/fixtures/parity/models/gpt2_bpe --tasks all --offline --cache-dir "$TMP/v9" \
          --allow-data-change --limit 1 --output "$TMP/run9" 2>&1); rc=$?
    [ $rc = 0 ] && ! echo "$out" | grep -q "label outside" && pass nine_viewer_rows_build_docs ||
        fail nine_viewer_rows_build_docs "exit $rc: $(echo "$out" | grep -v accepted | head -3)"
fi

# A redirect to another scheme is refused as such (only http and https are ever followed).
expect_exit redirect_to_file_refused 3 "GET $B/fs/scheme/0/rows.*: redirect to a non-HTTP URL refused \(file:///etc/passwd\); only http and https are followed" -- dl --tasks openbookqa --cache-dir "$TMP/c29" --datasets-server "$B/fs/scheme/0" --source viewer
cache_clean redirect_to_file_clean "$TMP/c29" openbookqa

# Invalid XSA_HTTP_* values are bad input (exit 2) naming the variable and its range.
for v in XSA_HTTP_CONNECT_TIMEOUT:1:600 XSA_HTTP_LOW_SPEED_TIME:1:3600 XSA_HTTP_MAX_RETRIES:0:50 XSA_HTTP_BACKOFF_MS:0:600000 \
         XSA_HTTP_MAX_TOTAL:1:86400 XSA_HTTP_PARALLEL:1:64; do
    IFS=: read -r name lo hi <<<"$v"
    for bad in abc -1 99999999999 "5s" " 5"; do
        expect_exit "env_${name}_${bad// /_}" 2 "$name=.*: not a whole number from $lo to $hi" -- env "$name=$bad" "$XSA_BIN" download --quiet --tasks openbookqa --cache-dir "$TMP/c30" --datasets-server "$B/a/ok/0"
    done
done
[ -z "$(find "$TMP/c30" -type f 2>/dev/null)" ] && pass env_bad_touches_nothing || fail env_bad_touches_nothing "$(find "$TMP/c30" -type f)"
expect_exit env_in_range 0 "downloaded" -- env XSA_HTTP_MAX_RETRIES=0 XSA_HTTP_BACKOFF_MS=0 XSA_HTTP_PARALLEL=64 "$XSA_BIN" download --quiet --tasks openbookqa --cache-dir "$TMP/c31" --datasets-server "$B/a/ok/0"

# Bad usage: exit 2.
expect_exit unknown_task 2 "frobnicate" -- dl --tasks frobnicate --cache-dir "$TMP/c16"
expect_exit unknown_flag 2 "unknown flag '--insecure'" -- dl --tasks openbookqa --insecure
expect_exit tasks_required 2 "--tasks LIST is required" -- dl --cache-dir "$TMP/c16"
expect_exit bad_source 2 "unknown source 'ftp'" -- dl --tasks openbookqa --cache-dir "$TMP/c16" --source ftp
expect_exit empty_source_name 2 "--source viewer,,hub: an empty source" -- dl --tasks openbookqa --cache-dir "$TMP/c16" --source viewer,,hub
expect_exit bad_ca_bundle_env 2 "none.pem: CURL_CA_BUNDLE file cannot be read" -- dl_env CURL_CA_BUNDLE="$TMP/none.pem" --tasks openbookqa --cache-dir "$TMP/c_bad_ca" --datasets-server "$B/a/ok/0"
expect_exit bad_ca_bundle 2 "--ca-bundle file cannot be read" -- dl --tasks openbookqa --cache-dir "$TMP/c16" --datasets-server "$B/a/ok/0" --ca-bundle "$TMP/none.pem"
expect_exit bad_server_url 2 "not an http:// or https:// URL" -- dl --tasks openbookqa --cache-dir "$TMP/c16" --datasets-server ftp://example.org
expect_exit server_url_without_host 2 "--datasets-server http://: not an http:// or https:// URL with a host" -- dl --tasks openbookqa --cache-dir "$TMP/c16" --datasets-server http://
finish
