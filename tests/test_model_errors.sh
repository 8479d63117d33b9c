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

# info --json names each key once (a reader keeps the last of a repeated one).
dups=""
for m in $G $F/llama_gqa demo/sa tests/fixtures/pgolf/xsa_record/final_model.pt; do
    dups+=$("$XSA_BIN" info --model $m --json 2>/dev/null | python3 -c '
import json, sys
keys = [k for k, v in json.loads(sys.stdin.read(), object_pairs_hook=lambda p: p)]
print(" ".join(sorted({k for k in keys if keys.count(k) > 1})), end="")')
done
[ -z "$dups" ] && pass info_json_keys_once || fail info_json_keys_once "repeated: $dups"

# Bad usage.
expect_exit unknown_flag 2 "unknown flag '--frobnicate'" -- "$XSA_BIN" info --model $G --frobnicate
expect_exit missing_model 2 "--model is required" -- "$XSA_BIN" info
expect_exit model_no_value 2 "needs a value" -- "$XSA_BIN" info --model
expect_exit stray_argument 2 "unexpected argument" -- "$XSA_BIN" info --model $G extra
expect_exit missing_file 2 "--model /nonexistent/ckpt: no such file or folder, nor a Hugging Face repo id" -- "$XSA_BIN" info --model /nonexistent/ckpt
# A folder that is no checkpoint (its parent, say) names what is missing and what to pass.
expect_exit folder_without_config 2 "^xsa-eval info: demo: no config.json in this folder, so it is not a checkpoint; pass the checkpoint's own folder" -- "$XSA_BIN" info --model demo
expect_exit not_path_nor_repo 2 "--model bad id!!: no such file or folder, nor a Hugging Face repo id \\(org/name\\[@revision\\]\\)" -- "$XSA_BIN" info --model "bad id!!"
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
expect_exit header_not_json 2 "json/model.safetensors: the header: not valid JSON" -- "$XSA_BIN" info --model "$TMP/json"

mk dtype; LC_ALL=C sed -i 's/"dtype":"F32"/"dtype":"Q32"/' "$TMP/dtype/model.safetensors"
expect_exit unknown_dtype 2 "dtype/model.safetensors: tensor .* has unknown dtype 'Q32'" -- "$XSA_BIN" info --model "$TMP/dtype"

mk idtype; LC_ALL=C sed -i '0,/"dtype":"F32"/s//"dtype":"I32"/' "$TMP/idtype/model.safetensors"
expect_exit unloadable_dtype 2 "idtype/model.safetensors: tensor .* has dtype I32; xsa-eval reads F32, F16 and BF16" -- "$XSA_BIN" info --model "$TMP/idtype"

mk shape; sed -i 's/"n_positions": 64/"n_positions": 65/' "$TMP/shape/config.json"
expect_exit shape_mismatch 2 "shape/model.safetensors: tensor 'transformer.wpe.weight' has shape \[64, 32\] but config.json implies \[65, 32\]" -- "$XSA_BIN" info --model "$TMP/shape"

mk trailing; printf '\n{"model_type": "gpt2"}\n' >> "$TMP/trailing/config.json"
expect_exit config_trailing_text 2 "trailing/config.json: text after the JSON object, at byte" -- "$XSA_BIN" info --model "$TMP/trailing"
mk mtype; sed -i 's/"model_type": "gpt2"/"model_type": "bert"/' "$TMP/mtype/config.json"
expect_exit unknown_model_type 2 "mtype/config.json: model_type \"bert\" is not supported \(supported: gpt2, llama, mistral, ministral, qwen2, qwen3, olmo, olmo2, gpt_neox, phi, phi3, gemma, gemma2, gemma3_text, opt, stablelm, smollm3, granite\)" -- "$XSA_BIN" info --model "$TMP/mtype"

mk act; sed -i 's/"gelu_new"/"relu"/' "$TMP/act/config.json"
expect_exit bad_activation 2 "act/config.json: activation_function \"relu\" is not supported" -- "$XSA_BIN" info --model "$TMP/act"

mk xsacfg; sed -i 's/"n_layer": 2,/"n_layer": 2, "xsa_layers": [5],/' "$TMP/xsacfg/config.json"
expect_exit config_xsa_out_of_range 2 "xsacfg/config.json: \"xsa_layers\" names layer 5 but the model has 2 layers" -- "$XSA_BIN" info --model "$TMP/xsacfg"

mk xsaok; sed -i 's/"n_layer": 2,/"n_layer": 2, "xsa_layers": "all",/' "$TMP/xsaok/config.json"
expect_exit config_xsa_all 0 "xsa layers +all \(2 of 2; source: config\)" -- "$XSA_BIN" info --model "$TMP/xsaok"
expect_exit xsa_flag_overrides_config 0 "xsa layers +none \(0 of 2; source: --xsa\)" -- "$XSA_BIN" info --model "$TMP/xsaok" --xsa none

mkdir -p "$TMP/llama"; cp $F/llama_gqa/* "$TMP/llama/"
sed -i 's/"rope_type": "default"/"rope_type": "longrope"/' "$TMP/llama/config.json"
expect_exit rope_scaling_refused 2 "llama/config.json: rope_parameters type \"longrope\" is not supported" -- "$XSA_BIN" info --model "$TMP/llama"

mk noweights; rm "$TMP/noweights/model.safetensors"
expect_exit no_weights 2 "noweights: no model.safetensors, model.safetensors.index.json, pytorch_model.bin or pytorch_model.bin.index.json" -- "$XSA_BIN" info --model "$TMP/noweights"

expect_exit weights_file_not_dir 2 "pass the checkpoint directory" -- "$XSA_BIN" info --model $G/model.safetensors

# Damaged weights: a NaN or an Inf is refused at load, naming the file, the tensor and the
# element, never scored (every log-likelihood would be NaN and the first choice would win).
# poke FILE TENSOR ELEMENT BYTES [COUNT]: overwrites COUNT (default 1) elements of TENSOR from
# ELEMENT on with BYTES (printf escapes, one element of the tensor's dtype, little-endian).
poke() {
    local f=$1 name=$2 el=$3 bytes=$4 count=${5:-1} hlen entry begin size all=""
    hlen=$(od -An -tu8 -N8 "$f" | tr -d ' ')
    entry=$(head -c $((8 + hlen)) "$f" | tail -c "$hlen" | grep -oE "\"${name//./\\.}\":\{[^}]*\}")
    begin=$(echo "$entry" | sed -E 's/.*"data_offsets":\[([0-9]+),.*/\1/')
    case "$entry" in *'"F32"'*) size=4 ;; *) size=2 ;; esac
    for ((i = 0; i < count; i++)); do all="$all$bytes"; done
    printf "$all" | dd of="$f" bs=1 seek=$((8 + hlen + begin + size * el)) conv=notrunc 2>/dev/null
}
mkd() { rm -rf "$TMP/$1"; mkdir "$TMP/$1"; cp "$2"/config.json "$2"/model.safetensors "$TMP/$1/"; }
F32_NAN='\000\000\300\177' F32_INF='\000\000\200\177' F32_NEG_INF='\000\000\200\377'
mkd nan_emb demo/sa; poke "$TMP/nan_emb/model.safetensors" model.embed_tokens.weight 123 "$F32_NAN"
expect_exit nan_in_embedding 2 "nan_emb/model.safetensors: tensor 'model.embed_tokens.weight' holds NaN at element 123 \(of 65536\): the checkpoint is damaged" -- "$XSA_BIN" info --model "$TMP/nan_emb"
mkd inf_q demo/sa; poke "$TMP/inf_q/model.safetensors" model.layers.0.self_attn.q_proj.weight 4095 "$F32_INF"
expect_exit inf_in_layer_weight 2 "inf_q/model.safetensors: tensor 'model.layers.0.self_attn.q_proj.weight' holds \+Inf at element 4095 \(of 4096\)" -- "$XSA_BIN" info --model "$TMP/inf_q"
mkd nan_norm demo/sa; poke "$TMP/nan_norm/model.safetensors" model.layers.3.post_attention_layernorm.weight 0 "$F32_NAN" 64
expect_exit all_nan_norm_weight 2 "nan_norm/model.safetensors: tensor 'model.layers.3.post_attention_layernorm.weight' holds NaN at element 0 \(of 64; 64 values are NaN or Inf\)" -- "$XSA_BIN" info --model "$TMP/nan_norm"
mk inf_gpt2; poke "$TMP/inf_gpt2/model.safetensors" transformer.h.1.attn.c_attn.weight 100 "$F32_NEG_INF"
expect_exit neg_inf_in_gpt2_conv1d 2 "inf_gpt2/model.safetensors: tensor 'transformer.h.1.attn.c_attn.weight' holds -Inf at element 100 \(of 3072\)" -- "$XSA_BIN" info --model "$TMP/inf_gpt2"
mkd nan_bf16 $F/llama_bf16; poke "$TMP/nan_bf16/model.safetensors" model.layers.2.mlp.down_proj.weight 7 '\300\177'
expect_exit nan_in_bf16 2 "nan_bf16/model.safetensors: tensor 'model.layers.2.mlp.down_proj.weight' holds NaN at element 7 \(of 2048\)" -- "$XSA_BIN" info --model "$TMP/nan_bf16"
# An F16 checkpoint: llama_bf16's header retyped (same length; its bf16 bit patterns are all
# finite as f16 too), then one f16 NaN.
mkd f16 $F/llama_bf16; LC_ALL=C sed -i 's/"BF16"/"F16" /g' "$TMP/f16/model.safetensors"
expect_exit f16_finite_loads 0 "dtype +F16" -- "$XSA_BIN" info --model "$TMP/f16"
poke "$TMP/f16/model.safetensors" model.norm.weight 31 '\000\176'
expect_exit nan_in_f16 2 "f16/model.safetensors: tensor 'model.norm.weight' holds NaN at element 31 \(of 32\)" -- "$XSA_BIN" info --model "$TMP/f16"
# 3e38 and FLT_MAX are finite float32: loaded as they are (whether a forward pass overflows is
# the backend's concern), and the weights SHA-256 is that of the file.
mkd huge demo/sa; poke "$TMP/huge/model.safetensors" model.layers.1.mlp.up_proj.weight 9 '\346\261\141\177\377\377\177\177'
sha=$(sha256sum "$TMP/huge/model.safetensors" | cut -c1-64)
expect_exit f32_huge_finite_loads 0 "weights sha256 $sha" -- "$XSA_BIN" info --model "$TMP/huge"
if [ -f "$stories" ]; then
    cp "$stories" "$TMP/nan.bin"; chmod u+w "$TMP/nan.bin"
    # rms_att_weight follows the (512, 64) embedding: float 32768 + 64 + 5 is layer 1's element 5.
    printf "$F32_NAN" | dd of="$TMP/nan.bin" bs=1 seek=$((28 + 4 * (32768 + 64 + 5))) conv=notrunc 2>/dev/null
    expect_exit nan_in_llama2c 2 "nan.bin: tensor 'rms_att_weight' holds NaN at element 69 \(of 320\)" -- "$XSA_BIN" info --model "$TMP/nan.bin"
