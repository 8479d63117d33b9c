#!/usr/bin/env bash
# stablelm, smollm3 and granite through the command line: `info` names each feature, XSA runs,
# the features the CUDA backend lacks (stablelm's qk_layernorm, smollm3's NoPE layers, granite's
# multipliers) are refused by --device cuda by name and scored on the CPU by --device auto, the
# config classes' defaults score as the fixtures' explicit values, and bad configs are one line
# naming the key, exit 2. Their log-probabilities against transformers: tests/test_model_exact.c.
. "$(dirname "$0")/lib.sh"
F=tests/fixtures/models
toks=5,6,7,8,9,10,11,12,13,14,15,16,17

# same NAME DIR_A DIR_B: both folders score the tokens alike (and score at all).
same() {
    local a b
    a=$("$XSA_BIN" logprobs --device cpu --model "$2" --tokens $toks 2>/dev/null)
    b=$("$XSA_BIN" logprobs --device cpu --model "$3" --tokens $toks 2>/dev/null)
    [ -n "$a" ] && [ "$a" = "$b" ] && pass "$1" || fail "$1" "$2 and $3 score differently"
}
# edit SRC DST PYTHON: a copy of fixture SRC at $TMP/DST with its config.json dict `c` edited.
edit() {
    rm -rf "$TMP/$2"; cp -r "$F/$1" "$TMP/$2"
    python3 -c "import json, sys; p = sys.argv[1]; c = json.load(open(p)); $3; json.dump(c, open(p, 'w'))" "$TMP/$2/config.json"
}

# info: the family and its features.
expect_exit stablelm_features 0 "features +LayerNorm pre-norms, q/k/v biases, partial rotary \(4 of 16 dims\), untied head$" -- "$XSA_BIN" info --model $F/stablelm
expect_exit stablelm_arch 0 "architecture +stablelm$" -- "$XSA_BIN" info --model $F/stablelm
expect_exit stablelm_qk_features 0 "features +LayerNorm pre-norms, per-head q/k LayerNorm \(a gain per head, no bias\), partial rotary \(4 of 8 dims\), parallel attention \+ MLP residual \(one norm\), grouped-query attention$" -- "$XSA_BIN" info --model $F/stablelm_qk_parallel
expect_exit smollm3_features 0 "features +RMSNorm pre-norms, sliding window 6 \(1 of 3 layers\), NoPE \(no RoPE\) in 1 of 3 layers, grouped-query attention$" -- "$XSA_BIN" info --model $F/smollm3
expect_exit smollm3_rope 0 "rope +half \(rotate_half\), theta 2e\+06" -- "$XSA_BIN" info --model $F/smollm3
expect_exit granite_features 0 "features +RMSNorm pre-norms, embedding times 4, attention scale 0.2 \(attention_multiplier\), residual multiplier 0.5, logits divided by 2.5, grouped-query attention$" -- "$XSA_BIN" info --model $F/granite
expect_exit granite_arch 0 "architecture +granite$" -- "$XSA_BIN" info --model $F/granite

# XSA in each (its numbers: test_model_exact.c).
for m in stablelm stablelm_qk_parallel smollm3 granite; do
    expect_exit "xsa_$m" 0 "^2	" -- "$XSA_BIN" logprobs --device cpu --model $F/$m --tokens 5,6,7,8,9,10,11,12 --xsa all
done

# The CPU-only features: --device cuda refuses them by name (GPU or not), auto scores on the CPU.
expect_one_line stablelm_qk_cuda_refused 2 "--device cuda: the CUDA backend does not implement stablelm's qk_layernorm \(a LayerNorm per head on q and k\); use --device cpu" -- "$XSA_BIN" logprobs --model $F/stablelm_qk_parallel --tokens 5,6,7 --device cuda
expect_one_line smollm3_cuda_refused 2 "--device cuda: the CUDA backend does not implement smollm3's NoPE layers" -- "$XSA_BIN" logprobs --model $F/smollm3 --tokens 5,6,7 --device cuda
expect_one_line granite_cuda_refused 2 "--device cuda: the CUDA backend does not implement granite's multipliers" -- "$XSA_BIN" logprobs --model $F/granite --tokens 5,6,7 --device cuda
for m in stablelm_qk_parallel:qk_layernorm smollm3:NoPE granite:multipliers; do
    a=$("$XSA_BIN" logprobs --device auto --model $F/${m%%:*} --tokens $toks 2>"$TMP/auto.err")
    b=$("$XSA_BIN" logprobs --device cpu --model $F/${m%%:*} --tokens $toks 2>/dev/null)
    [ -n "$a" ] && [ "$a" = "$b" ] && grep -q "${m#*:}.*using the CPU backend" "$TMP/auto.err" && pass "${m%%:*}_auto_cpu" || fail "${m%%:*}_auto_cpu" "auto did not score ${m%%:*} on the CPU saying why: $(head -c 200 "$TMP/auto.err")"
