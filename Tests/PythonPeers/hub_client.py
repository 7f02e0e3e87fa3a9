"""The real huggingface_hub client against a ModelDepot mirror (HF_ENDPOINT), printing what it saw as JSON.

Usage: HF_ENDPOINT=http://127.0.0.1:PORT python hub_client.py CACHE_DIR
Run by Tests/ServerTests/PythonInteropTests.swift with the venv that scripts/test creates.
"""
import json, os, sys
from huggingface_hub import snapshot_download, hf_hub_download, list_repo_tree, model_info
cache = sys.argv[1]
out = {}
path = snapshot_download("acme/tiny", cache_dir=cache)
out["snapshot"] = path
out["files"] = sorted(os.path.relpath(os.path.join(d, f), path) for d, _, fs in os.walk(path) for f in fs)
info = model_info("acme/tiny", files_metadata=True)
out["sha"] = info.sha
out["siblings"] = {s.rfilename: s.size for s in info.siblings}
out["byCommit"] = hf_hub_download("acme/tiny", "config.json", revision=info.sha, cache_dir=cache)
out["byBranch"] = hf_hub_download("acme/tiny", "model.gguf", revision="main", cache_dir=cache)
out["tree"] = sorted(e.path for e in list_repo_tree("acme/tiny", recursive=True))
for name, call in [
    ("missingRepo", lambda: hf_hub_download("acme/missing", "x.bin", cache_dir=cache)),
    ("missingFile", lambda: hf_hub_download("acme/tiny", "nope.bin", cache_dir=cache)),
    ("missingRevision", lambda: hf_hub_download("acme/tiny", "config.json", revision="v9", cache_dir=cache)),
]:
    try:
        call()
        out[name] = "no error"
    except Exception as error:
        out[name] = type(error).__name__
print(json.dumps(out))
