#!/usr/bin/env bash
# The decoder families (mistral, qwen2, qwen3, olmo, olmo2, gpt_neox, phi3, gemma, gemma2, gemma3_text; phi and opt in
# tests/test_phi_opt.sh) and RoPE scalings
# (dynamic, yarn) through the command line: `info` names the family and every feature that is
# on, XSA runs in each, and what xsa-eval does not implement (another model_type, a layer type,
# an activation, a tensor the family does not have or lacks) is one line naming the file and
# the problem, exit 2. Their log-probabilities against transformers are tests/test_model_exact.c.
. "$(dirname "$0")/lib.sh"
F=tests/fixtures/models

# info: the family and its features.
expect_exit mistral_features 0 "features +RMSNorm pre-norms, sliding window 7 \(2 of 2 layers\), grouped-query attention, untied head" -- "$XSA_BIN" info --model $F/mistral_swa
expect_exit mistral_arch 0 "architecture +mistral" -- "$XSA_BIN" info --model $F/mistral_swa
expect_exit qwen2_features 0 "features +RMSNorm pre-norms, q/k/v biases, sliding window 6 \(1 of 2 layers\), grouped-query attention$" -- "$XSA_BIN" info --model $F/qwen2_bin
expect_exit qwen2_format 0 "format +pytorch" -- "$XSA_BIN" info --model $F/qwen2_bin
expect_exit qwen3_features 0 "features +RMSNorm pre-norms, per-head q/k RMSNorm, grouped-query attention, untied head" -- "$XSA_BIN" info --model $F/qwen3_sharded
expect_exit olmo2_features 0 "features +RMSNorm on the attention and MLP outputs \(post-norms\), full-width q/k RMSNorm, untied head" -- "$XSA_BIN" info --model $F/olmo2_bf16
expect_exit olmo2_dtype 0 "dtype +BF16" -- "$XSA_BIN" info --model $F/olmo2_bf16
expect_exit olmo_features 0 "features +LayerNorm \(no weight or bias\) pre-norms, q/k/v biases, output projection bias, grouped-query attention$" -- "$XSA_BIN" info --model $F/olmo
expect_exit olmo_arch 0 "architecture +olmo" -- "$XSA_BIN" info --model $F/olmo
expect_exit olmo_clip_features 0 "features +LayerNorm \(no weight or bias\) pre-norms, q/k/v clipped to \+-0.5, untied head" -- "$XSA_BIN" info --model $F/olmo_clip
expect_exit pythia_features 0 "features +LayerNorm pre-norms, q/k/v biases, output projection bias, MLP biases, partial rotary \(4 of 16 dims\), parallel attention \+ MLP residual, fused per-head query_key_value \(split at load\), untied head" -- "$XSA_BIN" info --model $F/pythia
expect_exit pythia_activation 0 "activation +gelu$" -- "$XSA_BIN" info --model $F/pythia
expect_exit pythia_sequential 0 "features +LayerNorm pre-norms, q/k/v biases, output projection bias, MLP biases, partial rotary \(4 of 16 dims\), fused" -- "$XSA_BIN" info --model $F/pythia_sequential
expect_exit phi3_features 0 "features +RMSNorm pre-norms, partial rotary \(4 of 8 dims\), fused qkv_proj \(split at load\), fused gate_up_proj \(split at load\), grouped-query attention, untied head" -- "$XSA_BIN" info --model $F/phi3_sharded_bin
expect_exit llama_no_features 0 "features +RMSNorm pre-norms, grouped-query attention, untied head" -- "$XSA_BIN" info --model $F/llama_gqa
expect_exit yarn_info 0 "rope +half \(rotate_half\), theta 10000, yarn scaling x4 \(original context 16, beta 8/1, attention factor 1.13863\)" -- "$XSA_BIN" info --model $F/llama_rope_yarn
expect_exit dynamic_info 0 "dynamic scaling x4 \(positions below 256\)" -- "$XSA_BIN" info --model $F/llama_rope_dynamic
expect_exit features_json 0 '"features":[[:space:]]*"RMSNorm pre-norms, per-head q/k RMSNorm' -- "$XSA_BIN" info --model $F/qwen3_sharded --json
expect_exit window_json 0 '"sliding_window":[[:space:]]*7' -- "$XSA_BIN" info --model $F/mistral_swa --json

