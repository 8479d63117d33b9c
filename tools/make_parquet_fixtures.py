#!/usr/bin/env python3
"""Parquet fixtures for data/parquet.c, written and read back by the real library (pyarrow).

Writes tests/fixtures/parquet/:
  <task>.<variant>.parquet   the canonical rows of tests/fixtures/data/<task>/<split>.jsonl in the
                             schema the Hugging Face Hub serves for that dataset (field order and
                             Arrow types of its `datasets` features), one file per writer variant:
                             compression, dictionary or PLAIN, data page v1 or v2, row groups and
                             page sizes
  <task>.expected.jsonl      the rows as pyarrow reads every variant back (identical for all of
                             them; checked here), one json.dumps object a line
  nulls.*                    nulls and empty lists at each level of an ARC-shaped schema
  types.*                    BOOLEAN, INT32 as int8 and uint32, INT64, FLOAT, DOUBLE, with nulls
  unsupported.*.parquet      files a real writer makes with what the reader refuses by name
  bad_string_length.parquet  a PLAIN string whose length prefix is 0xfffffff0

    pip install pyarrow
    python3 tools/make_parquet_fixtures.py
    python3 tools/make_parquet_fixtures.py --bench /tmp/hellaswag_bench.parquet [ROWS]
"""
import glob
import json
import os
import random
import sys

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "fixtures", "data")
OUT = os.path.join(ROOT, "tests", "fixtures", "parquet")

S = pa.string()
LS = pa.list_(pa.string())
CHOICES = pa.struct([("text", LS), ("label", LS)])
# The Arrow schema of each dataset's Parquet files on the Hub (from its `datasets` features:
# Value("string") -> string, Value("int32") -> int32, ClassLabel -> int64, Sequence -> list).
SCHEMAS = {
    "arc_easy": [("id", S), ("question", S), ("choices", CHOICES), ("answerKey", S)],
    "arc_challenge": [("id", S), ("question", S), ("choices", CHOICES), ("answerKey", S)],
    "boolq": [("question", S), ("passage", S), ("idx", pa.int32()), ("label", pa.int64())],
    "hellaswag": [("ind", pa.int32()), ("activity_label", S), ("ctx_a", S), ("ctx_b", S), ("ctx", S),
                  ("endings", LS), ("source_id", S), ("split", S), ("split_type", S), ("label", S)],
    "openbookqa": [("id", S), ("question_stem", S), ("choices", CHOICES), ("answerKey", S)],
    "piqa": [("goal", S), ("sol1", S), ("sol2", S), ("label", pa.int64())],
    "social_iqa": [("context", S), ("question", S), ("answerA", S), ("answerB", S), ("answerC", S), ("label", S)],
    "winogrande": [("sentence", S), ("option1", S), ("option2", S), ("answer", S)],
    "lambada_openai": [("text", S)],
}
# name: (compression, use_dictionary, data_page_version, row_group_size, data_page_size); the
# uncompressed one also writes page CRCs.
VARIANTS = {
    "snappy": ("snappy", True, "1.0", None, None),      # what `datasets` writes by default
    "zstd_v2_plain": ("zstd", False, "2.0", None, None),
    "gzip_v2_groups": ("gzip", True, "2.0", 5, 64),     # several row groups and pages; dictionary fallback
    "none_plain_groups": ("none", False, "1.0", 4, 64),
}


