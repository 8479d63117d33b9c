#!/usr/bin/env bash
# `xsa-eval ppl --ttt`: parameter-golf's score-first test-time training from the command line.
# The settings' and inputs' errors exit 2 with one line; a model it cannot train is named with
# what it has; two models give the paired report with the settings in it (two of different
# recipes are refused); a 2026-04 model gets its records' defaults and windows; a model with
# 2026-04-10's side-by-side lanes gets its LoRA TTT (eval_val_ttt_lora: documents at each BOS, its
# own settings, every target in the report), with 2026-04-13/14's phases (PHASED_TTT_ENABLED:
# the global SGD between them, named in the report); the bits per byte of the records' own TTT
# (tests/fixtures/pgolf/ttt_0323, ttt_0409/ttt_reference.json and
# lanes_0410/ttt_lora_reference.json, case "run") with the family's tokenizer from ../shared.
. "$(dirname "$0")/lib.sh"
P="$XSA_BIN ppl"
M=tests/fixtures/pgolf/ttt_0323/final_model.pt
M2=tests/fixtures/pgolf/leaky_0329/final_model.pt
M8=tests/fixtures/pgolf/ttt_0408/final_model.pt
M9=tests/fixtures/pgolf/ttt_0409/final_model.pt
SHARD=tests/fixtures/ppl/docs_sp1024.bin
RUN="TTT_LR=0.002 TTT_EPOCHS=2 TTT_CHUNK_TOKENS=256 TTT_FREEZE_BLOCKS=0 TTT_MOMENTUM=0.9 TTT_BATCH_SEQS=4 TTT_GRAD_CLIP=1.0"
RUN9="TTT_LR=0.002 TTT_EPOCHS=2 TTT_CHUNK_TOKENS=256 TTT_BATCH_SEQS=32"
W="--tokens-file $SHARD --context 32 --stride 8"

expect_exit set_without_ttt 2 "--ttt-set sets --ttt's test-time training: add --ttt" -- $P --model $M $W --ttt-set TTT_LR=0.01
expect_exit ttt_text 2 "--ttt trains on a token stream: give --tokens-file" -- $P --model $M --text README.md --ttt
expect_exit ttt_split 2 "without --split-docs or --kl" -- $P --model $M $W --split-docs --ttt
expect_exit ttt_kl 2 "without --split-docs or --kl" -- $P --model $M --model $M2 $W --kl --ttt
expect_exit ttt_cuda 2 "--device cuda: test-time training runs on the CPU" -- $P --model $M $W --ttt --device cuda
expect_exit unknown_setting 2 "--ttt-set: \"TTT_STEPS=3\" is not NAME=VALUE with NAME one of TTT_LR" -- $P --model $M $W --ttt --ttt-set TTT_STEPS=3
expect_exit bad_lr 2 "--ttt-set: TTT_LR=fast: expected a non-negative number" -- $P --model $M $W --ttt --ttt-set TTT_LR=fast
expect_exit bad_momentum 2 "TTT_MOMENTUM=1: expected a number in \[0, 1\)" -- $P --model $M $W --ttt --ttt-set "TTT_LR=0.1,TTT_MOMENTUM=1"
expect_exit bad_epochs 2 "TTT_EPOCHS=1.5: expected a whole number from 0" -- $P --model $M $W --ttt --ttt-set TTT_EPOCHS=1.5
expect_exit bad_batch 2 "TTT_BATCH_SEQS=0: expected a whole number from 1" -- $P --model $M $W --ttt --ttt-set TTT_BATCH_SEQS=0
expect_exit bad_clip 2 "TTT_GRAD_CLIP=0: expected a number above 0" -- $P --model $M $W --ttt --ttt-set TTT_GRAD_CLIP=0
expect_exit enabled_zero 2 "TTT_ENABLED=0: --ttt turns test-time training on" -- $P --model $M $W --ttt --ttt-set TTT_ENABLED=0
expect_exit untrainable 2 "options_0325/final_model.pt: test-time training trains the GPTs of parameter-golf's records with full-parameter TTT .*this model has TRIGRAM; score it without --ttt" -- \
    $P --model tests/fixtures/pgolf/options_0325/final_model.pt $W --ttt
