#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz (not part of `make test`): clang with
# -fsanitize=fuzzer,address,undefined over common/, model/, the Parquet and Range zip readers, into build/fuzz/.
# Usage: bash tests/fuzz/build.sh [harness ...]   then   bash tests/fuzz/run.sh NAME SECONDS
# Needs Debian's clang (apt-get install -y clang; libclang-rt-*-dev carries libFuzzer).
set -euo pipefail
cd "$(dirname "$0")/../.."
CC=${FUZZ_CC:-clang}
OUT=build/fuzz
mkdir -p "$OUT/obj"
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
CFLAGS="-O1 -g -std=c11 -D_GNU_SOURCE -I. -I/usr/include/cjson $SAN"
LIBS="-lcjson -lcurl -lssl -lcrypto -lpcre2-8 -lutf8proc -lzip -lbz2 -lsnappy -lzstd -llzma -lbrotlidec -lz -lm"
objs=()
for src in common/*.c model/*.c data/thrift.c data/parquet*.c data/zip_range.c data/http.c data/progress.c tasks/*.c eval/token_shard.c eval/encode.c eval/reqstore.c eval/results.c eval/trend.c eval/metrics.c eval/mt19937.c; do
    obj="$OUT/obj/$(echo "${src%.c}" | tr / _).o"
    if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] || [ -n "$(find model common data tasks eval -name '*.h' -newer "$obj" | head -1)" ]; then
        $CC $CFLAGS -fsanitize=fuzzer-no-link -c -o "$obj" "$src"
    fi
    objs+=("$obj")
done
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(safetensors checkpoint config llama2c llmc torch unpickle tok_hf tok_sp tok_l2c tok_config vocab_files encode parquet zip_range pgolf shard caseops results tasks reqstore)
for n in "${names[@]}"; do
    case $n in
    tok_hf) src=tests/fuzz/fuzz_tokenizer.c; def=-DFUZZ_KIND=1 ;;
    tok_sp) src=tests/fuzz/fuzz_tokenizer.c; def=-DFUZZ_KIND=2 ;;
    tok_l2c) src=tests/fuzz/fuzz_tokenizer.c; def=-DFUZZ_KIND=3 ;;
    *) src=tests/fuzz/fuzz_$n.c; def= ;;
    esac
    $CC $CFLAGS $def -fsanitize=fuzzer -o "$OUT/fuzz_$n" "$src" "${objs[@]}" $LIBS
    echo "built $OUT/fuzz_$n"
done
