#!/usr/bin/env bash
# --model org/name[@revision]: read in place from a Hugging Face hub cache laid out by
# huggingface_hub (tests/fixtures/hf_hub, made by tools/fixtures/make_hub_cache_fixture.py and checked
# there by huggingface_hub's scan_cache_dir), offline: refs and commits, the three ways to find the
# cache, the same scores as the folder itself, provenance in the results, and bad ids.
. "$(dirname "$0")/lib.sh"
H=$(cd tests/fixtures/hf_hub && pwd)
P=tests/fixtures/parity/models/llama_sp_xsa   # the same files as a plain folder
C=0123456789abcdef0123456789abcdef01234567
# Offline: these read the cache only (downloads are tests/test_hub_download.sh's, from a loopback Hub).
export HF_HUB_OFFLINE=1
X() { env -u HF_HOME -u XDG_CACHE_HOME HF_HUB_CACHE="$H" "$XSA_BIN" "$@"; }

sha=$("$XSA_BIN" info --model $P | awk '/^weights sha256/ {print $3}')
expect_exit info_by_repo_id 0 "^weights sha256 $sha" -- X info --model xsa-eval/tiny-llama
expect_exit info_snapshot_path 0 "^model +$H/models--xsa-eval--tiny-llama/snapshots/$C$" -- X info --model xsa-eval/tiny-llama
expect_exit revision_tag 0 "^weights sha256 $sha" -- X info --model xsa-eval/tiny-llama@v1.0
expect_exit revision_commit 0 "^weights sha256 $sha" -- X info --model xsa-eval/tiny-llama@$C
mkdir -p "$TMP/home" "$TMP/xdg/huggingface" && ln -s "$H" "$TMP/home/hub" && ln -s "$H" "$TMP/xdg/huggingface/hub"
expect_exit cache_from_hf_home 0 "^weights sha256 $sha" -- env -u HF_HUB_CACHE HF_HOME="$TMP/home" "$XSA_BIN" info --model xsa-eval/tiny-llama
expect_exit cache_from_xdg 0 "^weights sha256 $sha" -- \
    env -u HF_HUB_CACHE -u HF_HOME XDG_CACHE_HOME="$TMP/xdg" "$XSA_BIN" info --model xsa-eval/tiny-llama

# The same log-probabilities as the folder, bit for bit.
a=$(X logprobs --model xsa-eval/tiny-llama --tokens 1,5,9,200,3 --device cpu 2>/dev/null)
b=$("$XSA_BIN" logprobs --model $P --tokens 1,5,9,200,3 --device cpu 2>/dev/null)
[ -n "$a" ] && [ "$a" = "$b" ] && pass logprobs_as_the_folder || fail logprobs_as_the_folder "differ"

# A run: the folder is named after the repo, the results record repo, revision and commit.
X run --model xsa-eval/tiny-llama@v1.0 --tasks piqa --data-dir tests/fixtures/data --allow-data-change --offline \
    --device cpu --quiet --output "$TMP/o" --cache-dir "$TMP/c" >/dev/null 2>&1
if python3 - "$TMP"/o/tiny-llama/results_*.json "$C" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))["xsa_eval"]["model"]
assert (m["hub_repo"], m["hub_revision"], m["hub_commit"]) == ("xsa-eval/tiny-llama", "v1.0", sys.argv[2]), m
EOF
then pass run_records_hub_provenance; else fail run_records_hub_provenance "no results under tiny-llama/ or fields wrong"; fi
# A revision named after its training step (Pythia's step143000) is the run's step.
cp -r "$H" "$TMP/hub_steps" && cp "$TMP/hub_steps/models--xsa-eval--tiny-llama/refs/main" "$TMP/hub_steps/models--xsa-eval--tiny-llama/refs/step143000"
env -u HF_HOME -u XDG_CACHE_HOME HF_HUB_CACHE="$TMP/hub_steps" "$XSA_BIN" run --model xsa-eval/tiny-llama@step143000 --tasks piqa \
    --limit 2 --data-dir tests/fixtures/data --allow-data-change --offline --device cpu --quiet --output "$TMP/o_step" --cache-dir "$TMP/c" >/dev/null 2>&1
expect_exit run_step_from_revision 0 '"step": 143000,' -- cat "$TMP"/o_step/tiny-llama/results_*.json
expect_exit run_step_source_revision 0 '"step_source": "revision"' -- cat "$TMP"/o_step/tiny-llama/results_*.json
if "$XSA_BIN" report "$TMP"/o/tiny-llama/results_*.json 2>/dev/null | grep -qF '| Hugging Face repo | `xsa-eval/tiny-llama` @ v1.0 (commit `0123456789ab`) |'
then pass report_shows_repo; else fail report_shows_repo "no Hugging Face repo row"; fi

# Bad ids and what is not cached: one line, exit 2.
expect_exit slash_too_many 2 "a/b/c: no such path, and not a Hugging Face repo id" -- X info --model a/b/c
expect_exit dotdot_in_name 2 "org/na\.\.me: no such path, and not a Hugging Face repo id" -- X info --model org/na..me
expect_exit dotdot_in_revision 2 "not a Hugging Face repo id" -- X info --model xsa-eval/tiny-llama@../x
expect_exit unknown_revision 2 "xsa-eval/tiny-llama: revision 'nope' is not in the cache .*huggingface-cli download xsa-eval/tiny-llama --revision nope" -- \
    X info --model xsa-eval/tiny-llama@nope
expect_exit not_cached 2 "nobody/nothing: no such file or folder, and not in the Hugging Face cache \($H/models--nobody--nothing\)" -- \
    X run --model nobody/nothing --tasks piqa --offline
finish
