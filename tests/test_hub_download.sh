#!/usr/bin/env bash
# --model org/name[@revision] downloaded into the Hugging Face cache from the loopback fake Hub
# of tests/http_server.py (--model-repo): the cache is laid out byte for byte as the fixture
# tests/fixtures/hf_hub that huggingface_hub's scan_cache_dir checked (tools/references/check_hub_download.py
# also compares it with huggingface_hub's own snapshot_download); scores as the folder; the token
# only to the Hub, never to the CDN; gated, missing repo and revision; offline; the Hub down with
# and without a cached copy; a corrupted download refused and a damaged blob replaced; a cut
# download resumed by Range; two processes at once downloading once.
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
SERVER_PIDS=""
trap 'for p in $SERVER_PIDS; do kill "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT
if ! command -v python3 >/dev/null; then skip hub_download "python3 is not installed"; finish; exit; fi
export XSA_HTTP_MAX_RETRIES=2 XSA_HTTP_BACKOFF_MS=50 XSA_HTTP_LOW_SPEED_TIME=2 XSA_HTTP_CONNECT_TIMEOUT=3 XSA_HTTP_MAX_TOTAL=30
unset HF_TOKEN HUGGING_FACE_HUB_TOKEN HF_HUB_OFFLINE TRANSFORMERS_OFFLINE HF_HOME HUGGINGFACE_HUB_CACHE XDG_CACHE_HOME
export HF_TOKEN_PATH=$TMP/no-token

