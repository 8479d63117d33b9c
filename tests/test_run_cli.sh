#!/usr/bin/env bash
# `xsa-eval run`: usage errors, bad data rows, and what a run leaves behind.
. "$(dirname "$0")/lib.sh"
M=tests/fixtures/parity/models/gpt2_bpe
D=tests/fixtures/data
run() { "$XSA_BIN" run --quiet "$@"; }

expect_exit unknown_flag 2 "unknown flag '--frobnicate'" -- run --model $M --tasks piqa --frobnicate
expect_exit missing_model 2 "--model and --tasks are required" -- run --tasks piqa
expect_exit missing_tasks 2 "--model and --tasks are required" -- run --model $M
expect_exit three_models 2 "at most 2 --model" -- run --model $M --model $M --model $M --tasks piqa
expect_exit bad_limit 2 "--limit expects a whole number of documents from 1 to 1073741824" -- run --model $M --tasks piqa --limit 0
expect_exit limit_not_whole 2 "--limit 2.9: a number of documents must be whole \(lm-eval would take int\(2.9\) = 2\)" -- \
    run --model $M --tasks piqa --limit 2.9
expect_exit limit_float_whole 0 "\| piqa \| acc \| .* \| 3 \|" -- run --model $M --tasks piqa --limit 3.0 --data-dir $D \
    --allow-data-change --offline --device cpu --output "$TMP/o_lim3"
expect_exit empty_data_dir 2 "--data-dir '': empty path" -- run --model $M --tasks piqa --data-dir ""
# A --data-dir that is no folder says what it is (missing, a file, a link loop), as does a link loop
# where a file of rows should be.
expect_exit data_dir_missing 2 "--data-dir $TMP/nodir: No such file or directory" -- run --model $M --tasks piqa --data-dir "$TMP/nodir"
expect_exit data_dir_file 2 "--data-dir README.md: not a folder" -- run --model $M --tasks piqa --data-dir README.md
ln -s loop_b "$TMP/loop_a" && ln -s loop_a "$TMP/loop_b"
expect_exit data_dir_loop 2 "--data-dir $TMP/loop_a: a symbolic link in a loop" -- run --model $M --tasks piqa --data-dir "$TMP/loop_a"
mkdir -p "$TMP/rowloop/piqa" && ln -s validation.jsonl "$TMP/rowloop/piqa/validation.jsonl"
expect_exit data_file_loop 2 "piqa/validation.jsonl: not a regular file \(a symbolic link in a loop\)" -- \
    run --model $M --tasks piqa --data-dir "$TMP/rowloop"
expect_exit unknown_task 2 "unknown task or group 'nosuchtask'.*arc_easy" -- run --model $M --tasks nosuchtask --data-dir $D
# The same checkpoint twice (here under two spellings of its path) would be scored twice and
# compared with itself: refused before any work, nothing written.
expect_exit same_model_twice 2 "^xsa-eval run: --model $M and --model \./$M/ are the same checkpoint .*; give two different checkpoints to compare, or one --model" -- \
    run --model $M --model ./$M/ --tasks piqa --limit 2 --data-dir $D --allow-data-change --offline --device cpu --output "$TMP/o_same"
[ -e "$TMP/o_same" ] && fail same_model_nothing_written "$(find "$TMP/o_same" | head -3 | tr '\n' ' ')" || pass same_model_nothing_written
# --xsa with two models sets both (the SA baseline too): a note says so
expect_exit xsa_both_models_note 0 "^xsa-eval: note: --xsa all applies to both models" -- \
    "$XSA_BIN" run --model demo/sa --model demo/xsa --xsa all --tasks piqa --limit 1 --data-dir $D --allow-data-change --offline --device cpu --output "$TMP/o_xsa2"
# A --cache-requests that is no folder is the user's to change (exit 2), said before any work; the
# --output folder the run made is gone again.
expect_exit cache_requests_file 2 "^xsa-eval run: README.md: not a folder; choose a writable --cache-requests folder$" -- \
    run --model $M --tasks piqa --limit 2 --data-dir $D --allow-data-change --offline --device cpu --cache-requests README.md \
    --output "$TMP/o_crq"
[ -e "$TMP/o_crq" ] && fail cache_requests_nothing_written "$(find "$TMP/o_crq" | head -3 | tr '\n' ' ')" || pass cache_requests_nothing_written
expect_exit missing_model_dir 2 "/nonexistent" -- run --model /nonexistent --tasks piqa --data-dir $D --allow-data-change
# A damaged second model stops the run before the first is scored: no results for either, and the
# --output folder the run made is gone again.
expect_exit second_model_checked_first 2 "scale_zero.int8.ptz: .*scale" -- run --model $M --model tests/fixtures/pgolf_bad/scale_zero.int8.ptz \
    --tasks piqa --limit 2 --data-dir $D --allow-data-change --offline --device cpu --output "$TMP/o_second"
