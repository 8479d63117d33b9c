#!/usr/bin/env bash
# `xsa-eval ppl`: usage and input errors exit 2 with one line; a two-model run writes the
# Markdown report, its chart and the JSON; a shard's bits per byte come out of --json.
. "$(dirname "$0")/lib.sh"
P="$XSA_BIN ppl"
A=demo/sa
B=demo/xsa
SHARD=tests/fixtures/ppl/corpus_sp600.bin
SP=tests/fixtures/tokenizers/sp_bpe/tokenizer.model
printf 'Once upon a time a robot read about the sea.\nIt walked there one day, far past the hills.\n' > "$TMP/doc.txt"
printf '{"text": "One small document."}\n{"body": "no text field"}\n' > "$TMP/bad.jsonl"
printf 'not a shard' > "$TMP/bad.bin"

expect_exit no_model 2 "--model PATH is required" -- $P --text "$TMP/doc.txt"
expect_exit no_input 2 "one of --text, --jsonl, --tokens-file or --tasks" -- $P --model $A
expect_exit limit_without_tasks 2 "--limit applies to --tasks" -- $P --model $A --text "$TMP/doc.txt" --limit 3
expect_exit field_without_jsonl 2 "--field applies to --jsonl" -- $P --model $A --text "$TMP/doc.txt" --field body
expect_exit text_given_twice 2 "--text given twice .*; give it once" -- $P --model $A --text "$TMP/doc.txt" --text "$TMP/doc.txt"
expect_exit two_inputs 2 "one of --text" -- $P --model $A --text "$TMP/doc.txt" --tokens-file $SHARD
expect_exit kl_one_model 2 "--kl compares two models" -- $P --model $A --text "$TMP/doc.txt" --kl
# --quiet: nothing on stderr but errors (here: not the CPU fallback note or the sliding-window note).
$P --model $A --text "$TMP/doc.txt" --context 8 --stride 4 -o "$TMP/q.md" --quiet 2>"$TMP/q.err" >/dev/null && [ ! -s "$TMP/q.err" ] &&
    [ -s "$TMP/q.md" ] && pass quiet_no_notes || fail quiet_no_notes "$(head -2 "$TMP/q.err")"
"$XSA_BIN" probe --model $A --text "$TMP/doc.txt" -o "$TMP/qp.md" --quiet 2>"$TMP/qp.err" >/dev/null && [ ! -s "$TMP/qp.err" ] &&
    pass probe_quiet || fail probe_quiet "$(head -2 "$TMP/qp.err")"
# (warnings about the data stay, as for run: here the row count a local file differs by)
$P --model $A --tasks piqa --data-dir tests/fixtures/data --allow-data-change --limit 3 -o "$TMP/qt.md" --quiet 2>"$TMP/qt.err" &&
    grep -q "warning: piqa: .* rows, expected 1838" "$TMP/qt.err" && ! grep -qv "^xsa-eval: warning: " "$TMP/qt.err" &&
    pass quiet_keeps_data_warnings || fail quiet_keeps_data_warnings "$(head -3 "$TMP/qt.err")"
# each model's XSA layers in the JSON, as results files name them: which of A and B is the XSA one
expect_exit json_xsa_layers 0 '"label": "sa",.*"xsa_layers": "none",.*"label": "xsa",.*"xsa_layers": "all",' -- \
    sh -c "$P --model $A --model $B --text $TMP/doc.txt --json - --quiet | tr -d '\\n'"
# Two models on a machine without a GPU: the CPU note once, not once per model.
n=$($P --model $A --model $B --text "$TMP/doc.txt" --device auto 2>&1 >/dev/null | grep -c "no usable GPU")
[ "$n" -le 1 ] && pass gpu_note_once || fail gpu_note_once "$n notes"
# --config: a folder of weights without config.json (accelerate's save_state) scored with the
# config named, as run, info and logprobs take it; without it, the loader's hint names the flag.
ACC=tests/fixtures/torch/frameworks/accelerate/checkpoint_0
python3 -c "import struct, random; random.seed(5); t = [random.randrange(1, 96) for _ in range(300)]; open('$TMP/s96.bin', 'wb').write(struct.pack('<256i', 20240520, 1, 300, *[0] * 253) + struct.pack('<300H', *t))"
expect_exit ppl_config_hint 2 "checkpoint_0: model.safetensors but no config.json .*--config FILE" -- $P --model $ACC --tokens-file "$TMP/s96.bin" --context 64
x=$($P --model $ACC --config tests/fixtures/models/llama_bf16/config.json --tokens-file "$TMP/s96.bin" --context 64 --json - --quiet 2>&1 | grep -o '"nats_per_token": [0-9.]*')
y=$($P --model tests/fixtures/models/llama_bf16 --tokens-file "$TMP/s96.bin" --context 64 --json - --quiet 2>&1 | grep -o '"nats_per_token": [0-9.]*')
[ -n "$x" ] && [ "$x" = "$y" ] && pass ppl_config_flag || fail ppl_config_flag "'$x' vs llama_bf16's '$y'"
expect_exit probe_config_flag 0 "^\| 1 \| " -- $XSA_BIN probe --model $ACC --config tests/fixtures/models/llama_bf16/config.json --tokens-file "$TMP/s96.bin" --context 64 --quiet
expect_exit ppl_config_missing 2 "--config $TMP/none.json: no such file" -- $P --model $ACC --config "$TMP/none.json" --tokens-file "$TMP/s96.bin"
# A named FIFO is read as cat reads it: its writer is waited for.
mkfifo "$TMP/fifo.txt"
(sleep 1; cat "$TMP/doc.txt" > "$TMP/fifo.txt") &
expect_exit text_named_fifo 0 '"input": "1 document of fifo.txt"' -- $P --model $A --text "$TMP/fifo.txt" --json - --quiet
wait
# Bits per byte count the text's bytes: a file that is not UTF-8 is refused at its first bad byte.
printf 'ok \xff\xfe' > "$TMP/latin.txt"
expect_exit text_not_utf8 2 "latin.txt: not valid UTF-8 at byte 3 \(0xff\)" -- $P --model $A --text "$TMP/latin.txt"
# A tokenizer whose ids pass the model's vocabulary: the document and the tokenizer are named.
expect_exit text_id_outside_vocab 2 "doc.txt: tests/fixtures/tokenizers/gpt2/tokenizer.json gives token id [0-9]+, outside the model's vocabulary \[0, 96\)" -- \
    $P --model tests/fixtures/models/mistral_swa --text "$TMP/doc.txt" --tokenizer tests/fixtures/tokenizers/gpt2/tokenizer.json
