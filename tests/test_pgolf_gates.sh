#!/usr/bin/env bash
# The attention gates and SmearGate of the parameter-golf records from 2026-04-16 (model/pgolf.c
# configure_gates): `info` names them, and the settings the file cannot tell (the sparse gate's
# scale, whether the SmearGate skips a BOS) are required, exit 2 naming them (fixtures:
# tests/fixtures/pgolf/gates_0416, gates_0419, gates_0427, from the records' own code).
. "$(dirname "$0")/lib.sh"
G=tests/fixtures/pgolf

expect_exit info_out_gate 0 "attention output gate \(2 sigmoid of the first 12 inputs\), SmearGate on the raw embedding \(12 inputs\)" -- "$XSA_BIN" info --model $G/gates_0416/final_model.pt
expect_exit info_dense_gate 0 "features .*gated attention" -- "$XSA_BIN" info --model $G/gates_0419/final_model.int6.ptz
expect_exit info_sparse_gate 0 "sparse attention gate \(sigmoid of 0.5 x the first 12 inputs\), SmearGate on the raw embedding \(12 inputs, none at BOS\)" -- "$XSA_BIN" info --model $G/gates_0427/final_model.pt

mkdir -p "$TMP/s" "$TMP/d"; cp $G/gates_0427/final_model.pt "$TMP/s/"; cp $G/gates_0419/final_model.pt "$TMP/d/"
sside() { json_with $G/gates_0427/xsa_eval.json "$TMP/s/xsa_eval.json" "$@"; }
dside() { json_with $G/gates_0419/xsa_eval.json "$TMP/d/xsa_eval.json" "$@"; }
sside SPARSE_ATTN_GATE_SCALE
expect_exit sparse_scale_missing 2 "final_model.pt has the sparse attention gate \(attn_gate_w of 12 columns\), whose SPARSE_ATTN_GATE_SCALE the file does not record" -- "$XSA_BIN" info --model "$TMP/s/final_model.pt"
sside SMEAR_GATE_BOS_FIX
expect_exit bos_fix_missing 2 "final_model.pt has the SmearGate of the records from 2026-04-16 \(smear_gate.weight\), which smears into a BOS token in 2026-04-16 and not from 2026-04-27; the file cannot tell: give SMEAR_GATE_BOS_FIX" -- "$XSA_BIN" info --model "$TMP/s/final_model.pt"
sside SMEAR_GATE_BOS_FIX 0
expect_exit bos_fix_off 0 "SmearGate on the raw embedding \(12 inputs\), logit" -- "$XSA_BIN" info --model "$TMP/s/final_model.pt"
dside SPARSE_ATTN_GATE_SCALE 1.0
expect_exit sparse_scale_without_gate 2 "SPARSE_ATTN_GATE_SCALE is the sparse attention gate's, which .*final_model.pt has not" -- "$XSA_BIN" info --model "$TMP/d/final_model.pt"
dside SMEAR_GATE_BOS_FIX 1
expect_exit bos_fix_without_smear 2 "SMEAR_GATE_BOS_FIX is the SmearGate's, which .*final_model.pt has not \(no smear_gate.weight\)" -- "$XSA_BIN" info --model "$TMP/d/final_model.pt"
expect_exit cuda_refused_gates 2 "the CUDA backend does not implement this parameter-golf model's operations" -- "$XSA_BIN" logprobs --model $G/gates_0427/final_model.pt --tokens 1,5,9 --device cuda
finish