C=0123456789abcdef0123456789abcdef01234567
P=tests/fixtures/parity/models/llama_sp_xsa
S=tests/fixtures/models/gpt2_tiny_sharded
T=tests/fixtures/torch/gpt2_sharded_bin
# A repo with more than the loader reads; one whose index names a shard outside the snapshot.
mkdir -p "$TMP/extra/sub" "$TMP/evil"
cp $P/* "$TMP/extra/" && cp tests/fixtures/torch/gpt2_bin/pytorch_model.bin "$TMP/extra/"
echo "# card" >"$TMP/extra/README.md" && echo '{}' >"$TMP/extra/tokenizer_config.json" && echo x >"$TMP/extra/sub/notes.txt"
# A repo with vocab.json + merges.txt and no tokenizer.json, as facebook/opt-* (and a README the loader does not read).
mkdir -p "$TMP/optv" && cp tests/fixtures/models/opt/* "$TMP/optv/" && echo "# card" >"$TMP/optv/README.md"
V=tests/fixtures/tokenizers/vocab_files/opt_tiny && cp $V/vocab.json $V/merges.txt $V/tokenizer_config.json $V/special_tokens_map.json "$TMP/optv/"
cp $S/config.json "$TMP/evil/" && echo '{"weight_map": {"w": "../../../evil.safetensors"}}' >"$TMP/evil/model.safetensors.index.json"
python3 "$HERE/http_server.py" --port-file "$TMP/port" --log "$TMP/log" --lifetime 120 \
    --model-repo "xsa-eval/tiny-llama=$P@$C" --model-repo "xsa-eval/gated-llama=$P" \
    --model-repo "xsa-eval/sharded=$S" --model-repo "xsa-eval/torch-sharded=$T" \
    --model-repo "xsa-eval/extra=$TMP/extra" --model-repo "xsa-eval/evil=$TMP/evil" --model-repo "xsa-eval/opt-vocab=$TMP/optv" 2>"$TMP/err" &
SERVER_PIDS=$!
for _ in $(seq 100); do [ -s "$TMP/port" ] && break; sleep 0.05; done
[ -s "$TMP/port" ] || { fail server "did not start: $(cat "$TMP/err")"; finish; exit; }
B=http://127.0.0.1:$(cat "$TMP/port")
R=$TMP/hub/models--xsa-eval--tiny-llama
# X ENDPOINT-PREFIX CMD...: xsa-eval with the cache in $TMP/hub and the fake Hub at $B/PREFIX.
X() { local ep=$1; shift; HF_HUB_CACHE="$TMP/hub" HF_ENDPOINT="$B/$ep" "$XSA_BIN" "$@"; }
n_log() { grep -c "$1" "$TMP/log"; true; }
sha_of() { "$XSA_BIN" info --model "$1" | awk '/^weights sha256/ {print $3}'; }
sha=$(sha_of $P)

# A download, then the same model as the folder; the cache is the fixture huggingface_hub checked.
expect_exit download_info 0 "^weights sha256 $sha" -- X m/ok/0 info --model xsa-eval/tiny-llama
tree() { (cd "$1" && find blobs snapshots refs/main -printf '%p %y %l\n' | sort && cat blobs/* refs/main | sha256sum); }
if [ "$(tree "$R")" = "$(tree tests/fixtures/hf_hub/models--xsa-eval--tiny-llama)" ]; then pass layout_as_huggingface_hub
else fail layout_as_huggingface_hub "$(diff <(tree "$R") <(tree tests/fixtures/hf_hub/models--xsa-eval--tiny-llama) | head -5)"; fi
[ "$(cat "$R/refs/main")" = $C ] && pass ref_names_commit || fail ref_names_commit "refs/main: $(cat "$R/refs/main")"
ls "$TMP/hub/.locks/models--xsa-eval--tiny-llama/"*.lock >/dev/null 2>&1 && pass locks_as_huggingface_hub || fail locks_as_huggingface_hub "no .locks"
[ "$(n_log '"host": "localhost", "auth": false')" -ge 1 ] && [ "$(n_log '"auth": true')" -eq 0 ] && pass lfs_from_cdn \
    || fail lfs_from_cdn "no CDN request, or a token sent without one"

# --hf-endpoint names the mirror on info and logprobs too (a fresh cache: it must download).
expect_exit info_hf_endpoint_flag 0 "^weights sha256 $sha" -- env HF_HUB_CACHE="$TMP/flag" "$XSA_BIN" info --model xsa-eval/tiny-llama --hf-endpoint "$B/m/ok/0" --quiet
expect_exit logprobs_hf_endpoint_flag 0 "^pos" -- env HF_HUB_CACHE="$TMP/flag2" "$XSA_BIN" logprobs --model xsa-eval/tiny-llama --hf-endpoint "$B/m/ok/0" --tokens 1,2,3 --device cpu --quiet
expect_exit hf_endpoint_no_host 2 "--hf-endpoint \(or HF_ENDPOINT\) http://: not an http:// or https:// URL with a host" -- \
    env HF_HUB_CACHE="$TMP/flag3" "$XSA_BIN" info --model xsa-eval/tiny-llama --hf-endpoint http://

# On a terminal, a progress bar per file (script(1) gives the command one).
if command -v script >/dev/null; then
    script -qec "env HF_HUB_CACHE='$TMP/tty' HF_ENDPOINT='$B/m/ok/0' '$XSA_BIN' info --model xsa-eval/tiny-llama" /dev/null >"$TMP/tty.out" 2>&1
    grep -qaE $'\rmodel.safetensors +281.3 kB +[0-9.]+ [kMG]?B/s' "$TMP/tty.out" && pass progress_bar_on_tty \
        || fail progress_bar_on_tty "$(head -c 300 "$TMP/tty.out")"
else skip progress_bar_on_tty "no script(1)"; fi

# Cached: a branch costs one API request, a commit none.
n0=$(n_log '"hub"')
expect_exit cached_branch 0 "^weights sha256 $sha" -- X m/ok/0 info --model xsa-eval/tiny-llama
[ $(($(n_log '"hub"') - n0)) -eq 1 ] && pass cached_branch_one_request || fail cached_branch_one_request "$(($(n_log '"hub"') - n0)) requests"
n0=$(n_log '"hub"')
expect_exit cached_commit 0 "^weights sha256 $sha" -- X m/ok/0 info --model xsa-eval/tiny-llama@$C
[ "$(n_log '"hub"')" -eq "$n0" ] && pass cached_commit_no_request || fail cached_commit_no_request "requests were made"

# run: the same scores and samples as the folder, and the provenance.
runit() { X m/ok/0 run --model "$1" --tasks piqa --data-dir tests/fixtures/data --allow-data-change --device cpu --quiet \
    --output "$TMP/o$2" --cache-dir "$TMP/c" --log-samples >/dev/null 2>&1; }
runit xsa-eval/tiny-llama@v1.0 1; runit $P 2
if python3 - "$TMP"/o1/tiny-llama/results_*.json "$TMP"/o2/*/results_*.json "$C" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["results"] == b["results"], (a["results"], b["results"])
m = a["xsa_eval"]["model"]
assert (m["hub_repo"], m["hub_revision"], m["hub_commit"]) == ("xsa-eval/tiny-llama", "v1.0", sys.argv[3]), m
EOF
then pass run_as_the_folder; else fail run_as_the_folder "results differ or no provenance"; fi
[ "$(cat "$R/refs/v1.0" 2>/dev/null)" = $C ] && pass tag_ref_written || fail tag_ref_written "no refs/v1.0"
cmp -s <(cut -f1- "$TMP"/o1/tiny-llama/samples_piqa_*.jsonl) <(cut -f1- "$TMP"/o2/*/samples_piqa_*.jsonl) \
    && pass samples_as_the_folder || fail samples_as_the_folder "samples differ"

# Offline: the cache only, never a request; what is missing is named.
n0=$(n_log '"hub"')
expect_exit offline_cached 0 "^weights sha256 $sha" -- env HF_HUB_OFFLINE=1 HF_HUB_CACHE="$TMP/hub" HF_ENDPOINT="$B/m/ok/0" \
    "$XSA_BIN" info --model xsa-eval/tiny-llama
expect_exit offline_flag_missing 2 "xsa-eval/sharded: no such file or folder, and not in the Hugging Face cache .*offline" -- \
    X m/ok/0 info --model xsa-eval/sharded --offline
expect_exit offline_env_missing 2 "not in the Hugging Face cache .*offline \(--offline or HF_HUB_OFFLINE\)" -- \
    env HF_HUB_OFFLINE=yes HF_HUB_CACHE="$TMP/hub" HF_ENDPOINT="$B/m/ok/0" "$XSA_BIN" info --model xsa-eval/sharded
expect_exit offline_run 2 "xsa-eval/sharded: no such file" -- X m/ok/0 run --model xsa-eval/sharded --tasks piqa --offline
mkdir -p "$TMP/p" && cp -r "$R" "$TMP/p/" && rm "$TMP/p/models--xsa-eval--tiny-llama/snapshots/$C/model.safetensors"
expect_exit offline_names_missing_file 2 "no complete snapshot .*\(the weights .*missing\); offline" -- \
    env HF_HUB_OFFLINE=1 HF_HUB_CACHE="$TMP/p" "$XSA_BIN" info --model xsa-eval/tiny-llama
[ "$(n_log '"hub"')" -eq "$n0" ] && pass offline_no_request || fail offline_no_request "offline made requests"

# The Hub down: the cached commit of the ref is used; with nothing cached, exit 3.
DOWN=http://127.0.0.1:1
expect_exit hub_down_cached 0 "the Hub cannot be reached .*using the cached commit $C" -- \
    env HF_HUB_CACHE="$TMP/hub" HF_ENDPOINT=$DOWN "$XSA_BIN" info --model xsa-eval/tiny-llama
expect_exit hub_down_uncached 3 "the Hub cannot be reached and the cache has no copy" -- \
    env HF_HUB_CACHE="$TMP/none" HF_ENDPOINT=$DOWN "$XSA_BIN" info --model xsa-eval/tiny-llama
expect_exit hub_error_cached 0 "using the cached commit" -- X m/500/99 info --model xsa-eval/tiny-llama

# The ref moved on (the Hub names a commit not cached) and its files cannot be had: the message offers the cached one.
M=$TMP/moved/models--xsa-eval--tiny-llama
mkdir -p "$M/refs" "$M/snapshots" && cp -rL "$R/snapshots/$C" "$M/snapshots/1111111111111111111111111111111111111111"
printf 1111111111111111111111111111111111111111 >"$M/refs/main"
expect_exit moved_ref_offers_cache 3 "the download's sha256 .*; --offline uses the cached commit 1111111111111111111111111111111111111111 of xsa-eval/tiny-llama@main" -- \
    env HF_HUB_CACHE="$TMP/moved" HF_ENDPOINT="$B/m/corrupt/0" "$XSA_BIN" info --model xsa-eval/tiny-llama

# 404s and gated repos: one line naming the repo and what to do, exit 3.
expect_exit no_such_repo 3 "HTTP 404: no model repo xsa-eval/nothing at $B/m/ok/0, and no such local path either" -- \
    X m/ok/0 info --model xsa-eval/nothing
expect_exit no_such_revision 3 "HTTP 404: xsa-eval/tiny-llama has no revision 'nope'" -- X m/ok/0 info --model xsa-eval/tiny-llama@nope
expect_exit gated_no_token 3 "HTTP 401: xsa-eval/gated-llama is a gated repo and no token was sent; accept its licence at $B/m/ok/0/xsa-eval/gated-llama and set HF_TOKEN" -- \
    X m/ok/0 info --model xsa-eval/gated-llama
expect_exit gated_wrong_token 3 "HTTP 403: xsa-eval/gated-llama is a gated repo and this token has no access to it" -- \
    env HF_TOKEN=hf_other HF_HUB_CACHE="$TMP/hub" HF_ENDPOINT="$B/m/ok/0" "$XSA_BIN" info --model xsa-eval/gated-llama
expect_exit invalid_token 3 "HTTP 401: the Hub refused the token \(HF_TOKEN or the token file\): invalid credentials" -- \
    env HF_TOKEN=hf_invalid HF_HUB_CACHE="$TMP/hub" HF_ENDPOINT="$B/m/ok/0" "$XSA_BIN" info --model xsa-eval/gated-llama
[ ! -e "$TMP/hub/models--xsa-eval--gated-llama/snapshots" ] && pass gated_nothing_cached || fail gated_nothing_cached "files were cached"
n0=$(n_log '"auth": true')
expect_exit gated_token 0 "^weights sha256 $sha" -- \
    env HF_TOKEN=hf_granted HF_HUB_CACHE="$TMP/hub" HF_ENDPOINT="$B/m/ok/0" "$XSA_BIN" info --model xsa-eval/gated-llama
[ $(($(n_log '"auth": true') - n0)) -ge 4 ] && [ "$(n_log '"host": "localhost", "auth": true')" -eq 0 ] && pass token_to_hub_only \
    || fail token_to_hub_only "the token was not sent to the Hub, or reached the CDN"
printf ' hf_granted\n' >"$TMP/token"
rm -rf "$TMP/hub/models--xsa-eval--gated-llama"
expect_exit token_file 0 "^weights sha256 $sha" -- \
    env HF_TOKEN_PATH="$TMP/token" HF_HUB_CACHE="$TMP/hub" HF_ENDPOINT="$B/m/ok/0" "$XSA_BIN" info --model xsa-eval/gated-llama
rm -rf "$TMP/hub/models--xsa-eval--gated-llama"
expect_exit legacy_token_name 0 "^weights sha256 $sha" -- \
    env HUGGING_FACE_HUB_TOKEN=hf_granted HF_HUB_CACHE="$TMP/hub" HF_ENDPOINT="$B/m/ok/0" "$XSA_BIN" info --model xsa-eval/gated-llama
mkdir -p "$TMP/home" && cp "$TMP/token" "$TMP/home/token"
expect_exit hf_home_cache_and_token 0 "^model +$TMP/home/hub/models--xsa-eval--gated-llama/snapshots/" -- \
    env -u HF_TOKEN_PATH HF_HOME="$TMP/home" HF_ENDPOINT="$B/m/ok/0" "$XSA_BIN" info --model xsa-eval/gated-llama

# A sharded checkpoint: the index and every shard it names; a renamed repo's relative redirect.
expect_exit sharded 0 "^weights sha256 $(sha_of $S)" -- X m/ok/0 info --model xsa-eval/sharded
[ "$(ls "$TMP/hub/models--xsa-eval--sharded/snapshots/"*/ | grep -c safetensors)" -eq 4 ] && pass sharded_files \
    || fail sharded_files "$(ls "$TMP/hub/models--xsa-eval--sharded/snapshots/"*/)"
