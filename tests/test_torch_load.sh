#!/usr/bin/env bash
# torch.save checkpoints through --model: each fixture of tests/fixtures/torch (written by the
# real torch.save, tools/fixtures/make_torch_fixtures.py and make_torch_object_fixtures.py) gives exactly the logprobs of its safetensors
# twin; every bad input is exit 2 with one line naming the file and the problem, and a
# malicious pickle executes nothing.
. "$(dirname "$0")/lib.sh"
T=tests/fixtures/torch
M=tests/fixtures/models
TOKS=1,5,9,33,2,7,100,4,250,17,3

# same_logprobs NAME A B [flags]: `logprobs` of A and B print the same table, byte for byte.
same_logprobs() {
    local name=$1 a=$2 b=$3; shift 3
    local x y
    x=$("$XSA_BIN" logprobs --model "$a" --tokens $TOKS --device cpu "$@" 2>&1) || { fail "$name" "$a: $x"; return; }
    y=$("$XSA_BIN" logprobs --model "$b" --tokens $TOKS --device cpu "$@" 2>&1) || { fail "$name" "$b: $y"; return; }
    if [ "$x" = "$y" ] && [ "$(echo "$x" | wc -l)" -gt 5 ]; then pass "$name"; else fail "$name" "$a and $b differ"; fi
}

same_logprobs bin_gpt2_tied $T/gpt2_bin $M/gpt2_tiny
same_logprobs bin_gpt2_tied_xsa $T/gpt2_bin $M/gpt2_tiny --xsa all
same_logprobs bin_deflated $T/gpt2_deflated_bin $M/gpt2_tiny
same_logprobs bin_parameters_with_state $T/param_state_bin $M/gpt2_tiny
same_logprobs bin_sharded $T/gpt2_sharded_bin $M/gpt2_tiny_sharded
expect_exit info_f16 0 "dtype +F16" -- "$XSA_BIN" info --model $T/gpt2_f16_bin
same_logprobs bin_bf16 $T/llama_bf16_bin $M/llama_bf16
same_logprobs bin_views $T/llama_views_bin $M/llama_gqa
same_logprobs bin_views_xsa $T/llama_views_bin $M/llama_gqa --xsa 0,2
same_logprobs nanogpt_direct $T/nanogpt/ckpt.pt $T/nanogpt_converted
same_logprobs nanogpt_nobias_direct $T/nanogpt_nobias/ckpt.pt $T/nanogpt_nobias_converted
same_logprobs bare_state_dict $T/bare/model.pt $M/llama_gqa
same_logprobs bare_state_dict_wrapped $T/bare_wrapped/model.pt $M/llama_gqa  # _orig_mod. / module. prefixes dropped
# a training loop's checkpoint: the state dict under "model", beside a torch dtype, Size, device, set,
# bytes and a 2^64 int, none of which is read (torch.load(weights_only=True) takes them too)
same_logprobs bare_state_dict_in_loop_checkpoint $T/bare_loop/model.pt $M/llama_gqa
same_logprobs bin_file_config_beside $T/gpt2_bin/pytorch_model.bin $M/gpt2_tiny

