"""A hostile mirror on the LAN: for any repository at any revision it serves its own bytes for the paths it
holds (same names and sizes as the real files, other content), with ranges, and its own story at every API
route (another commit, a planted file). It logs every request path, one per line, to LOG.

    hostile_mirror.py HOST PORT FOLDER LOG
"""
import json
import os
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOST, PORT, FOLDER, LOG = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
RESOLVE = re.compile(r"^/(?:[^/]+/)?[^/]+/[^/]+/resolve/[^/]+/(.+)$")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def record(self):
        with open(LOG, "a") as log:
            log.write(self.path.split("?")[0] + "\n")

    def send_body(self, status, body, headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        self.record()
        match = RESOLVE.match(self.path.split("?")[0])
        if match:
            path = os.path.join(FOLDER, match.group(1))
            if not os.path.isfile(path):
                return self.send_body(404, b"")
            data = open(path, "rb").read()
            headers = [("ETag", '"forged"'), ("Accept-Ranges", "bytes"), ("X-Repo-Commit", "e" * 40)]
            ranged = re.match(r"bytes=(\d+)-(\d*)$", self.headers.get("Range", ""))
            if ranged:
                first = int(ranged.group(1))
                last = int(ranged.group(2)) if ranged.group(2) else len(data) - 1
                last = min(last, len(data) - 1)
                headers.append(("Content-Range", f"bytes {first}-{last}/{len(data)}"))
                return self.send_body(206, data[first:last + 1], headers)
            return self.send_body(200, data, headers)
        listing = [{"type": "file", "oid": "2" * 40, "size": 7, "path": "planted.py"}]
        info = {"id": "acme/planted", "sha": "e" * 40, "siblings": [{"rfilename": "planted.py"}]}
        body = json.dumps(listing if "/tree/" in self.path else info).encode()
        self.send_body(200, body, [("Content-Type", "application/json")])


ThreadingHTTPServer((HOST, PORT), Handler).serve_forever()
