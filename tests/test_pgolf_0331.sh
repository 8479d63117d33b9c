#!/usr/bin/env bash
# The 2026-03-31 record's GPT (model/pgolf.c configure_depth, configure_lanes): `info` names its
# features, and each setting the file cannot tell, or that disagrees with its tensors, is one
# line naming the file and the setting, exit 2 (fixture: tests/fixtures/pgolf/recur_0331, made
# by tools/fixtures/make_pgolf_fixtures.py from the record's own train_gpt.py).
. "$(dirname "$0")/lib.sh"
R=tests/fixtures/pgolf/recur_0331

expect_exit info_0331 0 "features .*depth recurrence \(layers 2,3 run twice: 8 blocks over 6 layers of weights\), no attention in layer 0, two residual lanes from layer 6, gated U-Net skips" -- "$XSA_BIN" info --model $R/final_model.pt
expect_exit info_0331_layers 0 "layers +8$" -- "$XSA_BIN" info --model $R/final_model.pt
expect_exit info_0331_xsa 0 "xsa layers +2,3,4,5,6,7 \(6 of 8; source: config\)" -- "$XSA_BIN" info --model $R/final_model.pt

# side KEY [VALUE]: the fixture's xsa_eval.json beside a copy of its file, KEY set to VALUE (or left out).
mkdir -p "$TMP/r"; cp $R/final_model.pt "$TMP/r/"
side() {
    { grep '^ "' $R/xsa_eval.json | grep -v "^ \"$1\":" | sed 's/,$//'; [ $# -gt 1 ] && echo " \"$1\": $2"; } |
        { echo "{"; paste -sd, -; echo "}"; } > "$TMP/r/xsa_eval.json"
}
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
expect_exit lanes_start_missing 2 "final_model.pt has the 2026-03-31 record's two residual lanes \(parallel_post_lambdas\) but no PARALLEL_START_LAYER is given" -- "$XSA_BIN" info --model "$M"
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
expect_exit cuda_refused_0331 2 "the CUDA backend does not implement this parameter-golf model's operations" -- "$XSA_BIN" logprobs --model $R/final_model.pt --tokens 1,5,9 --device cuda
finish