expect_exit info_format_pytorch 0 "format +pytorch" -- "$XSA_BIN" info --model $T/gpt2_bin
expect_exit info_bf16 0 '"dtype":[[:space:]]*"BF16"' -- "$XSA_BIN" info --model $T/llama_bf16_bin --json
expect_exit info_nanogpt 0 "activation +gelu$" -- "$XSA_BIN" info --model $T/nanogpt/ckpt.pt
# the step a training loop saved beside the weights (nanoGPT's iter_num 5; modded-nanogpt's step 0),
# which run records for report --trend; a loop that saved only its epoch has none
expect_exit info_nanogpt_step 0 "^train step +5 \(saved in the checkpoint\)$" -- "$XSA_BIN" info --model $T/nanogpt/ckpt.pt
expect_exit info_nanogpt_step_json 0 '"train_step":[[:space:]]*5' -- "$XSA_BIN" info --model $T/nanogpt/ckpt.pt --json
expect_exit info_mnanogpt_step 0 "^train step +0 " -- "$XSA_BIN" info --model tests/fixtures/mnanogpt/xsa_gated/state_step000000.pt
if "$XSA_BIN" info --model $T/bare_loop/model.pt 2>&1 | grep -q "^train step"; then fail info_epoch_is_no_step "a step shown"; else pass info_epoch_is_no_step; fi
# bias=False: the zero biases xsa-eval adds are neither counted nor listed (torch: 36384 parameters,
# lm_head tied to wte).
expect_exit info_nanogpt_nobias_params 0 "^parameters +36384 " -- "$XSA_BIN" info --model $T/nanogpt_nobias/ckpt.pt
expect_exit info_nanogpt_nobias_features 0 "^features +LayerNorm pre-norms, no biases \(bias=False\)$" -- "$XSA_BIN" info --model $T/nanogpt_nobias/ckpt.pt
expect_exit info_tokenizer_given 0 "^tokenizer +tests/fixtures/tokenizers/gpt2/tokenizer.json$" -- "$XSA_BIN" info --model $T/nanogpt/ckpt.pt --tokenizer tests/fixtures/tokenizers/gpt2/tokenizer.json
expect_exit info_tokenizer_missing 2 "--tokenizer /nonexistent.json: no such file" -- "$XSA_BIN" info --model $T/nanogpt/ckpt.pt --tokenizer /nonexistent.json
expect_exit nanogpt_no_tokenizer 2 "ckpt.pt: no tokenizer.json or tokenizer.model beside the checkpoint; pass --tokenizer FILE" -- "$XSA_BIN" logprobs --model $T/nanogpt/ckpt.pt --text "hello"
L=$(ls $T/frameworks/lightning/*.ckpt | head -1)
expect_exit lightning_no_tokenizer 2 "no tokenizer.json or tokenizer.model beside the checkpoint; pass --tokenizer FILE, the tokenizer.json or tokenizer.model the model was trained with \(" -- "$XSA_BIN" logprobs --model "$L" --text "hello"

# Both formats in one folder: the safetensors file is read (the .bin here is not even valid).
mkdir "$TMP/both"; cp $M/gpt2_tiny/* "$TMP/both/"; echo junk > "$TMP/both/pytorch_model.bin"
expect_exit safetensors_preferred 0 "format +safetensors" -- "$XSA_BIN" info --model "$TMP/both"

# Malicious pickles: their globals are inert objects, never called; the state dict reader refuses
# the entry, naming what it is, and nothing runs.
PWNED=/tmp/xsa_pwned_torch_fixture
for f in "os_system:posix.system(...) (a call, never run)" "builtins_eval:__builtin__.eval(...) (a call, never run)" \
         "numpy_array:a numpy.ndarray" "numpy_reconstruct:a numpy.ndarray"; do
    rm -f "$PWNED"
    want=$(printf '%s' "${f#*:}" | sed 's/[().]/\\&/g')
    expect_exit "refuse_${f%%:*}" 2 "bad/${f%%:*}.pt \(.*data.pkl\): state dict entry 'x' is $want, not a tensor; xsa-eval reads the tensors of model.state_dict\(\)" \
        -- "$XSA_BIN" info --model "$T/bad/${f%%:*}.pt"
    if [ -e "$PWNED" ]; then fail "nothing_executed_${f%%:*}" "$PWNED exists"; else pass "nothing_executed_${f%%:*}"; fi
done
mkdir "$TMP/evil"; cp $M/gpt2_tiny/config.json "$TMP/evil/"; cp $T/bad/os_system.pt "$TMP/evil/pytorch_model.bin"
rm -f "$PWNED"
expect_exit refuse_in_hf_folder 2 "evil/pytorch_model.bin .*'x' is posix\.system\(\.\.\.\) \(a call, never run\), not a tensor" -- "$XSA_BIN" logprobs --model "$TMP/evil" --tokens 1,2,3
[ -e "$PWNED" ] && fail nothing_executed_run "$PWNED exists" || pass nothing_executed_run

# Research checkpoints (tools/fixtures/make_torch_object_fixtures.py): the state dict beside an
# argparse.Namespace, numpy values and RNG state, a dataclass, an enum...; whole modules saved with
# torch.save(model): a transformers Llama with its config.json beside it or without (its config
# object is the config), nanoGPT's GPT (its GPTConfig is the config), bare or under a training
# loop's "model" key.
O=$T/objects
same_logprobs objects_beside_state_dict $O/loop_objects/model.pt $M/llama_gqa
# its step is a numpy int64 (np.int64(100)), the step run records
expect_exit loop_numpy_step 0 "^train step +100 \(saved in the checkpoint\)$" -- "$XSA_BIN" info --model $O/loop_objects/model.pt
same_logprobs whole_llama_module $O/llama_module/model.pt $M/llama_gqa
same_logprobs whole_nanogpt_module $O/nanogpt_module/ckpt.pt $T/nanogpt_converted
same_logprobs whole_nanogpt_module_in_loop $O/nanogpt_module_loop/ckpt.pt $T/nanogpt_converted
mkdir "$TMP/whole"; cp $O/llama_module/model.pt "$TMP/whole/"  # no config.json: the model's LlamaConfig is written out
same_logprobs whole_llama_module_own_config "$TMP/whole/model.pt" $M/llama_gqa
expect_exit whole_nanogpt_config_flag 2 "ckpt.pt: nanoGPT's GPT saved whole: its config attribute is the config; drop --config" -- "$XSA_BIN" info --model $O/nanogpt_module/ckpt.pt --config $T/bare/config.json
expect_exit whole_module_no_config 2 "tricky_module.pt: a state dict without model_args, and no config.json beside it" -- "$XSA_BIN" info --model $O/tricky_module.pt

# The checkpoints training frameworks write, by the frameworks themselves
# (tools/fixtures/make_framework_fixtures.py: two steps at learning rate 0, so the weights are
# still their twin fixture's).
F=$T/frameworks
LCK="$F/lightning/epoch=0-step=2.ckpt"
# PyTorch Lightning's ModelCheckpoint .ckpt of a LightningModule holding the Llama as self.model:
# every name starts with "model.", dropped with a note; hyper_parameters, loops, callbacks,
# optimizer_states beside the state dict are not read; global_step is the train step.
x=$("$XSA_BIN" logprobs --model "$LCK" --tokens $TOKS --device cpu 2>/dev/null)  # (stderr: the note, below)
y=$("$XSA_BIN" logprobs --model $M/llama_gqa --tokens $TOKS --device cpu 2>&1)
[ "$x" = "$y" ] && [ "$(echo "$x" | wc -l)" -gt 5 ] && pass lightning_ckpt || fail lightning_ckpt "differs from llama_gqa: $x"
# the same with self.model torch.compile'd: names model._orig_mod.model..., the compiled wrapper's
# component dropped wherever it stands (as torch.compile's leading _orig_mod. always was)
x=$("$XSA_BIN" logprobs --model "$F/lightning_compiled/epoch=0-step=2.ckpt" --tokens $TOKS --device cpu 2>/dev/null)
[ "$x" = "$y" ] && [ "$(echo "$x" | wc -l)" -gt 5 ] && pass lightning_compiled_ckpt || fail lightning_compiled_ckpt "differs from llama_gqa: $x"
expect_exit lightning_prefix_note 0 "^xsa-eval: note: .*epoch=0-step=2.ckpt: every tensor name starts with 'model.' \(the attribute that held the model" -- "$XSA_BIN" info --model "$LCK"
if "$XSA_BIN" logprobs --quiet --model "$LCK" --tokens 1,2,3 --device cpu 2>&1 | grep -q "note:"; then fail lightning_quiet_no_note "a note under --quiet"
else pass lightning_quiet_no_note; fi
expect_exit lightning_prefix_json 0 '"weights_prefix":[[:space:]]*"model\."' -- "$XSA_BIN" info --model "$LCK" --json
# a run records the prefix it dropped and the saved step, and report reads the file back
"$XSA_BIN" run --quiet --model "$LCK" --tokenizer tests/fixtures/tokenizers/sp_bpe_raw/tokenizer.model --tasks openbookqa --limit 2 \
    --data-dir tests/fixtures/data --allow-data-change --offline --device cpu --output "$TMP/o_lightning" >/dev/null 2>&1
expect_exit lightning_run_prefix 0 '"weights_prefix": "model\."' -- cat "$TMP"/o_lightning/*/results_*.json
expect_exit lightning_run_step 0 '"step_source": "checkpoint"' -- cat "$TMP"/o_lightning/*/results_*.json
expect_exit lightning_report_reads 0 "openbookqa" -- sh -c "'$XSA_BIN' report '$TMP'/o_lightning/*/results_*.json"
expect_exit lightning_global_step 0 "^train step +2 \(saved in the checkpoint\)$" -- "$XSA_BIN" info --model "$LCK"
# ...a prefix that is not the family's wrapper is not dropped: the tensor missing is named
expect_exit lightning_wrong_family 2 "epoch=0-step=2.ckpt: tensor '.*wte.weight' is missing" -- "$XSA_BIN" info --model "$LCK" --config $M/gpt2_tiny/config.json
# The Hugging Face Trainer's checkpoint-N folder: read as a folder (optimizer.pt, scheduler.pt,
# rng_state.pth and training_args.bin beside the model are not read); the step run records is
# trainer_state.json's global_step, which the Trainer wrote with the weights: over the folder's
# name when they differ (a renamed copy), with a note. Each resume file passed as the model names what it is.
H=$F/hf_trainer/checkpoint-2
same_logprobs hf_trainer_folder $H tests/fixtures/parity/models/gpt2_bpe
expect_exit hf_trainer_run 0 "\| openbookqa \| acc " -- "$XSA_BIN" run --quiet --model $H --tasks openbookqa --limit 2 \
    --data-dir tests/fixtures/data --allow-data-change --offline --device cpu --output "$TMP/o_trainer"
expect_exit hf_trainer_step 0 '"step": 2,' -- cat "$TMP"/o_trainer/checkpoint-2/results_*.json
expect_exit hf_trainer_step_source 0 '"step_source": "trainer_state"' -- cat "$TMP"/o_trainer/checkpoint-2/results_*.json
mkdir -p "$TMP/renamed/checkpoint-5"
cp $H/config.json $H/model.safetensors $H/tokenizer.json $H/tokenizer_config.json $H/trainer_state.json "$TMP/renamed/checkpoint-5/"
expect_exit hf_trainer_renamed_note 0 "note: $TMP/renamed/checkpoint-5/trainer_state.json: global_step 2, but the checkpoint's name reads step 5; recording 2" -- \
    "$XSA_BIN" run --model "$TMP/renamed/checkpoint-5" --tasks openbookqa --limit 2 --data-dir tests/fixtures/data \
    --allow-data-change --offline --device cpu --output "$TMP/o_renamed"
expect_exit hf_trainer_renamed_step 0 '"step": 2,.*"step_source": "trainer_state"' -- sh -c "cat '$TMP'/o_renamed/checkpoint-5/results_*.json | tr -d '\n'"
# info shows the step run records, and where it comes from
expect_exit hf_trainer_info_step 0 "^train step +2 \(from its trainer_state.json\)$" -- "$XSA_BIN" info --model $H
expect_exit hf_trainer_info_step_json 0 '"train_step_source":[[:space:]]*"trainer_state"' -- "$XSA_BIN" info --model $H --json
# ...and its note whole, as run prints it, however long the checkpoint's path (info's was cut at 600 bytes)
LONG="$TMP/$(printf 'd%.0s' $(seq 200))/$(printf 'e%.0s' $(seq 200))/$(printf 'f%.0s' $(seq 200))/checkpoint-5"
mkdir -p "$LONG" && cp "$TMP"/renamed/checkpoint-5/* "$LONG/"
expect_exit hf_trainer_info_long_note 0 "note: $LONG/trainer_state.json: global_step 2, but .*recording 2 \\(the Trainer's count, saved with the weights; --step N records another\\)$" -- \
    sh -c "'$XSA_BIN' info --model '$LONG' 2>&1 >/dev/null"
for f in "training_args.bin:the Hugging Face Trainer's TrainingArguments" "optimizer.pt:an optimizer's state_dict" \
         "scheduler.pt:a learning-rate scheduler's state_dict" "rng_state.pth:the Hugging Face Trainer's random-number generator states"; do
    expect_exit "hf_trainer_refuse_${f%%:*}" 2 "^xsa-eval info: $H/${f%%:*}: ${f#*:} .*saved to resume training, not the model; pass the checkpoint folder instead \(--model $H\)$" \
        -- "$XSA_BIN" info --model "$H/${f%%:*}"
done
# accelerate's save_state folder: model.safetensors (and the resume files) but no config.json:
# refused with how to add it; with the model's config.json copied in, the same model.
A=$F/accelerate/checkpoint_0
expect_exit accelerate_no_config 2 "^xsa-eval info: $A: model.safetensors but no config.json \(accelerate's save_state and save_model .*model.config.save_pretrained\('$A'\)" -- "$XSA_BIN" info --model $A
mkdir "$TMP/acc"; cp $A/* "$TMP/acc/"; cp $M/llama_bf16/config.json "$TMP/acc/"
same_logprobs accelerate_with_config "$TMP/acc" $M/llama_bf16
x=$("$XSA_BIN" logprobs --model $A --config $M/llama_bf16/config.json --tokens $TOKS --device cpu 2>&1)  # or named by --config
y=$("$XSA_BIN" logprobs --model $M/llama_bf16 --tokens $TOKS --device cpu 2>&1)
[ "$x" = "$y" ] && [ "$(echo "$x" | wc -l)" -gt 5 ] && pass accelerate_config_flag || fail accelerate_config_flag "differs from llama_bf16: $x"
expect_exit accelerate_config_flag_missing 2 "checkpoint_0: --config $TMP/none.json: no such file" -- "$XSA_BIN" info --model $A --config "$TMP/none.json"
for f in "optimizer.bin:an optimizer's state_dict" "scheduler.bin:a learning-rate scheduler's state_dict" "random_states_0.pkl:accelerate's random-number generator states"; do
    expect_exit "accelerate_refuse_${f%%:*}" 2 "^xsa-eval info: $A/${f%%:*}: ${f#*:} .*not the model; pass the model's weights" -- "$XSA_BIN" info --model "$A/${f%%:*}"
done

# Damaged archives and foreign formats.
expect_exit missing_storage_key 2 "missing_key.pt \(archive/data.pkl\): storage key '7' is not in the archive" -- "$XSA_BIN" info --model $T/bad/missing_key.pt
expect_exit tensor_past_storage 2 "past_storage.pt .*reaches element 5 but the storage holds 4" -- "$XSA_BIN" info --model $T/bad/past_storage.pt
expect_exit duplicate_member 2 "duplicate_member.pt: the zip archive holds two members named 'archive/data/0'" -- "$XSA_BIN" info --model $T/bad/duplicate_member.pt
expect_exit storage_short 2 "short_storage.pt .*declares 4 elements of FloatStorage .* holds 12 bytes" -- "$XSA_BIN" info --model $T/bad/short_storage.pt
expect_exit no_config_beside 2 "good_small.pt: a state dict without model_args, and no config.json beside it" -- "$XSA_BIN" info --model $T/bad/good_small.pt
expect_exit legacy_refused 2 "legacy.pt: a torch.save file in the legacy format .*torch.save\(torch.load\(" -- "$XSA_BIN" info --model $T/bad/legacy.pt
# Named as nothing torch: the legacy format is still recognised (it went to the llama2.c reader).
cp $T/bad/legacy.pt "$TMP/legacy_model.bin"
expect_exit legacy_refused_any_name 2 "legacy_model.bin: a torch.save file in the legacy format" -- "$XSA_BIN" info --model "$TMP/legacy_model.bin"
# A lazily negated view (x.conj().imag): torch.load gives minus the stored values; refused.
expect_exit neg_view_refused 2 "neg_view.pt \(neg_view/data.pkl\): a tensor saved with the 'neg' flag .*resolve_neg" -- "$XSA_BIN" info --model $T/bad/neg_view.pt
expect_exit pickle_protocol_1_named 2 "protocol1.pt \(protocol1/data.pkl\): opcode .I. of pickle protocol 0 or 1 at byte [0-9]*; .*re-save with torch.save" -- "$XSA_BIN" info --model $T/bad/protocol1.pt
expect_exit dcp_refused 2 "bad/dcp: a torch.distributed.checkpoint folder .*dcp_to_torch_save" -- "$XSA_BIN" info --model $T/bad/dcp
mkdir "$TMP/trunc"; cp $M/gpt2_tiny/config.json "$TMP/trunc/"; head -c 100000 $T/gpt2_bin/pytorch_model.bin > "$TMP/trunc/pytorch_model.bin"
expect_exit truncated_archive 2 "trunc/pytorch_model.bin: no zip end-of-central-directory record" -- "$XSA_BIN" info --model "$TMP/trunc"
# A flipped byte inside a deflated member: the CRC (libzip) or the inflater catches it.
mkdir "$TMP/crc"; cp $T/gpt2_deflated_bin/* "$TMP/crc/"
printf '\125' | dd of="$TMP/crc/pytorch_model.bin" bs=1 seek=60000 count=1 conv=notrunc 2>/dev/null
expect_exit deflate_corrupt 2 "crc/pytorch_model.bin.*(does not inflate|corrupt)" -- "$XSA_BIN" info --model "$TMP/crc"
mkdir "$TMP/shape"; cp $T/gpt2_bin/* "$TMP/shape/"; sed -i 's/"n_positions": 64/"n_positions": 65/' "$TMP/shape/config.json"
expect_exit shape_mismatch_bin 2 "shape/pytorch_model.bin: tensor 'transformer.wpe.weight' has shape \[64, 32\] but config.json implies \[65, 32\]" -- "$XSA_BIN" info --model "$TMP/shape"
expect_exit nanogpt_untied 2 "nanogpt_untied.pt: lm_head.weight differs from transformer.wte.weight; nanoGPT ties them" -- "$XSA_BIN" info --model $T/bad/nanogpt_untied.pt
expect_exit nanogpt_bad_args 2 "nanogpt_args.pt: model_args\['n_layer'\] is missing or not a positive integer" -- "$XSA_BIN" info --model $T/bad/nanogpt_args.pt
# --config FILE: a bare state dict with its config.json elsewhere; nothing else takes one.
mkdir "$TMP/alone"; cp $T/bare/model.pt "$TMP/alone/"
expect_exit bare_no_config 2 "alone/model.pt: a state dict without model_args, and no config.json beside it .*; put the model's Hugging Face config.json there or pass --config FILE" -- "$XSA_BIN" info --model "$TMP/alone/model.pt"
x=$("$XSA_BIN" logprobs --model "$TMP/alone/model.pt" --config $T/bare/config.json --tokens $TOKS --device cpu 2>&1)
y=$("$XSA_BIN" logprobs --model $M/llama_gqa --tokens $TOKS --device cpu 2>&1)
[ "$x" = "$y" ] && [ "$(echo "$x" | wc -l)" -gt 5 ] && pass bare_config_flag || fail bare_config_flag "differs from llama_gqa: $x"
expect_exit bare_config_info 0 "architecture +llama" -- "$XSA_BIN" info --model "$TMP/alone/model.pt" --config $T/bare/config.json
expect_exit config_flag_missing 2 "model.pt: --config $TMP/none.json: cannot open" -- "$XSA_BIN" info --model "$TMP/alone/model.pt" --config "$TMP/none.json"
expect_exit config_flag_dir 2 "llama_gqa: --config .* applies to a bare state-dict .pt \(torch.save\) only \(or a folder of weights without config.json\); this checkpoint has its own config" -- "$XSA_BIN" info --model $M/llama_gqa --config $T/bare/config.json
expect_exit config_flag_nanogpt 2 "ckpt.pt: a nanoGPT checkpoint: its model_args are the config; drop --config" -- "$XSA_BIN" info --model $T/nanogpt/ckpt.pt --config $T/bare/config.json
expect_exit not_zip_pt 2 "notzip.pt: not a torch.save zip archive" -- bash -c "echo hello > $TMP/notzip.pt; $XSA_BIN info --model $TMP/notzip.pt"

# Saved whole where reading the attributes could differ from torch.load + state_dict()
# (tools/fixtures/make_torch_audit_fixtures.py; tiny models of 64 tokens): a torch.compile'd
# model (an OptimizedModule, pickled as a call of its class on the model) at the root and as a
# LightningModule-like holder's self.model give their save_pretrained twin's logprobs; so does
# transformers 5's GPT-NeoX, whose state_dict() names the head lm_head.weight (save_pretrained:
# embed_out.weight). A state_dict hook, or a weight saved reparametrized (weight_norm), is code:
# refused, naming it.
A=$T/audit
TOKS=1,5,9,33,2,7,60,4,17,3
same_logprobs audit_compiled_whole $A/compiled.pt $A/llama_tiny
x=$("$XSA_BIN" logprobs --quiet --model $A/compiled_child/model.pt --tokens $TOKS --device cpu 2>&1)
y=$("$XSA_BIN" logprobs --model $A/llama_tiny --tokens $TOKS --device cpu 2>&1)
[ "$x" = "$y" ] && [ "$(echo "$x" | wc -l)" -gt 5 ] && pass audit_compiled_child || fail audit_compiled_child "differs from llama_tiny: $x"
same_logprobs audit_neox_v5_head $A/neox_whole.pt $A/neox_tiny
expect_exit audit_state_dict_hook 2 "^xsa-eval info: $A/hooked.pt \(hooked/data.pkl\): module 'lm_head' \(a torch.nn.modules.linear.Linear\) has a state_dict hook \(the global __main__.double_head in _state_dict_hooks\), .*torch.save\(model.state_dict\(\), 'model.pt'\)" \
    -- "$XSA_BIN" info --model $A/hooked.pt
expect_exit audit_weight_norm 2 "^xsa-eval info: $A/weight_norm/model.pt: tensor 'lm_head.weight' is saved reparametrized \(as 'lm_head.parametrizations.weight.original0': .*remove_parametrizations\(module, 'weight'\)" \
    -- "$XSA_BIN" info --model $A/weight_norm/model.pt
expect_exit audit_old_weight_norm 2 "^xsa-eval info: $A/weight_norm/old.pt: tensor 'lm_head.weight' is saved reparametrized \(as 'lm_head.weight_g'" \
    -- "$XSA_BIN" info --model $A/weight_norm/old.pt
expect_exit audit_fork_gpt 2 "^xsa-eval info: $A/fork_gpt.pt: a module saved whole whose config has nanoGPT's \(n_layer, n_head, n_embd, block_size, vocab_size\) but not its GPT's weights \(no transformer.wte.weight" \
    -- "$XSA_BIN" info --model $A/fork_gpt.pt
expect_exit audit_empty_state_dict 2 "^xsa-eval info: $A/empty.pt: the saved state dict is empty \(no tensors\)" -- "$XSA_BIN" info --model $A/empty.pt
finish
