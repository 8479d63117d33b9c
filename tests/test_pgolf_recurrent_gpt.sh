#!/usr/bin/env bash
# The 2026-03-21 non-record's RecurrentGPT (records/track_non_record_16mb/2026-03-21_
# DepthRecurrence_MixedPrecisionQuant; model/pgolf.c): NUM_UNIQUE_BLOCKS blocks cycled over
# EFFECTIVE_DEPTH layers, a rank-r LoRA on q and v per layer, its bigram hash, XSA in the blocks
# the last XSA_LAST_N layers run, its "ZSTD"-tagged mixed_int8_int6_v1 export. Scores are checked
# against its own code by tests/test_model_exact.c; here: what `info` says, each setting the
# sidecar can get wrong (one line, exit 2), and the CUDA refusal. Fixtures:
# tools/fixtures/make_pgolf_fixtures.py (recurrent_0321, _quant, _rank0).
. "$(dirname "$0")/lib.sh"
R=tests/fixtures/pgolf/recurrent_0321
Q=tests/fixtures/pgolf/recurrent_0321_quant
Z=tests/fixtures/pgolf/recurrent_0321_rank0

expect_exit info_features 0 "3 shared blocks, bigram hash 2048x16 \(\(1000003 t_prev \+ t\) mod rows\), rank-4 LoRA on q and v per layer" -- "$XSA_BIN" info --model $R/final_model.pt
# XSA_LAST_N 2 of 7 layers over 3 blocks: layers 5 and 6 run blocks 2 and 0, so every layer of those blocks has it.
expect_exit info_xsa_by_block 0 "xsa layers +0,2,3,5,6 \(5 of 7; source: config\)" -- "$XSA_BIN" info --model $R/final_model.pt
expect_exit info_quant 0 "format +pgolf-int8" -- "$XSA_BIN" info --model $Q/final_model_submission.ptz
expect_exit info_rank0 0 "xsa layers +0,2,4 \(3 of 5" -- "$XSA_BIN" info --model $Z/final_model.pt
expect_exit logprobs_quant 0 "greedy" -- "$XSA_BIN" logprobs --model $Q/final_model_submission.ptz --tokens 1,5,9,300 --device cpu

# The sidecar against the tensors.
mkdir -p "$TMP/r" "$TMP/z"; cp $R/final_model.pt "$TMP/r/"; cp $Z/final_model.pt "$TMP/z/"
side() { json_with $R/xsa_eval.json "$TMP/r/xsa_eval.json" "$@"; }
side NUM_UNIQUE_BLOCKS 4
expect_exit unique_blocks 2 "NUM_UNIQUE_BLOCKS = 4 disagrees with .*final_model.pt, whose blocks count gives 3" -- "$XSA_BIN" info --model "$TMP/r/final_model.pt"
side EFFECTIVE_DEPTH 9
expect_exit effective_depth 2 "EFFECTIVE_DEPTH = 9 disagrees with .*final_model.pt, whose depth_adapters count gives 7" -- "$XSA_BIN" info --model "$TMP/r/final_model.pt"
side DEPTH_LORA_RANK 8
expect_exit lora_rank 2 "DEPTH_LORA_RANK = 8 disagrees with .*final_model.pt, whose depth_adapters.0.q_down.weight rows gives 4" -- "$XSA_BIN" info --model "$TMP/r/final_model.pt"
side BIGRAM_BUCKETS 4096
expect_exit bigram_buckets 2 "BIGRAM_BUCKETS = 4096 disagrees with .*final_model.pt, whose bigram_emb.weight rows gives 2048" -- "$XSA_BIN" info --model "$TMP/r/final_model.pt"
side BIGRAM_DIM 32
expect_exit bigram_dim 2 "BIGRAM_DIM = 32 disagrees with .*final_model.pt, whose bigram_emb.weight columns gives 16" -- "$XSA_BIN" info --model "$TMP/r/final_model.pt"
# Without depth adapters (rank 0) the depth is not in the file: it must be given, and a depth
# whose skips do not fit the file's is refused.
json_with $Z/xsa_eval.json "$TMP/z/xsa_eval.json" EFFECTIVE_DEPTH
expect_exit rank0_needs_depth 2 "2 blocks run as EFFECTIVE_DEPTH layers, which a file without depth adapters does not record; give EFFECTIVE_DEPTH" -- "$XSA_BIN" info --model "$TMP/z/final_model.pt"
json_with $Z/xsa_eval.json "$TMP/z/xsa_eval.json" EFFECTIVE_DEPTH 7
expect_exit rank0_depth_skips 2 "skip_weights has 2 rows but 7 layers have 3 U-Net skips" -- "$XSA_BIN" info --model "$TMP/z/final_model.pt"
json_with $Z/xsa_eval.json "$TMP/z/xsa_eval.json" DEPTH_LORA_RANK 4
expect_exit rank0_lora_rank 2 "DEPTH_LORA_RANK = 4 disagrees with .*final_model.pt, whose depth_adapters \(none\) gives 0" -- "$XSA_BIN" info --model "$TMP/z/final_model.pt"

# compress_bytes' tags: one that does not start its stream is refused.
mkdir -p "$TMP/q"; cp $Q/xsa_eval.json "$TMP/q/"
printf 'ZSTDnot a zstd stream' > "$TMP/q/tag.ptz"
expect_exit zstd_tag 2 "tag.ptz: tagged ZSTD, but no zstd stream follows" -- "$XSA_BIN" info --model "$TMP/q/tag.ptz"
printf 'ZLIBnot a zlib stream' > "$TMP/q/tag.ptz"
expect_exit zlib_tag 2 "tag.ptz: tagged ZLIB, but no zlib stream follows" -- "$XSA_BIN" info --model "$TMP/q/tag.ptz"

expect_exit cuda_refused 2 "the CUDA backend does not implement this parameter-golf model's operations" -- "$XSA_BIN" logprobs --model $R/final_model.pt --tokens 1,5,9 --device cuda
finish