expect_exit gemma_features 0 "features +RMSNorm \(1 \+ w\) pre-norms, embedding times sqrt\(32\), GeGLU MLP \(gelu_pytorch_tanh gate\), grouped-query attention$" -- "$XSA_BIN" info --model $F/gemma
expect_exit gemma_arch 0 "architecture +gemma$" -- "$XSA_BIN" info --model $F/gemma
expect_exit gemma3_features 0 "features +RMSNorm \(1 \+ w\) pre-norms, embedding times sqrt\(32\), RMSNorm on the attention and MLP outputs \(post-norms\), per-head q/k RMSNorm, sliding window 6 \(1 of 2 layers\), GeGLU MLP \(gelu_pytorch_tanh gate\), attention scale 0.204124 \(query_pre_attn_scalar\), sliding-window layers' RoPE theta 10000 \(unscaled\), logit soft-cap 3, grouped-query attention, untied head" -- "$XSA_BIN" info --model $F/gemma3_text
expect_exit gemma3_arch 0 "architecture +gemma3_text$" -- "$XSA_BIN" info --model $F/gemma3_text
expect_exit gemma3_rope 0 "rope +half \(rotate_half\), theta 1e\+06, linear scaling x2" -- "$XSA_BIN" info --model $F/gemma3_text

# XSA in each family (its numbers: test_model_exact.c).
for m in mistral_swa qwen2_bin qwen3_sharded olmo2_bf16 olmo olmo_clip pythia phi3_sharded_bin gemma gemma_bf16 gemma2 gemma3_text; do
    expect_exit "xsa_$m" 0 "^2	" -- "$XSA_BIN" logprobs --device cpu --model $F/$m --tokens 5,6,7,8,9,10,11,12 --xsa all
done

