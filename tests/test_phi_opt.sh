#!/usr/bin/env bash
# phi (microsoft/phi-1, phi-1_5, phi-2) and opt (facebook/opt-*) through the command line: `info`
# names each feature that is on, XSA runs in each, the CUDA backend refuses them by name and
# --device auto scores them on the CPU, an opt checkpoint saved as OPTModel (the Hub's names,
# "decoder." without "model.") scores as the transformers one, and what xsa-eval does not
# implement is one line naming the file and the key, exit 2. Their log-probabilities against
# transformers are tests/test_model_exact.c (fixtures by tools/fixtures/make_model_fixtures.py).
. "$(dirname "$0")/lib.sh"
F=tests/fixtures/models

# with_config SRC DST PYTHON: a copy of fixture SRC as DST whose config.json dict `c` PYTHON edits.
with_config() {
    rm -rf "$2"; cp -r "$F/$1" "$2"
    python3 -c 'import json, sys; p = sys.argv[1]; c = json.load(open(p)); exec(sys.argv[2]); json.dump(c, open(p, "w"))' \
        "$2/config.json" "$3"
}

expect_exit phi_features 0 "features +LayerNorm pre-norms, q/k/v biases, output projection bias, MLP biases, one LayerNorm for attention and MLP, head bias, partial rotary \(6 of 16 dims\), parallel attention \+ MLP residual, grouped-query attention, untied head$" -- "$XSA_BIN" info --model $F/phi
expect_exit phi_arch 0 "architecture +phi$" -- "$XSA_BIN" info --model $F/phi
expect_exit phi_activation 0 "activation +gelu_new$" -- "$XSA_BIN" info --model $F/phi
expect_exit phi_qkln_features 0 "features +LayerNorm pre-norms, .*per-head q/k LayerNorm, one LayerNorm for attention and MLP, head bias, partial rotary \(8 of 16 dims\), parallel attention \+ MLP residual$" -- "$XSA_BIN" info --model $F/phi_qk_layernorm
expect_exit opt_features 0 "features +LayerNorm pre-norms, q/k/v biases, output projection bias, MLP biases, learned positions \(offset 2\), ReLU MLP$" -- "$XSA_BIN" info --model $F/opt
expect_exit opt_activation 0 "activation +relu$" -- "$XSA_BIN" info --model $F/opt
expect_exit opt_rope 0 "rope +none" -- "$XSA_BIN" info --model $F/opt
expect_exit opt350_features 0 "features +LayerNorm after each residual add \(post-LN\), q/k/v biases, output projection bias, MLP biases, learned positions \(offset 2\), ReLU MLP, no final norm, project_in / project_out \(embedding width 16\)$" -- "$XSA_BIN" info --model $F/opt_350m_layout
expect_exit opt_plain_features 0 "features +LayerNorm \(no weight or bias\) pre-norms, learned positions \(offset 2\), ReLU MLP, no final norm, untied head$" -- "$XSA_BIN" info --model $F/opt_plain

# XSA in each (its numbers: test_model_exact.c).
for m in phi phi_qk_layernorm opt opt_350m_layout opt_plain; do
    expect_exit "xsa_$m" 0 "^2	" -- "$XSA_BIN" logprobs --device cpu --model $F/$m --tokens 5,6,7,8,9,10,11,12 --xsa all
done

# The CUDA backend implements none of phi's or opt's own operations: refused by name; auto scores on the CPU.
expect_one_line phi_cuda_refused 2 "--device cuda: the CUDA backend does not implement phi's head bias \(lm_head.bias\); use --device cpu" -- "$XSA_BIN" logprobs --model $F/phi --tokens 5,6,7 --device cuda
expect_one_line opt_cuda_refused 2 "--device cuda: the CUDA backend does not implement opt's learned positions with their offset; use --device cpu" -- "$XSA_BIN" logprobs --model $F/opt --tokens 5,6,7 --device cuda
for m in phi phi_qk_layernorm opt opt_350m_layout opt_plain; do
    a=$("$XSA_BIN" logprobs --device auto --model $F/$m --tokens 5,6,7,8,9 2>"$TMP/auto.err")
    b=$("$XSA_BIN" logprobs --device cpu --model $F/$m --tokens 5,6,7,8,9 2>/dev/null)
    [ -n "$a" ] && [ "$a" = "$b" ] && grep -q "does not implement .*using the CPU backend" "$TMP/auto.err" && pass "${m}_auto_cpu" || fail "${m}_auto_cpu" "auto did not score $m on the CPU saying why: $(head -c 200 "$TMP/auto.err")"
done

# opt as the Hub's facebook/opt-* files name it (OPTModel's state dict: "decoder.", no "model.",
# no lm_head): the same scores.
python3 - "$F/opt_350m_layout" "$TMP/opt_bare" <<'PY'
import json, os, shutil, struct, sys
src, dst = sys.argv[1], sys.argv[2]
shutil.copytree(src, dst)
p = os.path.join(dst, "model.safetensors")
b = open(p, "rb").read()
n = struct.unpack("<Q", b[:8])[0]
h = json.loads(b[8:8 + n])
h = {(k[6:] if k.startswith("model.") else k): v for k, v in h.items() if k != "lm_head.weight"}
hb = json.dumps(h).encode()
open(p, "wb").write(struct.pack("<Q", len(hb)) + hb + b[8 + n:])
PY
toks=5,6,7,8,9,10,11,12,13,14
a=$("$XSA_BIN" logprobs --device cpu --model "$TMP/opt_bare" --tokens $toks 2>/dev/null)
b=$("$XSA_BIN" logprobs --device cpu --model $F/opt_350m_layout --tokens $toks 2>/dev/null)
[ -n "$a" ] && [ "$a" = "$b" ] && pass opt_hub_names || fail opt_hub_names "decoder.* names scored otherwise, or did not load"