[ -e "$TMP/o_second" ] && fail second_model_nothing_written "$(find "$TMP/o_second" | head -3 | tr '\n' ' ')" || pass second_model_nothing_written
# --max-length past a learned position table is refused before anything is scored (the second
# model here), not at the first long request.
expect_exit max_length_past_positions 2 "--max-length 65: .*gpt2_tiny encodes positions below 64 only \\(its learned position table\\)" -- \
    run --model $M --model tests/fixtures/models/gpt2_tiny --tokenizer $M/tokenizer.json --max-length 65 --tasks piqa --limit 2 \
    --data-dir $D --allow-data-change --offline --device cpu --output "$TMP/o_maxlen"
[ -e "$TMP/o_maxlen" ] && fail max_length_nothing_written "$(find "$TMP/o_maxlen" | head -3 | tr '\n' ' ')" || pass max_length_nothing_written
# A forward pass that overflows on the first batch: exit 3, and every folder of --output the run
# made (three levels here, with the model's folder and its empty journal) is gone again.
mkdir -p "$TMP/ovf" && cp demo/sa/config.json demo/sa/tokenizer.json "$TMP/ovf/"
python3 -c '
import json, struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
n = struct.unpack("<Q", b[:8])[0]
lo, hi = json.loads(b[8:8 + n])["model.norm.weight"]["data_offsets"]
b[8 + n + lo:8 + n + hi] = struct.pack("<f", 3e38) * ((hi - lo) // 4)
open(sys.argv[2], "wb").write(b)' demo/sa/model.safetensors "$TMP/ovf/model.safetensors"
mkdir -p "$TMP/keep"
expect_exit overflow_exit_3 3 "log-likelihood is -?nan: its forward pass overflowed" -- run --model "$TMP/ovf" --tasks piqa --limit 2 \
    --data-dir $D --allow-data-change --offline --device cpu --output "$TMP/keep/n1/n2/o/"
[ -d "$TMP/keep" ] && [ -z "$(ls -A "$TMP/keep")" ] && pass made_folders_removed || fail made_folders_removed "$(find "$TMP/keep" | tr '\n' ' ')"
expect_exit pinned_row_count 2 "expected 1838" -- run --model $M --tasks piqa --data-dir $D --output "$TMP/o0"

# A row missing a field: the message names the file, the line and the field.
mkdir -p "$TMP/bad/piqa"
head -n 3 $D/piqa/validation.jsonl > "$TMP/bad/piqa/validation.jsonl"
echo '{"goal": "no solutions here", "label": 0}' >> "$TMP/bad/piqa/validation.jsonl"
expect_exit row_missing_field 2 "validation.jsonl:4.*sol1" -- run --model $M --tasks piqa --data-dir "$TMP/bad" --allow-data-change --output "$TMP/o1"
[ -e "$TMP/o1" ] && [ -n "$(find "$TMP/o1" -name 'results_*')" ] && fail no_partial_results "a results file was written" || pass no_partial_results

# Invalid UTF-8 in a row.
mkdir -p "$TMP/utf/piqa"
printf '{"goal": "bad \xff byte", "sol1": "a", "sol2": "b", "label": 0}\n' > "$TMP/utf/piqa/validation.jsonl"
expect_exit invalid_utf8 2 "UTF-8" -- run --model $M --tasks piqa --data-dir "$TMP/utf" --allow-data-change --output "$TMP/o2"

# An empty choice list.
mkdir -p "$TMP/empty/arc_easy"
echo '{"id": "x", "question": "q?", "choices": {"text": [], "label": []}, "answerKey": "A"}' > "$TMP/empty/arc_easy/test.jsonl"
expect_exit empty_choices 2 "test.jsonl:1" -- run --model $M --tasks arc_easy --data-dir "$TMP/empty" --allow-data-change --output "$TMP/o3"

# A label out of range is counted wrong (as lm-eval does) and reported.
expect_exit label_out_of_range 0 "label outside their choices" -- "$XSA_BIN" run --model $M --tasks hellaswag --data-dir $D --allow-data-change --output "$TMP/o4"

# The 96-token window of this checkpoint truncates long BoolQ requests; the results count them.
expect_exit truncation_reported 0 "left-truncated" -- "$XSA_BIN" run --model $M --tasks boolq --data-dir $D --allow-data-change --output "$TMP/o5"
f=$(find "$TMP/o5" -name 'results_*.json' | head -n 1)
if [ -n "$f" ] && python3 -c "import json,sys; d=json.load(open(sys.argv[1])); n=d['xsa_eval']['truncated_requests']['boolq']; sys.exit(0 if n > 0 else 1)" "$f"; then
    pass truncation_counted_in_results
else
    fail truncation_counted_in_results "no truncated_requests.boolq > 0 in $f"
fi

# --add-bos with a tokenizer.json alone (no tokenizer_config.json, no config.json beside it, so
# transformers names no BOS and lm-eval adds none) is refused, not a no-op.
expect_exit add_bos_without_bos 2 "--add-bos: .*tokenizer.json has no BOS token" -- run --model $M --tasks piqa --limit 2 --add-bos \
    --tokenizer tests/fixtures/tokenizers/gpt2/tokenizer.json --data-dir $D --allow-data-change --offline --device cpu \
    --output "$TMP/o_addbos"
[ -e "$TMP/o_addbos" ] && fail add_bos_nothing_written "$(find "$TMP/o_addbos" | head -3 | tr '\n' ' ')" || pass add_bos_nothing_written
# With a tokenizer_config.json naming GPT-2's bos_token (as the Hub's gpt2 repo does), --add-bos
# prepends it, as lm-eval's add_bos_token=True does: every request not truncated is one token longer.
cp -r $M "$TMP/m_cfg" && printf '{"tokenizer_class": "GPT2Tokenizer", "bos_token": "<|endoftext|>"}' > "$TMP/m_cfg/tokenizer_config.json"
for f in "" --add-bos; do
    "$XSA_BIN" run --model "$TMP/m_cfg" --tasks piqa --limit 2 $f --log-samples --data-dir $D --allow-data-change \
        --offline --device cpu --quiet --output "$TMP/o_cfg$f" > /dev/null 2>> "$TMP/addbos_cfg.err"
done
if python3 - "$TMP/o_cfg" "$TMP/o_cfg--add-bos" <<'PY'
import glob, json, sys
def load(d):
    res = json.load(open(glob.glob(d + "/*/results_*.json")[0]))
    rows = [json.loads(l) for f in glob.glob(d + "/*/samples_piqa_*.jsonl") for l in open(f)]
    return res["xsa_eval"]["model"]["add_bos"], [(q["input_tokens"], q["truncated"]) for r in rows for q in r["requests"]]
(a0, n0), (a1, n1) = load(sys.argv[1]), load(sys.argv[2])
assert (a0, a1) == (False, True), (a0, a1)
whole = [(x, y) for (x, tx), (y, ty) in zip(n0, n1) if not tx and not ty]  # left truncation keeps the length
assert len(n0) == len(n1) and whole and all(y == x + 1 for x, y in whole), (n0, n1)
PY
then pass add_bos_from_tokenizer_config; else fail add_bos_from_tokenizer_config "$(tail -3 "$TMP/addbos_cfg.err")"; fi
# A config whose bos_token is null: lm-eval with add_bos_token=True adds none; refused.
printf '{"bos_token": null, "eos_token": "<|endoftext|>"}' > "$TMP/m_cfg/tokenizer_config.json"
expect_exit add_bos_config_null 2 "--add-bos: the tokenizer_config.json beside .* names no bos_token" -- run --model "$TMP/m_cfg" \
    --tasks piqa --limit 2 --add-bos --data-dir $D --allow-data-change --offline --device cpu --output "$TMP/o_addbos_null"
printf '{"bos_token": 7}' > "$TMP/m_cfg/tokenizer_config.json"
expect_exit tokenizer_config_bad_bos 2 "tokenizer_config.json: \"bos_token\" is neither a token string" -- run --model "$TMP/m_cfg" \
    --tasks piqa --limit 2 --data-dir $D --allow-data-change --offline --device cpu --output "$TMP/o_badcfg"

# A request lm-eval refuses (its _loglikelihood_tokens asserts): a LAMBADA text whose context
# is only whitespace encodes to no context tokens with a tokenizer that adds no BOS. Exit 2,
# naming the data file, the task, the document and the reason; no results file.
mkdir -p "$TMP/ws/lambada_openai"
head -n 2 $D/lambada_openai/test.jsonl > "$TMP/ws/lambada_openai/test.jsonl"
echo '{"text": "  word"}' >> "$TMP/ws/lambada_openai/test.jsonl"
expect_exit whitespace_context 2 "lambada_openai/test.jsonl.*lambada_openai doc 2 request 0: context .* encodes to no tokens" -- run --model $M --tasks lambada_openai --data-dir "$TMP/ws" --allow-data-change --output "$TMP/o7"
[ -n "$(find "$TMP/o7" -name 'results_*' 2>/dev/null)" ] && fail whitespace_context_no_results "a results file was written" || pass whitespace_context_no_results

# --limit as a fraction, as lm-eval: ceil(F * documents) per task. Real lm-eval 0.4.13 with
# limit=0.3 on these rows gave n-samples effective arc_easy 5 (of 14), boolq 4 (of 12), and
# config.limit 0.3.
expect_exit limit_fraction 0 "" -- run --model $M --tasks arc_easy,boolq --limit 0.3 --data-dir $D --allow-data-change --output "$TMP/o8"
f=$(find "$TMP/o8" -name 'results_*.json' | head -n 1)
flat=$([ -n "$f" ] && tr -d ' \n' <"$f")
if echo "$flat" | grep -qF '"n-samples":{"arc_easy":{"original":14,"effective":5},"boolq":{"original":12,"effective":4}}' &&
   [ "$(echo "$flat" | grep -oF '"limit":0.3,' | wc -l)" -eq 2 ]; then
    pass limit_fraction_docs
else
    fail limit_fraction_docs "n-samples or limit differ from lm-eval's in $f"
fi
expect_exit limit_fraction_zero 2 "--limit expects a whole number of documents from 1 to 1073741824 or a fraction" -- run --model $M --tasks piqa --limit 0.0
expect_exit limit_fraction_junk 2 "--limit expects a whole number of documents from 1 to 1073741824 or a fraction" -- run --model $M --tasks piqa --limit 0.5x

# The batch budget: the device's default without --batch-tokens (4096 on the CPU), the flag's
# value with it; recorded in the results, and the scores are the same either way.
run --model $M --tasks arc_easy --data-dir $D --allow-data-change --device cpu --output "$TMP/b0" >/dev/null 2>&1
run --model $M --tasks arc_easy --data-dir $D --allow-data-change --device cpu --batch-tokens 64 --output "$TMP/b1" >/dev/null 2>&1
f0=$(find "$TMP/b0" -name 'results_*.json' | head -n 1) f1=$(find "$TMP/b1" -name 'results_*.json' | head -n 1)
bt() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['xsa_eval']['backend']['batch_tokens'])" "$1" 2>/dev/null; }
acc() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['results']['arc_easy'])" "$1" 2>/dev/null; }
if [ "$(bt "$f0")" = 4096 ] && [ "$(bt "$f1")" = 64 ] && [ -n "$(acc "$f0")" ] && [ "$(acc "$f0")" = "$(acc "$f1")" ]; then
    pass batch_tokens_default_and_flag
