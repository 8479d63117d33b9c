#!/usr/bin/env bash
# modded-nanogpt's gated-XSA record (tests/fixtures/mnanogpt/xsa_gated, made by
# tools/fixtures/make_mnanogpt_fixtures.py from the record's own GPT class; its log-probabilities
# are checked by test_model_exact): the state_step file loads with the schedule of the sidecar
# (FAMILY "modded-nanogpt") or the record's defaults, and each bad setting is one line, exit 2.
. "$(dirname "$0")/lib.sh"
M=tests/fixtures/mnanogpt/xsa_gated
S=$M/state_step000000.pt

expect_exit info_family 0 "architecture +mnanogpt" -- "$XSA_BIN" info --model $S
expect_exit info_windows 0 "features +modded-nanogpt GPT \(.*windows 12/40.*\), weightless RMSNorm, no attention in some layers, gated XSA" -- "$XSA_BIN" info --model $S
expect_exit info_xsa_layers 0 "xsa layers +1,3,4,7,8,10 \(6 of 11; source: config\)" -- "$XSA_BIN" info --model $S
# Without a sidecar the weight banks name the family, and the record's own schedule is used.
mkdir -p "$TMP/bare"; cp $S "$TMP/bare/"
expect_exit banks_no_sidecar 0 "windows 768/2560" -- "$XSA_BIN" info --model "$TMP/bare/state_step000000.pt"
expect_exit banks_config 2 "a modded-nanogpt state_step file: its architecture is the record's GPT; drop --config" -- "$XSA_BIN" info --model "$TMP/bare/state_step000000.pt" --config $M/xsa_eval.json
expect_exit cuda_refused 2 "--device cuda: the CUDA backend does not implement modded-nanogpt's GPT" -- "$XSA_BIN" logprobs --model $S --device cuda --tokens 50,3,17
# The command line scores what the record's GPT gives (reference.json: -5.204011, -4.073298);
# --xsa none turns the gated XSA off.
expect_exit logprobs_cli 0 "2	17	-4.07329" -- "$XSA_BIN" logprobs --model $S --device cpu --tokens 50,3,17
expect_exit logprobs_xsa_none 0 "2	17	-4.07479" -- "$XSA_BIN" logprobs --model $S --device cpu --tokens 50,3,17 --xsa none
expect_exit logprobs_xsa_subset 0 "2	17	-4.0" -- "$XSA_BIN" logprobs --model $S --device cpu --tokens 50,3,17 --xsa 1,3
expect_exit xsa_ungated 2 "--xsa 'all': layer 0 of modded-nanogpt's GPT has no XSA gate" -- "$XSA_BIN" logprobs --model $S --device cpu --tokens 50,3,17 --xsa all

# The record's SA baseline (master-s1480: the same GPT without xsa_alphas) loads as an SA model;
# --xsa cannot turn on what it has no gates for. Its XSA counterpart scores differently.
B=tests/fixtures/mnanogpt/master/state_step000000.pt
expect_exit master_info 0 "xsa layers +none \(0 of 11; source: none\)" -- "$XSA_BIN" info --model $B
expect_exit master_xsa_on 2 "--xsa '1,3': this modded-nanogpt checkpoint has no xsa_alphas \(an SA model" -- "$XSA_BIN" logprobs --model $B --device cpu --tokens 50,3,17 --xsa 1,3
expect_exit master_xsa_none 0 "^pos" -- "$XSA_BIN" logprobs --model $B --device cpu --tokens 50,3,17 --xsa none
# probe computes the statistics on this GPT (values: test_model_exact against the record's own
# attention); layer 6 has no attention.
"$XSA_BIN" probe --model $S --tokens-file tests/fixtures/mnanogpt/val/docs.bin --context 64 -o "$TMP/probe.md" 2>"$TMP/probe.err"
if grep -q "^| 6 | no attention | — | — | — |" "$TMP/probe.md" && grep -q "^| 1 | gated | +0\.[0-9]*[1-9]" "$TMP/probe.md" &&
   ! grep -q "add --split-docs" "$TMP/probe.err"; then pass probe_statistics; else fail probe_statistics "$(head -c 300 "$TMP/probe.md")"; fi