# A model with neither BOS nor EOS: a text's first token is only context, so bits per byte do not
# count its bytes either ("Is it?": "I" is context, "s it?" the 5 bytes scored).
mkdir -p "$TMP/nobos" && cp demo/sa/model.safetensors "$TMP/nobos/"
python3 - "$TMP/nobos" <<'EOF'
import json, sys
c = json.load(open("demo/sa/config.json")); c["bos_token_id"] = c["eos_token_id"] = None
json.dump(c, open(sys.argv[1] + "/config.json", "w"))
t = json.load(open("demo/sa/tokenizer.json")); t["added_tokens"] = []
json.dump(t, open(sys.argv[1] + "/tokenizer.json", "w"))
EOF
printf 'Is it?' > "$TMP/nobos.txt"
expect_exit no_prefix_token_bytes 0 '"targets": 3,.*"bytes": 5,' -- sh -c "$P --model $TMP/nobos --text $TMP/nobos.txt --json - --quiet | tr -d '\\n'"
# A first token that is a whole 2-byte character ("é is it?": 9 bytes, 7 scored); one that holds
# only the first byte of "中" decodes to U+FFFD and takes nothing off (13 of 13, never fewer).
printf '\303\251 is it?' > "$TMP/nobos2.txt"
expect_exit no_prefix_token_bytes_char 0 '"targets": 3,.*"bytes": 7,' -- sh -c "$P --model $TMP/nobos --text $TMP/nobos2.txt --json - --quiet | tr -d '\\n'"
printf '\344\270\255\346\226\207 is it?' > "$TMP/nobos3.txt"
expect_exit no_prefix_token_bytes_split_char 0 '"targets": 8,.*"bytes": 13,' -- sh -c "$P --model $TMP/nobos --text $TMP/nobos3.txt --json - --quiet | tr -d '\\n'"
expect_exit stride_over_context 2 "--stride 9 exceeds --context 8" -- $P --model $A --text "$TMP/doc.txt" --context 8 --stride 9
expect_exit bad_buckets 2 "--buckets 64,32" -- $P --model $A --text "$TMP/doc.txt" --buckets 64,32
expect_exit metric_not_used 2 "unknown flag .--metric." -- $P --model $A --text "$TMP/doc.txt" --metric acc
expect_exit stray_argument 2 "unexpected argument" -- $P --model $A --text "$TMP/doc.txt" extra
expect_exit context_too_long 2 "exceeds the model's context length 256" -- $P --model $A --text "$TMP/doc.txt" --context 300
expect_exit bad_shard 2 "bad.bin: .*shorter than a token shard" -- $P --model $A --tokens-file "$TMP/bad.bin"
expect_exit jsonl_field 2 "bad.jsonl:2: no string field \"text\"" -- $P --model $A --jsonl "$TMP/bad.jsonl"
# Records are read as the task rows are: text after the object, a key twice (Python keeps the last,
# cJSON the first) and a \u0000 (which would cut the text short) are refused by line.
printf '{"text": "the cat"} trailing\n' > "$TMP/trail.jsonl"
printf '{"text": "zz", "text": "the cat"}\n' > "$TMP/dupkey.jsonl"
printf '{"text": "ok"}\n{"text": "a\\u0000b the cat"}\n' > "$TMP/nul.jsonl"
expect_exit jsonl_trailing 2 "trail.jsonl:1: not one JSON object per line" -- $P --model $A --jsonl "$TMP/trail.jsonl"
expect_exit jsonl_duplicate_key 2 "dupkey.jsonl:1: field 'text' stands twice" -- $P --model $A --jsonl "$TMP/dupkey.jsonl"
expect_exit jsonl_nul 2 "nul.jsonl:2: field 'text' holds a NUL character" -- $P --model $A --jsonl "$TMP/nul.jsonl"
expect_exit shard_vocab 2 "outside the vocabulary \[0, 300\)" -- $P --model tests/fixtures/models/llama_gqa --tokens-file $SHARD
expect_exit output_folder_missing 2 "no folder .*create it first" -- $P --model $A --text "$TMP/doc.txt" -o "$TMP/none/x.md"

mkdir -p "$TMP/r"
if $P --model $A --model $B --text "$TMP/doc.txt" --context 16 --stride 8 --kl --top 2 --buckets 4,8 \
      --device cpu -o "$TMP/r/ppl.md" --json "$TMP/r/ppl.json" 2>"$TMP/err"; then
    if grep -q '^| 1-3 |' "$TMP/r/ppl.md" && grep -q 'KL(A || B)' "$TMP/r/ppl.md" && grep -q '<polyline' "$TMP/r/ppl_position.svg" \
       && grep -q '"top1_agreement"' "$TMP/r/ppl.json"; then pass two_models_report
    else fail two_models_report "report, chart or JSON incomplete"; fi
else
    fail two_models_report "exit $?: $(head -1 "$TMP/err")"
fi
# Every number of the Markdown is in the JSON: the KL table's A and B nats, the same values.
got=$(python3 - "$TMP/r/ppl.json" "$TMP/r/ppl.md" <<'EOF'
import json, sys
top = json.load(open(sys.argv[1]))["kl"]["top"]
rows = [l for l in open(sys.argv[2]) if l.startswith("| ") and l.count("|") == 10 and l.split("|")[1].strip().isdigit()]
ok = top and len(rows) == len(top) and all("%.4f | %.4f |" % (t["nll_a"], t["nll_b"]) in r for t, r in zip(top, rows))
print("ok" if ok else "top %s rows %s" % (top, rows))
EOF
)
[ "$got" = ok ] && pass kl_top_nats_in_json || fail kl_top_nats_in_json "$got"

# The provenance names the model's family as `info` does (pgolf here, not the kernel's llama).
expect_exit provenance_family 0 '^\| A \| .*\(pgolf, 5 layers, d\\_model 32' -- $P --model tests/fixtures/pgolf/xsa_record_ntk/final_model.pt \
    --tokenizer tests/fixtures/tokenizers/sp_bpe/tokenizer.model --text "$TMP/doc.txt" --context 16 --device cpu

# probe's statistics come from the CPU backend only: a GPU is refused before anything loads.
expect_exit probe_cuda 2 "xsa-eval probe: --device cuda: the attention statistics are computed by the CPU backend only; use --device cpu" -- \
    $XSA_BIN probe --model $A --text "$TMP/doc.txt" --device cuda
