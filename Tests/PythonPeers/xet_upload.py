"""hf_xet 1.8 uploading into ModelDepot's mirror (`serve --xet --xet-uploads`) as into the Hub's CAS, then reading
the files back through Xet: write token from the repository's xet-write-token route, an upload commit of the
files (hf_xet chunks, compresses and builds the xorbs and the shard itself), a read token from xet-read-token, a
download group fetching each file by the hash the upload reported. Run by Tests/ServerTests/MirrorXetUploadTests.swift
with .venv-xet.

Usage: xet_upload.py ENDPOINT REPO OUT_DIR FILE...
Prints {"uploads": {path: {"hash", "size", "sha256" (of the download)}}, "deduped": bytes} or {"error": text}.
"""
import hashlib, json, os, sys, time, urllib.request

import hf_xet

endpoint, repo, out, paths = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]


def token(kind):
    with urllib.request.urlopen(f"{endpoint}/api/models/{repo}/xet-{kind}-token/main") as reply:
        return reply.headers["X-Xet-Cas-Url"], reply.headers["X-Xet-Access-Token"], int(reply.headers["X-Xet-Token-Expiration"])


try:
    session = hf_xet.XetSession()
    cas, write, expiry = token("write")
    commit = session.new_upload_commit(endpoint=cas, token=write, token_expiry_unix_secs=expiry)
    handles = [commit.start_upload_file(path) for path in paths]
    report = commit.wait_to_finish()
    infos = {path: handle.result().xet_info for path, handle in zip(paths, handles)}
    cas, read, expiry = token("read")
    group = session.new_file_download_group(endpoint=cas, token=read, token_expiry_unix_secs=expiry)
    targets = {}
    for number, path in enumerate(paths):
        info = infos[path]
        targets[path] = os.path.join(out, f"download-{number}")
        group.start_download_file(hf_xet.XetFileInfo(info.hash, info.file_size), targets[path])
    group.wait_to_finish()
    uploads = {
        path: {
            "hash": infos[path].hash, "size": infos[path].file_size,
            "sha256": hashlib.sha256(open(targets[path], "rb").read()).hexdigest(),
        }
        for path in paths
    }
    print(json.dumps({"uploads": uploads, "deduped": report.dedup_metrics.deduped_bytes}))
except Exception as error:  # The test reports what hf_xet said.
    print(json.dumps({"error": f"{type(error).__name__}: {error}"}))