# Its XSA is gated: z keeps (1 - tanh(alpha)) of y's component along v, so cos(z, v) is not 0 and
# the report must not say "0 up to rounding" of those layers: they are "gated", with each head's
# tanh(alpha) (JSON "xsa_gate"); the master baseline has none, the root's GPT gates per token.
"$XSA_BIN" probe --model $S --model tests/fixtures/mnanogpt/master/state_step000000.pt --tokens-file tests/fixtures/mnanogpt/val/docs.bin \
    --context 64 --heads --quiet -o "$TMP/pg.md" --json "$TMP/pg.json"
"$XSA_BIN" probe --model tests/fixtures/mnanogpt/gates/state_step000000.pt --tokens-file tests/fixtures/mnanogpt/val/docs.bin \
    --context 64 --quiet -o "$TMP/pt.md" --json "$TMP/pt.json"
got=$(python3 - "$TMP/pg.json" "$TMP/pt.json" <<'EOF'
import json, sys
g, t = (json.load(open(f)) for f in sys.argv[1:])
bad = []
for l in g["models"][0]["layers"]:
    gate = l.get("xsa_gate")
    if (gate is not None) != (l["layer"] in (1, 3, 4, 7, 8, 10)) or l["xsa"] != (gate is not None):
        bad.append("xsa_gate of layer %d: %s" % (l["layer"], gate))
    elif gate is not None and (len(gate) != len(l["heads"]) or not all(-1 < x < 1 for x in gate) or all(abs(x) < 1e-3 for x in gate)):
        bad.append("layer %d's gates %s" % (l["layer"], gate))
bad += ["master layer %d has xsa_gate" % l["layer"] for l in g["models"][1]["layers"] if "xsa_gate" in l]
bad += ["root layer %d: %s" % (l["layer"], l.get("xsa_gate")) for l in t["models"][0]["layers"] if l["xsa"] != (l.get("xsa_gate") == "per token")]
print("; ".join(bad) or "ok")
EOF
)
if [ "$got" = ok ] && grep -q "^| 1 | gated | " "$TMP/pg.md" && grep -q "^| 1\.0 | gated [-0-9.]* | " "$TMP/pg.md" &&
   grep -q "not in gated ones" "$TMP/pg.md" && grep -q "fraction g = tanh(alpha)" "$TMP/pg.md" &&
   grep -q "^| 1 | gated per token | " "$TMP/pt.md"; then
    pass probe_gated_xsa_named
else fail probe_gated_xsa_named "$got $(grep -m3 "gated\|^| 1 " "$TMP/pg.md" "$TMP/pt.md")"; fi