expect_exit probe_auto_is_cpu 0 "cos" -- $XSA_BIN probe --model $A --text "$TMP/doc.txt" --device auto
expect_exit probe_json_windows 0 '"context": 16,.*"stride": 8,' -- bash -c "$XSA_BIN probe --model $A --text $TMP/doc.txt --context 16 --stride 8 --json - | tr -d '\n'"
# XSA_CUDA_PROBE=1 lets the CUDA backend's statistics run (tools/gpu-check.sh 5e): past the refusal,
# to the device (here: none, or a GPU that scores them).
XSA_CUDA_PROBE=1 $XSA_BIN probe --model $A --text "$TMP/doc.txt" --device cuda >/dev/null 2>"$TMP/cp.err" || true
if grep -q "computed by the CPU backend only" "$TMP/cp.err"; then fail probe_cuda_opt_in "still refused: $(head -1 "$TMP/cp.err")"
else pass probe_cuda_opt_in; fi

# --arch as run and info take it: the file is read (a missing one named, exit 2).
expect_exit arch_flag 2 "nonexistent.json" -- $P --model tests/fixtures/pgolf/xsa_record/final_model.pt --arch "$TMP/nonexistent.json" \
    --tokenizer tests/fixtures/tokenizers/sp_bpe/tokenizer.model --text "$TMP/doc.txt" --device cpu
expect_exit probe_arch_flag 2 "nonexistent.json" -- $XSA_BIN probe --model tests/fixtures/pgolf/xsa_record/final_model.pt --arch "$TMP/nonexistent.json" \
    --tokenizer tests/fixtures/tokenizers/sp_bpe/tokenizer.model --text "$TMP/doc.txt"

# Bits per byte of the committed shard: what parameter-golf's eval_val gives
# (tests/fixtures/ppl/reference.json's bpb_fixture), to 6 digits.
want=$(python3 -c 'import json; print("%.6f" % json.load(open("tests/fixtures/ppl/reference.json"))["bpb_fixture"]["val_bpb"])')
if $P --model $A --tokens-file $SHARD --tokenizer $SP --context 64 --device cpu --json "$TMP/s.json" >/dev/null 2>"$TMP/err"; then
    got=$(grep -o '"bits_per_byte": [0-9.]*' "$TMP/s.json" | head -1 | awk '{printf "%.6f", $2}')
    if [ "$got" = "$want" ]; then pass shard_bits_per_byte; else fail shard_bits_per_byte "got $got, want $want"; fi
else
    fail shard_bits_per_byte "exit $?: $(head -1 "$TMP/err")"
fi
# Bits per byte of a GPT-2-token shard with its byte-level BPE tokenizer.json: the bytes are those
# `tokenizers` decodes the targets to, the separators skipped (tests/fixtures/ppl/gpt2_bpb.json,
# tools/fixtures/make_bpb_fixtures.py).
G=tests/fixtures/ppl/gpt2_bpb.bin
want=$(python3 -c 'import json; print(json.load(open("tests/fixtures/ppl/gpt2_bpb.json"))["target_bytes"])')
if $P --quiet --model tests/fixtures/llmc/model_f32.bin --tokens-file $G --tokenizer tests/fixtures/tokenizers/gpt2/tokenizer.json \
       --context 64 --json "$TMP/g.json" >/dev/null 2>"$TMP/err"; then
    got=$(grep -o '"bytes": [0-9]*' "$TMP/g.json" | head -1 | awk '{print $2}')
    if [ "$got" = "$want" ] && grep -q '"bits_per_byte": [0-9]' "$TMP/g.json"; then pass byte_level_bits_per_byte
    else fail byte_level_bits_per_byte "bytes $got, want $want"; fi
else
    fail byte_level_bits_per_byte "exit $?: $(head -1 "$TMP/err")"
fi
# A SentencePiece-converted tokenizer.json (Llama 2's decoder, by transformers): the bytes of the
# text its decoder makes, per document those of decode(skip_special_tokens=True) (tests/fixtures/
# ppl/decoded_bpb, tools/fixtures/make_decoded_bpb_fixtures.py); here also what parameter-golf's
# eval_val counts with the SentencePiece model itself, so the same bits per byte.
DB=tests/fixtures/ppl/decoded_bpb
for t in "llama:$DB/llama/tokenizer.json" "reformer:$DB/reformer/tokenizer.json" "hf_metaspace:tests/fixtures/tokenizers/hf_metaspace/tokenizer.json"; do
    n=${t%%:*}
    want=$(python3 -c "import json; print(json.load(open('$DB/decoded_bpb.json'))['$n']['target_bytes'])")
    if $P --quiet --model $A --tokens-file $DB/$n.bin --tokenizer "${t#*:}" --context 64 --device cpu --json "$TMP/d_$n.json" >/dev/null 2>"$TMP/err"; then
        got=$(grep -o '"bytes": [0-9]*' "$TMP/d_$n.json" | head -1 | awk '{print $2}')
        if [ "$got" = "$want" ] && grep -q '"bits_per_byte": [0-9]' "$TMP/d_$n.json" && grep -q '"bytes_rule": "each target.s bytes in the text the tokenizer.json.s decoder makes' "$TMP/d_$n.json"
        then pass decoded_bits_per_byte_$n; else fail decoded_bits_per_byte_$n "bytes $got, want $want"; fi
    else
        fail decoded_bits_per_byte_$n "exit $?: $(head -1 "$TMP/err")"
    fi
done
want=$(python3 -c "import json; print(json.load(open('$DB/decoded_bpb.json'))['llama']['eval_val_bytes'])")
if $P --quiet --model $A --tokens-file $DB/llama.bin --tokenizer tests/fixtures/tokenizers/sp_bpe_llama/tokenizer.model --context 64 \
       --device cpu --json "$TMP/d_sp.json" >/dev/null 2>"$TMP/err" && grep -q "\"bytes\": $want," "$TMP/d_sp.json" &&
   [ "$(grep -o '"bits_per_byte": [0-9.]*' "$TMP/d_sp.json" | head -1)" = "$(grep -o '"bits_per_byte": [0-9.]*' "$TMP/d_llama.json" | head -1)" ]
