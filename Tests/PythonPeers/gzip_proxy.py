"""A proxy that compresses answers nobody asked it to compress, as some corporate proxies do.

Usage: python gzip_proxy.py UPSTREAM_URL (json|all)
Prints its port on the first line, then serves until killed. `json` gzips JSON answers whatever the client's
Accept-Encoding says; `all` gzips file bodies too, whole
(200) or in part (206). Run by Tests/ServerTests/ContentCodingTests.swift.
"""
import gzip, sys, urllib.error, urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

upstream, mode = sys.argv[1].rstrip("/"), sys.argv[2]


class NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


opener = urllib.request.build_opener(NoRedirects)


class Proxy(BaseHTTPRequestHandler):
    def forward(self, method):
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "accept-encoding")}
        request = urllib.request.Request(upstream + self.path, method=method, headers=headers)
        try:
            answer = opener.open(request)
        except urllib.error.HTTPError as error:
            answer = error
        body = answer.read() if method == "GET" else b""
        kind = answer.headers.get("Content-Type", "")
        json = answer.status == 200 and kind.startswith("application/json")
        squeeze = method == "GET" and (json or (mode == "all" and answer.status in (200, 206)))
        if squeeze:
            body = gzip.compress(body)
        self.send_response(answer.status)
        for name, value in answer.headers.items():
            if name.lower() in ("content-length", "transfer-encoding", "connection", "date", "server"):
                continue
            self.send_header(name, value)
        if squeeze:
            self.send_header("Content-Encoding", "gzip")
        length = len(body) if method == "GET" else answer.headers.get("Content-Length", "0")
        self.send_header("Content-Length", str(length))
        self.end_headers()
        if method == "GET":
            self.wfile.write(body)

    def do_GET(self):
        self.forward("GET")

    def do_HEAD(self):
        self.forward("HEAD")

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
print(server.server_address[1], flush=True)
server.serve_forever()
