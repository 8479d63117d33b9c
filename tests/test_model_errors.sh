#!/usr/bin/env bash
# `xsa-eval info` on good checkpoints, and on bad flags and corrupt checkpoints: each bad
# input must give one line naming the file and the problem, and exit 2 (never a crash).
. "$(dirname "$0")/lib.sh"
F=tests/fixtures/models
G=$F/gpt2_tiny

# Good inputs.
expect_exit info_gpt2 0 "architecture +gpt2" -- "$XSA_BIN" info --model $G
expect_exit info_gelu_new 0 "activation +gelu_new" -- "$XSA_BIN" info --model $G
expect_exit info_gelu_exact 0 "activation +gelu$" -- "$XSA_BIN" info --model $F/gpt2_gelu
expect_exit info_swiglu_json 0 '"activation":[[:space:]]*"swiglu"' -- "$XSA_BIN" info --model $F/llama_gqa --json
expect_exit info_sharded 0 "parameters +37120" -- "$XSA_BIN" info --model $F/gpt2_tiny_sharded
expect_exit info_llama_gqa 0 "heads +4 \(kv heads 2\)" -- "$XSA_BIN" info --model $F/llama_gqa
expect_exit info_bf16_json 0 '"dtype":[[:space:]]*"BF16"' -- "$XSA_BIN" info --model $F/llama_bf16 --json
expect_exit info_xsa_override 0 "xsa layers +0,2 \(2 of 3; source: --xsa\)" -- "$XSA_BIN" info --model $F/llama_gqa --xsa 0,2
expect_exit info_xsa_last 0 "xsa layers +1,2 " -- "$XSA_BIN" info --model $F/llama_gqa --xsa last:2
expect_exit info_help 0 "usage: xsa-eval info" -- "$XSA_BIN" info --help
stories=${XSA_SHARED:-../shared}/benchdata/models/stories260K/stories260K.bin
if [ -f "$stories" ]; then
    expect_exit info_stories260K 0 "format +llama2c" -- "$XSA_BIN" info --model "$stories"
    head -c 1056000 "$stories" > "$TMP/short.bin"
    expect_exit llama2c_truncated 2 "short.bin: file is 1056000 bytes but its header .* implies 1056540" -- "$XSA_BIN" info --model "$TMP/short.bin"
else
    skip info_stories260K "../shared/benchdata absent"
    skip llama2c_truncated "../shared/benchdata absent"
fi

# Bad usage.
expect_exit unknown_flag 2 "unknown flag '--frobnicate'" -- "$XSA_BIN" info --model $G --frobnicate
expect_exit missing_model 2 "--model is required" -- "$XSA_BIN" info
expect_exit model_no_value 2 "needs a value" -- "$XSA_BIN" info --model
expect_exit stray_argument 2 "unexpected argument" -- "$XSA_BIN" info --model $G extra
expect_exit missing_file 2 "/nonexistent/ckpt: cannot open" -- "$XSA_BIN" info --model /nonexistent/ckpt
expect_exit xsa_out_of_range 2 "layer 7 is out of range; the model has 3 layers" -- "$XSA_BIN" info --model $F/llama_gqa --xsa 7
expect_exit xsa_garbage 2 "--xsa 'x1'" -- "$XSA_BIN" info --model $F/llama_gqa --xsa x1
expect_exit xsa_last_too_many 2 "only 3 layers" -- "$XSA_BIN" info --model $F/llama_gqa --xsa last:4

# Corrupt checkpoints: copies of gpt2_tiny, damaged.
mk() { rm -rf "$TMP/$1"; mkdir "$TMP/$1"; cp $G/config.json $G/model.safetensors "$TMP/$1/"; }

mk trunc; head -c 100000 $G/model.safetensors > "$TMP/trunc/model.safetensors"
expect_exit truncated_safetensors 2 "trunc/model.safetensors: tensor .* run past" -- "$XSA_BIN" info --model "$TMP/trunc"

mk tiny; head -c 5 $G/model.safetensors > "$TMP/tiny/model.safetensors"
expect_exit safetensors_too_short 2 "tiny/model.safetensors: 5 bytes is too short" -- "$XSA_BIN" info --model "$TMP/tiny"