then pass decoded_bits_per_byte_as_eval_val; else fail decoded_bits_per_byte_as_eval_val "$(head -1 "$TMP/err")"; fi
# A decoder whose text cannot be counted token by token (here Strip of a trailing space after Fuse):
# no bits per byte, and the reason, in the report and on stderr.
sed 's/"stop": 0/"stop": 1/' $DB/llama/tokenizer.json > "$TMP/strip_end.json"
expect_exit decoder_not_token_by_token 0 "Bits per byte: unknown: .*strip_end.json: its decoder has Strip of trailing characters after Fuse .*cannot be counted token by token" -- \
    $P --model $A --tokens-file $DB/llama.bin --tokenizer "$TMP/strip_end.json" --context 64 --device cpu
expect_exit decoder_not_token_by_token_note 0 "^xsa-eval ppl: note: bits per byte: unknown: .*Strip of trailing characters after Fuse" -- \
    sh -c "$P --model $A --tokens-file $DB/llama.bin --tokenizer '$TMP/strip_end.json' --context 64 --device cpu -o '$TMP/se.md' 2>&1 >/dev/null"
# probe: the statistics of both models, XSA's cos(z, v) 0 to four digits in every layer.
expect_exit probe_no_input 2 "xsa-eval probe: give one of --text" -- $XSA_BIN probe --model $A
expect_exit probe_no_kl 2 "xsa-eval probe: unknown flag '--kl'" -- $XSA_BIN probe --model $A --model $B --text "$TMP/doc.txt" --kl
# --dtype (the GPU's weights, for tools/gpu-check.sh's float32 comparison): taken, and checked.
expect_exit probe_dtype 0 "^\| 0 \| " -- $XSA_BIN probe --model $A --text "$TMP/doc.txt" --dtype float32 --device cpu --quiet
expect_exit probe_dtype_bad 2 "--dtype half: unknown dtype" -- $XSA_BIN probe --model $A --text "$TMP/doc.txt" --dtype half --device cpu
if $XSA_BIN probe --model $A --model $B --text "$TMP/doc.txt" --context 32 --heads -o "$TMP/r/probe.md" \
       --json "$TMP/r/probe.json" 2>"$TMP/err"; then
    zeros=$(awk '/^## xsa/{f=1} f && /^\| [0-9]+ \| yes/' "$TMP/r/probe.md" | grep -c '| [+-]0.0000 ± 0.0000 |')
    if [ "$zeros" -eq 4 ] && grep -q '^| 3.3 | no |' "$TMP/r/probe.md" && grep -q '"a_ii_sd"' "$TMP/r/probe.json" &&
       grep -q '<polyline' "$TMP/r/probe_layers.svg"; then pass probe_report
    else fail probe_report "XSA layers with cos(z, v) = 0: $zeros of 4"; fi
else
    fail probe_report "exit $?: $(head -1 "$TMP/err")"