# config.json's xsa_layers in a family's config, and the scores it changes.
cp -r $F/pythia "$TMP/pythia_xsa"; sed -i 's/"model_type": "gpt_neox",/"model_type": "gpt_neox", "xsa_layers": [1],/' "$TMP/pythia_xsa/config.json"
expect_exit xsa_layers_in_family_config 0 "xsa layers +1 \(1 of 2; source: config\)" -- "$XSA_BIN" info --model "$TMP/pythia_xsa"
a=$("$XSA_BIN" logprobs --device cpu --model "$TMP/pythia_xsa" --tokens 5,6,7,8,9 2>/dev/null)
b=$("$XSA_BIN" logprobs --device cpu --model $F/pythia --tokens 5,6,7,8,9 --xsa 1 2>/dev/null)
c=$("$XSA_BIN" logprobs --device cpu --model $F/pythia --tokens 5,6,7,8,9 2>/dev/null)
[ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" != "$c" ] && pass xsa_layers_config_equals_flag || fail xsa_layers_config_equals_flag "config xsa_layers [1] and --xsa 1 differ, or equal plain attention"

# Dynamic RoPE's frequencies change past max_position_embeddings: positions there are refused.
toks=$(seq -s, 1 257 | sed 's/[0-9]*/3/g')
expect_one_line dynamic_past_context 2 "llama_rope_dynamic: 257 tokens exceed the model's context length 256" -- "$XSA_BIN" logprobs --device cpu --model $F/llama_rope_dynamic --tokens "$toks"

# partial_rotary_factor outside phi3 / gpt_neox: transformers' llama-like classes rotate whole
# heads under default RoPE (so the scores are the plain model's) and fail under a scaling.
cp -r $F/llama_gqa "$TMP/llama_partial"; sed -i 's/"rope_type": "default"/"rope_type": "default", "partial_rotary_factor": 0.5/' "$TMP/llama_partial/config.json"
a=$("$XSA_BIN" logprobs --device cpu --model "$TMP/llama_partial" --tokens 5,6,7,8,9,10,11 2>/dev/null)
b=$("$XSA_BIN" logprobs --device cpu --model $F/llama_gqa --tokens 5,6,7,8,9,10,11 2>/dev/null)
[ -n "$a" ] && [ "$a" = "$b" ] && pass llama_partial_rotary_ignored || fail llama_partial_rotary_ignored "llama with partial_rotary_factor 0.5 scored unlike transformers (whole heads rotated)"
cp -r $F/llama_rope_linear "$TMP/linear_partial"; sed -i 's/"rope_type": "linear"/"rope_type": "linear", "partial_rotary_factor": 0.5/' "$TMP/linear_partial/config.json"
expect_one_line llama_partial_scaled 2 "linear_partial/config.json: partial_rotary_factor 0.5 with scaled RoPE is not supported for llama" -- "$XSA_BIN" info --model "$TMP/linear_partial"
# A head_dim key that gpt_neox would use for its rotary frequencies alone.
cp -r $F/pythia "$TMP/neox_hd"; sed -i 's/"model_type": "gpt_neox",/"model_type": "gpt_neox", "head_dim": 8,/' "$TMP/neox_hd/config.json"
expect_one_line neox_head_dim 2 "neox_hd/config.json: gpt_neox head_dim 8 is not hidden_size / num_attention_heads \(32 / 2\)" -- "$XSA_BIN" info --model "$TMP/neox_hd"
# mistral with layer_types (Ministral): windows per layer (numbers: test_model_exact.c).
expect_exit mistral_layer_types 0 "features +RMSNorm pre-norms, sliding window 5 \(1 of 2 layers\)" -- "$XSA_BIN" info --model $F/mistral_layer_types
# The same folder as transformers 5 saves it (model_type ministral; transformers' logits for the
# two folders are identical): the same scores; without layer_types MinistralConfig windows every layer.
cp -r $F/mistral_layer_types "$TMP/ministral"; sed -i 's/"model_type": "mistral"/"model_type": "ministral"/; s/MistralForCausalLM/MinistralForCausalLM/' "$TMP/ministral/config.json"
expect_exit ministral_arch 0 "architecture +ministral" -- "$XSA_BIN" info --model "$TMP/ministral"
a=$("$XSA_BIN" logprobs --device cpu --model "$TMP/ministral" --tokens 5,6,7,8,9,10,11,12,13,14,15 2>/dev/null)
b=$("$XSA_BIN" logprobs --device cpu --model $F/mistral_layer_types --tokens 5,6,7,8,9,10,11,12,13,14,15 2>/dev/null)
[ -n "$a" ] && [ "$a" = "$b" ] && pass ministral_scores || fail ministral_scores "model_type ministral scored unlike the same mistral folder with layer_types"
python3 - "$TMP/ministral/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c.pop("layer_types"); c.pop("sliding_window")
json.dump(c, open(sys.argv[1], "w"))
PY
expect_exit ministral_default_windows 0 "features +RMSNorm pre-norms, sliding window 4096 \(2 of 2 layers\)" -- "$XSA_BIN" info --model "$TMP/ministral"

# olmo's clip_qkv runs on the CPU backend alone: --device cuda refuses it by name (whether or not
# this machine has a GPU), --device auto scores it on the CPU, the CPU's bits.
expect_one_line olmo_clip_cuda_refused 2 "--device cuda: the CUDA backend does not implement olmo's clip_qkv \(q, k and v clamped after their projections\); use --device cpu" -- "$XSA_BIN" logprobs --model $F/olmo_clip --tokens 5,6,7 --device cuda
a=$("$XSA_BIN" logprobs --device auto --model $F/olmo_clip --tokens 5,6,7,8,9 2>"$TMP/auto.err")
b=$("$XSA_BIN" logprobs --device cpu --model $F/olmo_clip --tokens 5,6,7,8,9 2>/dev/null)
[ -n "$a" ] && [ "$a" = "$b" ] && grep -q "clip_qkv.*using the CPU backend" "$TMP/auto.err" && pass olmo_clip_auto_cpu || fail olmo_clip_auto_cpu "auto did not score olmo_clip on the CPU saying why: $(head -c 200 "$TMP/auto.err")"
# The clamp is applied: without clip_qkv the same weights score otherwise.
cp -r $F/olmo_clip "$TMP/olmo_noclip"; sed -i 's/"clip_qkv": 0.5/"clip_qkv": null/' "$TMP/olmo_noclip/config.json"
c=$("$XSA_BIN" logprobs --device cpu --model "$TMP/olmo_noclip" --tokens 5,6,7,8,9 2>/dev/null)
[ -n "$c" ] && [ "$b" != "$c" ] && pass olmo_clip_changes_scores || fail olmo_clip_changes_scores "clip_qkv 0.5 and null score alike"

# The Gemma families run on the CPU backend alone, as olmo's clip_qkv.
expect_one_line gemma_cuda_refused 2 "--device cuda: the CUDA backend does not implement the Gemma families' operations" -- "$XSA_BIN" logprobs --model $F/gemma --tokens 5,6,7 --device cuda
for m in gemma gemma2 gemma3_text; do
    a=$("$XSA_BIN" logprobs --device auto --model $F/$m --tokens 5,6,7,8,9 2>"$TMP/auto.err")
    b=$("$XSA_BIN" logprobs --device cpu --model $F/$m --tokens 5,6,7,8,9 2>/dev/null)
    [ -n "$a" ] && [ "$a" = "$b" ] && grep -q "Gemma families.*using the CPU backend" "$TMP/auto.err" && pass "${m}_auto_cpu" || fail "${m}_auto_cpu" "auto did not score $m on the CPU saying why: $(head -c 200 "$TMP/auto.err")"
done
# GemmaConfig reads hidden_act "gelu" (the official releases' value) as gelu_pytorch_tanh: the same scores.
cp -r $F/gemma "$TMP/gemma_gelu"; sed -i 's/"hidden_act": "gelu_pytorch_tanh"/"hidden_act": "gelu"/' "$TMP/gemma_gelu/config.json"
a=$("$XSA_BIN" logprobs --device cpu --model "$TMP/gemma_gelu" --tokens 5,6,7,8,9,10 2>/dev/null)
b=$("$XSA_BIN" logprobs --device cpu --model $F/gemma --tokens 5,6,7,8,9,10 2>/dev/null)
[ -n "$a" ] && [ "$a" = "$b" ] && pass gemma_gelu_is_tanh || fail gemma_gelu_is_tanh "hidden_act gelu scored unlike gelu_pytorch_tanh"
# gemma3_text as transformers 4 saved it (rope_theta, rope_scaling for the full layers and
# rope_local_base_freq at the top level; sliding_window_pattern instead of layer_types): the same scores.
python3 - "$F/gemma3_text/config.json" "$TMP/gemma3_v4" <<'PY'
import json, os, shutil, sys
src, dst = sys.argv[1], sys.argv[2]
shutil.copytree(os.path.dirname(src), dst)
c = json.load(open(src))
rp = c.pop("rope_parameters"); c.pop("layer_types")
c["rope_theta"] = rp["full_attention"]["rope_theta"]
c["rope_scaling"] = {"rope_type": "linear", "factor": rp["full_attention"]["factor"]}
c["rope_local_base_freq"] = rp["sliding_attention"]["rope_theta"]
c["sliding_window_pattern"] = 2
json.dump(c, open(os.path.join(dst, "config.json"), "w"))
PY
toks=5,6,7,8,9,10,11,12,13,14,15,16,17,18
a=$("$XSA_BIN" logprobs --device cpu --model "$TMP/gemma3_v4" --tokens $toks 2>/dev/null)
b=$("$XSA_BIN" logprobs --device cpu --model $F/gemma3_text --tokens $toks 2>/dev/null)
[ -n "$a" ] && [ "$a" = "$b" ] && pass gemma3_v4_config || fail gemma3_v4_config "the transformers 4 form of the config scored otherwise"
# rope_parameters whose sliding_attention entry is absent, null or without rope_theta: the sliding
# layers take the top-level rope_local_base_freq, as Gemma3TextConfig's setdefault does (it
# resolves all three to {"rope_type": "default", "rope_theta": 500.0}), not 1e4.
python3 - "$F/gemma3_text/config.json" "$TMP/g3_local" <<'PY'
import copy, json, os, shutil, sys
src, dst = sys.argv[1], sys.argv[2]
c = json.load(open(src))
for name, local in (("set", {"rope_type": "default", "rope_theta": 500.0}), ("absent", ...), ("null", None),
                    ("no_theta", {"rope_type": "default"})):
    shutil.copytree(os.path.dirname(src), dst + "_" + name)
    e = copy.deepcopy(c)
    if local is ...: del e["rope_parameters"]["sliding_attention"]
    else: e["rope_parameters"]["sliding_attention"] = local
    if name != "set": e["rope_local_base_freq"] = 500.0
    json.dump(e, open(os.path.join(dst + "_" + name, "config.json"), "w"))
PY
a=$("$XSA_BIN" logprobs --device cpu --model "$TMP/g3_local_set" --tokens $toks 2>/dev/null)
for v in absent null no_theta; do
    c=$("$XSA_BIN" logprobs --device cpu --model "$TMP/g3_local_$v" --tokens $toks 2>/dev/null)
    [ -n "$a" ] && [ "$a" != "$b" ] && [ "$c" = "$a" ] && pass gemma3_local_base_freq || fail gemma3_local_base_freq "sliding_attention $v with rope_local_base_freq 500 scored unlike rope_theta 500"
done
# Each gemma3_text feature changes the scores (so the fixture's match tests it): the sliding
# layers' base, the attention scale, the soft-cap, the window.
for edit in 's/"rope_theta": 10000\.0,/"rope_theta": 500.0,/' 's/"query_pre_attn_scalar": 24/"query_pre_attn_scalar": 16/' \
            's/"final_logit_softcapping": 3.0/"final_logit_softcapping": null/' 's/"sliding_window": 6/"sliding_window": 3/'; do
    rm -rf "$TMP/g3e"; cp -r $F/gemma3_text "$TMP/g3e"; sed -i "$edit" "$TMP/g3e/config.json"
    c=$("$XSA_BIN" logprobs --device cpu --model "$TMP/g3e" --tokens $toks 2>/dev/null)
    [ -n "$c" ] && [ "$c" != "$b" ] && pass "gemma3_edit_changes_scores" || fail "gemma3_edit_changes_scores" "$edit left the scores as they were, or the edited folder did not load"
done

# Bad input: one line naming the file and the problem, exit 2.
# gemma2 / gemma3_text without layer_types and with sliding_window null: the default layer_types still
# name sliding layers, which transformers cannot run (it fails in the forward); refused, not scored
# as full attention everywhere.
for m in gemma2 gemma3_text; do
    rm -rf "$TMP/${m}_nowin"; cp -r $F/$m "$TMP/${m}_nowin"
    python3 -c 'import json, sys; p = sys.argv[1]; c = json.load(open(p)); c.pop("layer_types"); c["sliding_window"] = None; json.dump(c, open(p, "w"))' "$TMP/${m}_nowin/config.json"
    expect_one_line ${m}_null_window_refused 2 "${m}_nowin/config.json: layer 0 is sliding_attention by $m's default layer_types but \"sliding_window\" is null; set sliding_window, or layer_types" -- "$XSA_BIN" info --model "$TMP/${m}_nowin"
done
cp -r $F/qwen2_bin "$TMP/falcon"; sed -i 's/"model_type": "qwen2"/"model_type": "falcon"/' "$TMP/falcon/config.json"
expect_one_line unknown_model_type 2 "falcon/config.json: model_type \"falcon\" is not supported \(supported: gpt2, llama, mistral, ministral, qwen2, qwen3, olmo, olmo2, gpt_neox, phi, phi3, gemma, gemma2, gemma3_text, opt, stablelm, smollm3, granite\)" -- "$XSA_BIN" info --model "$TMP/falcon"
cp -r $F/olmo "$TMP/hf_olmo"; sed -i 's/"model_type": "olmo"/"model_type": "hf_olmo"/' "$TMP/hf_olmo/config.json"
expect_one_line hf_olmo_points_to_hf_twin 2 "hf_olmo/config.json: model_type \"hf_olmo\" \(the ai2-olmo package's format\) is not supported; use the transformers twin of the repo \(model_type olmo: allenai/OLMo-1B-hf for allenai/OLMo-1B\)" -- "$XSA_BIN" info --model "$TMP/hf_olmo"
cp -r $F/qwen2_bin "$TMP/chunked"; sed -i 's/"sliding_attention"/"chunked_attention"/' "$TMP/chunked/config.json"
expect_one_line unknown_layer_type 2 "chunked/config.json: layer_types\[1\] must be \"full_attention\" or \"sliding_attention\"" -- "$XSA_BIN" info --model "$TMP/chunked"
cp -r $F/olmo_clip "$TMP/olmo_negclip"; sed -i 's/"clip_qkv": 0.5/"clip_qkv": -0.5/' "$TMP/olmo_negclip/config.json"
expect_one_line olmo_negative_clip 2 "olmo_negclip/config.json: \"clip_qkv\" must be a positive number \(the bound q, k and v are clamped to\) or null \(no clamp\)" -- "$XSA_BIN" info --model "$TMP/olmo_negclip"
# olmo's LayerNorms have no weights: a checkpoint with norm tensors is not an OLMo 1 checkpoint.
cp -r $F/llama_gqa "$TMP/llama_as_olmo"; sed -i 's/"model_type": "llama"/"model_type": "olmo"/' "$TMP/llama_as_olmo/config.json"
expect_one_line olmo_norm_tensor_unexpected 2 "unexpected tensor 'model.layers.0.input_layernorm.weight' for a olmo checkpoint" -- "$XSA_BIN" info --model "$TMP/llama_as_olmo"
cp -r $F/pythia "$TMP/relu"; sed -i 's/"hidden_act": "gelu"/"hidden_act": "relu"/' "$TMP/relu/config.json"
expect_one_line unknown_activation 2 "relu/config.json: hidden_act \"relu\" is not supported" -- "$XSA_BIN" info --model "$TMP/relu"
cp -r $F/phi3_sharded_bin "$TMP/longrope"; sed -i 's/"rope_type": "default"/"rope_type": "longrope"/' "$TMP/longrope/config.json"
expect_one_line unknown_rope_type 2 "longrope/config.json: rope_parameters type \"longrope\" is not supported \(xsa-eval implements default, linear, dynamic, llama3 and yarn\)" -- "$XSA_BIN" info --model "$TMP/longrope"
cp -r $F/pythia "$TMP/pct"; sed -i 's/"partial_rotary_factor": 0.25/"partial_rotary_factor": 0.1/' "$TMP/pct/config.json"
expect_one_line odd_rotary_dims 2 "pct/config.json: partial rotary factor 0.1 of head_dim 16 gives 1 rotated dims \\(int\\(16 x 0.1\\)\\); xsa-eval needs an even number >= 2" -- "$XSA_BIN" info --model "$TMP/pct"
# A checkpoint whose tensors are not the family's: qwen3 without its q norm, olmo2 with a
# pre-norm it does not have (both from the config's family, not guessed from the tensors).
cp -r $F/olmo2_bf16 "$TMP/olmo2_as_llama"; sed -i 's/"model_type": "olmo2"/"model_type": "llama"/' "$TMP/olmo2_as_llama/config.json"
expect_one_line family_tensor_missing 2 "olmo2_as_llama: tensor 'model.layers.0.input_layernorm.weight' is missing from the checkpoint" -- "$XSA_BIN" info --model "$TMP/olmo2_as_llama"
cp -r $F/qwen3_sharded "$TMP/qwen3_as_qwen2"; sed -i 's/"model_type": "qwen3"/"model_type": "qwen2"/' "$TMP/qwen3_as_qwen2/config.json"
expect_one_line family_tensor_missing_bias 2 "qwen3_as_qwen2: tensor 'model.layers.0.self_attn.q_proj.bias' is missing from the checkpoint" -- "$XSA_BIN" info --model "$TMP/qwen3_as_qwen2"
cp -r $F/mistral_swa "$TMP/mistral_as_qwen3"; sed -i 's/"model_type": "mistral"/"model_type": "qwen3"/' "$TMP/mistral_as_qwen3/config.json"
expect_one_line family_tensor_missing_norm 2 "mistral_as_qwen3: tensor 'model.layers.0.self_attn.q_norm.weight' is missing from the checkpoint" -- "$XSA_BIN" info --model "$TMP/mistral_as_qwen3"
cp -r $F/qwen3_sharded "$TMP/qwen3_as_mistral"; sed -i 's/"model_type": "qwen3"/"model_type": "mistral"/' "$TMP/qwen3_as_mistral/config.json"
expect_one_line family_tensor_unexpected 2 "unexpected tensor 'model.layers.0.self_attn.[qk]_norm.weight' for a mistral checkpoint; xsa-eval would ignore it, so it refuses the file" -- "$XSA_BIN" info --model "$TMP/qwen3_as_mistral"
# gemma2: attn_logit_softcapping (scores soft-capped inside the attention kernels) and
# final_logit_softcapping; absent, Gemma2Config's 50 and 30 apply, null is none.
expect_exit gemma2_features 0 "features +RMSNorm \(1 \+ w\) pre-norms, embedding times sqrt\(32\), RMSNorm on the attention and MLP outputs \(post-norms\), sliding window 6 \(1 of 2 layers\), GeGLU MLP \(gelu_pytorch_tanh gate\), attention scale 0.204124 \(query_pre_attn_scalar\), attention-logit soft-cap 2, logit soft-cap 5, grouped-query attention, untied head" -- "$XSA_BIN" info --model $F/gemma2
python3 - "$F/gemma2/config.json" "$TMP/g2_default" <<'PY'
import json, os, shutil, sys
shutil.copytree(os.path.dirname(sys.argv[1]), sys.argv[2])
c = json.load(open(sys.argv[1])); c.pop("attn_logit_softcapping"); c.pop("final_logit_softcapping"); c.pop("layer_types")
json.dump(c, open(os.path.join(sys.argv[2], "config.json"), "w"))
PY
expect_exit gemma2_default_caps 0 "sliding window 6 \(1 of 2 layers\), .*attention-logit soft-cap 50, logit soft-cap 30" -- "$XSA_BIN" info --model "$TMP/g2_default"
cp -r $F/gemma2 "$TMP/g2_null"; sed -i 's/"attn_logit_softcapping": 2.0/"attn_logit_softcapping": null/' "$TMP/g2_null/config.json"
a=$("$XSA_BIN" logprobs --device cpu --model "$TMP/g2_null" --tokens $toks 2>/dev/null)
b=$("$XSA_BIN" logprobs --device cpu --model $F/gemma2 --tokens $toks 2>/dev/null)
[ -n "$a" ] && [ -n "$b" ] && [ "$a" != "$b" ] && pass gemma2_attn_softcap_changes_scores || fail gemma2_attn_softcap_changes_scores "attn_logit_softcapping 2 and null score alike"
"$XSA_BIN" info --model "$TMP/g2_null" | grep -q "attention-logit soft-cap" && fail gemma2_null_cap "null still soft-caps" || pass gemma2_null_cap
# gemma3_text runs attn_logit_softcapping too (Gemma3Attention passes it to the same eager attention).
cp -r $F/gemma3_text "$TMP/g3_cap"; sed -i 's/"attn_logit_softcapping": null/"attn_logit_softcapping": 1.0/' "$TMP/g3_cap/config.json"
expect_exit gemma3_attn_softcap 0 "attention-logit soft-cap 1" -- "$XSA_BIN" info --model "$TMP/g3_cap"
a=$("$XSA_BIN" logprobs --device cpu --model "$TMP/g3_cap" --tokens $toks 2>/dev/null)
b=$("$XSA_BIN" logprobs --device cpu --model $F/gemma3_text --tokens $toks 2>/dev/null)
[ -n "$a" ] && [ "$a" != "$b" ] && pass gemma3_attn_softcap_changes_scores || fail gemma3_attn_softcap_changes_scores "attn_logit_softcapping 1 and null score alike"

# Gemma: what xsa-eval does not run is refused by name.
cp -r $F/gemma3_text "$TMP/g3_bidir"; sed -i 's/"use_bidirectional_attention": false/"use_bidirectional_attention": true/' "$TMP/g3_bidir/config.json"
expect_one_line gemma3_bidirectional 2 "g3_bidir/config.json: \"use_bidirectional_attention\" true" -- "$XSA_BIN" info --model "$TMP/g3_bidir"
cp -r $F/gemma3_text "$TMP/g3_lt"
python3 - "$TMP/g3_lt/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["layer_types"].append("full_attention"); json.dump(c, open(sys.argv[1], "w"))
PY
expect_one_line gemma3_layer_types_length 2 "g3_lt/config.json: \"layer_types\" must list one type per layer \(2\)" -- "$XSA_BIN" info --model "$TMP/g3_lt"
cp -r $F/gemma3_text "$TMP/g3_act"; sed -i 's/"hidden_activation": "gelu_pytorch_tanh"/"hidden_activation": "gelu"/' "$TMP/g3_act/config.json"
expect_one_line gemma3_activation 2 "g3_act/config.json: hidden_activation \"gelu\" is not supported for gemma3_text" -- "$XSA_BIN" info --model "$TMP/g3_act"
cp -r $F/gemma3_text "$TMP/g3_rope"; sed -i 's/"rope_type": "default"/"rope_type": "linear", "factor": 2.0/' "$TMP/g3_rope/config.json"
expect_one_line gemma3_local_rope_scaled 2 "g3_rope/config.json: rope_parameters\[\"sliding_attention\"\] type \"linear\" is not supported" -- "$XSA_BIN" info --model "$TMP/g3_rope"
# head_dim absent: GemmaConfig's 256 is what transformers reads; weights of another are refused naming the key.
python3 - "$F/gemma/config.json" "$TMP/gemma_nohd" <<'PY'
import json, os, shutil, sys
shutil.copytree(os.path.dirname(sys.argv[1]), sys.argv[2])
c = json.load(open(sys.argv[1])); c.pop("head_dim"); json.dump(c, open(os.path.join(sys.argv[2], "config.json"), "w"))
PY
expect_one_line gemma_missing_head_dim 2 "gemma_nohd: config.json has no \"head_dim\", so gemma's default 256 applies \(as transformers reads it\), but q_proj has 64 rows for 4 heads; set \"head_dim\" in config.json" -- "$XSA_BIN" info --model "$TMP/gemma_nohd"
finish
