"""huggingface_hub 2.4 with hf_xet 1.8 against ModelDepot's mirror (`serve --xet`): hashes the source files with
hf_xet's own hash_files, then downloads each through hf_hub_download and records whether it went through Xet
(huggingface_hub's xet_get) or plain HTTP. Run by Tests/ServerTests/MirrorXetTests.swift with .venv.

Usage: xet_client.py REPO CACHE_DIR SOURCE_FOLDER FILE...   (HF_ENDPOINT: the mirror)
Prints {"files": {name: {"hash": hf_xet's hash of the source, "sha256": of the download, "xet": bool}}}.
"""
import hashlib, json, os, sys

import hf_xet
from huggingface_hub import file_download, hf_hub_download

repo, cache, source, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
through_xet = []
original = file_download.xet_get


def spy(*args, **kwargs):
    through_xet.append(kwargs.get("displayed_filename") or "?")
    return original(*args, **kwargs)


file_download.xet_get = spy
hashes = {info_name: info.hash for info_name, info in zip(names, hf_xet.hash_files([os.path.join(source, n) for n in names]))}
out = {}
for name in names:
    before = len(through_xet)
    path = hf_hub_download(repo, name, cache_dir=cache)
    out[name] = {
        "hash": hashes[name], "sha256": hashlib.sha256(open(path, "rb").read()).hexdigest(),
        "xet": len(through_xet) > before,
    }
print(json.dumps({"files": out}))
