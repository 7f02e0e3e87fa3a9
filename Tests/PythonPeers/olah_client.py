"""huggingface_hub pulling a repository through olah (HF_ENDPOINT), printing what it got as JSON.

Usage: HF_ENDPOINT=http://127.0.0.1:OLAH_PORT python olah_client.py REPO CACHE_DIR
Run by Tests/ServerTests/OlahInteropTests.swift.
"""
import hashlib, json, os, sys
from huggingface_hub import HfApi, snapshot_download

repo, cache = sys.argv[1], sys.argv[2]
path = snapshot_download(repo, cache_dir=cache)
files = {}
for folder, _, names in os.walk(path):
    for name in names:
        with open(os.path.join(folder, name), "rb") as handle:
            files[os.path.relpath(os.path.join(folder, name), path)] = hashlib.sha256(handle.read()).hexdigest()
infos = HfApi(token=False).get_paths_info(repo, sorted(files))
print(json.dumps({"files": files, "pathsInfo": sorted(i.path for i in infos)}))