done
# stablelm-2-1_6b's layout (and the parallel residual alone) uses only features the CUDA backend has.
edit stablelm_qk_parallel stablelm_par 'c["qk_layernorm"] = False'
rm -f "$TMP"/stablelm_par/model.safetensors
python3 - "$F/stablelm_qk_parallel/model.safetensors" "$TMP/stablelm_par/model.safetensors" <<'PY' || true
import json, struct, sys
# the fixture without its q/k LayerNorm tensors (safetensors rewritten with the standard library)
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
head = json.loads(raw[8:8 + n]); data = raw[8 + n:]
keep = {k: v for k, v in head.items() if k != "__metadata__" and "layernorm.norms" not in k}
out, parts, off = {}, [], 0
for k in sorted(keep):
    b, e = keep[k]["data_offsets"]
    parts.append(data[b:e]); out[k] = dict(keep[k], data_offsets=[off, off + e - b]); off += e - b
h = json.dumps(out).encode(); h += b" " * ((8 - len(h) % 8) % 8)
open(sys.argv[2], "wb").write(struct.pack("<Q", len(h)) + h + b"".join(parts))
PY
for m in $F/stablelm "$TMP/stablelm_par"; do
    out=$("$XSA_BIN" logprobs --model "$m" --tokens 5,6,7 --device cuda 2>&1)
    echo "$out" | grep -q "does not implement" && fail "$(basename "$m")_cuda_eligible" "$out" || pass "$(basename "$m")_cuda_eligible"
done
expect_exit stablelm_parallel_only 0 "parallel attention \+ MLP residual \(one norm\)" -- "$XSA_BIN" info --model "$TMP/stablelm_par"

# The config classes' defaults: StableLmConfig's partial_rotary_factor 0.25; SmolLM3Config's
# rope_theta 2e6, NoPE every no_rope_layer_interval-th layer and sliding_attention on the NoPE
# layers when layer_types is absent; GraniteConfig's multipliers 1.0 (the plain llama's scores).
edit stablelm sl_default 'c["rope_parameters"].pop("partial_rotary_factor")'
same stablelm_partial_default $F/stablelm "$TMP/sl_default"
edit smollm3 sm_default 'c.pop("layer_types"); c.pop("no_rope_layers"); c["no_rope_layer_interval"] = 2; c["rope_parameters"].pop("rope_theta")'
same smollm3_defaults $F/smollm3 "$TMP/sm_default"
edit smollm3 sm_nowin 'c.pop("layer_types"); c["use_sliding_window"] = False'
expect_exit smollm3_no_window 0 "features +RMSNorm pre-norms, NoPE \(no RoPE\) in 1 of 3 layers, grouped-query attention$" -- "$XSA_BIN" info --model "$TMP/sm_nowin"
# use_sliding_window with no NoPE layer: no layer slides (SmolLM3Config's layer_types), and info says no window
edit smollm3 sm_allrope 'c.pop("layer_types"); c["no_rope_layers"] = [1, 1, 1]'
expect_exit smollm3_window_no_layer 0 "features +RMSNorm pre-norms, grouped-query attention$" -- "$XSA_BIN" info --model "$TMP/sm_allrope"
edit granite granite_ones 'c.update(embedding_multiplier=1.0, attention_multiplier=0.35355339059327373, residual_multiplier=1.0, logits_scaling=1.0)'
edit granite granite_as_llama 'c.update(model_type="llama"); [c.pop(k) for k in ("embedding_multiplier", "attention_multiplier", "residual_multiplier", "logits_scaling")]'
a=$("$XSA_BIN" logprobs --device cpu --model "$TMP/granite_ones" --tokens $toks 2>/dev/null | tail -n +2 | cut -f3)
b=$("$XSA_BIN" logprobs --device cpu --model "$TMP/granite_as_llama" --tokens $toks 2>/dev/null | tail -n +2 | cut -f3)
python3 -c 'import sys; a, b = ([float(x) for x in s.split()] for s in sys.argv[1:]); assert a and len(a) == len(b) and max(abs(x - y) for x, y in zip(a, b)) < 1e-5' "$a" "$b" \
    && pass granite_unit_multipliers_are_llama || fail granite_unit_multipliers_are_llama "granite with multipliers 1 (and 8^-1/2) scores unlike llama"

