#!/usr/bin/env python3
"""Loopback test server for xsa-eval's downloads (standard library only).

Serves synthetic rows in the Hugging Face dataset viewer's /rows JSON shape, synthetic Hub
files and original-author files (plain JSONL and zip), with HTTP Range support, and injects
faults chosen by the URL prefix /<tag>/<fault>/<count>/...: the fault hits the first <count>
requests under that prefix, later ones are served normally. Faults:
  ok          no fault                        500      HTTP 500
  429         HTTP 429 with Retry-After: 1    reset    connection reset mid-body
  short       body shorter than Content-Length stall   body stalls for --stall seconds
  wrongcount  valid JSON, one row fewer       404      HTTP 404 (always: count ignored)
  loop        redirect to itself (always)     slow     each response delayed 0.3 s
Binds 127.0.0.1 on an ephemeral port, writes the port to --port-file, logs one JSON line per
request to --log (--real NAME=PATH serves a real file instead), and exits by itself after --lifetime seconds. --tls CERT KEY serves HTTPS.
"""
import argparse, io, json, os, socket, ssl, struct, sys, threading, time, zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit, parse_qs

ARGS = None
LOCK = threading.Lock()
HITS = {}          # prefix -> requests seen
LAST = {}          # prefix -> time of the last request (for Retry-After checks)


def viewer_row(dataset, i):
    return {"id": "%s-%d" % (dataset, i), "question_stem": "Caf\u00e9 \"%d\"\tquestion?" % i,
            "choices": {"text": ["a%d" % i, "b", "c", "d"], "label": ["A", "B", "C", "D"]},
            "answerKey": "ABCD"[i % 4]}


def synth_file(name, n):
    """Bytes of a synthetic original/Hub file named `name` with n rows, or None."""
    if name == "lambada_test.jsonl":
        return "".join(json.dumps({"text": "synthetic passage number %d ends with word%d" % (i, i)}) + "\n"
                       for i in range(n)).encode()
    if name == "winogrande_1.1.zip":
        dev = "".join(json.dumps({"qID": "q%d" % i, "sentence": "Ann helped Bo because _ was kind %d." % i,
                                  "option1": "Ann", "option2": "Bo", "answer": "12"[i % 2]}) + "\n"
                      for i in range(n))
        labels = "".join("12"[i % 2] + "\n" for i in range(n))
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("winogrande_1.1/dev.jsonl", dev)
            z.writestr("winogrande_1.1/dev-labels.lst", labels)
        return buf.getvalue()
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
        active = fault if (fault in ("404", "loop", "wrongcount", "slow") or hit <= int(count or 0)) else "ok"
        rng = self.headers.get("Range")
        with open(ARGS.log, "a") as f:
            f.write(json.dumps({"path": self.path, "hit": hit, "fault": active, "range": rng,
                                "gap": round(gap, 3), "ua": self.headers.get("User-Agent")}) + "\n")
        if active == "slow":
            time.sleep(0.3)
        if active == "500":
            return self.send_body(500, b'{"error":"injected failure"}')
        if active == "429":
            return self.send_body(429, b'{"error":"rate limited"}', extra={"Retry-After": "1"})
        if active == "404":
            return self.send_body(404, b'{"error":"The dataset does not exist, or is not accessible."}')
        if active == "loop":
            return self.send_body(302, b"", extra={"Location": self.path})
        if rest == "rows":
            return self.viewer(parse_qs(url.query), active)
        return self.file(rest, active, rng)

    def viewer(self, q, fault):
        key = "%s/%s/%s" % (q.get("dataset", [""])[0], q.get("config", [""])[0], q.get("split", [""])[0])
        if key not in ARGS.rows:
            return self.send_body(404, b'{"error":"The dataset does not exist, or is not accessible."}')
        total = ARGS.rows[key] - (1 if fault == "wrongcount" else 0)
        off, length = int(q.get("offset", ["0"])[0]), int(q.get("length", ["100"])[0])
        if length > 100:
            return self.send_body(422, b'{"error":"Parameter \'length\' must not be greater than 100"}')
        rows = [{"row_idx": i, "row": viewer_row(key, i), "truncated_cells": []}
                for i in range(off, min(off + length, total))]
        body = json.dumps({"features": [{"feature_idx": 0, "name": "id", "type": {"dtype": "string", "_type": "Value"}}],
                           "rows": rows, "num_rows_total": total, "num_rows_per_page": 100,
                           "partial": False}).encode()
        self.send_body(200, body, fault=fault if fault in ("reset", "short", "stall") else None)

    def file(self, rest, fault, rng):
        name = rest.rsplit("/", 1)[-1]
        n = ARGS.files.get(name)
        body = synth_file(name, n) if n is not None else None
        if name in ARGS.real:
            with open(ARGS.real[name], "rb") as f:
                body = f.read()
        if body is None:
            return self.send_body(404, b"Entry not found", ctype="text/plain")
        extra = {"X-Repo-Commit": "0123456789abcdef0123456789abcdef01234567", "Accept-Ranges": "bytes"}
        status = 200
        if rng and rng.startswith("bytes=") and rng.endswith("-"):
            start = int(rng[6:-1])
            if start >= len(body):
                return self.send_body(416, b"", extra={"Content-Range": "bytes */%d" % len(body)})
            extra["Content-Range"] = "bytes %d-%d/%d" % (start, len(body) - 1, len(body))
            body, status = body[start:], 206
        self.send_body(status, body, ctype="application/octet-stream", extra=extra,
                       fault=fault if fault in ("reset", "short", "stall") else None)


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--port-file", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--lifetime", type=float, default=120)
    p.add_argument("--stall", type=float, default=4)
    p.add_argument("--rows", action="append", default=[], help="DATASET/CONFIG/SPLIT=N")
    p.add_argument("--files", action="append", default=[], help="NAME=N")
    p.add_argument("--real", action="append", default=[], help="NAME=PATH: serve a real file for NAME")
    p.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    ARGS = p.parse_args()
    ARGS.rows = {k: int(v) for k, v in (s.rsplit("=", 1) for s in ARGS.rows)}
    ARGS.real = dict(s.split("=", 1) for s in ARGS.real)
    ARGS.files = {k: int(v) for k, v in (s.rsplit("=", 1) for s in ARGS.files)}
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
