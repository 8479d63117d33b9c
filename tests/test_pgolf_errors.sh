#!/usr/bin/env bash
# Parameter-golf artifacts (model/pgolf.c): `info` on the good ones, and one line naming the
# file and the problem, exit 2, for each kind of bad input: a sidecar that disagrees with the
# tensors, an unknown quantization format, a .ptz that is neither zlib, zstd, xz nor brotli (or
# truncated or corrupt), a bad BSHF byte-shuffle header, int6 values outside [-32, 31] and int5
# ones outside [-16, 15], a scale of 0 or NaN, a bad VE_LAYERS, a record option the sidecar and
# the tensors disagree on (fixtures: tools/fixtures/make_pgolf_bad_fixtures.py and
# tools/fixtures/make_pgolf_brotli_fixtures.py).
. "$(dirname "$0")/lib.sh"
P=tests/fixtures/pgolf/xsa_record
B=tests/fixtures/pgolf_bad

expect_exit info_pt 0 "features +weightless RMSNorm, normed embedding, per-head q/k RMSNorm \(no gain\), q_gain, resid_mix, attn/mlp scales, U-Net skips \(before the block\), SmearGate, bigram hash 64x16, logit soft-cap 30" -- "$XSA_BIN" info --model $P/final_model.pt
expect_exit info_int6_xsa 0 "xsa layers +3,4 \(2 of 5; source: config\)" -- "$XSA_BIN" info --model $P/final_model.int6.ptz
expect_exit info_int8_json 0 '"format":[[:space:]]*"pgolf-int8"' -- "$XSA_BIN" info --model $P/final_model.int8.ptz --json
expect_exit info_arch 0 "architecture +pgolf" -- "$XSA_BIN" info --model $P/final_model.int6.ptz
expect_exit info_relu2 0 "activation +relu2" -- "$XSA_BIN" info --model $P/final_model.pt
expect_exit info_gated 0 "features +.*gated XSA" -- "$XSA_BIN" info --model tests/fixtures/pgolf/gated_xsa/final_model.pt
# The family makes xsa_alpha in every block and runs XSA in the last XSA_LAST_N only: gates without
# XSA_LAST_N would be scored as SA, so they are refused; XSA_LAST_N 0 says so on purpose.
mkdir -p "$TMP/gated"; cp tests/fixtures/pgolf/gated_xsa/final_model.int8.ptz "$TMP/gated/"
json_with tests/fixtures/pgolf/gated_xsa/xsa_eval.json "$TMP/gated/xsa_eval.json" XSA_LAST_N
expect_exit gated_needs_xsa_last_n 2 "final_model.int8.ptz: gated XSA gates \(attn.xsa_alpha\) but no XSA_LAST_N: .*set XSA_LAST_N in its xsa_eval.json or --arch FILE \(0: no XSA\), or give --xsa last:N" -- \
    "$XSA_BIN" logprobs --model "$TMP/gated/final_model.int8.ptz" --tokens 1,2,3 --device cpu
expect_exit gated_info_says_unknown 0 "xsa layers +unknown: gated XSA gates" -- "$XSA_BIN" info --model "$TMP/gated/final_model.int8.ptz"
# --xsa says where: the same scores as the sidecar's XSA_LAST_N 3.
"$XSA_BIN" logprobs --model "$TMP/gated/final_model.int8.ptz" --tokens 1,2,3,4 --device cpu --xsa last:3 > "$TMP/gated_xsa.tsv" 2>/dev/null
"$XSA_BIN" logprobs --model tests/fixtures/pgolf/gated_xsa/final_model.int8.ptz --tokens 1,2,3,4 --device cpu > "$TMP/gated_side.tsv" 2>/dev/null
[ -s "$TMP/gated_xsa.tsv" ] && cmp -s "$TMP/gated_xsa.tsv" "$TMP/gated_side.tsv" && pass gated_xsa_flag_settles || fail gated_xsa_flag_settles "--xsa last:3 differs from XSA_LAST_N 3"
json_with tests/fixtures/pgolf/gated_xsa/xsa_eval.json "$TMP/gated/xsa_eval.json" XSA_LAST_N 0
expect_exit gated_xsa_last_n_zero 0 "xsa layers +none" -- "$XSA_BIN" info --model "$TMP/gated/final_model.int8.ptz"
# A bigram the sidecar claims and the file lacks would be scored without it.
mkdir -p "$TMP/nobigram"; cp tests/fixtures/pgolf/gptj_0406/final_model.pt "$TMP/nobigram/"
json_with tests/fixtures/pgolf/gptj_0406/xsa_eval.json "$TMP/nobigram/xsa_eval.json" BIGRAM_VOCAB_SIZE 3072
expect_exit bigram_claimed_absent 2 "xsa_eval.json: BIGRAM_VOCAB_SIZE = 3072, but .*final_model.pt has no bigram.embed.weight" -- \
    "$XSA_BIN" info --model "$TMP/nobigram/final_model.pt"