# 2026-03-23's options (VALUE_RESIDUAL, GATED_ATTENTION, DTG_ENABLED) train (options_0323/ttt_reference.json, "run": 7.048344552).
expect_exit ttt_options_0323 0 "ttt chunk 6/6: 1464 targets, 7.04834[45] nats/token" -- \
    $P --model tests/fixtures/pgolf/options_0323/final_model.pt $W --ttt --ttt-set "$RUN"
# 2026-03-31's GPT (lanes over sublayers in sequence, block 0 without attention, an untied repeat
# MLP) under 2026-03-23's function (ttt_0331/ttt_reference.json, case "run": 7.110614043), without QAT.
expect_exit ttt_0331 0 "eval_val_sliding_ttt of 2026-03-23, 2026-03-29 and 2026-03-31: .*LATE_QAT=0.*ttt chunk 6/6: 1464 targets, 7.11061[0-9] nats/token" -- \
    bash -c "set -o pipefail; $P --model tests/fixtures/pgolf/recur_0331/final_model.pt --arch tests/fixtures/pgolf/ttt_0331/xsa_eval.json $W --ttt --ttt-set '$RUN' 2>&1 | tr '\n' ' '"
expect_exit untrainable_llama 2 "llama_gqa: test-time training trains the GPTs .*norms or an MLP other than the records'" -- \
    $P --model tests/fixtures/models/llama_gqa --tokens-file tests/fixtures/ppl/corpus_sp600.bin --tokenizer tests/fixtures/tokenizers/sp_bpe/tokenizer.model --context 16 --ttt
# The record's environment line pastes as it is (TTT_ENABLED=1 included); a chunk line per ten chunks
# (ttt_0323's case "run", 7.008957592: its late QAT on, the default).
expect_exit record_line 0 "TTT_GRAD_CLIP=1 LATE_QAT=1.*ttt chunk 6/6: 1464 targets, 7.00895[78] nats/token" -- \
    bash -c "$P --model $M $W --ttt --ttt-set 'TTT_ENABLED=1 $RUN' 2>&1 | tr '\n' ' '"
expect_exit qat_0409 2 "--ttt-set: LATE_QAT=1: .*ttt_0409/final_model.pt trains as the .*whose code has no QAT" -- \
    $P --model $M9 $W --ttt --ttt-set LATE_QAT=1

# A 2026-04 model: its records' defaults (TTT_LR 0.005, nothing frozen), named in the line.
expect_exit recipe_0409 0 "test-time training of .*ttt_0409/final_model.pt as the eval_val_sliding_ttt of 2026-04-06 and 2026-04-08, eval_val_ttt of 2026-04-09: TTT_LR=0.005 TTT_EPOCHS=3 TTT_CHUNK_TOKENS=32768 TTT_FREEZE_BLOCKS=0" -- \
    $P --model $M9 $W --ttt
# OPENBLAS_CORETYPE set: no restart for OpenBLAS's kernels, whatever the CPU (the user chose them).
if OPENBLAS_CORETYPE=Prescott $P --model $M9 $W --ttt --ttt-set TTT_EPOCHS=0 -o "$TMP/p.md" 2>"$TMP/err"; then
    if grep -q "runs again with OPENBLAS_CORETYPE" "$TMP/err"; then fail coretype_kept "restarted: $(head -1 "$TMP/err")"
    else pass coretype_kept; fi
else
    fail coretype_kept "exit $?: $(tail -1 "$TMP/err")"
fi
expect_exit recipe_0404 0 "test-time training of .*ttt_0404/final_model.pt as the eval_val_ttt of 2026-04-04: TTT_LR=0.002 TTT_EPOCHS=0 TTT_CHUNK_TOKENS=32768 TTT_FREEZE_BLOCKS=0" -- \
    $P --model tests/fixtures/pgolf/ttt_0404/final_model.pt $W --ttt --ttt-set TTT_EPOCHS=0