fi
# --tasks: each document is its context and gold answer as lm-eval builds them (the requests in
# tests/fixtures/tasks, written by lm-eval itself), the first --limit of each task.
D="--data-dir tests/fixtures/data --allow-data-change --offline"
if $P --model $A --tasks arc_easy,piqa --limit 3 $D --json "$TMP/t.json" >/dev/null 2>"$TMP/terr"; then
    got=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["bytes"])' "$TMP/t.json" 2>&1)
    want=$(python3 -c '
import json
n = 0
for t in ["arc_easy", "piqa"]:
    for line in list(open("tests/fixtures/tasks/%s.expected.jsonl" % t, encoding="utf-8"))[:3]:
        d = json.loads(line); r = d["requests"][d["gold"] if d["gold"] >= 0 else 0]
        n += len((r[0] + r[1]).encode("utf-8"))
print(n)')
    [ "$got" = "$want" ] && pass tasks_documents || fail tasks_documents "bytes $got, lm-eval's requests give $want"
else
    fail tasks_documents "exit $?: $(tail -1 "$TMP/terr")"
fi
expect_exit tasks_unknown 2 "nosuchtask" -- $P --model $A --tasks nosuchtask $D
# The report names each task's data as a results file does (source, split, digest, pinned), and
# the digest is the one `run` records for the same rows.
"$XSA_BIN" run --quiet --model $A --tasks piqa --limit 1 $D --output "$TMP/trun" >/dev/null 2>&1
got=$(python3 -c '
import json, sys, glob
p = json.load(open(sys.argv[1]))["data"]
r = json.load(open(glob.glob(sys.argv[2] + "/*/results_*.json")[0]))["xsa_eval"]["data"]
print(sorted(p), p["piqa"]["sha256"] == r["piqa"]["sha256"], p["piqa"]["pinned"], p["piqa"]["split"])' "$TMP/t.json" "$TMP/trun" 2>&1)
[ "$got" = "['arc_easy', 'piqa'] True False validation" ] && pass tasks_data_provenance || fail tasks_data_provenance "$got"
$P --model $A --tasks arc_easy,piqa --limit 3 $D -o "$TMP/t.md" >/dev/null 2>&1
grep -q '^| data: piqa | validation split, `local:tests/fixtures/data/piqa/validation.jsonl`, SHA-256 `[0-9a-f]\{16\}…` (\*not pinned\*) |$' "$TMP/t.md" &&
    pass tasks_data_provenance_md || fail tasks_data_provenance_md "$(grep '| data' "$TMP/t.md")"
# HellaSwag from the preprocessed text dump: the warning `run` gives.
mkdir -p "$TMP/hsdump" && cp -r tests/fixtures/data/original/hellaswag_text "$TMP/hsdump/hellaswag"
expect_exit tasks_hellaswag_dump_warned 0 "warning: hellaswag: the rows are a third party's preprocessed text" -- \
    $P --model $A --tasks hellaswag --limit 2 --data-dir "$TMP/hsdump" --allow-data-change --offline --quiet -o "$TMP/hs.md"

# --split-docs and --bytes-file (numbers against the records' evals: tests/test_ppl_docs.c).
G=tests/fixtures/pgolf/gates_0427/final_model.pt
DOCS=tests/fixtures/ppl/docs_sp1024.bin
DBYTES=tests/fixtures/ppl/docs_sp1024_bytes.bin
# An NTK-aware Rotary's base is its window's: --context 1200 on a model of context 2048 (over
# ROTARY_TRAIN_SEQ_LEN 1024) scores as the record's own GPT.forward on that window of 1200
# (2026-03-20's train_gpt.py: 7.0429068; with the base of 2048 it was 7.045505).
expect_exit ntk_window_base 0 'RoPE base 12[0-9.]+ for windows of 1200 tokens .*"nats_per_token": 7\.04290[5-8]' -- \
    bash -c "set -o pipefail; $P --model tests/fixtures/pgolf/xsa_record_ntk/final_model.pt --tokens-file $DOCS --context 1200 --json $TMP/ntk.json \
             -o $TMP/ntk.md 2>&1 | tr '\n' ' ' && tr -d '\n' < $TMP/ntk.json"
expect_exit split_needs_shards 2 "--split-docs applies to --tokens-file" -- $P --model $A --text "$TMP/doc.txt" --split-docs
expect_exit bytes_need_shards 2 "--bytes-file applies to --tokens-file" -- $P --model $A --text "$TMP/doc.txt" --bytes-file $DBYTES
expect_exit ranks_need_split 2 "--ranks, --val-batch-tokens and --val-tokens set the validation's layout with --split-docs" -- \
    $P --model $G --tokens-file $DOCS --ranks 2
expect_exit ranks_divide_8 2 "--ranks 3: eval_val's WORLD_SIZE divides 8" -- $P --model $G --tokens-file $DOCS --split-docs --ranks 3
expect_exit ranks_sliding 2 "apply to disjoint windows" -- $P --model $G --tokens-file $DOCS --split-docs --context 32 --stride 8 --ranks 2
expect_exit split_short_shard 2 "scores nothing of the 45 windows: .*smaller --val-batch-tokens" -- \
    $P --model $G --tokens-file $DOCS --split-docs --context 32 --device cpu
expect_exit bytes_short 2 "--bytes-file .*docs_sp1024_bytes.bin: 1449 byte counts for $(( ($(stat -c %s $SHARD) - 1024) / 2 )) tokens" -- \
    $P --model $G --tokens-file $SHARD --bytes-file $DBYTES --context 32 --device cpu
# A byte sidecar of zeros has no bits per byte to report: refused, not a null figure.
python3 - "$DBYTES" "$TMP/zero_bytes.bin" <<'EOF'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[1024:] = bytes(len(b) - 1024)
open(sys.argv[2], "wb").write(b)
EOF
expect_exit bytes_all_zero 2 "--bytes-file .*zero_bytes.bin: every token stands for 0 bytes" -- \
    $P --model $G --tokens-file $DOCS --bytes-file "$TMP/zero_bytes.bin" --context 32 --device cpu
# A VarLenAttn-era checkpoint scored without the cut is told about it.
expect_exit split_hint 0 "records from 2026-04-10 on, whose eval_val cuts attention at each BOS: add --split-docs" -- \
    $P --model $G --tokens-file $DOCS --context 32 --device cpu
if $P --model $G --tokens-file $DOCS --context 32 --split-docs --val-batch-tokens 1024 --device cpu 2>&1 | grep -q "add --split-docs"
then fail split_hint_quiet "the hint shows with --split-docs"; else pass split_hint_quiet; fi
# The 2026-04-27 record's eval_val with CaseOps' byte sidecar gives 2.860405718977728
# (tests/fixtures/ppl/docs_reference.json); printed here to 6 digits.
if $P --model $G --tokens-file $DOCS --bytes-file $DBYTES --split-docs --context 32 --val-batch-tokens 1024 --device cpu \
      --json "$TMP/d.json" -o "$TMP/d.md" 2>"$TMP/err"; then
    got=$(grep -o '"bits_per_byte": [0-9.]*' "$TMP/d.json" | head -1 | awk '{printf "%.6f", $2}')
    if [ "$got" = "2.860406" ] && grep -q "documents split at token 1, windows as eval_val's over 8 ranks" "$TMP/d.md" &&
       tr -d ' \n' < "$TMP/d.json" | grep -q '"split_docs":{"layout":"parameter-golfeval_val","doc_start":1,"ranks":8,"rank_batch_tokens":128}'
    then pass split_docs_caseops_bpb; else fail split_docs_caseops_bpb "got $got"; fi
else
    fail split_docs_caseops_bpb "exit $?: $(head -1 "$TMP/err")"
fi

# Two models on a shard: the interval's units are its documents (11 BOS-started documents in
# docs_sp1024.bin, whichever of its 45 windows scores a target; the interval itself:
# tests/test_ppl_units.c); a shard without the BOS, or with none known, keeps the windows and says so.
if $P --model $G --model tests/fixtures/pgolf/lanes_0410/final_model.pt --tokens-file $DOCS --context 32 --device cpu \
      --json "$TMP/du.json" -o "$TMP/du.md" 2>"$TMP/err" &&
   tr -d ' \n' < "$TMP/du.json" | grep -q '"unit":"document","units":11,"unit_bos":1,' &&
   grep -q "; 11 documents (each from a BOS, token 1, to the next)" "$TMP/du.md" &&
   grep -q "95% interval .* over 11 documents, cluster-robust t" "$TMP/du.md" && ! grep -q "unit_note" "$TMP/du.json"
then pass shard_units_documents; else fail shard_units_documents "$(head -1 "$TMP/err")"; fi
if $P --model $G --model tests/fixtures/pgolf/lanes_0410/final_model.pt --tokens-file $SHARD --context 32 --device cpu \
      --json "$TMP/nb.json" -o "$TMP/nb.md" 2>"$TMP/err" &&
   grep -q "^xsa-eval ppl: note: no token of the shards is the BOS id 1, so the interval's units are windows" "$TMP/err" &&
   tr -d ' \n' < "$TMP/nb.json" | grep -q '"unit":"window","units":81,"unit_note":"notokenoftheshardsistheBOSid1,' &&
   grep -q "^Note: no token of the shards is the BOS id 1" "$TMP/nb.md"
then pass shard_units_no_bos; else fail shard_units_no_bos "$(head -1 "$TMP/err")"; fi
mkdir -p "$TMP/nobos" && cp tests/fixtures/models/llama_gqa/model.safetensors "$TMP/nobos/" &&
    sed 's/"bos_token_id": [0-9]*/"bos_token_id": null/' tests/fixtures/models/llama_gqa/config.json > "$TMP/nobos/config.json"
if $P --model "$TMP/nobos" --model "$TMP/nobos" --tokens-file "$TMP/s96.bin" --context 32 --device cpu --json "$TMP/nk.json" \
      -o /dev/null 2>"$TMP/err" && grep -q "^xsa-eval ppl: note: no BOS id is known to find the documents" "$TMP/err" &&
   tr -d ' \n' < "$TMP/nk.json" | grep -q '"unit":"window","units":9,"unit_note":"noBOSidisknown'
then pass shard_units_no_bos_id; else fail shard_units_no_bos_id "$(head -1 "$TMP/err")"; fi
$P --model $G --model tests/fixtures/pgolf/lanes_0410/final_model.pt --tokens-file $SHARD --context 32 --device cpu --quiet \
    -o /dev/null 2>"$TMP/err" && [ ! -s "$TMP/err" ] && pass shard_units_note_quiet || fail shard_units_note_quiet "$(head -1 "$TMP/err")"

# --split-docs on a modded-nanogpt checkpoint: its val loss (numbers: tests/test_ppl_chunks.c).
MNG=tests/fixtures/mnanogpt/xsa_gated/state_step000000.pt
MV=tests/fixtures/mnanogpt/val
expect_exit mng_hint 0 "modded-nanogpt checkpoint: add --split-docs for the val loss" -- \
    $P --model $MNG --arch $MV/xsa_eval.json --tokens-file $MV/docs.bin --context 64 --device cpu
expect_exit mng_context 2 "--context, --stride and --ranks do not apply to modded-nanogpt's val loss" -- \
    $P --model $MNG --arch $MV/xsa_eval.json --tokens-file $MV/docs.bin --split-docs --context 64 --device cpu
expect_exit mng_ranks 2 "the same for any world size" -- \
    $P --model $MNG --arch $MV/xsa_eval.json --tokens-file $MV/docs.bin --split-docs --ranks 2 --device cpu
expect_exit mng_multiple 2 "--val-batch-tokens 2560 must be a multiple of 128 .* and --val-tokens 3000 a multiple of it" -- \
    $P --model $MNG --arch $MV/xsa_eval.json --tokens-file $MV/docs.bin --split-docs --val-batch-tokens 2560 --val-tokens 3000 --device cpu
expect_exit mng_default_too_long 2 "the shards hold 10300 tokens; modded-nanogpt's val loss over 10485760 tokens reads 10485762" -- \
    $P --model $MNG --arch $MV/xsa_eval.json --tokens-file $MV/docs.bin --split-docs --device cpu
expect_exit mng_no_bos 2 "the record.s BOS_ID 50256 \(50256 unless xsa_eval.json sets BOS_ID\) is outside this model's vocabulary of 128 ids" -- \
    $P --model $MNG --tokens-file $MV/docs.bin --split-docs --val-batch-tokens 2560 --val-tokens 10240 --device cpu
expect_exit val_tokens_pgolf 2 "--val-tokens sets modded-nanogpt's val loss" -- \
    $P --model $G --tokens-file $DOCS --split-docs --val-tokens 1024 --device cpu
expect_exit mixed_families 2 "only one of .* is a modded-nanogpt checkpoint" -- \
    $P --model $MNG --model $G --tokens-file $DOCS --split-docs --device cpu
# The record's loop gives 8.2398746014 (tests/fixtures/mnanogpt/val/reference.json); 6 digits here.
if $P --model $MNG --arch $MV/xsa_eval.json --tokens-file $MV/docs.bin --split-docs --val-batch-tokens 2560 \
      --val-tokens 10240 --device cpu --json "$TMP/m.json" -o "$TMP/m.md" 2>"$TMP/err"; then
    got=$(grep -o '"nats_per_token": [0-9.]*' "$TMP/m.json" | head -1 | awk '{printf "%.6f", $2}')
    if [ "$got" = "8.239874" ] && grep -q "modded-nanogpt's val loss: 10240 tokens in chunks of 320" "$TMP/m.md" &&
       tr -d ' \n' < "$TMP/m.json" | grep -q '"split_docs":{"layout":"modded-nanogptval","doc_start":1,"chunk_tokens":320,"val_tokens":10240}' &&
       tr -d ' \n' < "$TMP/m.json" | grep -q '"unit":"document","units":201,"unit_bos":1,'
    then pass mng_val_loss; else fail mng_val_loss "got $got"; fi
else
    fail mng_val_loss "exit $?: $(head -1 "$TMP/err")"
fi
# The record's comparison: its SA baseline (master) against it, paired over the chunks; each
# one's own validation loop gives 8.3522362709 and 8.2398746014 (tests/fixtures/mnanogpt/val).
if $P --model tests/fixtures/mnanogpt/master/state_step000000.pt --model $MNG --arch $MV/xsa_eval.json --tokens-file $MV/docs.bin \
      --split-docs --val-batch-tokens 2560 --val-tokens 10240 --device cpu --json "$TMP/mp.json" -o "$TMP/mp.md" 2>"$TMP/err" &&
   grep -q "95% interval .* over 201 documents, cluster-robust t (CR2 standard error, Bell-McCaffrey df)" "$TMP/mp.md" &&
   [ "$(grep -o '"nats_per_token": [0-9.]*' "$TMP/mp.json" | awk '{printf "%.6f ", $2}')" = "8.352236 8.239874 " ]
then pass mng_master_pair; else fail mng_master_pair "$(head -1 "$TMP/err")"; fi
# Two models are compared token by token: different tokenizers are refused even at one vocabulary size.
mkdir -p "$TMP/xsa_gpt2" && cp $B/config.json $B/model.safetensors "$TMP/xsa_gpt2/" &&
    cp tests/fixtures/tokenizers/gpt2/tokenizer.json "$TMP/xsa_gpt2/"
expect_exit different_tokenizers 2 "have different tokenizers .*compare two models of one tokenizer" -- \
    $P --model $A --model "$TMP/xsa_gpt2" --text "$TMP/doc.txt" --device cpu
# The delta is the difference of the two models' nats/token (the table's), also over documents of
# very different lengths (a mean of per-document means would differ); one document: no interval.
python3 -c '
import json
docs = ["A.", "It was late.", "The robot walked to the sea and looked at the waves for a long time, then it turned "
        "around and walked back over the hills to the little house where it lived with the old man.", "Hi", "Go on."]
for d in docs: print(json.dumps({"text": d}))' > "$TMP/uneven.jsonl"
for spec in "uneven $TMP/uneven.jsonl 5" "one $TMP/doc.txt 1"; do
    set -- $spec
    if [ "$1" = one ]; then inp=(--text "$2"); else inp=(--jsonl "$2"); fi
    if $P --model $A --model $B "${inp[@]}" --context 16 --device cpu --json "$TMP/u.json" -o "$TMP/u.md" 2>"$TMP/err"; then
        if python3 - "$TMP/u.json" "$3" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); n = int(sys.argv[2])
m = j["models"]; d = j["delta"]
assert j["units"] == n, j["units"]
assert abs(d["delta"] - (m[1]["nats_per_token"] - m[0]["nats_per_token"])) < 1e-9, d
for b in j["buckets"]:
    assert abs(b["delta"] - (b["nats_b"] - b["nats_a"])) < 1e-9, b
    if b["units"] < 2: assert b["lo_ci"] is None and b["hi_ci"] is None and not b["significant"], b
    else: assert b["lo_ci"] <= b["delta"] <= b["hi_ci"], b
if n < 2: assert d["lo"] is None and d["hi"] is None and d["se"] is None and not d["significant"], d
else: assert d["lo"] <= d["delta"] <= d["hi"] and d["se"] > 0 and 1 <= d["df"] <= n - 1, d
assert j["interval"] == {"method": "cluster-robust t (CR2 standard error, Bell-McCaffrey df)", "level": 0.95}, j["interval"]
assert "bootstrap" not in j, j.keys()
PY
        then
            if [ "$1" = one ] && ! grep -q "no interval: one document" "$TMP/u.md"; then fail delta_$1 "report has an interval"
            else pass delta_$1; fi
        else fail delta_$1 "the JSON's deltas"; fi
    else
        fail delta_$1 "exit $?: $(head -1 "$TMP/err")"
    fi
done
# ppl's interval draws no resamples: --iters and --seed are refused by name, not ignored.
for f in iters seed; do
    expect_exit ppl_refuses_$f 2 "^xsa-eval ppl: --$f: ppl's interval is a cluster-robust t interval, not a bootstrap: it draws no resamples \(docs/statistics.md\); drop --$f" -- \
        $P --model $A --model $B --text "$TMP/doc.txt" --$f 500
done
expect_exit ppl_help_alpha_only 0 "^  --alpha A" -- $P --help
if $P --help | grep -q -- "--iters"; then fail ppl_help_no_iters "--help lists --iters"; else pass ppl_help_no_iters; fi
# Outputs are checked before anything is scored: two outputs of one name, an output that is an input.
expect_exit outputs_same_file 2 "-o .*same.out and --json .*same.out name the same file" -- \
    $P --model $A --text "$TMP/doc.txt" -o "$TMP/same.out" --json "$TMP/./same.out"
cp "$TMP/doc.txt" "$TMP/keep.txt"
expect_exit output_is_input 2 "--json .*keep.txt is an input of this command" -- $P --model $A --text "$TMP/keep.txt" --json "$TMP/keep.txt"
cmp -s "$TMP/doc.txt" "$TMP/keep.txt" && pass output_input_unchanged || fail output_input_unchanged "the input was rewritten"
expect_exit top_needs_kl 2 "--top lists the targets where the models disagree most: add --kl" -- $P --model $A --text "$TMP/doc.txt" --top 3
expect_exit buckets_trailing_comma 2 "--buckets '32,'" -- $P --model $A --text "$TMP/doc.txt" --buckets 32,
expect_exit buckets_empty 2 "--buckets ''" -- $P --model $A --text "$TMP/doc.txt" --buckets ""
# A FIFO (or /dev/stdout) is written into, not replaced by a regular file.
mkfifo "$TMP/pipe.json"
timeout 60 cat "$TMP/pipe.json" > "$TMP/pipe.out" &  # (a replaced FIFO would leave it waiting)
reader=$!
if $P --model $A --text "$TMP/doc.txt" --context 16 --device cpu --json "$TMP/pipe.json" >/dev/null 2>"$TMP/err"; then
    wait $reader
    if [ -p "$TMP/pipe.json" ] && grep -q '"nats_per_token"' "$TMP/pipe.out"; then pass json_into_fifo
    else fail json_into_fifo "the FIFO was replaced or got nothing"; fi
else
    kill $reader 2>/dev/null; fail json_into_fifo "exit $?: $(head -1 "$TMP/err")"
fi
# The report and its JSON in folders on different filesystems (/dev/shm is a tmpfs): each is renamed
# within its own.
if [ -d /dev/shm ] && [ -w /dev/shm ] && [ "$(stat -c %d /dev/shm)" != "$(stat -c %d "$TMP")" ]; then
    shm=$(mktemp -d /dev/shm/xsa-test.XXXXXX)
    if $P --model $A --text "$TMP/doc.txt" --context 16 --device cpu -o "$TMP/xfs.md" --json "$shm/xfs.json" 2>"$TMP/err" &&
       [ -s "$TMP/xfs.md" ] && [ -s "$TMP/xfs_position.svg" ] && grep -q '"nats_per_token"' "$shm/xfs.json" &&
       [ -z "$(ls -A "$shm" | grep -v '^xfs.json$')" ]; then pass outputs_across_filesystems
    else fail outputs_across_filesystems "$(head -1 "$TMP/err")"; fi
    rm -rf "$shm"
else
    skip outputs_across_filesystems "no tmpfs /dev/shm apart from $TMP"
fi
# One model against itself: no target is listed as a disagreement.
expect_exit kl_same_model 0 "The two models give the same distribution at every target" -- \
    $P --model $A --model $A --text "$TMP/doc.txt" --context 16 --kl --device cpu
# The models' own files are inputs: a file of a model folder, a checkpoint's sidecar; and the chart
# beside -o is an output.
mkdir -p "$TMP/mf"; cp -r $A "$TMP/mf/sa"
expect_exit output_in_model_folder 2 "--json .*mf/sa/config.json is a file of the model folder" -- \
    $P --model "$TMP/mf/sa" --text "$TMP/doc.txt" --json "$TMP/mf/sa/config.json"
mkdir -p "$TMP/pg"; cp tests/fixtures/pgolf/xsa_record/final_model.pt tests/fixtures/pgolf/xsa_record/xsa_eval.json "$TMP/pg/"
expect_exit output_is_sidecar 2 "--json .*pg/xsa_eval.json is an input of this command" -- \
    $P --model "$TMP/pg/final_model.pt" --tokens-file $DOCS --json "$TMP/pg/xsa_eval.json"
expect_exit output_is_chart 2 "--json .*c_position.svg and -o's chart .*c_position.svg name the same file" -- \
    $P --model $A --text "$TMP/doc.txt" -o "$TMP/c.md" --json "$TMP/c_position.svg"
# One folder spelled two ways: one temporary folder, every file written.
mkdir -p "$TMP/two"
if $P --model $A --text "$TMP/doc.txt" --context 16 --device cpu -o "$TMP/two/p.md" --json "$TMP/./two/p.json" 2>"$TMP/err" &&
   [ -s "$TMP/two/p.md" ] && [ -s "$TMP/two/p_position.svg" ] && [ -s "$TMP/two/p.json" ] && [ "$(ls -A "$TMP/two" | wc -l)" = 3 ]
then pass one_folder_two_spellings; else fail one_folder_two_spellings "$(head -1 "$TMP/err"; ls -A "$TMP/two")"; fi
# --json /dev/stdout with stdout redirected to a file: written through this process's stdout (the
# link in /dev is left alone), and the Markdown is not printed after it.
if [ -L /dev/stdout ]; then
    $P --model $A --text "$TMP/doc.txt" --context 16 --device cpu --json /dev/stdout > "$TMP/so.txt" 2>"$TMP/err"
    if [ -L /dev/stdout ] && grep -q '"nats_per_token"' "$TMP/so.txt" && ! grep -q '^# Per-token loss' "$TMP/so.txt"
    then pass json_to_redirected_stdout; else fail json_to_redirected_stdout "$(head -1 "$TMP/err")"; fi
else
    skip json_to_redirected_stdout "no /dev/stdout link here"
fi
# --json to standard output without -o: stdout is the JSON alone (no Markdown after it).
$P --model $A --text "$TMP/doc.txt" --json /dev/stdout 2>/dev/null | python3 -c 'import json, sys; json.load(sys.stdin)' &&
    pass json_stdout_parses || fail json_stdout_parses "stdout is not one JSON document"
# "-" is standard output, as for Unix tools: no file named "-" appears; twice is refused.
$P --model $A --text "$TMP/doc.txt" --json - 2>/dev/null | python3 -c 'import json, sys; json.load(sys.stdin)' && [ ! -e ./- ] &&
    pass json_dash_is_stdout || fail json_dash_is_stdout "not one JSON document on stdout, or a file '-'"
rm -f ./-
expect_exit dash_twice 2 "name the same file" -- $P --model $A --text "$TMP/doc.txt" -o - --json -
# The same tokenizer.json saved again with other spacing and key order (another transformers version)
# is one tokenizer; --tokenizer gives both models one.
mkdir -p "$TMP/resaved" && cp $B/config.json $B/model.safetensors "$TMP/resaved/"
python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); json.dump(dict(reversed(list(j.items()))), open(sys.argv[2], "w"))' \
    $B/tokenizer.json "$TMP/resaved/tokenizer.json"