# The sidecar (or --arch) disagreeing with the shapes names the setting and the tensor.
mkdir -p "$TMP/side"; cp $P/final_model.pt "$TMP/side/"
echo '{"NUM_HEADS": 8}' > "$TMP/side/xsa_eval.json"
expect_exit sidecar_heads 2 "xsa_eval.json: NUM_HEADS = 8 disagrees with .*final_model.pt, whose blocks.0.attn.q_gain gives 4; fix the architecture file" -- "$XSA_BIN" info --model "$TMP/side/final_model.pt"
echo '{"MLP_MULT": 2}' > "$TMP/arch.json"
expect_exit arch_mlp_mult 2 "arch.json: MLP_MULT = 2 disagrees with .*final_model.int8.ptz, whose blocks.0.mlp.fc.weight gives 3" -- "$XSA_BIN" info --model $P/final_model.int8.ptz --arch "$TMP/arch.json"
# A FIFO where the sidecar goes is refused by name at once (timeout: a hang fails).
mkdir -p "$TMP/fifo_side"; cp $P/final_model.int8.ptz "$TMP/fifo_side/"; mkfifo "$TMP/fifo_side/xsa_eval.json"
expect_exit sidecar_fifo 2 "fifo_side/xsa_eval.json: not a regular file" -- timeout 20 "$XSA_BIN" info --model "$TMP/fifo_side/final_model.int8.ptz"
# A value past the range any record uses names the range.
echo '{"LOGIT_SOFTCAP": 1e308}' > "$TMP/arch.json"
expect_exit arch_value_too_large 2 "arch.json: LOGIT_SOFTCAP must be a non-negative number up to 1e9" -- "$XSA_BIN" info --model $P/final_model.int8.ptz --arch "$TMP/arch.json"
# The record sizes its MLP as int(MLP_MULT * MODEL_DIM): a MULT that rounds down to the file's width
# agrees, one that does not is named with its digits.
printf '{"TRAIN_SEQ_LEN": 1024, "MLP_MULT": 3.0000001}' > "$TMP/arch.json"
expect_exit arch_mlp_mult_rounds 0 "layers +5$" -- "$XSA_BIN" info --model $P/final_model.int8.ptz --arch "$TMP/arch.json"
echo '{"MLP_MULT": 2.9999999}' > "$TMP/arch.json"
expect_exit arch_mlp_mult_digits 2 "MLP_MULT = 2.9999999 disagrees" -- "$XSA_BIN" info --model $P/final_model.pt --arch "$TMP/arch.json"
# Settings the family's GPT refuses, and text after the object (json.loads refuses it too).
echo '{"LOGIT_SOFTCAP": 0}' > "$TMP/arch.json"
expect_exit arch_softcap_zero 2 "arch.json: LOGIT_SOFTCAP must be positive" -- "$XSA_BIN" info --model $P/final_model.pt --arch "$TMP/arch.json"
echo '{"ROPE_BASE": 0}' > "$TMP/arch.json"
expect_exit arch_rope_base_zero 2 "arch.json: ROPE_BASE must be positive" -- "$XSA_BIN" info --model $P/final_model.pt --arch "$TMP/arch.json"
printf '{"XSA_LAST_N": 2}\n{"NUM_HEADS": 8}\n' > "$TMP/arch.json"
expect_exit arch_trailing_object 2 "arch.json: text after the JSON object, at byte 18" -- "$XSA_BIN" info --model $P/final_model.pt --arch "$TMP/arch.json"
printf '{"XSA_LAST_N": 2, "XSA_LAST_N": 3}' > "$TMP/arch.json"
expect_exit arch_repeated_key 2 "arch.json: key \"XSA_LAST_N\" stands twice in one object" -- "$XSA_BIN" info --model $P/final_model.pt --arch "$TMP/arch.json"
printf '{"FAMILY": "modded-nanogpt"} x' > "$TMP/arch.json"
expect_exit mng_arch_trailing 2 "arch.json: text after the JSON object, at byte 29" -- \
    "$XSA_BIN" info --model tests/fixtures/mnanogpt/master/state_step000000.pt --arch "$TMP/arch.json"