else
    skip nan_in_llama2c "../shared/benchdata absent"
fi

# A model.safetensors that is there but is no file is named as what it is, not reported absent.
mk wloop; rm "$TMP/wloop/model.safetensors"; ln -s model.safetensors "$TMP/wloop/model.safetensors"
expect_exit weights_symlink_loop 2 "wloop/model.safetensors: a symbolic link that loops .*point it at the weights file" -- "$XSA_BIN" info --model "$TMP/wloop"
mk wdangle; rm "$TMP/wdangle/model.safetensors"; ln -s blobs/missing "$TMP/wdangle/model.safetensors"
expect_exit weights_dangling_symlink 2 "wdangle/model.safetensors: a symbolic link to blobs/missing, which does not exist" -- "$XSA_BIN" info --model "$TMP/wdangle"
mk wdir; rm "$TMP/wdir/model.safetensors"; mkdir "$TMP/wdir/model.safetensors"
expect_exit weights_is_directory 2 "wdir/model.safetensors: a directory, not a safetensors file" -- "$XSA_BIN" info --model "$TMP/wdir"
mk idir; rm "$TMP/idir/model.safetensors"; mkdir "$TMP/idir/model.safetensors.index.json"
expect_exit index_is_directory 2 "idir/model.safetensors.index.json: a directory, not a shard index" -- "$XSA_BIN" info --model "$TMP/idir"
if [ "$(id -u)" != 0 ]; then
    mk noexec; chmod 666 "$TMP/noexec"
    expect_exit dir_unsearchable 2 "noexec: cannot search the checkpoint directory \(Permission denied\); .*chmod u\+rx" -- "$XSA_BIN" info --model "$TMP/noexec"
    chmod 000 "$TMP/noexec"
    expect_exit dir_mode_000 2 "noexec: cannot search the checkpoint directory \(Permission denied\)" -- "$XSA_BIN" info --model "$TMP/noexec"
    chmod 755 "$TMP/noexec"