# Learned positions end at the table: a longer input is refused, not read past it.
long=$(seq -s, 3 70)
expect_one_line opt_past_positions 2 "tests/fixtures/models/opt: 68 tokens exceed the model's context length 64" -- "$XSA_BIN" logprobs --device cpu --model $F/opt --tokens $long

# Each config key read changes the scores (so the fixture's match tests it).
b=$("$XSA_BIN" logprobs --device cpu --model $F/phi --tokens $toks 2>/dev/null)
for edit in 'c["rope_parameters"]["partial_rotary_factor"] = 0.5' 'c["hidden_act"] = "gelu"' 'c["layer_norm_eps"] = 0.5'; do
    with_config phi "$TMP/phie" "$edit"
    c=$("$XSA_BIN" logprobs --device cpu --model "$TMP/phie" --tokens $toks 2>/dev/null)
    [ -n "$c" ] && [ "$c" != "$b" ] && pass phi_edit_changes_scores || fail phi_edit_changes_scores "$edit left the scores as they were, or did not load"
done
# A top-level partial_rotary_factor (as phi-2's config.json has it) is read; the rope object's wins.
with_config phi "$TMP/phi_top" 'c["partial_rotary_factor"] = c["rope_parameters"].pop("partial_rotary_factor")'
a=$("$XSA_BIN" logprobs --device cpu --model "$TMP/phi_top" --tokens $toks 2>/dev/null)
[ -n "$a" ] && [ "$a" = "$b" ] && pass phi_top_level_partial || fail phi_top_level_partial "a top-level partial_rotary_factor scored otherwise"
with_config phi "$TMP/phi_default" 'del c["rope_parameters"]["partial_rotary_factor"]'
expect_exit phi_default_partial 0 "partial rotary \(8 of 16 dims\)" -- "$XSA_BIN" info --model "$TMP/phi_default"

# Bad input: one line naming the file and the key, exit 2.
with_config phi "$TMP/phi_relu" 'c["hidden_act"] = "relu"'
expect_one_line phi_bad_activation 2 "phi_relu/config.json: hidden_act \"relu\" is not supported for phi" -- "$XSA_BIN" info --model "$TMP/phi_relu"
with_config phi "$TMP/phi_linear" 'c["rope_parameters"].update(rope_type="linear", factor=2.0)'
expect_one_line phi_scaled_rope 2 "phi_linear/config.json: phi with scaled RoPE \(rope_scaling / rope_parameters" -- "$XSA_BIN" info --model "$TMP/phi_linear"
with_config phi_qk_layernorm "$TMP/phi_hd" 'c["head_dim"] = 8'
expect_one_line phi_qkln_head_dim 2 "phi_hd/config.json: qk_layernorm with head_dim 8 other than hidden_size / num_attention_heads \(32 / 2\)" -- "$XSA_BIN" info --model "$TMP/phi_hd"
with_config phi "$TMP/phi_qkln_bool" 'c["qk_layernorm"] = "yes"'
expect_one_line phi_qkln_not_bool 2 "phi_qkln_bool/config.json: \"qk_layernorm\" must be true or false" -- "$XSA_BIN" info --model "$TMP/phi_qkln_bool"
with_config phi "$TMP/phi_as_qkln" 'c["qk_layernorm"] = True'
expect_one_line phi_qkln_tensor_missing 2 "phi_as_qkln: tensor 'model.layers.0.self_attn.q_layernorm.weight' is missing from the checkpoint" -- "$XSA_BIN" info --model "$TMP/phi_as_qkln"
with_config opt "$TMP/opt_silu" 'c["activation_function"] = "silu"'
expect_one_line opt_bad_activation 2 "opt_silu/config.json: activation_function \"silu\" is not supported for opt \(xsa-eval implements relu, gelu, gelu_new and gelu_pytorch_tanh\)" -- "$XSA_BIN" info --model "$TMP/opt_silu"
with_config opt "$TMP/opt_heads" 'c["num_attention_heads"] = 5'
expect_one_line opt_heads 2 "opt_heads/config.json: hidden_size 32 is not a multiple of num_attention_heads 5" -- "$XSA_BIN" info --model "$TMP/opt_heads"
with_config opt "$TMP/opt_ln" 'c["do_layer_norm_before"] = 1'
expect_one_line opt_ln_not_bool 2 "opt_ln/config.json: \"do_layer_norm_before\" must be true or false" -- "$XSA_BIN" info --model "$TMP/opt_ln"
with_config opt "$TMP/opt_proj" 'c["word_embed_proj_dim"] = 16'
expect_one_line opt_proj_missing 2 "opt_proj/model.safetensors: tensor 'model.decoder.embed_tokens.weight' has shape \[96, 32\] but config.json implies \[96, 16\]" -- "$XSA_BIN" info --model "$TMP/opt_proj"
with_config opt "$TMP/opt_post" 'c["do_layer_norm_before"] = False'
expect_one_line opt_final_norm_unexpected 2 "unexpected tensor 'model.decoder.final_layer_norm.(weight|bias)' for a opt checkpoint" -- "$XSA_BIN" info --model "$TMP/opt_post"
with_config opt "$TMP/opt_nobias" 'c["enable_bias"] = False'
expect_one_line opt_bias_unexpected 2 "unexpected tensor 'model.decoder.layers.0..*bias' for a opt checkpoint" -- "$XSA_BIN" info --model "$TMP/opt_nobias"

finish