echo '{"NUM_LAYERS": 7}' > "$TMP/arch.json"
expect_exit arch_layers 2 "arch.json: NUM_LAYERS = 7 disagrees with .*final_model.pt, whose blocks count gives 5" -- "$XSA_BIN" info --model $P/final_model.pt --arch "$TMP/arch.json"
echo '{"USE_SWIGLU": 1}' > "$TMP/arch.json"
expect_exit arch_swiglu 2 "arch.json: USE_SWIGLU = 1 disagrees with .*final_model.pt, whose MLP is relu\^2" -- "$XSA_BIN" info --model $P/final_model.pt --arch "$TMP/arch.json"
echo '{"NUM_KV_HEADS": 4}' > "$TMP/arch.json"
expect_exit arch_kv_heads 2 "NUM_KV_HEADS = 4 disagrees with .*, whose blocks.0.attn.c_k.weight gives 2" -- "$XSA_BIN" info --model $P/final_model.pt --arch "$TMP/arch.json"
# Without an architecture file a file with a SmearGate is taken to train at 2048, as every
# record with one does, so it must say which Rotary trained it; with only that said, what the
# shapes determine is used, and XSA_LAST_N (not in the file) is 0.
cp $P/final_model.int8.ptz "$TMP/noarch.int8.ptz"
expect_exit no_sidecar_record 2 "noarch.int8.ptz: TRAIN_SEQ_LEN \(not given: the records with a SmearGate, as this file has, train at\) 2048 is past 1024" -- "$XSA_BIN" info --model "$TMP/noarch.int8.ptz"
echo '{"TRAIN_SEQ_LEN": 1024}' > "$TMP/seq.json"
expect_exit minimal_sidecar_infers 0 "layers +5$" -- "$XSA_BIN" info --model "$TMP/noarch.int8.ptz" --arch "$TMP/seq.json"
expect_exit minimal_sidecar_no_xsa 0 "xsa layers +none" -- "$XSA_BIN" info --model "$TMP/noarch.int8.ptz" --arch "$TMP/seq.json"
neo=${XSA_SHARED:-../shared}/benchdata/models/parameter_golf_forks/NeoMakesGames_final_model.int8.ptz
if [ -f "$neo" ]; then
    expect_exit shared_blocks_need_layers 2 "NeoMakesGames_final_model.int8.ptz: 2 shared blocks run as NUM_LAYERS layers, which the file does not record; give NUM_LAYERS" -- "$XSA_BIN" info --model "$neo"
    expect_exit shared_blocks_arch 0 "layers +9$" -- "$XSA_BIN" info --model "$neo" --arch tests/fixtures/pgolf_real/NeoMakesGames.arch.json
else
    skip shared_blocks_need_layers "../shared/benchdata absent"
    skip shared_blocks_arch "../shared/benchdata absent"
