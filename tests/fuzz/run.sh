#!/usr/bin/env bash
# Runs one harness for SECONDS (default 120) on one core, seeded from tests/fixtures, with its
# corpus in build/fuzz/corpus/NAME; crashes land in build/fuzz/crashes/NAME/.
# Usage: bash tests/fuzz/run.sh NAME [SECONDS] [extra libFuzzer flags]
# NAME mnanogpt runs fuzz_pgolf on the modded-nanogpt seeds alone, with -max_len 1 MiB: those
# checkpoints are 360-850 KB, so pgolf's 64 KB cut leaves them as a zip header and its loader unreached.
set -euo pipefail
cd "$(dirname "$0")/../.."
n=$1; secs=${2:-120}; shift; [ $# -gt 0 ] && shift
h=$n; max_len=${MAX_LEN:-65536}
[ "$n" = mnanogpt ] && h=pgolf && max_len=${MAX_LEN:-1048576}
F=tests/fixtures
seeds=()
case $n in
safetensors) seeds=($F/models/*/*.safetensors) ;;
shard) seeds=($F/ppl/*.bin) ;;
checkpoint) seeds=(build/fuzz/seeds/checkpoint) ;;
config) seeds=($F/models/*/config.json) ;;
llama2c) seeds=(build/fuzz/seeds/llama2c) ;;
llmc) seeds=($F/llmc/*.bin $F/llmc/bad/*.bin) ;;
torch) seeds=($(find $F/torch -name '*.pt' -o -name '*.bin' | sort)) ;;
unpickle) seeds=(build/fuzz/seeds/unpickle) ;;
pgolf) seeds=(build/fuzz/seeds/pgolf) ;;
tok_hf) seeds=($F/tokenizers/*/tokenizer.json $F/ppl/decoded_bpb/*/tokenizer.json) ;;
tok_config) seeds=($F/encode/add_bos/*/tokenizer_config.json) ;;
vocab_files) seeds=($F/tokenizers/vocab_files/*/merges.txt) ;;
tok_sp) seeds=($F/tokenizers/sp_bpe_*/tokenizer.model) ;;
tok_l2c) seeds=($F/tokenizers/llama2c_synth/tokenizer.bin) ;;
parquet) seeds=($F/parquet/*.parquet) ;;
zip_range) seeds=($(find $F/torch -name '*.pt' | sort)) ;;  # torch.save files are zip archives
encode) seeds=($F/tokenizers/corpus.txt $F/tokenizers/cases.jsonl $F/tokenizers/edge_cases.jsonl) ;;
results) seeds=($F/results/*.json $(find $F/torch -name trainer_state.json)) ;;  # trainer_state.json: trend_checkpoint_step
tasks|reqstore) seeds=(build/fuzz/seeds/$n) ;;
caseops) seeds=($F/tokenizers/corpus.txt $F/tokenizers/cases.jsonl $F/tokenizers/sp_caseops/expected.tsv) ;;
esac
mkdir -p build/fuzz/corpus/$n build/fuzz/crashes/$n build/fuzz/seeds/$n
for s in "${seeds[@]}"; do [ -f "$s" ] && cp "$s" "build/fuzz/seeds/$n/$(echo "$s" | tr / _)" 2>/dev/null || true; done  # (same-named seeds kept apart)
[ "$n" = checkpoint ] && python3 tests/fuzz/make_seeds.py build/fuzz/seeds
[ "$n" = llama2c ] && python3 tests/fuzz/make_seeds.py build/fuzz/seeds
[ "$n" = unpickle ] && python3 tests/fuzz/make_seeds.py build/fuzz/seeds
[ "$h" = pgolf ] && python3 tests/fuzz/make_seeds.py build/fuzz/seeds
[ "$n" = mnanogpt ] && cp build/fuzz/seeds/pgolf/mnanogpt_* build/fuzz/seeds/mnanogpt/
[ "$n" = tasks ] && python3 tests/fuzz/make_seeds.py build/fuzz/seeds
[ "$n" = reqstore ] && python3 tests/fuzz/make_seeds.py build/fuzz/seeds
ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 FUZZ_FIXTURES=$F/tokenizers \
    build/fuzz/fuzz_$h -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=$max_len \
    -artifact_prefix=build/fuzz/crashes/$n/ -print_final_stats=1 "$@" \
    build/fuzz/corpus/$n build/fuzz/seeds/$n