else
    fail batch_tokens_default_and_flag "batch_tokens $(bt "$f0") / $(bt "$f1") (want 4096 / 64), or scores differ"
fi
expect_exit batch_tokens_zero 2 "--batch-tokens" -- run --model $M --tasks piqa --batch-tokens 0

# Without --quiet, stderr says what sharing saved and how fast scoring went (--no-share still
# scores identical requests once).
expect_exit throughput_line 0 "xsa-eval: gpt2_bpe: [0-9]+ requests, [0-9]+ tokens requested, [0-9]+ computed \([0-9.]+x fewer, shared prefixes\); scored in [0-9.]+ s: [0-9]+ requests/s, [0-9]+ computed tokens/s \(cpu, 4096-token batches\)" \
    -- "$XSA_BIN" run --model $M --tasks arc_easy --data-dir $D --allow-data-change --device cpu --output "$TMP/b2"
expect_exit throughput_line_no_share 0 "tokens requested, [0-9]+ computed \([0-9.]+x fewer, --no-share\)" \
    -- "$XSA_BIN" run --model $M --tasks arc_easy --data-dir $D --allow-data-change --device cpu --no-share --output "$TMP/b3"
if run --model $M --tasks arc_easy --data-dir $D --allow-data-change --device cpu --output "$TMP/b4" 2>&1 | grep -q "computed tokens/s"; then
    fail throughput_line_quiet "--quiet printed the throughput line"