fi
echo '{"NUM_LAYRES": 5}' > "$TMP/arch.json"
expect_exit arch_unknown_key 2 "\"NUM_LAYRES\" is not a parameter-golf setting" -- "$XSA_BIN" info --model $P/final_model.pt --arch "$TMP/arch.json"
echo '{"XSA_LAST_N": 9, "TRAIN_SEQ_LEN": 1024}' > "$TMP/arch.json"
expect_exit arch_xsa_too_many 2 "XSA_LAST_N 9 exceeds NUM_LAYERS 5" -- "$XSA_BIN" info --model $P/final_model.pt --arch "$TMP/arch.json"
# The records' NTK-aware Rotary: the base for windows of the context past ROTARY_TRAIN_SEQ_LEN
# (10000 * 2^(8/6) for head_dim 8 at 2048 over 1024); EVAL_SEQ_LEN sets the context.
N=tests/fixtures/pgolf/xsa_record_ntk
expect_exit ntk_theta 0 "theta 25198.4$" -- "$XSA_BIN" info --model $N/final_model.pt
expect_exit ntk_context 0 "context +2048$" -- "$XSA_BIN" info --model $N/final_model.pt
echo '{"TRAIN_SEQ_LEN": 2048, "EVAL_SEQ_LEN": 1024, "ROTARY_TRAIN_SEQ_LEN": 1024}' > "$TMP/arch.json"
expect_exit ntk_eval_len_within 0 "theta 10000$" -- "$XSA_BIN" info --model $N/final_model.pt --arch "$TMP/arch.json"
echo '{"EVAL_SEQ_LEN": 4096, "ROTARY_TRAIN_SEQ_LEN": 1024}' > "$TMP/arch.json"
expect_exit ntk_eval_len_past 0 "theta 63496" -- "$XSA_BIN" info --model $N/final_model.pt --arch "$TMP/arch.json"
echo '{"TRAIN_SEQ_LEN": 2048, "ROTARY_TRAIN_SEQ_LEN": 0}' > "$TMP/arch.json"
expect_exit ntk_none 0 "theta 10000$" -- "$XSA_BIN" info --model $N/final_model.pt --arch "$TMP/arch.json"
# Past 1024 without saying which Rotary trained it: the base would be a guess.
echo '{"TRAIN_SEQ_LEN": 2048}' > "$TMP/arch.json"
expect_exit ntk_unsaid 2 "arch.json: TRAIN_SEQ_LEN 2048 is past 1024, .*\"ROTARY_TRAIN_SEQ_LEN\": 1024 for those records, 0 for a Rotary without scaling" -- "$XSA_BIN" info --model $N/final_model.pt --arch "$TMP/arch.json"
echo '{"TRAIN_SEQ_LEN": 2048, "ROTARY_TRAIN_SEQ_LEN": 1024, "ROPE_DIMS": 2}' > "$TMP/arch.json"
expect_exit ntk_two_dims 2 "arch.json: NTK scaling needs more than 2 rotated dimensions, not 2; check ROPE_DIMS" -- "$XSA_BIN" info --model $N/final_model.pt --arch "$TMP/arch.json"
echo '{"TRAIN_SEQ_LEN": 1}' > "$TMP/arch.json"
expect_exit context_too_short 2 "arch.json: the context \(TRAIN_SEQ_LEN\) is 1; it must be in \[2, 1048576\]" -- "$XSA_BIN" info --model $N/final_model.pt --arch "$TMP/arch.json"
expect_exit arch_missing 2 "nonexistent.json" -- "$XSA_BIN" info --model $P/final_model.pt --arch "$TMP/nonexistent.json"