# The later records' GPTs (their log-probabilities: test_model_exact against each one's own code).
# 2026-05-20's sign trick on the master's GPT loads as SA; 07-17's MUDD with gated XSA; 06-11's
# pairs layers 0 and 5 only, as the code saved in its file says (PAIRED_LAYERS may say it too,
# never otherwise).
X=tests/fixtures/mnanogpt
expect_exit sign_trick_info 0 "features .*the bigram sign trick, skip, backout" -- "$XSA_BIN" info --model $X/sign_trick/state_step000000.pt
expect_exit sign_trick_sa 0 "xsa layers +none" -- "$XSA_BIN" info --model $X/sign_trick/state_step000000.pt
expect_exit mudd_info 0 "features .*paired heads in layers 0,2,5,9, .*the bigram sign trick, skip, MUDD connections at the last layer and after it" -- "$XSA_BIN" info --model $X/mudd/state_step000000.pt
expect_exit mudd_xsa_layers 0 "xsa layers +1,3,4,7,8,10 \(6 of 11; source: config\)" -- "$XSA_BIN" info --model $X/mudd/state_step000000.pt
expect_exit mudd_cuda_refused 2 "--device cuda: the CUDA backend does not implement modded-nanogpt's GPT" -- "$XSA_BIN" logprobs --model $X/mudd/state_step000000.pt --device cuda --tokens 50,3,17
# MUDD before the sign trick (the root train_gpt.py of 2026-05-24 to 06-05, 2026-05-27's
# xsa-baseline logs): a full-width bigram, no sign table; gated XSA as 07-17's.
expect_exit mudd_0524_info 0 "features .*x0/bigram lambdas, skip, MUDD connections at the last layer and after it" -- "$XSA_BIN" info --model $X/mudd_0524/state_step000000.pt
expect_exit mudd_0524_xsa_layers 0 "xsa layers +1,3,4,7,8,10 \(6 of 11; source: config\)" -- "$XSA_BIN" info --model $X/mudd_0524/state_step000000.pt
# 2026-04-22 MuddFormer's final GPT (this_pr_v3: dense_w1/w2/bs, no XSA) loads as SA; --xsa cannot
# turn a layer on; CUDA refuses it. Its reference.json: -11.728800, -3.519746 (greedy 0, 0).
D=$X/muddformer_0422/state_step000000.pt
expect_exit muddformer_info 0 "features .*x0/bigram lambdas, skip, MUDD connections at the last layer and after it \(2026-04-22's dense_w1/w2/bs\)" -- "$XSA_BIN" info --model $D
expect_exit muddformer_sa 0 "xsa layers +none \(0 of 11; source: none\)" -- "$XSA_BIN" info --model $D
expect_exit muddformer_logprobs 0 "2	17	-3.51974[0-9]*	0" -- "$XSA_BIN" logprobs --model $D --device cpu --tokens 50,3,17
expect_exit muddformer_xsa_on 2 "--xsa '1,3': this modded-nanogpt checkpoint has no xsa_alphas" -- "$XSA_BIN" logprobs --model $D --device cpu --tokens 50,3,17 --xsa 1,3
expect_exit muddformer_cuda_refused 2 "--device cuda: the CUDA backend does not implement modded-nanogpt's GPT" -- "$XSA_BIN" logprobs --model $D --device cuda --tokens 50,3,17
expect_exit paired_from_code 0 "paired heads in layers 0,5, " -- "$XSA_BIN" info --model $X/mudd_0611/state_step000000.pt
echo '{"FAMILY": "modded-nanogpt", "WS_SHORT": 12, "WS_LONG": 40, "YARN_WINDOWS": [6, 14, 22, 26], "MAX_SEQ_LEN": 64, "PAIRED_LAYERS": [0, 5]}' > "$TMP/arch.json"
expect_exit paired_sidecar_agrees 0 "paired heads in layers 0,5, " -- "$XSA_BIN" info --model $X/mudd_0611/state_step000000.pt --arch "$TMP/arch.json"
echo '{"FAMILY": "modded-nanogpt", "WS_SHORT": 12, "WS_LONG": 40, "PAIRED_LAYERS": [0, 2, 5, 9]}' > "$TMP/arch.json"
expect_exit paired_sidecar_disagrees 2 "arch.json: PAIRED_LAYERS disagrees with the paired_head_layers of the code saved in .*mudd_0611/state_step000000.pt; drop it, or fix it to the code's" -- "$XSA_BIN" info --model $X/mudd_0611/state_step000000.pt --arch "$TMP/arch.json"
echo '{"FAMILY": "modded-nanogpt", "WS_SHORT": 12, "WS_LONG": 40, "PAIRED_LAYERS": [0, 5]}' > "$TMP/arch.json"
expect_exit paired_sidecar_sets 0 "paired heads in layers 0,5, " -- "$XSA_BIN" info --model $X/mudd/state_step000000.pt --arch "$TMP/arch.json"
for bad in '[0, 6]' '[0, 0]' '[11]' '[0.5]' '"0,5"'; do
    echo "{\"FAMILY\": \"modded-nanogpt\", \"PAIRED_LAYERS\": $bad}" > "$TMP/arch.json"
    expect_exit "paired_bad $bad" 2 "arch.json: PAIRED_LAYERS must be a list of distinct layers 0..10 other than 6" -- "$XSA_BIN" info --model $S --arch "$TMP/arch.json"