expect_exit resaved_tokenizer_same 0 "" -- $P --model $A --model "$TMP/resaved" --text "$TMP/doc.txt"
# A record too short to score is counted, not dropped unseen, and keeps its place in the numbering.
printf '{"text": ""}\n{"text": "Once upon a time a robot read about the sea."}\n{"text": "It walked there one day, far past the hills."}\n' > "$TMP/short.jsonl"
$P --model $A --model $B --jsonl "$TMP/short.jsonl" --kl --top 40 > "$TMP/short.md" 2>/dev/null
grep -q "2 documents of short.jsonl (and 1 of under 2 tokens, not scored)" "$TMP/short.md" &&
    [ -z "$(grep -E '^\| [0-9]+ \| 0 \| ' "$TMP/short.md")" ] && grep -qE '^\| [0-9]+ \| 2 \| ' "$TMP/short.md" &&
    pass short_record_counted || fail short_record_counted "$(grep -E 'documents of|^\| [0-9]+ \| [0-9] \| ' "$TMP/short.md" | head -3)"
: > "$TMP/empty.txt"
expect_exit nothing_to_score 2 "ppl: nothing to score: every document has under 2 tokens" -- $P --model $A --text "$TMP/empty.txt"
expect_exit arch_twice 2 "--arch given twice" -- $P --model $A --arch "$TMP/a.json" --arch "$TMP/b.json" --text "$TMP/doc.txt"
# A folder where the chart goes is found before anything is scored.
mkdir -p "$TMP/rep_position.svg"
expect_exit chart_path_is_folder 2 "-o's chart .*rep_position.svg: is a folder" -- $P --model $A --text "$TMP/doc.txt" -o "$TMP/rep.md"
# A model so bad that exp(nats) leaves a double: the table says "overflows" (JSON: null), never inf.
mkdir -p "$TMP/bad_model" && cp $A/config.json $A/tokenizer.json "$TMP/bad_model/"
python3 -c '
import json, struct, sys
src, dst = sys.argv[1], sys.argv[2]
b = bytearray(open(src, "rb").read())
n = struct.unpack("<Q", b[:8])[0]
h = json.loads(b[8:8 + n])
lo, hi = h["model.norm.weight"]["data_offsets"]
for k in range(8 + n + lo, 8 + n + hi, 4):
    b[k:k + 4] = struct.pack("<f", struct.unpack("<f", b[k:k + 4])[0] * 300)