# Damaged artifacts.
expect_exit unknown_format 2 "unknown_format.int8.ptz: unknown quantization format 'int4_magic_v9'" -- "$XSA_BIN" info --model $B/unknown_format.int8.ptz
expect_exit scale_zero 2 "scale_zero.int8.ptz: quantized tensor 'blocks.1.attn.c_q.weight' has scale 0 at row 3" -- "$XSA_BIN" info --model $B/scale_zero.int8.ptz
mkdir -p "$TMP/empty"; cp $P/xsa_eval.json "$TMP/empty/"; : > "$TMP/empty/final_model.int8.ptz"
expect_exit empty_artifact 2 "final_model.int8.ptz: an empty file \(0 bytes\); re-download the artifact" -- "$XSA_BIN" info --model "$TMP/empty/final_model.int8.ptz"
mkdir -p "$TMP/sidedir/xsa_eval.json"; cp $P/final_model.pt "$TMP/sidedir/"
expect_exit sidecar_is_folder 2 "sidedir/xsa_eval.json: a folder where the checkpoint's architecture file should be" -- "$XSA_BIN" info --model "$TMP/sidedir/final_model.pt"
expect_exit no_dtype 2 "no_dtype.int8.ptz: quantized tensor .blocks.0.attn.c_k.weight. has no dtype name in dtypes; the file is corrupt" -- "$XSA_BIN" info --model $B/no_dtype.int8.ptz
expect_exit scale_nan 2 "scale_nan.int8.ptz: quantized tensor 'blocks.0.mlp.fc.weight' has scale nan at row 0" -- "$XSA_BIN" info --model $B/scale_nan.int8.ptz
expect_exit int6_range 2 "out_of_range.int6.ptz: int6 tensor 'blocks.2.mlp.proj.weight' holds 40 at element 98, outside \[-32, 31\]" -- "$XSA_BIN" info --model $B/out_of_range.int6.ptz
expect_exit int6_unknown_type 2 "unknown_type.int6.ptz: tensor 'blocks.0.attn.c_v.weight' has unknown quantization type 'int4'; xsa-eval reads int8, int7, int6, int5 \(also as 'gptq \(intN\)', with '\+lqer' or '\+lqer_asym'\), gate_int8_row and passthrough" -- "$XSA_BIN" info --model $B/unknown_type.int6.ptz
cp $B/xsa_eval.json "$TMP/"
printf 'not compressed at all' > "$TMP/plain.ptz"
expect_exit not_zlib_zstd 2 "plain.ptz: a .ptz that is neither zlib, zstd, xz nor brotli \(first bytes 6e 6f; brotli: " -- "$XSA_BIN" info --model "$TMP/plain.ptz"
head -c 20000 $P/final_model.int6.ptz > "$TMP/cut.int6.ptz"
expect_exit zstd_truncated 2 "cut.int6.ptz: the zstd stream is truncated" -- "$XSA_BIN" info --model "$TMP/cut.int6.ptz"
head -c 20000 $P/final_model.int8.ptz > "$TMP/cut.int8.ptz"
expect_exit zlib_truncated 2 "cut.int8.ptz: the zlib stream is corrupt or truncated" -- "$XSA_BIN" info --model "$TMP/cut.int8.ptz"