done
# The root train_gpt.py's GPT (2026-05-27 on): per-token MUDD gates in place of xsa_alphas, the
# attention, x0, bigram and skip gates; the layer-10 DC correction. Its XSA layers are 1,3,4,7.
G=$X/gates/state_step000000.pt
expect_exit gates_info 0 "features .*per-token MUDD gates \(XSA, attention in layers 3 and 10, x0, bigram, skip\).*the layer-10 DC correction" -- "$XSA_BIN" info --model $G
expect_exit gates_xsa_layers 0 "xsa layers +1,3,4,7 \(4 of 11; source: config\)" -- "$XSA_BIN" info --model $G
expect_exit gates_xsa_off 2 "--xsa '8': layer 8 of modded-nanogpt's GPT has no XSA gate" -- "$XSA_BIN" logprobs --model $G --device cpu --tokens 50,3,17 --xsa 8
expect_exit gates_xsa_none 0 "^pos" -- "$XSA_BIN" logprobs --model $G --device cpu --tokens 50,3,17 --xsa none
# 2026-05-27's this_pr_v1: xsa_alphas (unused) beside the gates and its own DC networks; its XSA
# layers are its gates' too.
V1=$X/gates_v1/state_step000000.pt
expect_exit gates_v1_info 0 "features .*per-token MUDD gates .*the layer-10 DC correction" -- "$XSA_BIN" info --model $V1
expect_exit gates_v1_xsa_layers 0 "xsa layers +1,3,4,7 \(4 of 11; source: config\)" -- "$XSA_BIN" info --model $V1
expect_exit gates_v1_xsa_none 0 "^pos" -- "$XSA_BIN" logprobs --model $V1 --device cpu --tokens 50,3,17 --xsa none
# Files with one thing wrong (tools/fixtures/make_mnanogpt_bad.py).
expect_exit bad_gates_heads 2 "gates_heads.pt: MUDD gates with another head count than 6" -- "$XSA_BIN" info --model $X/bad/gates_heads.pt
expect_exit bad_bigram_wide 2 "bigram_wide.pt: bigram_embed.weight is 36 wide; the record's GPT takes at most the model's width" -- "$XSA_BIN" info --model $X/bad/bigram_wide.pt
# A NaN weight is a damaged file, refused at load as parameter-golf's are, never scored.
expect_exit bad_nan_weight 2 "nan_weight.pt: tensor 'qk_bank' holds NaN at element 3137 .*the checkpoint is damaged" -- "$XSA_BIN" info --model $X/bad/nan_weight.pt
expect_exit bad_nan_weight_scored 2 "holds NaN" -- "$XSA_BIN" logprobs --model $X/bad/nan_weight.pt --tokens 50,3,17 --device cpu --xsa none
# The saved code's paired-head line: read without spaces (the sidecar's other list disagrees with
# it), refused by name when it is an expression.
echo '{"FAMILY": "modded-nanogpt", "PAIRED_LAYERS": [0, 2, 5, 9]}' > "$TMP/paired4.json"
expect_exit paired_code_nospace 2 "PAIRED_LAYERS disagrees with the paired_head_layers of the code saved in .*paired_nospace.pt" -- \
    "$XSA_BIN" info --model $X/bad/paired_nospace.pt --arch "$TMP/paired4.json"
expect_exit paired_code_annotated 2 "PAIRED_LAYERS disagrees with the paired_head_layers of the code saved in .*paired_annotated.pt" -- \
    "$XSA_BIN" info --model $X/bad/paired_annotated.pt --arch "$TMP/paired4.json"
echo '{"FAMILY": "modded-nanogpt"}' > "$TMP/family.json"
expect_exit paired_code_expr 2 "paired_expr.pt: the code saved in it sets .self.paired_head_layers = list\(range\(0, 6, 5\)\)., which xsa-eval cannot read .*give PAIRED_LAYERS" -- \
    "$XSA_BIN" info --model $X/bad/paired_expr.pt --arch "$TMP/family.json"
