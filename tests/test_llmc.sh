#!/usr/bin/env bash
# llm.c GPT-2 checkpoints through the command line (tests/fixtures/llmc, written by llm.c's own
# write_model: tools/fixtures/make_llmc_fixtures.py): a run with GPT-2's tokenizer, the tokenizer
# found beside the file, llm.c's val loss by ppl, the training step from the file's name, and
# llm.c's other files refused as models and as tokenizers.
. "$(dirname "$0")/lib.sh"
L=tests/fixtures/llmc
TOK=tests/fixtures/tokenizers/gpt2/tokenizer.json

expect_exit run_llmc_bf16 0 "\| piqa \| acc \| .* \| 3 \|" -- "$XSA_BIN" run --quiet --model $L/model_bf16.bin --tokenizer $TOK \
    --tasks piqa --limit 3 --data-dir tests/fixtures/data --allow-data-change --offline --device cpu --output "$TMP/o"
expect_exit run_records_format 0 '"format": "llmc"' -- cat "$TMP"/o/*/results_*.json
expect_exit info_llmc 0 "^format +llmc$" -- "$XSA_BIN" info --model $L/model_f32.bin
expect_exit info_llmc_activation 0 "^activation +gelu_new$" -- "$XSA_BIN" info --model $L/model_bf16.bin

# train_gpt2.cu's names (log124M/model_00000100.bin) with GPT-2's tokenizer.json beside the file
mkdir "$TMP/log124M"
cp $L/model_f32.bin "$TMP/log124M/model_00000100.bin"
expect_exit llmc_no_tokenizer 2 "model_00000100.bin: an llm.c checkpoint and no tokenizer.json beside it; pass --tokenizer FILE" -- \
    "$XSA_BIN" logprobs --model "$TMP/log124M/model_00000100.bin" --text "hello world"
cp $TOK "$TMP/log124M/"
a=$("$XSA_BIN" logprobs --model "$TMP/log124M/model_00000100.bin" --text "hello world" --device cpu 2>&1)
b=$("$XSA_BIN" logprobs --model $L/model_f32.bin --tokenizer $TOK --text "hello world" --device cpu 2>&1)
if [ "$a" = "$b" ] && [ "$(echo "$a" | wc -l)" -gt 3 ]; then pass tokenizer_beside; else fail tokenizer_beside "$a / $b"; fi

# llm.c's val loss: train_gpt2.py's own loader and loop over a shard of 5 windows of the context
# (val_loss.json) is ppl's disjoint windows of that context over the same shard
for f in model_f32.bin model_bf16.bin; do
    "$XSA_BIN" ppl --quiet --model $L/$f --tokens-file $L/val_shard.bin --context 256 --json "$TMP/val_$f.json" >/dev/null 2>&1
    if python3 - "$TMP/val_$f.json" $L/val_loss.json "$f" <<'PY'
import json, sys
got = json.load(open(sys.argv[1]))["models"][0]["nats_per_token"]
want = json.load(open(sys.argv[2]))["val_loss"][sys.argv[3]]
assert abs(got - want) <= 1e-6 * want, (got, want)
PY
    then pass "val_loss_$f"; else fail "val_loss_$f" "ppl differs from llm.c's val loss (or did not run)"; fi
done

# the step is the file name's, as train_gpt2.cu numbers them, for report --trend
expect_exit run_step_from_name 0 "" -- "$XSA_BIN" run --quiet --model "$TMP/log124M/model_00000100.bin" --tasks piqa --limit 2 \
    --data-dir tests/fixtures/data --allow-data-change --offline --device cpu --output "$TMP/o2"
expect_exit run_step_recorded 0 '"step": 100,' -- cat "$TMP"/o2/*/results_*.json
expect_exit run_step_source 0 '"step_source": "path"' -- cat "$TMP"/o2/*/results_*.json

expect_exit llmc_model_as_shard 2 "model_f32.bin: an llm.c model checkpoint \(magic 20240326\), not a token shard; pass it with --model" -- \
    "$XSA_BIN" ppl --model $L/model_f32.bin --tokens-file $L/model_f32.bin
expect_exit llmc_tokenizer_file_refused 2 "bad/tokenizer.bin: llm.c's tokenizer file, which only decodes .*openai-community/gpt2" -- \
    "$XSA_BIN" logprobs --model $L/model_f32.bin --tokenizer $L/bad/tokenizer.bin --text "hello"
expect_exit llmc_state_refused 2 "bad/state.bin: llm.c's optimizer state \(state_\*.bin\), not the model" -- "$XSA_BIN" info --model $L/bad/state.bin
# an llm.c file is read as one under any name (its magic is no torch.save file's)
cp $L/model_f32.bin "$TMP/renamed.pt"
expect_exit llmc_named_pt 0 "^format +llmc$" -- "$XSA_BIN" info --model "$TMP/renamed.pt"
expect_exit llmc_config_refused 2 "--config .* applies to a bare state-dict .pt \(torch.save\) only" -- \
    "$XSA_BIN" info --model $L/model_f32.bin --config tests/fixtures/models/gpt2_tiny/config.json
finish