# The records from 2026-03-31: brotli (no magic number: what is not zstd, xz or zlib) of a
# byte-shuffled "BSHF" torch.save, and int5 entries. (Exact scores: tests/test_pgolf_formats.c.)
Y=tests/fixtures/pgolf_brotli/tiny
expect_exit brotli_int5_loads 0 "format +pgolf-int6" -- "$XSA_BIN" info --model $Y/mixed.int6.ptz
expect_exit bshf_zlib_loads 0 "layers +2$" -- "$XSA_BIN" info --model $Y/zlib_bshf.int6.ptz
expect_exit brotli_record_loads 0 "layers +5$" -- "$XSA_BIN" info --model tests/fixtures/pgolf_brotli/record/final_model.int6.ptz
mkdir -p "$TMP/br"; cp $Y/xsa_eval.json "$TMP/br/"
head -c 3000 $Y/mixed.int6.ptz > "$TMP/br/cut.int6.ptz"
expect_exit brotli_truncated 2 "cut.int6.ptz: a .ptz that is not a whole zlib, zstd, xz or brotli stream \(read as brotli it ends early: truncated\?\)" -- "$XSA_BIN" info --model "$TMP/br/cut.int6.ptz"
{ cat $Y/mixed.int6.ptz; printf 'xx'; } > "$TMP/br/tail.int6.ptz"
expect_exit brotli_trailing 2 "tail.int6.ptz: a .ptz that is neither zlib, zstd, xz nor brotli \(first bytes 1b [0-9a-f]{2}; read as brotli it ends 2 bytes before the file\)" -- "$XSA_BIN" info --model "$TMP/br/tail.int6.ptz"
printf '\x4c\x01\xff\x00garbage\x93' > "$TMP/br/garbage.ptz"
expect_exit garbage_all_four 2 "garbage.ptz: a .ptz that is neither zlib, zstd, xz nor brotli \(first bytes 4c 01; brotli: [A-Z_0-9]+\); pass the artifact train_gpt.py wrote" -- "$XSA_BIN" info --model "$TMP/br/garbage.ptz"
# A brotli stream whose first bytes pass zlib's header check (window 16, a first uncompressed
# meta-block of 0x1001d1 zero bytes, then the last, empty one) is read as brotli when zlib fails:
# the error is the torch.save reader's about the zeros, not zlib's.
{ printf '\x08\x1d\x00\x11'; head -c 1049041 /dev/zero; printf '\x03'; } > "$TMP/br/zlib_head.ptz"
expect_exit zlib_head_falls_back_to_brotli 2 "zlib_head.ptz: not a torch.save zip archive" -- "$XSA_BIN" info --model "$TMP/br/zlib_head.ptz"
head -c 2 "$TMP/br/zlib_head.ptz" > "$TMP/br/zlib_head_cut.ptz"
expect_exit zlib_head_neither 2 "zlib_head_cut.ptz: the zlib stream is corrupt or truncated" -- "$XSA_BIN" info --model "$TMP/br/zlib_head_cut.ptz"
expect_exit bshf_short 2 "bshf_short.ptz: a byte-shuffled \(BSHF\) payload of 5 bytes, too short for its header" -- "$XSA_BIN" info --model $Y/bshf_short.ptz
expect_exit bshf_stride0 2 "bshf_stride0.ptz: a byte-shuffled \(BSHF\) payload with stride 0 over 64 bytes; the stride must be in \[1, 64\]" -- "$XSA_BIN" info --model $Y/bshf_stride0.ptz
expect_exit bshf_stride_big 2 "bshf_stride_big.ptz: a byte-shuffled \(BSHF\) payload with stride 255 over 20 bytes" -- "$XSA_BIN" info --model $Y/bshf_stride_big.ptz
expect_exit gptq_int4 2 "gptq_int4.int6.ptz: tensor 'blocks.0.attn.c_k.weight' has unknown quantization type 'gptq \(int4\)'; xsa-eval reads int8, int7, int6, int5 \(also as 'gptq \(intN\)', with '\+lqer' or '\+lqer_asym'\), gate_int8_row and passthrough" -- "$XSA_BIN" info --model $Y/gptq_int4.int6.ptz
expect_exit lqer_loads 0 "format +pgolf-int6" -- "$XSA_BIN" info --model $Y/lqer.int6.ptz --arch $Y/xsa_eval.json
expect_exit lqer_shape 2 "lqer_shape.int6.ptz: LQER factors of 'blocks.0.attn.c_q.weight' do not fit its \(16, 16\) values" -- "$XSA_BIN" info --model $Y/lqer_shape.int6.ptz
expect_exit lqer_missing 2 "lqer_missing.int6.ptz: LQER tensor 'blocks.0.attn.c_q.weight' lacks its blocks.0.attn.c_q.weight.lqBs_a tensor" -- "$XSA_BIN" info --model $Y/lqer_missing.int6.ptz
expect_exit int7_range 2 "int7_range.int6.ptz: int7 tensor 'blocks.0.attn.c_k.weight' holds 64 at element 3, outside \[-64, 63\]; the artifact is damaged" -- "$XSA_BIN" info --model $Y/int7_range.int6.ptz
expect_exit int5_range 2 "int5_range.int6.ptz: int5 tensor 'blocks.1.mlp.fc.weight' holds 16 at element 37, outside \[-16, 15\]; the artifact is damaged" -- "$XSA_BIN" info --model $Y/int5_range.int6.ptz

