#!/usr/bin/env python3
"""Checks that xsa-eval's model downloads lay out the Hugging Face cache as huggingface_hub does.

Starts the loopback fake Hub (tests/http_server.py --model-repo), downloads two repos with
`xsa-eval info --model ORG/NAME` into one cache and with huggingface_hub's own snapshot_download
(same files) into another, then:
  1. compares the two caches: every path, file type, symlink target, blob's bytes and ref
     (huggingface_hub's extras are listed, not compared: its trees/ listing cache and the
     CACHEDIR.TAG comment line);
  2. reads xsa-eval's cache with huggingface_hub's scan_cache_dir: no warnings, the commits,
     refs and files expected.
Prints what it found; --write also stores it in tests/fixtures/hf_hub_download_check.txt (the
record CI reads: CI never runs this script).

Usage: python3 -m tools.references.check_hub_download [--write]   (from the repository root;
needs huggingface_hub and a built ./xsa-eval)
"""
import os
import subprocess
import sys
import tempfile
import time

os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
import huggingface_hub  # noqa: E402  (after the environment it reads at import)
from huggingface_hub import scan_cache_dir, snapshot_download  # noqa: E402

from tools.pylib.paths import FIXTURES, ROOT  # noqa: E402
from tools.pylib.cli import help_flag


COMMIT = "0123456789abcdef0123456789abcdef01234567"
REPOS = {"xsa-eval/tiny-llama": "tests/fixtures/parity/models/llama_sp_xsa",
         "xsa-eval/sharded": "tests/fixtures/models/gpt2_tiny_sharded"}
EXTRAS = ("trees", "CACHEDIR.TAG", ".locks")  # compared by presence only


def tree(root):
    out = {}
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            p = os.path.join(d, n)
            rel = os.path.relpath(p, root)
            if os.path.islink(p):
                out[rel] = ("link", os.readlink(p))
            elif os.path.isdir(p):
                out[rel] = ("dir", None)
            else:
                out[rel] = ("file", open(p, "rb").read())
    return out


def main():
    os.chdir(ROOT)
    lines = ["huggingface_hub %s; %s" % (huggingface_hub.__version__,
             subprocess.run(["./xsa-eval", "--version"], capture_output=True, text=True).stdout.strip())]
    tmp = tempfile.mkdtemp()
    srv = subprocess.Popen([sys.executable, "tests/http_server.py", "--port-file", tmp + "/port", "--log", tmp + "/log",
                            "--lifetime", "120", "--model-repo", "xsa-eval/tiny-llama=%s@%s" % (REPOS["xsa-eval/tiny-llama"], COMMIT),
                            "--model-repo", "xsa-eval/sharded=" + REPOS["xsa-eval/sharded"]])
    try:
        for _ in range(100):
            if os.path.exists(tmp + "/port"):
                break
            time.sleep(0.05)
        endpoint = "http://127.0.0.1:%s/m/ok/0" % open(tmp + "/port").read()
        ours, theirs = tmp + "/xsa", tmp + "/hf"
        env = dict(os.environ, HF_HUB_CACHE=ours, HF_ENDPOINT=endpoint, HF_TOKEN_PATH=tmp + "/none")
        env.pop("HF_TOKEN", None)
        env.pop("HF_HUB_OFFLINE", None)
        for repo in REPOS:
            subprocess.run(["./xsa-eval", "info", "--model", repo, "--quiet"], env=env, check=True, capture_output=True)
        for repo in REPOS:
            snap = os.path.join(ours, "models--" + repo.replace("/", "--"), "snapshots")
            files = sorted(os.listdir(os.path.join(snap, os.listdir(snap)[0])))
            snapshot_download(repo, cache_dir=theirs, allow_patterns=files, endpoint=endpoint)
            lines.append("%s: xsa-eval fetched %s" % (repo, ", ".join(files)))
        a, b = tree(ours), tree(theirs)
        key = lambda k: k.split(os.sep)[0] in EXTRAS or k.split(os.sep)[1:2] == ["trees"]
        diff = sorted(k for k in set(a) | set(b) if not key(k) and a.get(k) != b.get(k))
        lines.append("1. tree compared with huggingface_hub's snapshot_download: %d paths, %d differ%s" % (
            len([k for k in a if not key(k)]), len(diff), "".join("\n   differs: " + k for k in diff)))
        lines.append("   only huggingface_hub wrote: %s" % (", ".join(sorted(k for k in b if k not in a)) or "nothing"))
        lines.append("   only xsa-eval wrote: %s" % (", ".join(sorted(k for k in a if k not in b)) or "nothing"))
        info = scan_cache_dir(ours)
        lines.append("2. scan_cache_dir(xsa-eval's cache): %d repos, %d warnings, %d bytes" % (
            len(info.repos), len(info.warnings), info.size_on_disk))
        for w in info.warnings:
            lines.append("   warning: %s" % w)
        for r in sorted(info.repos, key=lambda r: r.repo_id):
            for rev in r.revisions:
                lines.append("   %s %s commit %s refs %s files %s" % (r.repo_type, r.repo_id, rev.commit_hash,
                             sorted(rev.refs), sorted(f.file_name for f in rev.files)))
        # huggingface_hub on xsa-eval's cache: the files are there, so nothing is downloaded again.
        before = len(open(tmp + "/log").read().splitlines())
        for repo in REPOS:
            snap = os.path.join(ours, "models--" + repo.replace("/", "--"), "snapshots")
            files = sorted(os.listdir(os.path.join(snap, os.listdir(snap)[0])))
            snapshot_download(repo, cache_dir=ours, allow_patterns=files, endpoint=endpoint)
        new = [l for l in open(tmp + "/log").read().splitlines()[before:] if '"hub"' in l]
        fetched = [l for l in new if '"method": "GET"' in l and ("/resolve/" in l or "cdn-lfs/" in l)]
        lines.append("3. snapshot_download on xsa-eval's cache: %d requests (listings), %d file downloads" % (
            len(new), len(fetched)))
        reused = not fetched
        ok = reused and not diff and not info.warnings and len(info.repos) == 2 and all(
            len(r.revisions) == 1 and set(next(iter(r.revisions)).refs) == {"main"} for r in info.repos)
        lines.append("result: %s" % ("the same layout as huggingface_hub" if ok else "DIFFERENT"))
    finally:
        srv.kill()
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if "--write" in sys.argv:
        open(os.path.join(FIXTURES, "hf_hub_download_check.txt"), "w").write(text)
    return 0 if ok else 1


if __name__ == "__main__":
    help_flag(__doc__)  # before anything is written
    sys.exit(main())