expect_exit mixed_recipes 2 "--ttt: .*ttt_0323/final_model.pt is trained as the eval_val_sliding_ttt of 2026-03-23, 2026-03-29 and 2026-03-31, .*ttt_0409/final_model.pt as the eval_val_sliding_ttt of 2026-04-06 .* which score different targets" -- \
    $P --model $M --model $M9 $W --ttt

mkdir -p "$TMP/r"
if $P --model $M8 --model $M9 $W --ttt --ttt-set "$RUN9" -o "$TMP/r/t4.md" --json "$TMP/r/t4.json" 2>"$TMP/err"; then
    if grep -q 'scored with test-time training as parameter-golf.s eval_val_sliding_ttt of 2026-04-06 and 2026-04-08, eval_val_ttt of 2026-04-09' "$TMP/r/t4.md" \
       && ! grep -q "score the stream's last" "$TMP/r/t4.md" && grep -q 'Delta B - A' "$TMP/r/t4.md" \
       && grep -q '"ttt_source": "eval_val_sliding_ttt of 2026-04-06' "$TMP/r/t4.json"; then pass two_models_report_2026_04
    else fail two_models_report_2026_04 "report or JSON without the 2026-04 recipe"; fi
else
    fail two_models_report_2026_04 "exit $?: $(tail -1 "$TMP/err")"
fi

if $P --model $M --model $M2 $W --ttt --ttt-set "$RUN" -o "$TMP/r/ttt.md" --json "$TMP/r/ttt.json" 2>"$TMP/err"; then
    if grep -q 'scored with test-time training as parameter-golf.s eval_val_sliding_ttt of 2026-03-23' "$TMP/r/ttt.md" \
       && grep -q "score the stream's last 8 targets again" "$TMP/r/ttt.md" \
       && grep -q "Test-time training: \`TTT_LR=0.002 TTT_EPOCHS=2" "$TMP/r/ttt.md" && grep -q 'Delta B - A' "$TMP/r/ttt.md" \
       && grep -q '"ttt": "TTT_LR=0.002 TTT_EPOCHS=2 TTT_CHUNK_TOKENS=256' "$TMP/r/ttt.json"; then pass two_models_report
    else fail two_models_report "report or JSON without the test-time training"; fi
else
    fail two_models_report "exit $?: $(tail -1 "$TMP/err")"
fi

# 2026-04-10's LoRA TTT: its settings, not the full-parameter ones; documents, not windows.
ML=tests/fixtures/pgolf/lanes_0410/final_model.pt
WL="--tokens-file $SHARD --context 32"
RUNL="TTT_LORA_RANK=4 TTT_LORA_LR=0.003 TTT_CHUNK_SIZE=16 TTT_EVAL_SEQ_LEN=64 TTT_BATCH_SIZE=4"
expect_exit lora_stride 2 "--stride does not apply to .*lanes_0410/final_model.pt's test-time training: it scores each document in chunks of TTT_CHUNK_SIZE" -- \
    $P --model $ML $W --ttt
expect_exit lora_full_setting 2 "--ttt-set: \"TTT_LR=0.1\" is not NAME=VALUE with NAME one of TTT_LORA_RANK.*this model's records train LoRA adapters" -- \
    $P --model $ML $WL --ttt --ttt-set TTT_LR=0.1
expect_exit lora_setting_elsewhere 2 "--ttt-set: \"TTT_LORA_RANK=2\" is not NAME=VALUE .*LoRA settings are the 2026-04-10 records'" -- \
    $P --model $M $W --ttt --ttt-set TTT_LORA_RANK=2
expect_exit lora_phases_setting 2 "--ttt-set: PHASED_TTT_NUM_PHASES=0: expected a whole number from 1" -- \
    $P --model $ML $WL --ttt --ttt-set "PHASED_TTT_ENABLED=1 PHASED_TTT_NUM_PHASES=0"