# The records where XSA grows to all layers (2026-03-22..29): weight banks, value embeddings,
# LN_SCALE, leaky relu^2, an xz int6 dict.
A=tests/fixtures/pgolf/xsa_all_0325
expect_exit info_record_line 0 "features .*LN scale 1/sqrt\(layer \+ 1\), leaky relu\^2 \(slope 0.5\), value embedding 16 in layers 3,4" -- "$XSA_BIN" info --model $A/final_model.pt
expect_exit info_ve_projected 0 "value embedding 128 \(projected\) in layers 1" -- "$XSA_BIN" info --model tests/fixtures/pgolf/xsa_all_0325_quant/final_model.int6.ptz
expect_exit info_xsa_all 0 "xsa layers +all \(5 of 5; source: config\)" -- "$XSA_BIN" info --model $A/final_model.int6.ptz
expect_exit info_leaky 0 "activation +leaky_relu2" -- "$XSA_BIN" info --model $A/final_model.pt
# side KEY [VALUE]: the fixture's xsa_eval.json beside copies of its files, KEY set to VALUE (or left out).
mkdir -p "$TMP/rl"; cp $A/final_model.pt $A/final_model.int6.ptz "$TMP/rl/"
side() { json_with $A/xsa_eval.json "$TMP/rl/xsa_eval.json" "$@"; }
side VE_LAYERS '"3,7"'
expect_exit ve_layers_past 2 "xsa_eval.json: VE_LAYERS \"3,7\" names layer 7, past the 5 layers of .*final_model.pt; fix the architecture file" -- "$XSA_BIN" info --model "$TMP/rl/final_model.pt"
side VE_LAYERS '"4"'
expect_exit ve_layers_count 2 "xsa_eval.json: VE_LAYERS \"4\" names 1 layers but .*final_model.int6.ptz has 2 ve_layer_scales" -- "$XSA_BIN" info --model "$TMP/rl/final_model.int6.ptz"
side VE_LAYERS '"3;4"'
expect_exit ve_layers_malformed 2 "xsa_eval.json: VE_LAYERS \"3;4\" is not a comma-separated list of layer indices below 512" -- "$XSA_BIN" info --model "$TMP/rl/final_model.pt"
side VE_LAYERS '"3,3"'
expect_exit ve_layers_twice 2 "xsa_eval.json: VE_LAYERS \"3,3\" names layer 3 twice" -- "$XSA_BIN" info --model "$TMP/rl/final_model.pt"
side VE_LAYERS 3
expect_exit ve_layers_number 2 "xsa_eval.json: VE_LAYERS must be a string of comma-separated layer indices" -- "$XSA_BIN" info --model "$TMP/rl/final_model.pt"
side VE_LAYERS
expect_exit ve_layers_missing 2 "xsa_eval.json: .*final_model.pt has value embeddings, whose layers it does not record; give VE_LAYERS" -- "$XSA_BIN" info --model "$TMP/rl/final_model.pt"
side VE_DIM 128
expect_exit ve_dim_disagrees 2 "xsa_eval.json: VE_DIM = 128 disagrees with .*final_model.pt, whose ve_shared.embed.weight columns gives 16" -- "$XSA_BIN" info --model "$TMP/rl/final_model.pt"
side VE_ENABLED 0
expect_exit ve_enabled_disagrees 2 "VE_ENABLED = 0 disagrees with .*final_model.pt, which has ve_shared.embed.weight" -- "$XSA_BIN" info --model "$TMP/rl/final_model.pt"
side LN_SCALE
expect_exit ln_scale_missing 2 "xsa_eval.json: .*final_model.pt has the 2026-03-22\+ records' weight banks but no LN_SCALE is given" -- "$XSA_BIN" info --model "$TMP/rl/final_model.pt"
side NEGATIVE_SLOPE
expect_exit slope_missing 2 "final_model.int6.ptz has the 2026-03-22\+ records' value embeddings but no NEGATIVE_SLOPE is given" -- "$XSA_BIN" info --model "$TMP/rl/final_model.int6.ptz"
# Where XSA ran and how many dimensions RoPE turns: set by every such record, recorded by no file
# (the defaults, no XSA and all dimensions, would score another model).
side XSA_LAST_N
expect_exit xsa_last_n_missing 2 "xsa_eval.json: .*final_model.pt has the 2026-03-22\+ records' weight banks but no XSA_LAST_N is given, which the file does not record" -- "$XSA_BIN" info --model "$TMP/rl/final_model.pt"
side ROPE_DIMS
expect_exit rope_dims_missing 2 "final_model.int6.ptz has the 2026-03-22\+ records' value embeddings but no ROPE_DIMS is given" -- "$XSA_BIN" info --model "$TMP/rl/final_model.int6.ptz"
side GATED_ATTENTION 1
expect_exit gated_attention_disagrees 2 "xsa_eval.json: GATED_ATTENTION = 1 disagrees with .*final_model.pt, which has no blocks.0.attn.attn_gate.weight; fix the architecture file" -- "$XSA_BIN" info --model "$TMP/rl/final_model.pt"
# The options these records leave off (gated attention, DTG, value residual, trigram) run when on.
O=tests/fixtures/pgolf/options_0325
expect_exit info_options 0 "features .*bigram hash 64x16 \(and trigram\), gated attention, DTG gate, value residual \(v \+ sigmoid\(alpha\) v0\)" -- "$XSA_BIN" info --model $O/final_model.int6.ptz
expect_exit info_vr_lambda 0 "value residual \(lambda0 v0 \+ lambda1 v\)" -- "$XSA_BIN" info --model tests/fixtures/pgolf/options_0323/final_model.pt
echo '{"NUM_LAYERS": 3, "XSA_LAST_N": 3, "VE_LAYERS": "1,2", "LN_SCALE": 1, "NEGATIVE_SLOPE": 0.5, "DTG_ENABLED": 0, "TRAIN_SEQ_LEN": 1024}' > "$TMP/arch.json"
expect_exit dtg_disagrees 2 "arch.json: DTG_ENABLED = 0 disagrees with .*final_model.pt, which has blocks.0.dtg_gate.weight" -- "$XSA_BIN" info --model $O/final_model.pt --arch "$TMP/arch.json"
echo '{"NUM_LAYERS": 2}' > "$TMP/arch.json"
expect_exit dtg_partial 2 "partial_dtg.pt: 1 of 2 blocks have DTG_ENABLED's dtg_gate.weight; the option is all blocks' or none's" -- "$XSA_BIN" info --model $B/partial_dtg.pt --arch "$TMP/arch.json"
echo '{"TRIGRAM": 1, "TRAIN_SEQ_LEN": 1024}' > "$TMP/arch.json"
expect_exit trigram_no_bigram 2 "arch.json: TRIGRAM hashes into the bigram table, but .*final_model.pt has no bigram.embed.weight" -- "$XSA_BIN" info --model tests/fixtures/pgolf/partial_rope/final_model.pt --arch "$TMP/arch.json"
head -c 50000 $A/final_model.int6.ptz > "$TMP/rl/cut.int6.ptz"
expect_exit xz_truncated 2 "cut.int6.ptz: the xz stream is truncated; re-download the artifact" -- "$XSA_BIN" info --model "$TMP/rl/cut.int6.ptz"
cp $A/final_model.int6.ptz "$TMP/rl/bad.int6.ptz"
printf '\x55\xaa\x55\xaa\x55\xaa\x55\xaa' | dd of="$TMP/rl/bad.int6.ptz" bs=1 seek=40000 conv=notrunc status=none
expect_exit xz_corrupt 2 "bad.int6.ptz: the xz stream is corrupt \(liblzma error [0-9]+\); re-download the artifact" -- "$XSA_BIN" info --model "$TMP/rl/bad.int6.ptz"

# The CUDA backend lacks these operations: an explicit request says so, auto falls back.
expect_exit cuda_refused 2 "the CUDA backend does not implement this parameter-golf model's operations" -- "$XSA_BIN" logprobs --model $P/final_model.pt --tokens 1,5,9 --device cuda
expect_exit cuda_refused_record_line 2 "the CUDA backend does not implement this parameter-golf model's operations" -- "$XSA_BIN" logprobs --model $A/final_model.int6.ptz --tokens 1,5,9 --device cuda
finish
