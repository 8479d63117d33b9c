#!/usr/bin/env python3
"""Loopback test server for xsa-eval's downloads (standard library only).

Serves synthetic rows in the Hugging Face dataset viewer's /rows JSON shape (each of the nine
datasets with its real schema and the `features` the real viewer reports), synthetic Hub files
and the original authors' files (plain JSONL and zip) holding the same rows in the authors'
formats, with HTTP Range support, and injects faults chosen by the URL prefix
/<tag>/<fault>/<count>/...: the fault hits the first <count> requests under that prefix, later
ones are served normally. Faults:
  ok          no fault                        500      HTTP 500
  429         HTTP 429 with Retry-After: 1    429date  HTTP 429, Retry-After as an HTTP-date 2 s ahead
  reset       connection reset mid-body       short    body shorter than Content-Length
  stall       body stalls for --stall seconds
Always active (count ignored):
  404         HTTP 404                        loop     redirect to itself
  wrongcount  valid JSON, one row fewer       slow     each response delayed 0.3 s
  shuffle     rows of a page in reverse order truncated  first row of a page has truncated_cells
  partial     "partial": true                 growing  num_rows_total grows by one per request
  huge        num_rows_total = 1000000        bigpage  a 17 MB row
  norange     Range ignored (200, whole file) offrange 206 starting 10 bytes before the asked range
  noetag      files without an ETag (others carry a content hash as ETag and honour If-Range)
  lfs         302 to [--cdn-base]/<tag>/cdn/0/... with X-Repo-Commit (the Hub's 302 to its CDN host, which is
              another server when --cdn-base is given); cdn: files without X-Repo-Commit
  away        302 to --redirect-base + the rest of the path
  scheme      302 to file:///etc/passwd (a non-HTTP URL)
  endless     files: 200 without Content-Length, bytes until the client hangs up
  empty       num_rows_total = 0, no rows
  badutf8     row 42: a field holds a byte that is not UTF-8
  badschema   row 42: question_stem is missing
  nul         row 42: question_stem holds "\\u0000"
  fat         num_rows_total = 6000, each row padded to about 20 KB (2 MB pages)
  notready    (count-limited) the viewer's HTTP 500 {"error": "The response is not ready yet..."}
  revchange   X-Revision differs after the first request (the dataset was updated meanwhile)
As the real services do: /rows answers carry X-Revision (the dataset commit), `length` over 100 is a
422, a loader-script dataset (allenai/social_i_qa) without --rows is a 404 {"error": "Not found."};
files carry X-Repo-Commit and honour Range (bytes=A-, A-B and -N).
--real-rows DATASET/CONFIG/SPLIT=DIR serves the viewer rows of the original authors' files in DIR
(../shared/benchdata/<dir> layout), converted as the Hugging Face loaders do; --real-zip
NAME=MEMBER:PATH,... serves a zip built from real files.
Binds 127.0.0.1 on an ephemeral port, writes the port to --port-file, logs one JSON line per
request to --log (--real NAME=PATH serves a real file instead, NAME a file name or path suffix), and exits by itself after --lifetime seconds. --tls CERT KEY serves HTTPS.
"""
import argparse, email.utils, hashlib, io, json, os, socket, ssl, struct, sys, threading, time, zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit, parse_qs

ARGS = None
LOCK = threading.Lock()
HITS = {}          # prefix -> requests seen
LAST = {}          # prefix -> time of the last request (for Retry-After checks)


def V(dtype="string"):
    return {"dtype": dtype, "_type": "Value"}


CHOICES = {"feature": {"text": V(), "label": V()}, "_type": "Sequence"}
# Per dataset: the features the real viewer reports, in order (ClassLabel rows hold the int).
FEATURES = {
    "allenai/ai2_arc": [("id", V()), ("question", V()), ("choices", CHOICES), ("answerKey", V())],
    "allenai/openbookqa": [("id", V()), ("question_stem", V()), ("choices", CHOICES), ("answerKey", V())],
    "aps/super_glue": [("question", V()), ("passage", V()), ("idx", V("int32")),
                       ("label", {"names": ["False", "True"], "_type": "ClassLabel"})],
    "Rowan/hellaswag": [("ind", V("int32")), ("activity_label", V()), ("ctx_a", V()), ("ctx_b", V()), ("ctx", V()),
                        ("endings", {"feature": V(), "_type": "Sequence"}), ("source_id", V()), ("split", V()),
                        ("split_type", V()), ("label", V())],
    "EleutherAI/lambada_openai": [("text", V())],
    "baber/piqa": [("goal", V()), ("sol1", V()), ("sol2", V()), ("label", {"names": ["0", "1"], "_type": "ClassLabel"})],
    "allenai/social_i_qa": [("context", V()), ("question", V()), ("answerA", V()), ("answerB", V()), ("answerC", V()),
                            ("label", V())],
    "lighteval/siqa": [("context", V()), ("question", V()), ("answerA", V()), ("answerB", V()), ("answerC", V()),
                       ("label", V())],
    "allenai/winogrande": [("sentence", V()), ("option1", V()), ("option2", V()), ("answer", V())],
}


