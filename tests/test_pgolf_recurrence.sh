#!/usr/bin/env bash
# Depth recurrence in parameter-golf records (model/pgolf.c configure_depth, configure_loops,
# configure_lanes): the 2026-03-31 record's GPT (a block per virtual layer, two residual lanes, a
# layer without attention) and the looped records from 2026-04-05 (physical blocks run by
# NUM_LOOPS). `info` names their features, and each setting the file cannot tell, or that
# disagrees with its tensors, is one line naming the file and the setting, exit 2 (fixtures:
# tests/fixtures/pgolf/recur_0331 and loop_0405, made by tools/fixtures/make_pgolf_fixtures.py
# from the records' own train_gpt.py).
. "$(dirname "$0")/lib.sh"
R=tests/fixtures/pgolf/recur_0331

expect_exit info_0331 0 "features .*depth recurrence \(layers 2,3 run 2 times: 8 layers over 6 of weights\), no attention in layer 0, two residual lanes from layer 6, gated U-Net skips" -- "$XSA_BIN" info --model $R/final_model.pt
expect_exit info_0331_layers 0 "layers +8$" -- "$XSA_BIN" info --model $R/final_model.pt
expect_exit info_0331_xsa 0 "xsa layers +2,3,4,5,6,7 \(6 of 8; source: config\)" -- "$XSA_BIN" info --model $R/final_model.pt

# side KEY [VALUE]: the fixture's xsa_eval.json beside a copy of its file, KEY set to VALUE (or left out).
mkdir -p "$TMP/r"; cp $R/final_model.pt "$TMP/r/"
side() { json_with $R/xsa_eval.json "$TMP/r/xsa_eval.json" "$@"; }
M="$TMP/r/final_model.pt"
side RECUR_LAYERS
expect_exit recur_missing 2 "final_model.pt has 8 blocks over 6 layers of weights: depth recurrence, whose layers the file does not record; give RECUR_LAYERS" -- "$XSA_BIN" info --model "$M"
side RECUR_LAYERS '"3"'
expect_exit recur_count 2 "xsa_eval.json: RECUR_LAYERS \"3\" repeats 1 layers but .*final_model.pt has 8 blocks over 6 layers of weights \(2 repeated\)" -- "$XSA_BIN" info --model "$M"
side RECUR_LAYERS '"3,6"'
expect_exit recur_past 2 "xsa_eval.json: RECUR_LAYERS \"3,6\" names layer 6, past the 6 layers of .*final_model.pt" -- "$XSA_BIN" info --model "$M"
side RECUR_LAYERS '"0,3"'
expect_exit recur_layer0 2 "layer 0 is both without attention \(DISABLE_LAYER0_ATTN\) and recurrent \(RECUR_LAYERS \"0,3\"\)" -- "$XSA_BIN" info --model "$M"
side REPEAT_UNTIE_MLP '"down"'
expect_exit untie_disagrees 2 "REPEAT_UNTIE_MLP \"down\" on layers \"3\" disagrees with .*final_model.pt, whose repeat_mlp.1 \(recurrent layer 3\) has fc and proj weights" -- "$XSA_BIN" info --model "$M"
side REPEAT_UNTIE_MLP_LAYERS '"2,3"'
expect_exit untie_layers_disagree 2 "REPEAT_UNTIE_MLP \"full\" on layers \"2,3\" disagrees with .*final_model.pt, whose repeat_mlp.0 \(recurrent layer 2\) has no weights" -- "$XSA_BIN" info --model "$M"
side REPEAT_UNTIE_MLP_LAYERS '"4"'
expect_exit untie_not_recurrent 2 "REPEAT_UNTIE_MLP_LAYERS \"4\" names layer 4, which RECUR_LAYERS \"2,3\" does not" -- "$XSA_BIN" info --model "$M"
side REPEAT_UNTIE_MLP '"both"'
expect_exit untie_mode 2 "REPEAT_UNTIE_MLP must be \"none\", \"down\" or \"full\"" -- "$XSA_BIN" info --model "$M"
side DISABLE_LAYER0_ATTN
expect_exit attn0_missing 2 "final_model.pt is the 2026-03-31 record's GPT \(skip_gates\), whose banks keep layer 0's attention weights whether it runs or not; give DISABLE_LAYER0_ATTN" -- "$XSA_BIN" info --model "$M"
side PARALLEL_START_LAYER
expect_exit lanes_start_missing 2 "final_model.pt has two residual lanes \(parallel_post_lambdas\) but no PARALLEL_START_LAYER is given, which the file does not record \(the 2026-03-31 record: 7, the looped records from 2026-04-10: 8\)" -- "$XSA_BIN" info --model "$M"
side PARALLEL_START_LAYER 1
expect_exit lanes_in_encoder 2 "PARALLEL_START_LAYER 1 gives layer 1 two lanes; xsa-eval runs them from the decoder's first layer \(4\) on" -- "$XSA_BIN" info --model "$M"
side PARALLEL_START_LAYER 3
expect_exit lanes_out_of_order 2 "PARALLEL_START_LAYER 3 puts layer 4 on one lane after layers on two" -- "$XSA_BIN" info --model "$M"
side PARALLEL_RESIDUAL 0
expect_exit lanes_disagree 2 "PARALLEL_RESIDUAL = 0 disagrees with .*final_model.pt, which has parallel_post_lambdas" -- "$XSA_BIN" info --model "$M"
side PARALLEL_START_LAYER 5
expect_exit lanes_from_5 0 "two residual lanes from layer 7" -- "$XSA_BIN" info --model "$M"
side PARALLEL_START_LAYER 8
expect_exit lanes_none 0 "gated U-Net skips" -- "$XSA_BIN" info --model "$M"
side CANON_AC_LAYERS '"1"'
expect_exit canon_refused 2 "CANON_AC_LAYERS" -- "$XSA_BIN" info --model "$M"