else
    pass throughput_line_quiet
fi

# Bare form and the table on stdout.
expect_exit bare_form 0 "\| piqa \| acc \|" -- "$XSA_BIN" --model $M --tasks piqa --data-dir $D --allow-data-change --quiet --output "$TMP/o6"
# Few-shot examples come from the task's few-shot split, read through the data layer.
mkdir -p "$TMP/fs" && cp -r $D/arc_easy "$TMP/fs/" && rm -f "$TMP/fs/arc_easy/train.jsonl"
expect_exit fewshot_split_missing 2 "--num-fewshot: $TMP/fs: --data-dir has neither arc_easy/train.jsonl nor arc_easy/train.parquet" -- \
    run --model $M --tasks arc_easy --num-fewshot 2 --data-dir "$TMP/fs" --allow-data-change --output "$TMP/ofs"
# A few-shot row the task cannot read is named by its file and line, as an evaluated row is.
mkdir -p "$TMP/fsb/boolq" && cp $D/boolq/validation.jsonl "$TMP/fsb/boolq/"
head -3 $D/boolq/validation.jsonl | python3 -c 'import json, sys; [print(json.dumps({k: v for k, v in json.loads(l).items() if k != "passage"})) for l in sys.stdin]' \
    > "$TMP/fsb/boolq/train.jsonl"
