#!/usr/bin/env bash
# kill -9 soak of repository pulls: what an interrupted pull leaves in the cache.
#
#   bench/kill-soak.sh [--rounds 100] [--files 60] [--max-delay-ms 250]
#
# Serves a repository shaped like a Core ML bundle (many small files in nested folders of
# X.mlmodelc/, plus one 8 MiB weight file) with `modeldepot serve`, then in each round starts
# `modeldepot pull` into one shared cache and kills it with SIGKILL after a random delay. After the rounds, one
# uninterrupted pull must succeed; the script then counts what must never be there:
# - entries in snapshots/ that are not files of the commit (temporary links, debris),
# - problems `modeldepot verify` reports (corrupt, missing or unlisted files).
# It prints the counts and exits 1 if any is non-zero. Not a timed test: a soak, run by hand
# (MODELDEPOT_BIN=.build/debug/modeldepot skips the release build).
set -euo pipefail
rounds=100
files=60
max_delay_ms=250
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds=$2; shift 2 ;;
        --files) files=$2; shift 2 ;;
        --max-delay-ms) max_delay_ms=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/modeldepot-soak.XXXXXX)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
. "$root/bench/lib.sh"
bin=${MODELDEPOT_BIN:-$(build_release "$root")}  # MODELDEPOT_BIN: an already built binary

repo="$work/repos/acme/bundle"
mkdir -p "$repo/X.mlmodelc/weights" "$repo/X.mlmodelc/analytics"
head -c $((8 << 20)) /dev/urandom > "$repo/X.mlmodelc/weights/weight.bin"
for i in $(seq "$files"); do
    folder="$repo/X.mlmodelc/part$((i % 6))"
    mkdir -p "$folder"
    head -c $((200 + i * 37)) /dev/urandom | base64 > "$folder/f$i.json"
done
echo '{"model_type": "soak"}' > "$repo/config.json"

port=$(free_port)
"$bin" serve --root "$work/repos" --port "$port" > "$work/serve.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q "listening on" "$work/serve.log" && break; sleep 0.1; done
export HF_ENDPOINT="http://127.0.0.1:$port" HF_HUB_CACHE="$work/cache"

killed=0
debris_seen=0
for round in $(seq "$rounds"); do
    "$bin" pull acme/bundle --quiet > /dev/null 2>> "$work/pulls.log" &
    pid=$!
    sleep "$(python3 -c "import random; print(random.randint(0, $max_delay_ms) / 1000)")"
    if kill -9 "$pid" 2>/dev/null; then killed=$((killed + 1)); fi
    wait "$pid" 2>/dev/null || true
    # Most rounds start from an empty snapshot, so that kills land while links are being made; every other
    # round also without the blobs, so that they land during transfers too. Debris an interrupted round left
    # in a snapshot is counted before it goes.
    snapshots="$HF_HUB_CACHE/models--acme--bundle/snapshots"
    if [ -d "$snapshots" ]; then
        stray=$(find "$snapshots" -name '.*' | wc -l)
        debris_seen=$((debris_seen + stray))
    fi
    if [ $((round % 4)) -ne 0 ]; then rm -rf "$snapshots"; fi
    if [ $((round % 2)) -eq 0 ]; then rm -rf "$HF_HUB_CACHE/models--acme--bundle/blobs"; fi
done

folder=$("$bin" pull acme/bundle --quiet)
expected=$(find "$repo" -type f | wc -l)
present=$(find "$folder" \( -type f -o -type l \) | wc -l)
debris=$((present - expected))
problems=$("$bin" verify acme/bundle --json | python3 -c "import json,sys; print(len(json.load(sys.stdin)['problems']))")
hidden=$(find "$folder" -name '.*' | wc -l)
echo "rounds: $rounds, pulls killed mid-way: $killed"; { grep -v "^$" "$work/pulls.log" || true; } | sort | uniq -c | head -5
echo "files in the final snapshot: $present (the repository has $expected)"
echo "debris in the final snapshot: $debris entries, hidden names: $hidden; temporary links seen after kills: $debris_seen"
echo "verify problems: $problems"
[ "$debris" -eq 0 ] && [ "$hidden" -eq 0 ] && [ "$problems" -eq 0 ] && [ "$debris_seen" -eq 0 ]