# probe: a layer without attention has no statistics (not zeros).
tok=${XSA_SHARED:-../shared}/benchdata/models/parameter_golf_sp1024/fineweb_1024_bpe.model
if [ -f "$tok" ]; then
    echo "The quick brown fox jumps over the lazy dog. It was a sunny day." > "$TMP/t.txt"
    expect_exit probe_no_attention 0 "" -- "$XSA_BIN" probe --model $R/final_model.pt --tokenizer "$tok" --text "$TMP/t.txt" -o "$TMP/p.md" --json "$TMP/p.json"
    expect_exit probe_no_attention_md 0 "^\| 0 \| no attention \| — \| — \| — \|" -- cat "$TMP/p.md"
    expect_exit probe_no_attention_json 0 '"layer": 0, "xsa": false, "attention": false\}' -- cat "$TMP/p.json"
else
    skip probe_no_attention "fineweb_1024_bpe.model absent"
fi
# The looped records (2026-04-05): blocks are physical layers; XSA and LN_SCALE are theirs.
P=tests/fixtures/pgolf/loop_0405
expect_exit info_loops 0 "features .*depth recurrence \(layers 2..3 run 3 times: 10 layers over 6 of weights\), gated U-Net skips" -- "$XSA_BIN" info --model $P/final_model.pt
expect_exit info_loops_xsa 0 "xsa layers +2,3,4,5,6,7,8,9 \(8 of 10; source: config\)" -- "$XSA_BIN" info --model $P/final_model.pt
mkdir -p "$TMP/l"; cp $P/final_model.pt "$TMP/l/"
lside() { json_with $P/xsa_eval.json "$TMP/l/xsa_eval.json" "$@"; }
L="$TMP/l/final_model.pt"
lside NUM_LOOPS
expect_exit loops_missing 2 "skip_weights has 5 rows but 6 layers have 3 U-Net skips; check NUM_LAYERS \(a looped record: NUM_LOOPS, LOOP_START and LOOP_END\)" -- "$XSA_BIN" info --model "$L"
lside LOOP_END
expect_exit loop_end_missing 2 "NUM_LOOPS 2 runs LOOP_START .. LOOP_END again, but they are not given" -- "$XSA_BIN" info --model "$L"
lside LOOP_END 6
expect_exit loop_end_past 2 "LOOP_START 2 .. LOOP_END 6 must be layers of the 6 of .*final_model.pt" -- "$XSA_BIN" info --model "$L"
lside NUM_LOOPS 1
expect_exit loops_count 2 "skip_weights has 5 rows but 8 layers have 4 U-Net skips" -- "$XSA_BIN" info --model "$L"
lside RECUR_LAYERS '"2"'
expect_exit loops_and_recur 2 "RECUR_LAYERS with NUM_LOOPS, shared blocks or passes" -- "$XSA_BIN" info --model "$L"
lside PARALLEL_RESIDUAL_START
expect_exit gptj_start_missing 2 "a looped record must give PARALLEL_RESIDUAL_START, which the file does not record: -1 for none" -- "$XSA_BIN" info --model "$L"
lside PARALLEL_RESIDUAL_START -2
expect_exit gptj_start_negative 2 "PARALLEL_RESIDUAL_START must be a whole number from -1 \(none\) up to 1e9" -- "$XSA_BIN" info --model "$L"
lside PARALLEL_RESIDUAL_START 4
expect_exit gptj_from_4 0 "GPT-J blocks \(attention and MLP read the same input\) in 2 of 10 layers" -- "$XSA_BIN" info --model "$L"
side PARALLEL_RESIDUAL_START 4
expect_exit gptj_without_loops 2 "PARALLEL_RESIDUAL_START is the looped records' \(NUM_LOOPS\)" -- "$XSA_BIN" info --model "$M"
expect_exit info_gptj 0 "depth recurrence \(layers 1..3 run 3 times: 12 layers over 6 of weights\), GPT-J blocks \(attention and MLP read the same input\) in 2 of 12 layers" -- "$XSA_BIN" info --model tests/fixtures/pgolf/gptj_0406/final_model.pt
lside NEGATIVE_SLOPE
expect_exit loops_slope_missing 2 "final_model.pt has the 2026-03-22\+ records' gated skips \(skip_gates\) but no NEGATIVE_SLOPE is given" -- "$XSA_BIN" info --model "$L"