# A file whose pickle is damaged (its first opcode, at byte 64 of the archive, made 0xff):
# one line, exit 2, and under the sanitizers nothing of the failed open leaks.
mkdir -p "$TMP/damaged"; cp $X/mudd_0611/state_step000000.pt $X/mudd_0611/xsa_eval.json "$TMP/damaged/"
printf '\xff' | dd of="$TMP/damaged/state_step000000.pt" bs=1 seek=64 conv=notrunc status=none
expect_exit damaged_pickle 2 "state_step000000.pt \(state_step000000/data.pkl\): opcode 0xff, which torch.save does not write, at byte 0 of the pickle" -- "$XSA_BIN" info --model "$TMP/damaged/state_step000000.pt"
expect_exit bad_mudd_coefs 2 "mudd_few_coefs.pt: mudd_w2 holds 10 coefficients of 64 features; the record's MUDD reads 14" -- "$XSA_BIN" logprobs --model $X/bad/mudd_few_coefs.pt --tokens 1,2 --device cpu
expect_exit bad_mudd_many_coefs 2 "mudd_many_coefs.pt: mudd_w2 holds 20 coefficients of 64 features; the record's MUDD reads 14" -- "$XSA_BIN" info --model $X/bad/mudd_many_coefs.pt
# qk_bank rows of another width would make the GPT read its q/k from the tensors after it.
expect_exit bad_qk_rows 2 "qk_rows.pt: qk_bank is \(24, 16, 32\); the record's GPT of 2 heads of width 32 reads groups of 2 x head_dim = 32 rows" -- \
    "$XSA_BIN" info --model $X/bad/qk_rows.pt
expect_exit bad_gates_alphas 2 "gates_alphas.pt: xsa_alphas beside the MUDD gate networks \(mudd_gate_w1\) without dc_w1_bank" -- "$XSA_BIN" info --model $X/bad/gates_alphas.pt
# 2026-04-22 MuddFormer's earlier dense layouts (this_pr_v1, v2), refused by name (its final GPT,
# v3, loads: below); v3's with xsa_alphas is no record's GPT; a tensor of the wrong shape, with both shapes.
expect_exit bad_muddformer_v2 2 "muddformer_v2.pt: dense_w1 without a dense_w2 of \(2, dim, 2, 8\): not 2026-04-22 MuddFormer's final GPT \(this_pr_v3\)" -- "$XSA_BIN" info --model $X/bad/muddformer_v2.pt
expect_exit bad_muddformer_alphas 2 "muddformer_alphas.pt: dense_w1 \(2026-04-22 MuddFormer's MUDD\) beside xsa_alphas" -- "$XSA_BIN" info --model $X/bad/muddformer_alphas.pt
expect_exit bad_post_shape 2 "post_shape.pt: tensor 'post_lambdas' is \(11, 3\); the record's GPT with the file's other tensors reads \(11, 2\)" -- "$XSA_BIN" info --model $X/bad/post_shape.pt
# The saved code: a commented-out line before the live one is not the live one; a change after it is refused.
expect_exit paired_code_commented 2 "PAIRED_LAYERS disagrees with the paired_head_layers of the code saved in .*paired_commented.pt" -- \
    "$XSA_BIN" info --model $X/bad/paired_commented.pt --arch "$TMP/paired4.json"
expect_exit paired_code_changed 2 "paired_changed.pt: the code saved in it sets .self.paired_head_layers \+= \[9\]., which xsa-eval cannot read" -- \
    "$XSA_BIN" info --model $X/bad/paired_changed.pt --arch "$TMP/family.json"
# A bare state dict with DDP's "module." prefixes is the family's without a sidecar, and scores as the fixture.
expect_exit bare_module_found 0 "architecture +mnanogpt" -- "$XSA_BIN" info --model $X/bad/bare_module.pt
"$XSA_BIN" logprobs --model $X/bad/bare_module.pt --arch $X/xsa_gated/xsa_eval.json --tokens 50,3,17,99 --device cpu > "$TMP/bare.tsv" 2>/dev/null
"$XSA_BIN" logprobs --model $X/xsa_gated/state_step000000.pt --tokens 50,3,17,99 --device cpu > "$TMP/fixture.tsv" 2>/dev/null
[ -s "$TMP/bare.tsv" ] && cmp -s "$TMP/bare.tsv" "$TMP/fixture.tsv" && pass bare_module_scores || fail bare_module_scores "differs from the fixture"
# A sidecar without FAMILY beside a state_step file names what it lacks.
mkdir -p "$TMP/nofam" && cp $X/xsa_gated/state_step000000.pt "$TMP/nofam/" && echo '{}' > "$TMP/nofam/xsa_eval.json"
expect_exit sidecar_without_family 2 "a modded-nanogpt state_step file .* does not say \"FAMILY\": \"modded-nanogpt\"" -- \
    "$XSA_BIN" info --model "$TMP/nofam/state_step000000.pt"