def mc(i, n=4, digits=False):
    """ARC-style choices: some questions have 3 or 5 options or labels "1".."4", as the real data does."""
    n = 3 if i % 7 == 3 else 5 if i % 11 == 5 else n
    labels = [str(k + 1) for k in range(n)] if digits or i % 13 == 4 else list("ABCDE"[:n])
    texts = ["caf\u00e9 \"%d\" opt\u00edon %d\t" % (i, k) if k == 0 else "option %d/%d" % (i, k) for k in range(n)]
    return texts, labels, labels[i % n]


def hf_row(dataset, i):
    """Row i of `dataset` as the viewer serves it (the Hugging Face schema)."""
    if dataset == "allenai/ai2_arc":
        t, l, k = mc(i)
        return {"id": "Mercury_%d" % i, "question": "Which \u00b0C value? (%d) \u2014 \"quoted\"" % i,
                "choices": {"text": t, "label": l}, "answerKey": k}
    if dataset == "allenai/openbookqa":
        t, l, k = mc(i, 4)
        return {"id": "%d-%d" % (7 + i, i), "question_stem": "The sun is responsible for %d" % i,
                "choices": {"text": t[:4], "label": l[:4]}, "answerKey": l[:4][i % len(l[:4])]}
    if dataset == "aps/super_glue":
        return {"question": "is question %d true" % i, "passage": "Title %d -- Passage with \u00e9 and \"q\"." % i,
                "idx": i, "label": i % 2}
    if dataset == "Rowan/hellaswag":
        return {"ind": 24 + i, "activity_label": "Removing ice from car", "ctx_a": "Then, the man writes %d." % i,
                "ctx_b": "then", "ctx": "Then, the man writes %d. then" % i,
                "endings": [", the man [title] cleans %d." % i, "the man stops.", "he drives  off.", "it rains."],
                "source_id": "activitynet~v_%d" % i, "split": "val", "split_type": "indomain" if i % 2 else "zeroshot",
                "label": str(i % 4)}
    if dataset == "EleutherAI/lambada_openai":
        return {"text": "synthetic passage number %d ends with word%d" % (i, i)}
    if dataset == "baber/piqa":
        return {"goal": "How do I do thing %d?" % i, "sol1": "First way %d " % i, "sol2": "Second  way", "label": i % 2}
    if dataset in ("allenai/social_i_qa", "lighteval/siqa"):
        # The social_i_qa loader script kept each dev-labels.lst line's newline.
        return {"context": "Tracy did thing %d." % i, "question": "What will Tracy want?", "answerA": "rest",
                "answerB": "eat %d" % i, "answerC": "sleep",
                "label": "123"[i % 3] + ("\n" if dataset == "allenai/social_i_qa" else "")}
    if dataset == "allenai/winogrande":
        return {"sentence": "Ann helped Bo because _ was kind %d." % i, "option1": "Ann", "option2": "Bo",
                "answer": "12"[i % 2]}
    raise KeyError(dataset)


def lines(path):
    with open(path, encoding="utf-8") as f:
        return [l.rstrip("\r\n") for l in f if l.strip()]


