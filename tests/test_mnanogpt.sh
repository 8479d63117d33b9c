#!/usr/bin/env bash
# modded-nanogpt's gated-XSA record (tests/fixtures/mnanogpt/xsa_gated, made by
# tools/fixtures/make_mnanogpt_fixtures.py from the record's own GPT class): xsa-eval does not run
# this architecture yet, so a state_step*.pt is refused by name, exit 2, with the features it
# lacks, whether the sidecar's FAMILY says so or the state dict's weight banks show it; and the
# sidecar's FAMILY takes only the two family names.
. "$(dirname "$0")/lib.sh"
M=tests/fixtures/mnanogpt/xsa_gated
lacks="a modded-nanogpt model .*does not run yet: it lacks paired-head attention, value embeddings"

expect_exit family_sidecar 2 "xsa_eval.json: $lacks" -- "$XSA_BIN" info --model $M/state_step000000.pt
mkdir -p "$TMP/bare"; cp $M/state_step000000.pt "$TMP/bare/"
expect_exit banks_no_sidecar 2 "state_step000000.pt: $lacks" -- "$XSA_BIN" info --model "$TMP/bare/state_step000000.pt"
expect_exit banks_logprobs 2 "state_step000000.pt: $lacks" -- "$XSA_BIN" logprobs --model "$TMP/bare/state_step000000.pt" --text "a b"

# FAMILY in a parameter-golf sidecar: its own name is accepted, anything else refused by name.
P=tests/fixtures/pgolf/xsa_record
echo '{"FAMILY": "parameter-golf", "NUM_LAYERS": 5}' > "$TMP/arch.json"
expect_exit family_pgolf 0 "layers +5$" -- "$XSA_BIN" info --model $P/final_model.pt --arch "$TMP/arch.json"
echo '{"FAMILY": "nanogpt"}' > "$TMP/arch.json"
expect_exit family_unknown 2 "arch.json: FAMILY must be \"parameter-golf\" or \"modded-nanogpt\"" -- "$XSA_BIN" info --model $P/final_model.pt --arch "$TMP/arch.json"
echo '{"FAMILY": 1}' > "$TMP/arch.json"
expect_exit family_number 2 "arch.json: FAMILY must be \"parameter-golf\" or \"modded-nanogpt\"" -- "$XSA_BIN" info --model $P/final_model.pt --arch "$TMP/arch.json"
echo '{"NUM_LAYERS": 5, "FAMILY": "modded-nanogpt"}' > "$TMP/arch.json"
expect_exit family_arch_refused 2 "arch.json: $lacks" -- "$XSA_BIN" info --model $P/final_model.pt --arch "$TMP/arch.json"
finish