else
    skip dir_unsearchable "running as root: permissions do not apply"
    skip dir_mode_000 "running as root: permissions do not apply"
fi

# A tied head saved beside its embedding must be that embedding (transformers 4 ties them, 5 reads
# the file's head): the same bytes load, different ones are refused naming both.
add_head() {  # $1 folder, $2 1 to change the head's first byte
python3 - "$TMP/$1/model.safetensors" "$2" <<'PY'
import json, struct, sys
p, change = sys.argv[1], sys.argv[2] == "1"
b = open(p, "rb").read()
n = struct.unpack("<Q", b[:8])[0]
h, data = json.loads(b[8:8 + n]), bytearray(b[8 + n:])
e = next(h[k] for k in ("wte.weight", "transformer.wte.weight", "model.embed_tokens.weight") if k in h)
lo, hi = e["data_offsets"]
head = bytearray(data[lo:hi])
if change: head[0] ^= 0x40
h["lm_head.weight"] = {"dtype": e["dtype"], "shape": e["shape"], "data_offsets": [len(data), len(data) + len(head)]}
t = json.dumps(h).encode(); t += b" " * ((8 - len(t) % 8) % 8)
open(p, "wb").write(struct.pack("<Q", len(t)) + t + bytes(data) + bytes(head))
PY
}
mk tiedsame; add_head tiedsame 0
expect_exit tied_head_saved_same 0 "tied head +yes" -- "$XSA_BIN" info --model "$TMP/tiedsame"
mk tieddiff; add_head tieddiff 1
rm -rf "$TMP/tiedllama"; cp -r $F/llama_rope_linear "$TMP/tiedllama"; add_head tiedllama 1
expect_exit tied_head_saved_different_llama 2 "lm_head.weight differs from model.embed_tokens.weight" -- "$XSA_BIN" info --model "$TMP/tiedllama"
expect_exit tied_head_saved_different 2 "tieddiff: config.json ties the head to the embedding .*lm_head.weight differs from (transformer.)?wte.weight" -- "$XSA_BIN" logprobs --model "$TMP/tieddiff" --tokens 1,2,3