expect_exit lora_global_momentum 2 "--ttt-set: GLOBAL_TTT_MOMENTUM=1: expected a number in \[0, 1\)" -- \
    $P --model $ML $WL --ttt --ttt-set "PHASED_TTT_ENABLED=1 GLOBAL_TTT_MOMENTUM=1"
expect_exit lora_optimizer 2 "--ttt-set: TTT_OPTIMIZER=lion: expected adam or sgd" -- $P --model $ML $WL --ttt --ttt-set TTT_OPTIMIZER=lion
expect_exit lora_rank 2 "TTT_LORA_RANK=4097: expected a whole number from 1 to 4096" -- \
    $P --model $ML $WL --ttt --ttt-set TTT_LORA_RANK=4097
expect_exit lora_no_bos 2 "--ttt: the stream holds no BOS \(token 1\); eval_val_ttt_lora scores the documents" -- \
    $P --model $ML --tokens-file tests/fixtures/ppl/corpus_sp600.bin --context 32 --ttt
expect_exit lora_mixed_recipes 2 "--ttt: .*lanes_0410/final_model.pt is trained as the eval_val_ttt_lora of 2026-04-10, .* which score different targets" -- \
    $P --model $ML --model $M9 $WL --ttt
# The record's val_loss (lanes_0410/ttt_lora_reference.json, case "run": 6.979000919) in the
# progress line and in the report, which counts the targets past --context too (windows of 64).
expect_exit lora_record_line 0 "ttt document 11/11: 1440 targets, 6.97900[0-9] nats/token" -- $P --model $ML $WL --ttt --ttt-set "$RUNL PHASED_TTT_ENABLED=0"
# 2026-04-16's SmearGate and attention output gates: its LoRA TTT (gates_0416/ttt_lora_reference.json,
# case "run": 6.992324323); 2026-04-19's dense gates under its eval_val_ttt_phased (gates_0419's
# case "phased_one": 6.887503702).
MG=tests/fixtures/pgolf/gates_0416/final_model.pt
# Their code's defaults: 2026-04-16's TTT_CHUNK_SIZE 48; 2026-04-19's (dense gates) also its only
# function, the phased one.
expect_exit defaults_0416 0 "test-time training of .*gates_0416/final_model.pt as the eval_val_ttt_lora of 2026-04-10: .*TTT_CHUNK_SIZE=48 " -- \
    $P --model $MG $WL --ttt --ttt-set "TTT_LORA_RANK=2 TTT_EVAL_SEQ_LEN=64 TTT_BATCH_SIZE=4"
expect_exit defaults_0419 0 "test-time training of .*gates_0419/final_model.pt as the .*TTT_CHUNK_SIZE=48 .*PHASED_TTT_ENABLED=1 PHASED_TTT_PREFIX_DOCS=2000" -- \
    $P --model tests/fixtures/pgolf/gates_0419/final_model.pt $WL --ttt --ttt-set "TTT_LORA_RANK=2 TTT_EVAL_SEQ_LEN=64 TTT_BATCH_SIZE=4"
expect_exit lora_gates_0416 0 "ttt document 11/11: 1440 targets, 6.99232[0-9] nats/token" -- $P --model $MG $WL --ttt --ttt-set "$RUNL"
expect_exit lora_gates_0419_phased 0 "ttt phase 1/1: global SGD on the first 5 of the 5 documents scored.*ttt document 11/11: 1440 targets, 6.88750[0-9] nats/token" -- \
    bash -c "$P --model tests/fixtures/pgolf/gates_0419/final_model.pt $WL --ttt --ttt-set '$(echo $RUNL | sed 's/TTT_BATCH_SIZE=4/TTT_BATCH_SIZE=3/') PHASED_TTT_ENABLED=1 PHASED_TTT_PREFIX_DOCS=5 GLOBAL_TTT_LR=0.01 GLOBAL_TTT_EPOCHS=2 GLOBAL_TTT_CHUNK_TOKENS=96 GLOBAL_TTT_BATCH_SEQS=2' 2>&1 | tr '\n' ' '"