mk hlen; printf '\377\377\377\000\000\000\000\000' | dd of="$TMP/hlen/model.safetensors" bs=1 count=8 conv=notrunc 2>/dev/null
expect_exit header_beyond_file 2 "hlen/model.safetensors: header length 16777215 is beyond" -- "$XSA_BIN" info --model "$TMP/hlen"

mk json; printf 'XX' | dd of="$TMP/json/model.safetensors" bs=1 seek=8 count=2 conv=notrunc 2>/dev/null
expect_exit header_not_json 2 "json/model.safetensors: the header is not a JSON object" -- "$XSA_BIN" info --model "$TMP/json"

mk dtype; LC_ALL=C sed -i 's/"dtype":"F32"/"dtype":"Q32"/' "$TMP/dtype/model.safetensors"
expect_exit unknown_dtype 2 "dtype/model.safetensors: tensor .* has unknown dtype 'Q32'" -- "$XSA_BIN" info --model "$TMP/dtype"

mk idtype; LC_ALL=C sed -i '0,/"dtype":"F32"/s//"dtype":"I32"/' "$TMP/idtype/model.safetensors"
expect_exit unloadable_dtype 2 "idtype/model.safetensors: tensor .* has dtype I32; xsa-eval reads F32, F16 and BF16" -- "$XSA_BIN" info --model "$TMP/idtype"

mk shape; sed -i 's/"n_positions": 64/"n_positions": 65/' "$TMP/shape/config.json"
expect_exit shape_mismatch 2 "shape/model.safetensors: tensor 'transformer.wpe.weight' has shape \[64, 32\] but config.json implies \[65, 32\]" -- "$XSA_BIN" info --model "$TMP/shape"

mk mtype; sed -i 's/"model_type": "gpt2"/"model_type": "bert"/' "$TMP/mtype/config.json"
expect_exit unknown_model_type 2 "mtype/config.json: model_type \"bert\" is not supported \(supported: gpt2, llama\)" -- "$XSA_BIN" info --model "$TMP/mtype"

mk act; sed -i 's/"gelu_new"/"relu"/' "$TMP/act/config.json"
expect_exit bad_activation 2 "act/config.json: activation_function \"relu\" is not supported" -- "$XSA_BIN" info --model "$TMP/act"

mk xsacfg; sed -i 's/"n_layer": 2,/"n_layer": 2, "xsa_layers": [5],/' "$TMP/xsacfg/config.json"
expect_exit config_xsa_out_of_range 2 "xsacfg/config.json: \"xsa_layers\" names layer 5 but the model has 2 layers" -- "$XSA_BIN" info --model "$TMP/xsacfg"

mk xsaok; sed -i 's/"n_layer": 2,/"n_layer": 2, "xsa_layers": "all",/' "$TMP/xsaok/config.json"
expect_exit config_xsa_all 0 "xsa layers +all \(2 of 2; source: config\)" -- "$XSA_BIN" info --model "$TMP/xsaok"
expect_exit xsa_flag_overrides_config 0 "xsa layers +none \(0 of 2; source: --xsa\)" -- "$XSA_BIN" info --model "$TMP/xsaok" --xsa none

mkdir -p "$TMP/llama"; cp $F/llama_gqa/* "$TMP/llama/"
sed -i 's/"rope_type": "default"/"rope_type": "yarn"/' "$TMP/llama/config.json"
expect_exit rope_scaling_refused 2 "llama/config.json: rope_parameters type \"yarn\" is not supported" -- "$XSA_BIN" info --model "$TMP/llama"

mk noweights; rm "$TMP/noweights/model.safetensors"
expect_exit no_weights 2 "noweights: no model.safetensors or model.safetensors.index.json" -- "$XSA_BIN" info --model "$TMP/noweights"

expect_exit weights_file_not_dir 2 "pass the checkpoint directory" -- "$XSA_BIN" info --model $G/model.safetensors

printf 'not a model' > "$TMP/garbage.bin"
expect_exit llama2c_too_short 2 "garbage.bin: 11 bytes is too short" -- "$XSA_BIN" info --model "$TMP/garbage.bin"
printf 'this is not a llama2.c checkpoint at all' > "$TMP/garbage.bin"
expect_exit llama2c_garbage 2 "garbage.bin: header dim = .* is outside" -- "$XSA_BIN" info --model "$TMP/garbage.bin"
finish
