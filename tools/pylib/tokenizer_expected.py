"""The expected.jsonl of a tokenizer fixture folder: per text of cases.hex, the ids transformers'
tokenizer gives without and with special tokens, and both decodings (shared by
tools/fixtures/make_tokenizer_class_fixtures.py and make_vocab_files_fixtures.py)."""

import json


def write_expected(tok, cases, path):
    backend = tok._tokenizer
    with open(path, "w") as f:
        for i, b in enumerate(cases):
            s = b.decode("utf-8", errors="replace")
            ids = tok.encode(s, add_special_tokens=False)
            ids_sp = tok.encode(s, add_special_tokens=True)
            dec = backend.decode(ids, skip_special_tokens=False).encode("utf-8")
            dec_sp = backend.decode(ids_sp, skip_special_tokens=False).encode("utf-8")
            f.write(json.dumps({"line": i, "ids": ids, "ids_special": ids_sp, "decoded_hex": dec.hex(),
                                "decoded_special_hex": dec_sp.hex(), "class": type(tok).__name__}) + "\n")
