"""huggingface_hub's view of a cache, printed as JSON, for ModelDepot's interoperability tests.

Usage (with HF_ENDPOINT set for `pull`):
  cache_peer.py scan CACHE                 -> scan_cache_dir: repos, sizes, file counts, refs, warnings
  cache_peer.py load CACHE REPO FILE [REV] -> hf_hub_download / snapshot_download with local_files_only
  cache_peer.py pull CACHE REPO [REV...]   -> snapshot_download of each revision (default main)
  cache_peer.py localdir DIR REPO          -> snapshot_download(local_dir=DIR), the cache left alone
Run by Tests/ServerTests/PythonCacheInteropTests.swift with the venv that scripts/test creates.
"""
import json, sys
from huggingface_hub import scan_cache_dir, hf_hub_download, snapshot_download

command, cache = sys.argv[1], sys.argv[2]
if command == "scan":
    info = scan_cache_dir(cache)
    print(json.dumps({
        "size": info.size_on_disk,
        "warnings": [str(w) for w in info.warnings],
        "incomplete": len(info.incomplete_files),
        "repos": sorted(({
            "id": r.repo_id, "type": r.repo_type, "size": r.size_on_disk, "files": r.nb_files,
            "lastAccessed": r.last_accessed, "lastModified": r.last_modified,
            "revisions": sorted(({"commit": v.commit_hash, "refs": sorted(v.refs), "size": v.size_on_disk,
                                  "files": len(v.files)} for v in r.revisions), key=lambda v: v["commit"]),
        } for r in info.repos), key=lambda r: r["id"]),
    }))
elif command == "load":
    repo, name = sys.argv[3], sys.argv[4]
    revision = sys.argv[5] if len(sys.argv) > 5 else None
    print(json.dumps({
        "file": hf_hub_download(repo, name, revision=revision, cache_dir=cache, local_files_only=True),
        "snapshot": snapshot_download(repo, revision=revision, cache_dir=cache, local_files_only=True),
    }))
elif command == "pull":
    repo, revisions = sys.argv[3], sys.argv[4:] or ["main"]
    print(json.dumps({"snapshots": [snapshot_download(repo, revision=r, cache_dir=cache) for r in revisions]}))
elif command == "localdir":
    repo = sys.argv[3]
    print(json.dumps({"snapshot": snapshot_download(repo, local_dir=cache)}))
