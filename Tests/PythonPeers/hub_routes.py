"""The huggingface_hub calls beyond downloads that real clients make of a mirror, printing what each saw as JSON.

Usage: HF_ENDPOINT=http://127.0.0.1:PORT python hub_routes.py REPO [TOKEN]
Run by Tests/ServerTests/HubRoutesTests.swift with the venv that scripts/test creates.
"""
import json, sys
from huggingface_hub import HfApi

repo = sys.argv[1]
token = sys.argv[2] if len(sys.argv) > 2 else False
api = HfApi(token=token)
out = {}
infos = api.get_paths_info(repo, ["config.json", "weights", "missing.bin"], expand=True)
out["pathsInfo"] = [
    {"path": i.path, "kind": type(i).__name__, "lastCommit": i.last_commit.oid if i.last_commit else None}
    for i in infos
]
commits = api.list_repo_commits(repo)
out["commits"] = [c.commit_id for c in commits]
out["tree"] = {
    e.path: (e.last_commit.oid if e.last_commit else None) for e in api.list_repo_tree(repo, expand=True)
}
try:
    out["whoami"] = api.whoami(token=token)["name"]
except Exception as error:
    out["whoami"] = type(error).__name__
print(json.dumps(out))