expect_exit torch_sharded 0 "^weights sha256 $(sha_of $T)" -- X m/ok/0 info --model xsa-eval/torch-sharded
expect_exit only_what_the_loader_reads 0 "^weights sha256 $sha" -- X m/ok/0 info --model xsa-eval/extra
got=$(ls "$TMP/hub/models--xsa-eval--extra/snapshots/"*/ | tr '\n' ' ')
[ "$got" = "config.json model.safetensors tokenizer.json tokenizer_config.json " ] && [ "$(n_log '"hub": "xsa-eval/extra/resolve/.*pytorch_model.bin')" -eq 0 ] \
    && pass safetensors_preferred || fail safetensors_preferred "snapshot holds: $got"
# No tokenizer.json: vocab.json, merges.txt and the two configs beside them, scored as the folder.
a=$(X m/ok/0 logprobs --model xsa-eval/opt-vocab --text "the cat sat" --device cpu --quiet 2>&1)
b=$("$XSA_BIN" logprobs --model "$TMP/optv" --text "the cat sat" --device cpu --quiet 2>&1)
got=$(ls "$TMP/hub/models--xsa-eval--opt-vocab/snapshots/"*/ | tr '\n' ' ')
[ -n "$a" ] && [ "$a" = "$b" ] && [ "$got" = "config.json merges.txt model.safetensors special_tokens_map.json tokenizer_config.json vocab.json " ] \
    && pass vocab_merges_downloaded || fail vocab_merges_downloaded "snapshot holds: $got; scores: $(echo "$a" | head -c 200)"
expect_exit shard_outside_snapshot 2 "weight_map\['w'\] is not a plain file name" -- X m/ok/0 info --model xsa-eval/evil
[ ! -e "$TMP/evil.safetensors" ] && [ ! -e "$TMP/hub/evil.safetensors" ] && pass shard_outside_nothing_written \
    || fail shard_outside_nothing_written "a file was written outside the snapshot"
expect_exit bad_etag_refused 3 "no usable ETag or X-Linked-Etag \(got '\"\.\./\.\./evil\"'\)" -- \
    env HF_HUB_CACHE="$TMP/be" HF_ENDPOINT="$B/m/badetag/0" "$XSA_BIN" info --model xsa-eval/tiny-llama
[ -z "$(ls -A "$TMP/be/models--xsa-eval--tiny-llama/blobs" 2>/dev/null)" ] && pass bad_etag_nothing_written || fail bad_etag_nothing_written "blobs written"

# The cache huggingface_hub made (tests/fixtures/hf_hub): a branch costs the API request only, no file.
cp -r tests/fixtures/hf_hub "$TMP/made"
n0=$(n_log '"hub"')
expect_exit hf_made_cache 0 "^weights sha256 $sha" -- env HF_HUB_CACHE="$TMP/made" HF_ENDPOINT="$B/m/ok/0" \
    "$XSA_BIN" info --model xsa-eval/tiny-llama
[ $(($(n_log '"hub"') - n0)) -eq 1 ] && [ "$(tail -1 "$TMP/log" | grep -c api/models)" -eq 1 ] && pass hf_made_cache_no_file_request \
    || fail hf_made_cache_no_file_request "$(($(n_log '"hub"') - n0)) requests"
n0=$(n_log '"hub"')
expect_exit hf_made_cache_commit 0 "^weights sha256 $sha" -- env HF_HUB_CACHE="$TMP/made" HF_ENDPOINT="$B/m/ok/0" \
    "$XSA_BIN" info --model xsa-eval/tiny-llama@$C
[ "$(n_log '"hub"')" -eq "$n0" ] && pass hf_made_cache_commit_no_request || fail hf_made_cache_commit_no_request "requests were made"
expect_exit relative_redirect 0 "^weights sha256 $sha" -- env HF_HUB_CACHE="$TMP/ren" HF_ENDPOINT="$B/m/renamed/0" \
    "$XSA_BIN" info --model xsa-eval/tiny-llama

# Over TLS: verified (--ca-bundle trusts the test's certificate), and never downgraded to http for the CDN.
if command -v openssl >/dev/null && openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
    -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" -keyout "$TMP/key.pem" -out "$TMP/cert.pem" >/dev/null 2>&1; then
    python3 "$HERE/http_server.py" --port-file "$TMP/tls.port" --log "$TMP/log" --lifetime 60 --tls "$TMP/cert.pem" "$TMP/key.pem" \
        --model-repo "xsa-eval/tiny-llama=$P@$C" 2>"$TMP/tls.err" &
    SERVER_PIDS="$SERVER_PIDS $!"
    for _ in $(seq 100); do [ -s "$TMP/tls.port" ] && break; sleep 0.05; done
    T=https://127.0.0.1:$(cat "$TMP/tls.port")
    tls() { env HF_HUB_CACHE="$TMP/$1" HF_ENDPOINT="$T/$2" "$XSA_BIN" run --model xsa-eval/tiny-llama --tasks piqa --limit 2 \
        --data-dir tests/fixtures/data --allow-data-change --device cpu --quiet --output "$TMP/o$1" --cache-dir "$TMP/c" "${@:3}"; }
    expect_exit https_unverified_refused 3 "SSL certificate problem" -- tls tls1 m/ok/0
    expect_exit https_ca_bundle 0 "" -- tls tls2 m/ok/0 --ca-bundle "$TMP/cert.pem"
    cmp -s "$TMP/tls2/models--xsa-eval--tiny-llama/snapshots/$C/model.safetensors" $P/model.safetensors \
        && pass https_download || fail https_download "no model downloaded over https"
    expect_exit https_to_http_refused 3 "model.safetensors .*a redirect from https to http://localhost.* was refused" -- \
        tls tls3 m/downgrade/0 --ca-bundle "$TMP/cert.pem"
else
    skip https "openssl cannot make a certificate"
fi

# A corrupted download is refused and leaves nothing; a damaged cached blob is replaced.
expect_exit corrupt_refused 3 "model.safetensors: the download's sha256 is [0-9a-f]{64}, the Hub says f1f2a9e2.* nothing was kept" -- \
    env HF_HUB_CACHE="$TMP/bad" HF_ENDPOINT="$B/m/corrupt/0" "$XSA_BIN" info --model xsa-eval/tiny-llama
left=$(ls "$TMP/bad/models--xsa-eval--tiny-llama/blobs" | grep -c f1f2a9e2; ls "$TMP/bad/models--xsa-eval--tiny-llama/snapshots/$C")
[ "$left" = "0
config.json
tokenizer.json" ] && [ ! -e "$TMP/bad/models--xsa-eval--tiny-llama/refs/main" ] && pass corrupt_nothing_kept \
    || fail corrupt_nothing_kept "left: $left"
expect_exit listing_disagrees 3 "model.safetensors: the Hub's file list says sha256 0{64} and 281312 bytes, its file headers say f1f2a9e2" -- \
    env HF_HUB_CACHE="$TMP/bl" HF_ENDPOINT="$B/m/badlisting/0" "$XSA_BIN" info --model xsa-eval/tiny-llama
blob=$(readlink -f "$R/snapshots/$C/model.safetensors")
truncate -s 1000 "$blob"
expect_exit damaged_blob_replaced 0 "the blob is damaged; fetching it again" -- X m/ok/0 info --model xsa-eval/tiny-llama
cmp -s "$blob" $P/model.safetensors && pass damaged_blob_restored || fail damaged_blob_restored "blob still wrong"

# A cut download: retried from where it stopped; a run that gives up keeps the bytes, the next resumes.
expect_exit cut_resumed_in_run 0 "^weights sha256 $sha" -- env HF_HUB_CACHE="$TMP/cut1" HF_ENDPOINT="$B/cut1/cdncut/1" \
    "$XSA_BIN" info --model xsa-eval/tiny-llama
grep '"hub": "cdn-lfs/' "$TMP/log" | grep -qE '"range": "bytes=[1-9][0-9]*-"' && pass cut_range_request \
    || fail cut_range_request "no Range request for the rest"
expect_exit cut_kept 3 "bytes kept in .*f1f2a9e2[0-9a-f]*\.incomplete; the next download resumes" -- \
    env XSA_HTTP_MAX_RETRIES=0 HF_HUB_CACHE="$TMP/cut2" HF_ENDPOINT="$B/cut2/cdncut/1" "$XSA_BIN" info --model xsa-eval/tiny-llama
inc=$(ls "$TMP/cut2/models--xsa-eval--tiny-llama/blobs/"*.incomplete 2>/dev/null)
part=$(stat -c %s "$inc" 2>/dev/null || echo 0)
[ -n "$inc" ] && [ "$part" -gt 0 ] && [ "$part" -lt 281312 ] && pass cut_partial_kept || fail cut_partial_kept "no partial .incomplete"
n0=$(n_log "\"hub\": \"cdn-lfs/.*\"range\": \"bytes=$part-\"")
expect_exit cut_resumed_next_run 0 "resuming a partial download" -- env HF_HUB_CACHE="$TMP/cut2" HF_ENDPOINT="$B/cut2/cdncut/1" \
    "$XSA_BIN" info --model xsa-eval/tiny-llama
[ $(($(n_log "\"hub\": \"cdn-lfs/.*\"range\": \"bytes=$part-\"") - n0)) -eq 1 ] \
    && [ -z "$(ls "$TMP/cut2/models--xsa-eval--tiny-llama/blobs/"*.incomplete 2>/dev/null)" ] \
    && cmp -s "$TMP/cut2/models--xsa-eval--tiny-llama/snapshots/$C/model.safetensors" $P/model.safetensors \
    && pass cut_resume_complete || fail cut_resume_complete "not resumed by Range from $part, or the file differs"

# A process killed mid-download: the next run resumes from the bytes it left.
env HF_HUB_CACHE="$TMP/kill" HF_ENDPOINT="$B/kill/cdnslow/0" "$XSA_BIN" info --model xsa-eval/tiny-llama >/dev/null 2>&1 &
kp=$!
inc=$TMP/kill/models--xsa-eval--tiny-llama/blobs/f1f2a9e27d920fef125e61f2de2d4e529d9d47b5ed96ffe70f8f068437282071.incomplete
for _ in $(seq 100); do
    [ "$(stat -c %s "$inc" 2>/dev/null || echo 0)" -gt 50000 ] && break; sleep 0.05
done
kill -9 $kp 2>/dev/null; wait $kp 2>/dev/null
part=$(stat -c %s "$inc" 2>/dev/null || echo 0)
expect_exit killed_resumed 0 "resuming a partial download" -- env HF_HUB_CACHE="$TMP/kill" HF_ENDPOINT="$B/kill/ok/0" \
    "$XSA_BIN" info --model xsa-eval/tiny-llama
[ "$part" -gt 0 ] && [ "$(n_log "\"hub\": \"cdn-lfs/.*\"range\": \"bytes=$part-\"")" -ge 1 ] \
    && cmp -s "$TMP/kill/models--xsa-eval--tiny-llama/snapshots/$C/model.safetensors" $P/model.safetensors \
    && pass killed_resume_by_range || fail killed_resume_by_range "partial $part bytes; not resumed from there, or the file differs"

# Two processes at once: the second waits on the blob's lock, the weights are fetched once.
n0=$(n_log 'cdn-lfs/f1f2a9e2.*"method": "GET"')
(env HF_HUB_CACHE="$TMP/two" HF_ENDPOINT="$B/two/cdnslow/0" "$XSA_BIN" info --model xsa-eval/tiny-llama >"$TMP/two1" 2>&1; echo $? >>"$TMP/two1") &
p1=$!
sleep 0.5
env HF_HUB_CACHE="$TMP/two" HF_ENDPOINT="$B/two/cdnslow/0" "$XSA_BIN" info --model xsa-eval/tiny-llama >"$TMP/two2" 2>&1; echo $? >>"$TMP/two2"
wait $p1
if [ "$(tail -1 "$TMP/two1")$(tail -1 "$TMP/two2")" = 00 ] && [ $(($(n_log 'cdn-lfs/f1f2a9e2.*"method": "GET"') - n0)) -eq 1 ] \
    && cat "$TMP/two1" "$TMP/two2" | grep -q "another process is downloading model.safetensors; waiting"; then pass lock_one_download
else fail lock_one_download "$(cat "$TMP/two1" "$TMP/two2" | head -8)"; fi
finish