# config.json keys given twice: the last one counts, as in Python's json (so transformers).
mk dupkey; sed -i 's/"n_layer": 2,/"n_layer": 3, "n_layer": 2,/' "$TMP/dupkey/config.json"
expect_exit config_duplicate_key_last_wins 0 "layers +2$" -- "$XSA_BIN" info --model "$TMP/dupkey"

printf 'not a model' > "$TMP/garbage.bin"
expect_exit llama2c_too_short 2 "garbage.bin: 11 bytes is too short" -- "$XSA_BIN" info --model "$TMP/garbage.bin"
printf 'this is not a llama2.c checkpoint at all' > "$TMP/garbage.bin"
expect_exit llama2c_garbage 2 "garbage.bin: header dim = .* is outside" -- "$XSA_BIN" info --model "$TMP/garbage.bin"

# A FIFO where a checkpoint's file goes is refused by name at once, never waited on (timeout: a
# hang fails the test, 124).
for f in config.json tokenizer.json; do
    rm -rf "$TMP/fifo" && cp -r demo/sa "$TMP/fifo" && rm "$TMP/fifo/$f" && mkfifo "$TMP/fifo/$f"
    expect_exit "fifo_${f%.json}" 2 "fifo/$f: not a regular file \(a FIFO, device or folder\)" -- \
        timeout 20 "$XSA_BIN" logprobs --model "$TMP/fifo" --text hi --device cpu
done
rm -rf "$TMP/fifo" && cp -r $F/gpt2_tiny_sharded "$TMP/fifo" && rm "$TMP/fifo/model-00002-of-00003.safetensors" &&
    mkfifo "$TMP/fifo/model-00002-of-00003.safetensors"
expect_exit fifo_shard 2 "model-00002-of-00003.safetensors: not a regular file" -- timeout 20 "$XSA_BIN" info --model "$TMP/fifo"
finish