# The 2026-04-03 record: one block per layer, RECUR_LAYERS run again; skips sized for the physical layers.
expect_exit info_recur_0403 0 "depth recurrence \(layers 2,3 run 2 times: 8 layers over 6 of weights\), gated U-Net skips, .*value embedding 8 \(projected\) in layers 2,4,7" -- "$XSA_BIN" info --model tests/fixtures/pgolf/recur_0403/final_model.int6.ptz

# The lanes of 2026-04-04 (RECUR_LAYERS) and 2026-04-08 (NUM_LOOPS): lane_merge.
expect_exit info_split_0404 0 "depth recurrence \(layers 2,3 run 2 times: 8 layers over 6 of weights\), two residual lanes from layer 5 \(attention and MLP apart, merged by lane_merge\)" -- "$XSA_BIN" info --model tests/fixtures/pgolf/split_0404/final_model.pt
expect_exit info_split_0408 0 "two residual lanes from layer 8 \(attention and MLP apart, merged by lane_merge\)" -- "$XSA_BIN" info --model tests/fixtures/pgolf/split_0408/final_model.int6.ptz
mkdir -p "$TMP/m"; cp tests/fixtures/pgolf/split_0408/final_model.pt "$TMP/m/"
json_with tests/fixtures/pgolf/split_0408/xsa_eval.json "$TMP/m/xsa_eval.json" PARALLEL_START_LAYER
expect_exit split_start_missing 2 "final_model.pt has the two lanes of 2026-04-04/08 \(lane_merge\) but no PARALLEL_START_LAYER is given" -- "$XSA_BIN" info --model "$TMP/m/final_model.pt"

# The looped records' two lanes (2026-04-10 on): side by side, from a decoder layer.
V=tests/fixtures/pgolf/lanes_0410
expect_exit info_lanes_0410 0 "depth recurrence \(layers 1..3 run 3 times: 12 layers over 6 of weights\), two residual lanes from layer 10 \(attention and MLP side by side\)" -- "$XSA_BIN" info --model $V/final_model.pt
mkdir -p "$TMP/v"; cp $V/final_model.pt "$TMP/v/"
vside() { json_with $V/xsa_eval.json "$TMP/v/xsa_eval.json" "$@"; }
vside PARALLEL_FINAL_LANE '"mlp"'
expect_exit final_lane_mlp 0 "two residual lanes from layer 10" -- "$XSA_BIN" info --model "$TMP/v/final_model.pt"
vside PARALLEL_FINAL_LANE '"both"'
expect_exit final_lane_bad 2 "PARALLEL_FINAL_LANE must be \"mean\", \"attn\" or \"mlp\"" -- "$XSA_BIN" info --model "$TMP/v/final_model.pt"
vside PARALLEL_START_LAYER 2
expect_exit lanes_0410_order 2 "PARALLEL_START_LAYER 2 puts layer 7 on one lane after layers on two" -- "$XSA_BIN" info --model "$TMP/v/final_model.pt"
side PARALLEL_FINAL_LANE '"mlp"'
expect_exit final_lane_0331 2 "PARALLEL_FINAL_LANE is the looped records' \(2026-04-10 on\); the 2026-03-31 record's final norm reads the lanes' mean" -- "$XSA_BIN" info --model "$M"

expect_exit cuda_refused_0331 2 "the CUDA backend does not implement this parameter-golf model's operations" -- "$XSA_BIN" logprobs --model $R/final_model.pt --tokens 1,5,9 --device cuda
finish
