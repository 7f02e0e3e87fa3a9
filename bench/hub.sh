#!/usr/bin/env bash
# Hub benchmarks: ModelDepot against Python's huggingface_hub (the venv scripts/test creates), same run, same machine.
#
#   bench/hub.sh [--size-mib 256] [--small-files 40] [--many-files 400] [--cache-files 10000] [--runs 2]
#
# 1. pull: one large LFS file + N small files from our mirror (`modeldepot serve`), `modeldepot pull` vs
#    `snapshot_download`, each into a fresh cache; best of --runs. Goal: ours at least 2x faster.
#    Then many small files: a repository of --many-files files of ~3 KB in 20 folders, the same comparison.
#    Goal: ours at least 3x faster.
# 2. ls: a cache of --cache-files files (100 repos, two revisions each), `modeldepot ls --json` vs
#    `scan_cache_dir`. Goal: ours at least 5x faster. Both must report the same totals.
set -euo pipefail
size_mib=256
small_files=40
many_files=400
cache_files=10000
runs=2
while [ $# -gt 0 ]; do
    case "$1" in
        --size-mib) size_mib=$2; shift 2 ;;
        --small-files) small_files=$2; shift 2 ;;
        --many-files) many_files=$2; shift 2 ;;
        --cache-files) cache_files=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
python="$root/.venv/bin/python"
[ -x "$python" ] || { echo "missing $python: run scripts/test once (it creates the venv with huggingface-hub)" >&2; exit 1; }
work=$(mktemp -d /tmp/modeldepot-hubbench.XXXXXX)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
. "$root/bench/lib.sh"
bin=${MODELDEPOT_BIN:-$(build_release "$root")}  # MODELDEPOT_BIN: an already built binary

# --- 1. pull ---------------------------------------------------------------------------------------------
repo="$work/repos/acme/bench"
mkdir -p "$repo"
head -c $((size_mib << 20)) /dev/urandom > "$repo/model.safetensors"
for i in $(seq "$small_files"); do head -c $((1000 + i * 100)) /dev/urandom | base64 > "$repo/part-$i.json"; done
"$bin" serve --root "$work/repos" --port 0 > "$work/serve.out" 2>/dev/null & pids+=($!)
for _ in $(seq 100); do grep -q listening "$work/serve.out" 2>/dev/null && break; sleep 0.1; done
endpoint=$(sed -n 's/^listening on //p' "$work/serve.out")
# Warm the mirror's hash index and the page cache, so both clients meet the same server state.
curl -s -o /dev/null "$endpoint/acme/bench/resolve/main/model.safetensors"
export HF_HUB_DISABLE_TELEMETRY=1 HF_HUB_DISABLE_PROGRESS_BARS=1 HF_HOME="$work/hf-home"