expect_exit fewshot_row_named 2 "fsb/boolq/train.jsonl:1: field 'passage' missing" -- \
    run --model $M --tasks boolq --num-fewshot 1 --data-dir "$TMP/fsb" --allow-data-change --limit 2 --output "$TMP/ofsb"
# The few-shot split's digest and source are recorded per task (LAMBADA's is its evaluated split),
# and compare / check refuse two runs whose examples came from different few-shot splits.
step=0
for v in fewshot_data fewshot_edge_data; do
    step=$((step + 100))
    run --model $M --tasks piqa,lambada_openai --num-fewshot 2 --limit 3 --data-dir tests/fixtures/parity/$v --allow-data-change \
        --offline --step $step --output "$TMP/ofs_$v" >/dev/null 2>&1
done
fa=$(ls "$TMP"/ofs_fewshot_data/*/results_*.json) fb=$(ls "$TMP"/ofs_fewshot_edge_data/*/results_*.json)
got=$(python3 -c '
import json, sys, hashlib
d = json.load(open(sys.argv[1]))["xsa_eval"]["data"]
rows = [json.loads(l) for l in open("tests/fixtures/parity/fewshot_data/piqa/train.jsonl", encoding="utf-8")]
canon = "".join(json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n" for r in rows)
train = hashlib.sha256(canon.encode("utf-8")).hexdigest()
print(d["piqa"]["fewshot_sha256"] == train, d["piqa"]["fewshot_source"].endswith("piqa/train.jsonl"),
      d["lambada_openai"]["fewshot_sha256"] == d["lambada_openai"]["sha256"])' "$fa" 2>&1)
[ "$got" = "True True True" ] && pass fewshot_data_recorded || fail fewshot_data_recorded "$got"
expect_exit fewshot_data_differ_compare 2 "piqa few-shot data differ \(sha256 [0-9a-f]{12} vs [0-9a-f]{12}\)" -- "$XSA_BIN" compare "$fa" "$fb"
expect_exit fewshot_data_differ_check 2 "piqa few-shot data differ" -- "$XSA_BIN" check --baseline "$fa" --results "$fb"
expect_exit fewshot_data_differ_trend 2 "--trend: piqa's few-shot data differ" -- "$XSA_BIN" report --trend --series a,a "$fa" "$fb"

# Documents whose label is outside their choices count as wrong, as in lm-eval, and the run says
# so even under --quiet (a warning about the data, not progress).
expect_exit bad_labels_warned_quiet 0 "social_iqa: 2 documents have a label outside their choices; like lm-eval, they count as wrong" -- \
    run --model $M --tasks social_iqa --data-dir $D/original --allow-data-change --offline --output "$TMP/olab"

# HellaSwag from the preprocessed text dump: scored, with a warning that it is not lm-eval's text.
mkdir -p "$TMP/hsdump" && cp -r $D/original/hellaswag_text "$TMP/hsdump/hellaswag"
expect_exit hellaswag_dump_warned 0 "warning: hellaswag: the rows are a third party's preprocessed text" -- \
    run --model $M --tasks hellaswag --data-dir "$TMP/hsdump" --allow-data-change --offline --output "$TMP/ohs"

# A data file that is there but cannot be read as one is named, not passed over.
mkdir -p "$TMP/dd/piqa" && ln -s "$TMP/nowhere" "$TMP/dd/piqa/validation.jsonl"
expect_exit data_file_dangling_link 2 "dd/piqa/validation.jsonl: not a regular file" -- run --model $M --tasks piqa --data-dir "$TMP/dd" --output "$TMP/odd"

finish