# The sidecar's settings.
echo '{"FAMILY": "modded-nanogpt", "WS_SHORT": 12, "WS_LONG": 40, "YARN_WINDOWS": [6, 40], "NUM_LAYERS": 11}' > "$TMP/arch.json"
expect_exit setting_unknown 2 "arch.json: \"NUM_LAYERS\" is not a modded-nanogpt setting xsa-eval reads \(FAMILY, WS_SHORT, WS_LONG, YARN_WINDOWS, MAX_SEQ_LEN, BOS_ID, PAIRED_LAYERS\)" -- "$XSA_BIN" info --model $S --arch "$TMP/arch.json"
echo '{"FAMILY": "modded-nanogpt", "YARN_WINDOWS": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17]}' > "$TMP/arch.json"
expect_exit yarn_long 2 "arch.json: YARN_WINDOWS must be a list of 1 to 16 long windows" -- "$XSA_BIN" info --model $S --arch "$TMP/arch.json"
echo '{"FAMILY": "modded-nanogpt", "MAX_SEQ_LEN": 0}' > "$TMP/arch.json"
expect_exit max_seq_zero 2 "arch.json: MAX_SEQ_LEN must be a positive whole number of tokens" -- "$XSA_BIN" info --model $S --arch "$TMP/arch.json"
echo '{"FAMILY": "modded-nanogpt", "WS_SHORT": 1.5}' > "$TMP/arch.json"
expect_exit ws_fraction 2 "arch.json: WS_SHORT must be a positive whole number of tokens" -- "$XSA_BIN" info --model $S --arch "$TMP/arch.json"
echo '{"FAMILY": "modded-nanogpt", "YARN_WINDOWS": []}' > "$TMP/arch.json"
expect_exit yarn_empty 2 "arch.json: YARN_WINDOWS must be a list of 1 to 16 long windows" -- "$XSA_BIN" info --model $S --arch "$TMP/arch.json"
echo '{"FAMILY": "modded-nanogpt", "YARN_WINDOWS": [6, "40"], "WS_LONG": 40}' > "$TMP/arch.json"
expect_exit yarn_string 2 "arch.json: YARN_WINDOWS entry must be a positive whole number of tokens" -- "$XSA_BIN" info --model $S --arch "$TMP/arch.json"
# A parameter-golf file under a modded-nanogpt sidecar: the banks are missing, by name.
echo '{"FAMILY": "modded-nanogpt"}' > "$TMP/arch.json"
expect_exit pgolf_as_mng 2 "final_model.pt: tensor 'qk_bank' is missing; not a state dict of modded-nanogpt's GPT" -- "$XSA_BIN" info --model tests/fixtures/pgolf/xsa_record/final_model.pt --arch "$TMP/arch.json"

# FAMILY in a parameter-golf sidecar: its own name is accepted, anything else refused by name.
P=tests/fixtures/pgolf/xsa_record
echo '{"FAMILY": "parameter-golf", "NUM_LAYERS": 5, "TRAIN_SEQ_LEN": 1024}' > "$TMP/arch.json"
expect_exit family_pgolf 0 "layers +5$" -- "$XSA_BIN" info --model $P/final_model.pt --arch "$TMP/arch.json"
echo '{"FAMILY": "nanogpt"}' > "$TMP/arch.json"
expect_exit family_unknown 2 "arch.json: FAMILY must be \"parameter-golf\" or \"modded-nanogpt\"" -- "$XSA_BIN" info --model $P/final_model.pt --arch "$TMP/arch.json"
echo '{"FAMILY": 1}' > "$TMP/arch.json"
expect_exit family_number 2 "arch.json: FAMILY must be \"parameter-golf\" or \"modded-nanogpt\"" -- "$XSA_BIN" info --model $P/final_model.pt --arch "$TMP/arch.json"
finish