open(dst, "wb").write(b)' $A/model.safetensors "$TMP/bad_model/model.safetensors"
$P --model "$TMP/bad_model" --text "$TMP/doc.txt" -o "$TMP/bad.md" --json "$TMP/bad.json" >/dev/null 2>&1
grep -q "| overflows |" "$TMP/bad.md" && ! grep -qiw "inf" "$TMP/bad.md" && grep -q '"perplexity": null' "$TMP/bad.json" &&
    pass perplexity_overflow_named || fail perplexity_overflow_named "$(grep -i 'perplexity\|overflow\|inf' "$TMP/bad.md" | head -3)"
# SIGTERM (here while the --text FIFO has no writer yet) exits 130 as SIGINT does, saying so,
# and leaves no report.
mkfifo "$TMP/never.txt"
$P --model $A --text "$TMP/never.txt" -o "$TMP/never.md" >/dev/null 2>"$TMP/never.err" & pid=$!
# (once the process catches SIGTERM: bit 15 of SigCgt in /proc/PID/status, read once the job is
# the program and no longer this shell's fork, which catches SIGTERM too until it execs)
for _ in $(seq 600); do
    cgt=$(sed -n 's/^SigCgt:[[:space:]]*//p' /proc/$pid/status 2>/dev/null)
    [ "$(readlink /proc/$pid/exe)" != "$(readlink /proc/$$/exe)" ] && [ -n "$cgt" ] &&
        [ $(( 0x$cgt >> 14 & 1 )) = 1 ] && break
    sleep 0.05
done
kill -TERM $pid; wait $pid; rc=$?
[ $rc = 130 ] && grep -q "interrupted (SIGTERM)" "$TMP/never.err" && [ ! -e "$TMP/never.md" ] && pass sigterm_exit_130 ||
    fail sigterm_exit_130 "exit $rc: $(cat "$TMP/never.err")"
finish