# compare_pull REPO LABEL GOAL: best of --runs of each client into fresh caches, the same bytes in both.
compare_pull() {
    local repo=$1 label=$2 goal=$3 name=${1//\//--} best_ours="" best_python="" ours theirs start
    for run in $(seq "$runs"); do
        rm -rf "$work/cache-ours" "$work/cache-python"
        start=$(now)
        "$bin" pull "$repo" --endpoint "$endpoint" --cache-dir "$work/cache-ours" --quiet > /dev/null
        ours=$(elapsed "$start" "$(now)")
        start=$(now)
        HF_ENDPOINT="$endpoint" "$python" -c "
from huggingface_hub import snapshot_download
snapshot_download('$repo', cache_dir='$work/cache-python')" > /dev/null
        theirs=$(elapsed "$start" "$(now)")
        echo "run $run: modeldepot pull ${ours}s, snapshot_download ${theirs}s"
        best_ours=$(python3 -c "print(min(x for x in [$ours, ${best_ours:-1e9}]))")
        best_python=$(python3 -c "print(min(x for x in [$theirs, ${best_python:-1e9}]))")
    done
    (cd "$work/cache-ours/models--$name/snapshots"/* && find -L . -type f -exec sha256sum {} + | sort) > "$work/ours.sum"
    (cd "$work/cache-python/models--$name/snapshots"/* && find -L . -type f -exec sha256sum {} + | sort) > "$work/python.sum"
    cmp -s "$work/ours.sum" "$work/python.sum" || { echo "the two caches differ" >&2; exit 1; }
    echo "pull of $label: best modeldepot ${best_ours}s, best snapshot_download ${best_python}s"
    python3 -c "print(f'pull speed-up vs huggingface_hub ($label): {$best_python / $best_ours:.2f}x (goal >= $goal)')"
}
compare_pull acme/bench "${size_mib} MiB + ${small_files} small files" 2

many="$work/repos/acme/many-files"
for i in $(seq 0 $((many_files - 1))); do
    mkdir -p "$many/folder-$((i % 20))"
    head -c $((2000 + (i * 37) % 2000)) /dev/urandom | base64 -w 0 > "$many/folder-$((i % 20))/file-$i.json"
done
curl -s -o /dev/null "$endpoint/api/models/acme/many-files/tree/main?recursive=true"
compare_pull acme/many-files "${many_files} files of ~3 KB" 3
kill "${pids[0]}" 2>/dev/null || true

# --- 2. ls -----------------------------------------------------------------------------------------------
cache="$work/big-cache"
python3 - "$cache" "$cache_files" <<'PY'
import hashlib, os, sys
cache, total = sys.argv[1], int(sys.argv[2])
repos, revisions = 100, 2
per_revision = max(1, total // (repos * revisions))
for r in range(repos):
    folder = os.path.join(cache, f"models--bench--repo{r}")
    os.makedirs(os.path.join(folder, "blobs"), exist_ok=True)
    os.makedirs(os.path.join(folder, "refs"), exist_ok=True)
    for v in range(revisions):
        commit = hashlib.sha1(f"{r}-{v}".encode()).hexdigest()
        for f in range(per_revision):
            data = f"{r}-{v}-{f}".encode() * 10
            blob = hashlib.sha256(data).hexdigest()
            with open(os.path.join(folder, "blobs", blob), "wb") as out:
                out.write(data)
            link = os.path.join(folder, "snapshots", commit, f"dir{f % 10}", f"file{f}.json")
            os.makedirs(os.path.dirname(link), exist_ok=True)
            os.symlink(os.path.join("..", "..", "..", "blobs", blob), link)
        with open(os.path.join(folder, "refs", "main" if v == 0 else f"v{v}"), "w") as ref:
            ref.write(commit)
PY
files=$(find "$cache" -type l | wc -l)
"$bin" ls --cache-dir "$cache" --json > /dev/null  # warm the inode cache for both
best_ours=""; best_python=""
for run in $(seq 3); do
    start=$(now); "$bin" ls --cache-dir "$cache" --json > "$work/ls.json"; ours=$(elapsed "$start" "$(now)")
    start=$(now)
    "$python" -c "
from huggingface_hub import scan_cache_dir
info = scan_cache_dir('$cache'); print(info.size_on_disk, sum(r.nb_files for r in info.repos))" > "$work/scan.txt"
    theirs=$(elapsed "$start" "$(now)")
    echo "run $run: modeldepot ls ${ours}s, scan_cache_dir ${theirs}s"
    best_ours=$(python3 -c "print(min(x for x in [$ours, ${best_ours:-1e9}]))")
    best_python=$(python3 -c "print(min(x for x in [$theirs, ${best_python:-1e9}]))")
done
python3 - "$work/ls.json" "$work/scan.txt" <<'PY'
import json, sys
repos = json.load(open(sys.argv[1]))
size, files = map(int, open(sys.argv[2]).read().split())
ours = (sum(r["sizeOnDisk"] for r in repos), sum(r["files"] for r in repos))
assert ours == (size, files), f"ls reports {ours}, scan_cache_dir {(size, files)}"
PY
echo "ls over ${files} cached files: best modeldepot ${best_ours}s (whole process), best scan_cache_dir ${best_python}s (python start-up included)"
python3 -c "print(f'ls speed-up vs huggingface_hub: {$best_python / $best_ours:.2f}x (goal >= 5)')"