def real_rows(dataset, d):
    """The viewer's rows of `dataset` from the original authors' files in folder d (what the Hub copies hold)."""
    def mc(o, stem_key):
        q = o["question"]
        return {"id": o["id"], stem_key: q["stem"], "choices": {"text": [c["text"] for c in q["choices"]],
                "label": [c["label"] for c in q["choices"]]}, "answerKey": o["answerKey"]}
    ls = lambda name: [json.loads(l) for l in lines(os.path.join(d, name))]
    if dataset == "allenai/ai2_arc":
        name = [f for f in os.listdir(d) if f.endswith("-Test.jsonl")][0]
        return [mc(o, "question") for o in ls(name)]
    if dataset == "allenai/openbookqa":
        return [mc(o, "question_stem") for o in ls("test.jsonl")]
    if dataset == "aps/super_glue":  # SuperGLUE's passage is "<title> -- <passage>" of Google's file
        return [{"question": o["question"], "passage": o["title"] + " -- " + o["passage"], "idx": i,
                 "label": int(o["answer"])} for i, o in enumerate(ls("dev.jsonl"))]
    if dataset == "EleutherAI/lambada_openai":
        return [{"text": o["text"]} for o in ls("lambada_test.jsonl")]
    if dataset == "baber/piqa":
        labels = lines(os.path.join(d, "valid-labels.lst"))
        return [dict(goal=o["goal"], sol1=o["sol1"], sol2=o["sol2"], label=int(labels[i]))
                for i, o in enumerate(ls("valid.jsonl"))]
    if dataset in ("lighteval/siqa", "allenai/social_i_qa"):
        labels = lines(os.path.join(d, "dev-labels.lst"))
        nl = "\n" if dataset == "allenai/social_i_qa" else ""  # the loader script kept the line's newline
        return [dict({k: o[k] for k in ("context", "question", "answerA", "answerB", "answerC")}, label=labels[i] + nl)
                for i, o in enumerate(ls("dev.jsonl"))]
    if dataset == "allenai/winogrande":
        return [{k: o[k] for k in ("sentence", "option1", "option2", "answer")} for o in ls("dev.jsonl")]
    raise KeyError(dataset)


LOADER_SCRIPTS = ("allenai/social_i_qa",)   # datasets the real viewer does not serve
REVISION = "6b8c8596030cfad104cb90bdfd86b04d9dddb9b6"


def jsonl(rows):
    return "".join(json.dumps(r) + "\n" for r in rows)


def zipped(members):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in members:
            z.writestr(name, text)
        z.comment = b"c" * ARGS.zip_comment  # a long comment keeps the central directory out of the last 64 KB
    return buf.getvalue()


def arc_original(dataset, i, stem_key="stem"):
    r = hf_row(dataset, i)
    stem = r.get("question", r.get("question_stem"))
    return {"id": r["id"], "question": {stem_key: stem, "choices": [{"text": t, "label": l} for t, l in
            zip(r["choices"]["text"], r["choices"]["label"])]}, "answerKey": r["answerKey"]}


