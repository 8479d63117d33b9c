#!/usr/bin/env python3
"""Writes tests/fixtures/hf_hub/: a Hugging Face hub cache holding one tiny model, laid out as
huggingface_hub lays it out (models--ORG--NAME/{refs,snapshots,blobs}, snapshot files as
relative symlinks into blobs named by their etag: the sha256 of an LFS file, the git blob sha1
of the others), then checked by huggingface_hub's own scan_cache_dir, so the layout is the
library's, not ours. The model is tests/fixtures/parity/models/llama_sp_xsa (weights,
config, tokenizer). Refs: main and v1.0 name the same commit.

Usage: python3 tools/make_hub_cache_fixture.py   (from the repository root; needs huggingface_hub)
"""
import hashlib
import os
import shutil

from huggingface_hub import scan_cache_dir
from huggingface_hub.file_download import repo_folder_name

SRC = "tests/fixtures/parity/models/llama_sp_xsa"
OUT = "tests/fixtures/hf_hub"
REPO = "xsa-eval/tiny-llama"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
LFS = {"model.safetensors"}  # what the Hub stores through LFS (etag = sha256)


def etag(name, data):
    if name in LFS:
        return hashlib.sha256(data).hexdigest()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # git's blob id


def main():
    root = os.path.join(OUT, repo_folder_name(repo_id=REPO, repo_type="model"))
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(os.path.join(root, "blobs"))
    os.makedirs(os.path.join(root, "refs"))
    snap = os.path.join(root, "snapshots", COMMIT)
    os.makedirs(snap)
    for name in sorted(os.listdir(SRC)):
        data = open(os.path.join(SRC, name), "rb").read()
        tag = etag(name, data)
        open(os.path.join(root, "blobs", tag), "wb").write(data)
        os.symlink(os.path.join("..", "..", "blobs", tag), os.path.join(snap, name))
    for ref in ("main", "v1.0"):
        open(os.path.join(root, "refs", ref), "w").write(COMMIT)
    info = scan_cache_dir(OUT)
    repos = [r for r in info.repos if r.repo_id == REPO]
    assert len(repos) == 1 and not info.warnings, (info.repos, info.warnings)
    revs = list(repos[0].revisions)
    assert len(revs) == 1 and revs[0].commit_hash == COMMIT, revs
    assert set(revs[0].refs) == {"main", "v1.0"}, revs[0].refs
    assert {f.file_name for f in revs[0].files} == set(os.listdir(SRC)), revs[0].files
    print(f"{root}: {len(revs[0].files)} files, refs {sorted(revs[0].refs)} -> {COMMIT} (scan_cache_dir agrees)")


if __name__ == "__main__":
    main()