# 2026-04-23 on (sparse gates): adapters scaled by TTT_LORA_ALPHA / rank, A kept by batch slot, phases
# on by default (gates_0427's case "run": 6.886390863, without phases, alpha 6).
M27=tests/fixtures/pgolf/gates_0427/final_model.pt
expect_exit recipe_0423 0 "test-time training of .*gates_0427/final_model.pt as the eval_val_ttt_phased of 2026-04-23 on: .*TTT_CHUNK_SIZE=48 .*TTT_LORA_ALPHA=144 TTT_WARM_START_A=1 PHASED_TTT_ENABLED=1 PHASED_TTT_PREFIX_DOCS=2000" -- \
    $P --model $M27 $WL --ttt --ttt-set "TTT_LORA_RANK=2"
# The sparse gate marks the recipe whatever its scale: the runs of 2026-04-23, 2026-04-27
# PR1787Base and 2026-04-29 leave SPARSE_ATTN_GATE_SCALE at its default, 1.0.
mkdir -p "$TMP/g1"; cp $M27 "$TMP/g1/"; json_with tests/fixtures/pgolf/gates_0427/xsa_eval.json "$TMP/g1/xsa_eval.json" SPARSE_ATTN_GATE_SCALE 1.0
expect_exit recipe_0423_scale1 0 "test-time training of .*g1/final_model.pt as the eval_val_ttt_phased of 2026-04-23 on: .*TTT_LORA_ALPHA=144 TTT_WARM_START_A=1 PHASED_TTT_ENABLED=1" -- \
    $P --model "$TMP/g1/final_model.pt" $WL --ttt --ttt-set "TTT_LORA_RANK=2 TTT_EVAL_SEQ_LEN=64 TTT_BATCH_SIZE=4"
expect_exit lora_warm_0427 0 "ttt document 11/11: 1440 targets, 6.88639[0-9] nats/token" -- \
    $P --model $M27 $WL --ttt --ttt-set "$RUNL PHASED_TTT_ENABLED=0 TTT_LORA_ALPHA=6 TTT_WEIGHT_DECAY=0.5 TTT_CHUNK_SIZE=16"
# VAL_DOC_FRACTION: the record's random.Random(SEED).sample of the documents (case "sample": 6 of 11, 6.967115452).
expect_exit lora_sample 0 "ttt document 6/6: [0-9]+ targets, 6.96711[0-9] nats/token" -- \
    $P --model $ML $WL --ttt --ttt-set "$RUNL VAL_DOC_FRACTION=0.5 SEED=7"
expect_exit lora_fraction 2 "--ttt-set: VAL_DOC_FRACTION=0: expected a number in \(0, 1\]" -- \
    $P --model $ML $WL --ttt --ttt-set "VAL_DOC_FRACTION=0"
# 2026-04-14's eval_val_ttt_phased with one phase (2026-04-13's): its case "phased_one" (6.898895997).
PHASED="TTT_LORA_RANK=4 TTT_LORA_LR=0.003 TTT_CHUNK_SIZE=16 TTT_EVAL_SEQ_LEN=64 TTT_BATCH_SIZE=3 PHASED_TTT_ENABLED=1
  PHASED_TTT_PREFIX_DOCS=5 GLOBAL_TTT_LR=0.01 GLOBAL_TTT_EPOCHS=2 GLOBAL_TTT_CHUNK_TOKENS=96 GLOBAL_TTT_BATCH_SEQS=2"
expect_exit lora_phased_line 0 "test-time training of .*lanes_0410/final_model.pt as the eval_val_ttt_phased of 2026-04-13 and 2026-04-14: .* PHASED_TTT_ENABLED=1 PHASED_TTT_PREFIX_DOCS=5 PHASED_TTT_NUM_PHASES=1 GLOBAL_TTT_LR=0.01" -- \
    $P --model $ML $WL --ttt --ttt-set "$PHASED"