def synth_file(name, n):
    """Bytes of a synthetic original/Hub file named `name` with n rows (the same rows as hf_row), or None."""
    rng = range(n)
    if name == "lambada_test.jsonl":
        return jsonl(hf_row("EleutherAI/lambada_openai", i) for i in rng).encode()
    if name == "winogrande_1.1.zip":
        dev = jsonl(dict(qID="q%d" % i, **hf_row("allenai/winogrande", i)) for i in rng)
        labels = "".join(hf_row("allenai/winogrande", i)["answer"] + "\n" for i in rng)
        return zipped([("winogrande_1.1/dev.jsonl", dev), ("winogrande_1.1/dev-labels.lst", labels)])
    if name == "ARC-V1-Feb2018.zip":
        d = jsonl(arc_original("allenai/ai2_arc", i) for i in rng)
        return zipped([("ARC-V1-Feb2018-2/ARC-Easy/ARC-Easy-Test.jsonl", d),
                       ("ARC-V1-Feb2018-2/ARC-Challenge/ARC-Challenge-Test.jsonl", d)])
    if name == "OpenBookQA-V1-Sep2018.zip":
        d = jsonl(arc_original("allenai/openbookqa", i) for i in rng)
        return zipped([("OpenBookQA-V1-Sep2018/Data/Main/test.jsonl", d)])
    if name == "BoolQ.zip":
        rows = (hf_row("aps/super_glue", i) for i in rng)
        d = jsonl({"question": r["question"], "passage": r["passage"], "idx": r["idx"], "label": bool(r["label"])}
                  for r in rows)
        return zipped([("BoolQ/val.jsonl", d)])
    if name == "hellaswag_val.jsonl":
        out = []
        for i in rng:
            r = hf_row("Rowan/hellaswag", i)
            out.append({k: r[k] for k in ("ind", "activity_label", "ctx_a", "ctx_b", "ctx", "split", "split_type")})
            out[-1].update(label=int(r["label"]), endings=r["endings"], source_id=r["source_id"])
        return jsonl(out).encode()
    if name == "valid.jsonl":
        return jsonl({k: hf_row("baber/piqa", i)[k] for k in ("goal", "sol1", "sol2")} for i in rng).encode()
    if name == "valid-labels.lst":
        return "".join("%d\n" % hf_row("baber/piqa", i)["label"] for i in rng).encode()
    if name == "socialiqa-train-dev.zip":
        rows = [hf_row("lighteval/siqa", i) for i in rng]
        d = jsonl({k: r[k] for k in ("context", "question", "answerA", "answerB", "answerC")} for r in rows)
        return zipped([("socialiqa-train-dev/dev.jsonl", d),
                       ("socialiqa-train-dev/dev-labels.lst", "".join(r["label"] + "\n" for r in rows))])
    return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *a):
        pass

    def send_body(self, status, body, ctype="application/json", extra=None, fault=None):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        declared = len(body) + (100 if fault == "short" else 0)
        self.send_header("Content-Length", str(declared))
        self.end_headers()
        if fault in ("reset", "stall", "short"):
            # reset: half the body; stall: a trickle, so the client's low-speed limit trips
            half = body if fault == "short" else body[:16] if fault == "stall" else body[: max(1, len(body) // 2)]
            self.wfile.write(half)
            self.wfile.flush()
            if fault == "stall":
                time.sleep(ARGS.stall)
            if fault == "reset":
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR) if fault != "reset" else None
            except OSError:
                pass
            self.connection.close()
            return
        self.wfile.write(body)

    def do_GET(self):
        url = urlsplit(self.path)
        parts = url.path.split("/")
        if len(parts) < 4:
            return self.send_body(404, b'{"error":"no such path"}')
        tag, fault, count, rest = parts[1], parts[2], parts[3], "/".join(parts[4:])
        prefix = "/".join(parts[:4])
        now = time.time()
        with LOCK:
            HITS[prefix] = HITS.get(prefix, 0) + 1
            hit = HITS[prefix]
            gap = now - LAST.get(prefix, now)
            LAST[prefix] = now
        always = ("revchange", "noetag", "404", "loop", "wrongcount", "slow", "shuffle", "truncated", "partial", "growing", "huge", "bigpage",
                  "norange", "offrange", "lfs", "cdn", "away", "scheme", "endless", "empty", "badutf8", "badschema", "nul", "fat")
        active = fault if (fault in always or hit <= int(count or 0)) else "ok"
        rng = self.headers.get("Range")
        with open(ARGS.log, "a") as f:
            f.write(json.dumps({"path": self.path, "hit": hit, "fault": active, "range": rng, "t": round(now, 3),
                                "gap": round(gap, 3), "ua": self.headers.get("User-Agent"),
                                "auth": self.headers.get("Authorization")}) + "\n")
        if active == "slow":
            time.sleep(0.3)
        if active == "500":
            return self.send_body(500, b'{"error":"injected failure"}')
        if active == "notready":
            return self.send_body(500, b'{"error":"The response is not ready yet. Please retry later."}',
                                  extra={"X-Error-Code": "ResponseNotReady"})
        if active == "429":
            return self.send_body(429, b'{"error":"rate limited"}', extra={"Retry-After": "1"})
        if active == "429date":
            when = email.utils.formatdate(time.time() + 2, usegmt=True)
            return self.send_body(429, b'{"error":"rate limited"}', extra={"Retry-After": when})
        if model_path(rest):  # the fake Hub's model repos (section "Fake Hub model repos" below)
            return model_hub(self, "/".join(parts[1:4]), fault, count, rest + ("?" + url.query if url.query else ""),
                             head=False)
        if active == "lfs":
            return self.send_body(302, b"", extra={"Location": "%s/%s/cdn/0/%s" % (ARGS.cdn_base, tag, rest),
                                                   "X-Repo-Commit": "fedcba9876543210fedcba9876543210fedcba98"})
        if active == "away":
            q = ("?" + url.query) if url.query else ""
            return self.send_body(302, b"", extra={"Location": "%s/%s%s" % (ARGS.redirect_base, rest, q)})
        if active == "404":
            return self.send_body(404, b'{"error":"The dataset does not exist, or is not accessible."}')
        if active == "loop":
            return self.send_body(302, b"", extra={"Location": self.path})
        if active == "scheme":
            return self.send_body(302, b"", extra={"Location": "file:///etc/passwd"})
        if rest == "rows":
            return self.viewer(parse_qs(url.query), active, hit)
        return self.file(rest, active, rng)

    def viewer(self, q, fault, hit):
        dataset = q.get("dataset", [""])[0]
        key = "%s/%s/%s" % (dataset, q.get("config", [""])[0], q.get("split", [""])[0])
        real = ARGS.real_rows.get(key)
        if key not in ARGS.rows and real is None:
            if dataset in LOADER_SCRIPTS:
                return self.send_body(404, b'{"error":"Not found."}')
            return self.send_body(404, b'{"error":"The dataset does not exist, or is not accessible."}')
        n = len(real) if real is not None else ARGS.rows[key]
        total = {"wrongcount": n - 1, "growing": n + hit - 1, "huge": 1000000, "empty": 0, "fat": 6000}.get(fault, n)
        off, length = int(q.get("offset", ["0"])[0]), int(q.get("length", ["100"])[0])
        if length > 100:
            return self.send_body(422, b'{"error":"Parameter \'length\' must not be greater than 100"}')
        rows = [{"row_idx": i, "row": dict(real[i]) if real is not None else hf_row(dataset, i), "truncated_cells": []}
                for i in range(off, min(off + length, total))]
        if fault == "shuffle":
            rows.reverse()
        if fault == "truncated" and rows:
            rows[0]["truncated_cells"] = [FEATURES[dataset][1][0]]
        if fault == "bigpage" and rows:
            rows[0]["row"][FEATURES[dataset][1][0]] = "x" * (17 << 20)
        for r in rows:
            if fault == "fat":
                r["row"]["pad"] = "p" * 20000
            if r["row_idx"] == 42 and fault == "badutf8":
                r["row"]["question_stem"] = "BAD-UTF8-HERE"
            if r["row_idx"] == 42 and fault == "badschema":
                del r["row"]["question_stem"]
            if r["row_idx"] == 42 and fault == "nul":
                r["row"]["question_stem"] = "before\u0000after"
        features = [{"feature_idx": k, "name": name, "type": typ} for k, (name, typ) in enumerate(FEATURES[dataset])]
        body = json.dumps({"features": features, "rows": rows, "num_rows_total": total, "num_rows_per_page": 100,
                           "partial": fault == "partial"}).encode().replace(b"BAD-UTF8-HERE", b"caf\xe9")
        rev = REVISION[:-4] + "%04d" % hit if fault == "revchange" and hit > 1 else REVISION
        self.send_body(200, body, extra={"X-Revision": rev}, fault=fault if fault in ("reset", "short", "stall") else None)

    def file(self, rest, fault, rng):
        name = rest.rsplit("/", 1)[-1]
        n = ARGS.files.get(name)
        body = synth_file(name, n) if n is not None else None
        # --real keys: a file name, or a path suffix (several Hub files share one name).
        real = [v for k, v in ARGS.real.items() if k == name or rest == k or rest.endswith("/" + k)]
        if real:
            with open(real[0], "rb") as f:
                body = f.read()
        if name in ARGS.real_zip:
            members = []
            for spec in ARGS.real_zip[name].split(","):
                member, path = spec.split(":", 1)
                with open(path, "rb") as f:
                    members.append((member, f.read()))
            body = zipped(members)
        if body is None:
            return self.send_body(404, b"Entry not found", ctype="text/plain")
        if fault == "endless":
            return self.endless()
        extra = {"X-Repo-Commit": "0123456789abcdef0123456789abcdef01234567", "Accept-Ranges": "bytes"}
        if fault == "cdn":
            del extra["X-Repo-Commit"]
        # The file's version as a CDN gives it (a content hash), and If-Range honoured: a Range
        # for another version gets the whole file (200). noetag: a server that sends no ETag.
        etag = '"%s"' % hashlib.sha256(body).hexdigest()[:32]
        if fault != "noetag":
            extra["ETag"] = etag
        if_range = self.headers.get("If-Range")
        if if_range is not None and if_range != etag:
            rng = None
        status = 200
        if rng and rng.startswith("bytes=") and fault != "norange":
            a, b = rng[6:].split("-", 1)
            start, end = (max(0, len(body) - int(b)), len(body) - 1) if not a else (int(a), int(b) if b else len(body) - 1)
            end = min(end, len(body) - 1)
            if fault == "offrange":
                start = max(0, start - 10)
            if start >= len(body):
                return self.send_body(416, b"", extra={"Content-Range": "bytes */%d" % len(body)})
            extra["Content-Range"] = "bytes %d-%d/%d" % (start, end, len(body))
            body, status = body[start:end + 1], 206
        self.send_body(status, body, ctype="application/octet-stream", extra=extra,
                       fault=fault if fault in ("reset", "short", "stall") else None)


    def endless(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        chunk = b"x" * (1 << 20)
        self.close_connection = True
        try:
            while True:
                self.wfile.write(chunk)
        except OSError:
            pass


# ---- Fake Hub model repos ------------------------------------------------------------------------
# --model-repo ORG/NAME=DIR[@COMMIT] serves the files of DIR as a Hub model repo, with
# HF_ENDPOINT=http://127.0.0.1:PORT/<tag>/<fault>/<count>, as the real Hub answers huggingface_hub:
#   GET      api/models/ORG/NAME/revision/REV  model info: sha, siblings (rfilename, size, blobId, lfs)
#   GET      api/models/ORG/NAME/tree/REV      the file list huggingface_hub's snapshot_download reads
#   GET|HEAD ORG/NAME/resolve/REV/FILE         a regular file: 200, ETag = its git blob sha1; an LFS file
#            (*.safetensors, *.bin, *.model): 302 to http(s)://localhost:PORT/<prefix>/cdn-lfs/<sha256>
#            (another host name, so no token may follow) with X-Linked-Etag (the sha256) and X-Linked-Size
#   GET      cdn-lfs/SHA256                    the bytes (Range honoured); 400 when an Authorization
#            header arrives (the token must stay with the Hub)
# Every answer of the Hub carries X-Repo-Commit. Revisions: main, v1.0 and the commit (default: the
# sha1 of ORG/NAME); others are 404 RevisionNotFound; an unknown repo is 404 RepoNotFound. A repo
# named ORG/gated-* answers resolve with 401 GatedRepo without a token, 403 GatedRepo with a token
# other than "hf_granted"; the token "hf_invalid" is refused (401, invalid credentials). Model faults: cdncut (the first <count> CDN answers stop halfway with a
# reset), cdnslow (CDN bodies trickle for about 2 s), corrupt (the CDN flips one byte of every body),
# badetag (a regular file's ETag is "../../evil"), badlisting (the API's LFS oids are zeros), downgrade (with --tls, the CDN location is
# plain http), renamed (resolve first answers a relative 307 to the same path + "?renamed=1", as the Hub redirects
# a renamed repo). Each request is logged as {"hub": path, "method", "host", "auth", "range"}.
MODEL_REPOS = {}    # "org/name" -> {"dir", "commit", "files": {name: bytes}}
MODEL_HITS = {}     # (prefix, fault) -> CDN requests seen
LFS_SUFFIXES = (".safetensors", ".bin", ".model")


def model_load_repos(specs):
    import hashlib
    for spec in specs:
        repo, rest = spec.split("=", 1)
        d, _, commit = rest.partition("@")
        files = {}
        for root, _, names in os.walk(d):
            for n in names:
                full = os.path.join(root, n)
                files[os.path.relpath(full, d)] = open(full, "rb").read()
        MODEL_REPOS[repo] = {"commit": commit or hashlib.sha1(repo.encode()).hexdigest(), "files": files}


def model_meta(name, data):
    import hashlib
    git = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    lfs = hashlib.sha256(data).hexdigest() if name.endswith(LFS_SUFFIXES) else None
    return git, lfs


def model_path(rest):
    p = rest.split("/")
    return rest.startswith(("api/models/", "cdn-lfs/")) or (len(p) > 4 and "/".join(p[:2]) in MODEL_REPOS
                                                             and p[2] == "resolve")


def model_send(h, status, body=b"", headers=None, head=False, fault=None):
    h.send_response(status)
    for k, v in (headers or {}).items():
        h.send_header(k, v)
    h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    if head:
        return
    if fault == "cdncut":
        h.wfile.write(body[: len(body) // 2])
        h.wfile.flush()
        h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        h.close_connection = True
        h.connection.close()
        return
    if fault == "cdnslow":
        step = max(1, len(body) // 20)
        for i in range(0, len(body), step):
            h.wfile.write(body[i:i + step])
            h.wfile.flush()
            time.sleep(0.1)
        return
    h.wfile.write(body)


def model_error(h, status, code, message, head, commit=None):
    hdr = {"Content-Type": "application/json", "X-Error-Code": code, "X-Error-Message": message}
    if commit:
        hdr["X-Repo-Commit"] = commit
    return model_send(h, status, json.dumps({"error": message}).encode(), hdr, head)


def model_hub(h, prefix, fault, count, rest, head):
    host = h.headers.get("Host", "")
    auth = h.headers.get("Authorization")
    with open(ARGS.log, "a") as f:
        f.write(json.dumps({"hub": rest.split("?")[0], "method": "HEAD" if head else "GET", "host": host.split(":")[0],
                            "auth": auth is not None, "range": h.headers.get("Range")}) + "\n")
    path = rest.split("?")[0]
    if path.startswith("cdn-lfs/"):
        if auth is not None:
            return model_send(h, 400, b"the CDN got an Authorization header", {}, head)
        want = path[len("cdn-lfs/"):]
        body = next((d for r in MODEL_REPOS.values() for n, d in r["files"].items() if model_meta(n, d)[1] == want), None)
        if body is None:
            return model_send(h, 404, b"NoSuchKey", {}, head)
        with LOCK:
            MODEL_HITS[(prefix, fault)] = MODEL_HITS.get((prefix, fault), 0) + 1
            hit = MODEL_HITS[(prefix, fault)]
        if fault == "corrupt":
            body = body[:-1] + bytes([body[-1] ^ 1])
        hdr = {"Content-Type": "application/octet-stream", "Accept-Ranges": "bytes", "ETag": '"%s"' % want}
        status, rng = 200, h.headers.get("Range")
        if rng and rng.startswith("bytes=") and rng.endswith("-"):
            start = int(rng[6:-1])
            if start >= len(body):
                return model_send(h, 416, b"", {"Content-Range": "bytes */%d" % len(body)}, head)
            hdr["Content-Range"] = "bytes %d-%d/%d" % (start, len(body) - 1, len(body))
            body, status = body[start:], 206
        cut = fault == "cdncut" and hit <= int(count or 0)
        return model_send(h, status, body, hdr, head, "cdncut" if cut else "cdnslow" if fault == "cdnslow" else None)
    p = path.split("/")
    api = path.startswith("api/models/")
    repo_id = "/".join(p[2:4]) if api else "/".join(p[:2])
    repo = MODEL_REPOS.get(repo_id)
    if repo is None:
        return model_error(h, 404, "RepoNotFound", "Repository not found", head)
    from urllib.parse import unquote
    rev = unquote(p[5] if api and len(p) > 5 else p[3] if not api and len(p) > 3 else "")
    if rev not in ("main", "v1.0", repo["commit"]):
        return model_error(h, 404, "RevisionNotFound", "Invalid rev id: %s" % rev, head)
    commit = repo["commit"]
    if api and p[4] == "tree":  # huggingface_hub's list_repo_tree (snapshot_download): one page, every file
        tree = []
        for n, d in sorted(repo["files"].items()):
            git, lfs = model_meta(n, d)
            e = {"type": "file", "path": n, "size": len(d), "oid": git}
            if lfs:
                e["lfs"] = {"oid": lfs, "size": len(d), "pointerSize": 134}
            tree.append(e)
        return model_send(h, 200, json.dumps(tree).encode(), {"Content-Type": "application/json"}, head)
    if api:
        sib = []
        for n, d in sorted(repo["files"].items()):
            git, lfs = model_meta(n, d)
            e = {"rfilename": n, "size": len(d), "blobId": git}
            if lfs:
                e["lfs"] = {"size": len(d), "sha256": lfs if fault != "badlisting" else "0" * 64, "pointerSize": 134}
            sib.append(e)
        body = json.dumps({"id": repo_id, "modelId": repo_id, "sha": commit, "private": False,
                           "gated": "auto" if p[3].startswith("gated-") else False, "siblings": sib}).encode()
        return model_send(h, 200, body, {"Content-Type": "application/json"}, head)
    name = unquote("/".join(p[4:]))
    if fault == "renamed" and "renamed=1" not in rest:
        return model_send(h, 307, b"", {"Location": "/%s/%s?renamed=1" % (prefix, rest), "X-Repo-Commit": commit}, head)
    if auth == "Bearer hf_invalid":
        return model_error(h, 401, "", "Invalid credentials in Authorization header", head, commit)
    if p[1].startswith("gated-") and auth != "Bearer hf_granted":
        if auth is None:
            return model_error(h, 401, "GatedRepo", "Access to model %s is restricted. You must have access to it and "
                               "be authenticated to access it. Please log in." % repo_id, head, commit)
        return model_error(h, 403, "GatedRepo", "Access to model %s is restricted and you are not in the authorized "
                           "list. Visit https://huggingface.co/%s to ask for access." % (repo_id, repo_id), head, commit)
    data = repo["files"].get(name)
    if data is None:
        return model_error(h, 404, "EntryNotFound", "%s does not exist on \"%s\"" % (name, rev), head, commit)
    git, lfs = model_meta(name, data)
    if lfs:
        scheme = "https" if ARGS.tls and fault != "downgrade" else "http"
        loc = "%s://localhost:%d/%s/cdn-lfs/%s?X-Amz-Signature=fake" % (scheme, h.server.server_address[1], prefix, lfs)
        return model_send(h, 302, b"", {"Location": loc, "X-Repo-Commit": commit, "X-Linked-Etag": '"%s"' % lfs,
                                        "X-Linked-Size": str(len(data)), "ETag": '"%s"' % git}, head)
    if fault == "badetag":
        git = "../../evil"
    return model_send(h, 200, data, {"Content-Type": "application/octet-stream", "X-Repo-Commit": commit,
                                     "ETag": '"%s"' % git, "Accept-Ranges": "bytes"}, head)


def model_do_head(self):
    parts = urlsplit(self.path).path.split("/")
    rest = "/".join(parts[4:]) + ("?" + urlsplit(self.path).query if urlsplit(self.path).query else "")
    if len(parts) < 5 or not model_path(rest.split("?")[0]):
        return model_send(self, 404, b"", {}, True)
    return model_hub(self, "/".join(parts[1:4]), parts[2], parts[3], rest, head=True)


Handler.do_HEAD = model_do_head
# ---- end of the fake Hub model repos -------------------------------------------------------------


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--port-file", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--lifetime", type=float, default=120)
    p.add_argument("--stall", type=float, default=4)
    p.add_argument("--rows", action="append", default=[], help="DATASET/CONFIG/SPLIT=N")
    p.add_argument("--files", action="append", default=[], help="NAME=N")
    p.add_argument("--real", action="append", default=[], help="NAME=PATH: serve a real file for NAME (a file name or a path suffix)")
    p.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    p.add_argument("--redirect-base", default="", help="where the 'away' fault redirects to")
    p.add_argument("--zip-comment", type=int, default=0, help="bytes of comment in the zips served (at most 65535)")
    p.add_argument("--cdn-base", default="", help="where the 'lfs' fault redirects to (default: this server)")
    p.add_argument("--real-rows", action="append", default=[], help="DATASET/CONFIG/SPLIT=DIR of original files")
    p.add_argument("--real-zip", action="append", default=[], help="NAME=MEMBER:PATH[,MEMBER:PATH...]")
    p.add_argument("--model-repo", action="append", default=[], help="ORG/NAME=DIR[@COMMIT]: a fake Hub model repo")
    ARGS = p.parse_args()
    ARGS.rows = {k: int(v) for k, v in (s.rsplit("=", 1) for s in ARGS.rows)}
    ARGS.real = dict(s.split("=", 1) for s in ARGS.real)
    ARGS.files = {k: int(v) for k, v in (s.rsplit("=", 1) for s in ARGS.files)}
    ARGS.real_rows = {k: real_rows("/".join(k.split("/")[:2]), v) for k, v in (s.split("=", 1) for s in ARGS.real_rows)}
    ARGS.real_zip = dict(s.split("=", 1) for s in ARGS.real_zip)
    model_load_repos(ARGS.model_repo)
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    if ARGS.tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(ARGS.tls[0], ARGS.tls[1])
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    threading.Timer(ARGS.lifetime, lambda: os._exit(0)).start()
    tmp = ARGS.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.replace(tmp, ARGS.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