# num_key_value_heads left out: SmolLM3Config's default is 4 (null: the heads), StableLmConfig's
# 32 (published configs carry the key; hand-written ones may not). smollm3 with 8 heads of 4 dims
# fits the fixture's tensors with 4 KV heads only.
edit smollm3 sm_kv4 'c["num_attention_heads"] = 8; c["num_key_value_heads"] = 4'
edit smollm3 sm_kv_absent 'c["num_attention_heads"] = 8; c.pop("num_key_value_heads")'
same smollm3_kv_default_4 "$TMP/sm_kv4" "$TMP/sm_kv_absent"
edit smollm3 sm_kv_null 'c["num_attention_heads"] = 8; c["num_key_value_heads"] = None'
expect_one_line smollm3_kv_null_is_heads 2 "sm_kv_null/model.safetensors: tensor 'model.layers.0.self_attn.k_proj.weight' has shape \[16, 32\] but config.json implies \[32, 32\]" -- "$XSA_BIN" info --model "$TMP/sm_kv_null"
edit stablelm sl_kv_absent 'c.pop("num_key_value_heads")'
expect_one_line stablelm_kv_default_32 2 "sl_kv_absent/config.json: \"num_key_value_heads\" is missing and StableLmConfig's default 32 does not divide num_attention_heads 2" -- "$XSA_BIN" info --model "$TMP/sl_kv_absent"

# Bad configs: one line naming the key, exit 2.
edit stablelm sl_act 'c["hidden_act"] = "gelu"'
expect_one_line stablelm_activation 2 "sl_act/config.json: hidden_act \"gelu\" is not supported for stablelm \(xsa-eval implements silu\)" -- "$XSA_BIN" info --model "$TMP/sl_act"
edit stablelm sl_hd 'c["head_dim"] = 8'
expect_one_line stablelm_head_dim 2 "sl_hd/config.json: stablelm head_dim 8 is not hidden_size / num_attention_heads \(32 / 2\)" -- "$XSA_BIN" info --model "$TMP/sl_hd"
edit stablelm sl_rope 'c["rope_parameters"].update(rope_type="linear", factor=2.0)'
expect_one_line stablelm_scaled_rope 2 "sl_rope/config.json: stablelm with scaled RoPE .* is not supported" -- "$XSA_BIN" info --model "$TMP/sl_rope"
edit stablelm sl_qk 'c["qk_layernorm"] = True'
expect_one_line stablelm_qk_tensor_missing 2 "sl_qk: tensor 'model.layers.0.self_attn.q_layernorm.norms.0.weight' is missing from the checkpoint" -- "$XSA_BIN" info --model "$TMP/sl_qk"
edit stablelm sl_par 'c["use_parallel_residual"] = True'
expect_one_line stablelm_parallel_tensor_unexpected 2 "unexpected tensor 'model.layers.0.post_attention_layernorm.(weight|bias)' for a stablelm checkpoint" -- "$XSA_BIN" info --model "$TMP/sl_par"
edit stablelm sl_bias 'c["use_qkv_bias"] = "yes"'
expect_one_line stablelm_bool_key 2 "sl_bias/config.json: \"use_qkv_bias\" must be true or false" -- "$XSA_BIN" info --model "$TMP/sl_bias"
edit smollm3 sm_len 'c["no_rope_layers"] = [1, 0]'
expect_one_line smollm3_no_rope_length 2 "sm_len/config.json: \"no_rope_layers\" must list 1 \(RoPE\) or 0 \(NoPE\) for each of the 3 layers" -- "$XSA_BIN" info --model "$TMP/sm_len"
edit smollm3 sm_val 'c["no_rope_layers"] = [1, 2, 1]'
expect_one_line smollm3_no_rope_value 2 "sm_val/config.json: no_rope_layers\[1\] must be 1 \(RoPE\) or 0 \(NoPE\)" -- "$XSA_BIN" info --model "$TMP/sm_val"
edit smollm3 sm_int 'c.pop("no_rope_layers"); c.pop("layer_types"); c["no_rope_layer_interval"] = 0'
expect_one_line smollm3_interval 2 "sm_int/config.json: \"no_rope_layer_interval\" must be an integer in \[1, 512\]" -- "$XSA_BIN" info --model "$TMP/sm_int"
edit smollm3 sm_lt 'c["use_sliding_window"] = False'
expect_one_line smollm3_sliding_without_window 2 "sm_lt/config.json: layer_types\[1\] is sliding_attention but no sliding window is set" -- "$XSA_BIN" info --model "$TMP/sm_lt"
for k in embedding_multiplier attention_multiplier residual_multiplier logits_scaling; do
    edit granite "g_$k" "c['$k'] = 0"
    expect_one_line "granite_$k" 2 "g_$k/config.json: \"$k\" must be a number in \[1e-12, 1e\+12\]" -- "$XSA_BIN" info --model "$TMP/g_$k"
done
edit granite g_str 'c["logits_scaling"] = "8"'
expect_one_line granite_string_multiplier 2 "g_str/config.json: \"logits_scaling\" must be a number" -- "$XSA_BIN" info --model "$TMP/g_str"
finish