expect_exit lora_phased_record 0 "ttt phase 1/1: global SGD on the first 5 of the 5 documents scored.*ttt document 11/11: 1440 targets, 6.89889[0-9] nats/token" -- \
    bash -c "$P --model $ML $WL --ttt --ttt-set '$(echo $PHASED)' 2>&1 | tr '\n' ' '"
if $P --model $ML $WL --ttt --ttt-set "$PHASED PHASED_TTT_NUM_PHASES=2" -o "$TMP/r/ph.md" --json "$TMP/r/ph.json" 2>"$TMP/err"; then
    if grep -q "as parameter-golf.s eval_val_ttt_phased of 2026-04-13 and 2026-04-14: .* in 2 phases, the documents scored so far train every weight" "$TMP/r/ph.md" \
       && grep -q '"ttt_source": "eval_val_ttt_phased of 2026-04-13 and 2026-04-14"' "$TMP/r/ph.json" \
       && grep -q 'ttt phase 1/2: global SGD on the first 2 of the 2 documents scored' "$TMP/err" \
       && grep -q 'ttt phase 2/2: global SGD on the first 5 of the 5 documents scored' "$TMP/err"; then pass lora_phased_report
    else fail lora_phased_report "report, JSON or progress without the two phases"; fi
else
    fail lora_phased_report "exit $?: $(tail -1 "$TMP/err")"
fi
if $P --model $ML --model $ML $WL --ttt --ttt-set "$RUNL" -o "$TMP/r/l.md" --json "$TMP/r/l.json" 2>"$TMP/err"; then
    if grep -q "scored with test-time training as parameter-golf.s eval_val_ttt_lora of 2026-04-10: each document" "$TMP/r/l.md" \
       && grep -q '| A | 6.97900 |' "$TMP/r/l.md" && grep -q '| 32-64 | 1,131 |' "$TMP/r/l.md" \
       && grep -q '"unit": "document"' "$TMP/r/l.json" && grep -q '"units": 11' "$TMP/r/l.json" \
       && grep -q '"ttt": "TTT_LORA_RANK=4 TTT_LORA_LR=0.003 TTT_CHUNK_SIZE=16 TTT_EVAL_SEQ_LEN=64 TTT_BATCH_SIZE=4' "$TMP/r/l.json" \
       && grep -q '"ttt_source": "eval_val_ttt_lora of 2026-04-10"' "$TMP/r/l.json"; then pass lora_report
    else fail lora_report "report or JSON without the LoRA TTT's documents, settings or every target"; fi
else
    fail lora_report "exit $?: $(tail -1 "$TMP/err")"
fi

# Bits per byte as the records' TTT prints them (their fp32 runs: 2026-03-23's eval_val_sliding_ttt
# 4.086022124687598, 2026-04-09's eval_val_ttt 4.093371386470012).
SP=${XSA_SHARED:-../shared}/benchdata/models/parameter_golf_sp1024/fineweb_1024_bpe.model
bits() {  # name model settings want [windows]
    if [ ! -f "$SP" ]; then
        skip "$1" "no $SP"
    elif $P --model "$2" ${5:-$W} --tokenizer "$SP" --ttt --ttt-set "$3" --json "$TMP/b.json" >/dev/null 2>"$TMP/err"; then
        got=$(grep -o '"bits_per_byte": [0-9.]*' "$TMP/b.json" | head -1 | awk '{printf "%.6f", $2}')
        if [ "$got" = "$4" ]; then pass "$1"; else fail "$1" "got $got"; fi
    else
        fail "$1" "exit $?: $(tail -1 "$TMP/err")"
    fi
}
bits record_bits_per_byte $M "$RUN" 4.086022
bits record_bits_per_byte_2026_04_09 $M9 "$RUN9" 4.093371
bits record_bits_per_byte_2026_04_10 $ML "$RUNL" 4.055592 "$WL"  # (its eval_val_ttt_lora: 4.055591838730602)
finish