def canonical(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def write(table, path, compression, dictionary, version, rg, page):
    kw = {"compression": compression, "use_dictionary": dictionary, "data_page_version": version}
    if rg:
        kw["row_group_size"] = rg
    if page:
        kw["data_page_size"] = page
        kw["write_batch_size"] = 2  # pages are cut between batches
    if compression == "snappy":
        # What newer writers add: a page index after the row groups, content-defined page cuts.
        kw["write_page_index"] = True
        kw["use_content_defined_chunking"] = True
    if compression == "none":
        kw["write_page_checksum"] = True
        kw["write_statistics"] = False  # the only copy of each value is in its page
    if page and dictionary:
        kw["dictionary_pagesize_limit"] = 96  # a full dictionary: later pages fall back to PLAIN
    pq.write_table(table, path, **kw)


def dumps(rows):
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def task_table(task, rows):
    fields = SCHEMAS[task]
    schema = pa.schema(fields, metadata={"huggingface": json.dumps({"info": {"features": {}}})})
    return pa.Table.from_pylist(rows, schema=schema)


def fixtures():
    os.makedirs(OUT, exist_ok=True)
    for old in glob.glob(os.path.join(OUT, "*")):
        os.unlink(old)
    for task in SCHEMAS:
        (src,) = glob.glob(os.path.join(DATA, task, "*.jsonl"))
        rows = canonical(src)
        table = task_table(task, rows)
        expected = None
        for name, (codec, dic, ver, rg, page) in VARIANTS.items():
            path = os.path.join(OUT, f"{task}.{name}.parquet")
            write(table, path, codec, dic, ver, rg, page)
            back = pq.read_table(path).to_pylist()
            if expected is None:
                expected = back
            assert back == expected, (task, name)
        assert expected == rows, f"{task}: pyarrow does not read back the canonical rows"
        with open(os.path.join(OUT, f"{task}.expected.jsonl"), "w", encoding="utf-8") as f:
            f.write(dumps(expected))
    # Nulls and empty lists: the struct, a list, a list element, a plain field.
    nulls = [
        {"id": "n1", "question": None, "choices": {"text": ["a", None, "c"], "label": []}, "answerKey": "A"},
        {"id": "n2", "question": "q", "choices": None, "answerKey": None},
        {"id": "n3", "question": "", "choices": {"text": None, "label": ["A"]}, "answerKey": ""},
        {"id": "n4", "question": "é ü 漢字 🙂", "choices": {"text": [], "label": None}, "answerKey": "B"},
    ]
    table = pa.Table.from_pylist(nulls, schema=pa.schema(SCHEMAS["arc_easy"]))
    for name, (codec, dic, ver, rg, page) in VARIANTS.items():
        path = os.path.join(OUT, f"nulls.{name}.parquet")
        write(table, path, codec, dic, ver, rg or 2, page)
        assert pq.read_table(path).to_pylist() == nulls, name
    with open(os.path.join(OUT, "nulls.expected.jsonl"), "w", encoding="utf-8") as f:
        f.write(dumps(pq.read_table(os.path.join(OUT, "nulls.snappy.parquet")).to_pylist()))
    # The other physical types and integer widths the reader maps to JSON (booleans are RLE in v2 pages).
    types = [
        {"b": True, "i8": -128, "u32": 4294967295, "i64": -(2 ** 53), "f": 0.1, "d": -2.5e-300, "s": "x"},
        {"b": False, "i8": 127, "u32": 0, "i64": 2 ** 53, "f": None, "d": 1e300, "s": None},
        {"b": None, "i8": None, "u32": None, "i64": None, "f": -3.0, "d": None, "s": ""},
    ] * 3
    tschema = pa.schema([("b", pa.bool_()), ("i8", pa.int8()), ("u32", pa.uint32()), ("i64", pa.int64()),
                         ("f", pa.float32()), ("d", pa.float64()), ("s", S)])
    table = pa.Table.from_pylist(types, schema=tschema)
    for name, (codec, dic, ver, rg, page) in VARIANTS.items():
        write(table, os.path.join(OUT, f"types.{name}.parquet"), codec, dic, ver, rg, page)
    with open(os.path.join(OUT, "types.expected.jsonl"), "w", encoding="utf-8") as f:
        f.write(dumps(pq.read_table(os.path.join(OUT, "types.snappy.parquet")).to_pylist()))
    # Real writers' features the reader refuses by name.
    boolq = task_table("boolq", canonical(os.path.join(DATA, "boolq", "validation.jsonl")))
    pq.write_table(boolq, os.path.join(OUT, "unsupported.brotli.parquet"), compression="brotli")
    pq.write_table(boolq, os.path.join(OUT, "unsupported.delta.parquet"), compression="none", use_dictionary=False,
                   column_encoding={"idx": "DELTA_BINARY_PACKED"})
    pq.write_table(pa.table({"when": pa.array([1, 2], pa.timestamp("ms"))}),
                   os.path.join(OUT, "unsupported.timestamp.parquet"))
    pq.write_table(pa.table({"blob": pa.array([b"\x00\x01"], pa.binary())}),
                   os.path.join(OUT, "unsupported.binary.parquet"))
    # A PLAIN string whose 4-byte length prefix claims nearly 4 GiB.
    marker = "LENGTH-MARKER-0123456789"
    path = os.path.join(OUT, "bad_string_length.parquet")
    pq.write_table(pa.table({"text": [marker]}), path, compression="none", use_dictionary=False,
                   write_statistics=False)
    with open(path, "rb") as f:
        data = bytearray(f.read())
    at = data.index(marker.encode())
    assert int.from_bytes(data[at - 4:at], "little") == len(marker)
    data[at - 4:at] = (0xFFFFFFF0).to_bytes(4, "little")
    with open(path, "wb") as f:
        f.write(data)
    print(f"wrote {len(os.listdir(OUT))} files to {OUT}")


VOCAB = []


def words(rnd, n):
    # Common words most of the time, a long tail of rarer ones: text that compresses like English.
    if not VOCAB:
        VOCAB.extend(["the", "man", "is", "then", "a", "woman", "shown", "on", "camera", "and", "begins", "to",
                      "while", "holding", "into", "of", "with", "he", "she", "they", "it", "in", "his", "her"])
        VOCAB.extend("".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rnd.randint(3, 10)))
                     for _ in range(20000))
    return " ".join(VOCAB[rnd.randrange(24)] if rnd.random() < 0.4 else rnd.choice(VOCAB) for _ in range(n))


def bench(path, n):
    """A HellaSwag-validation-shaped file: its schema, field lengths and `datasets`' writer defaults."""
    rnd = random.Random(1)
    acts = [words(rnd, 2).title() for _ in range(190)]
    rows = []
    for i in range(n):
        a, b = words(rnd, rnd.randint(10, 60)) + ".", words(rnd, rnd.randint(1, 4))
        rows.append({"ind": i * 4 + 24, "activity_label": rnd.choice(acts), "ctx_a": a, "ctx_b": b, "ctx": a + " " + b,
                     "endings": [words(rnd, rnd.randint(8, 30)) + "." for _ in range(4)],
                     "source_id": f"activitynet~v_{rnd.getrandbits(40):x}", "split": "val",
                     "split_type": rnd.choice(["indomain", "zeroshot"]), "label": str(rnd.randint(0, 3))})
    pq.write_table(task_table("hellaswag", rows), path, compression="snappy")
    print(f"wrote {path}: {n} rows, {os.path.getsize(path)} bytes")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--bench":
        bench(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 10042)
    else:
        fixtures()
