#!/usr/bin/env bash
# Bundle import speed: `modeldepot import` of a bundle holding one large file (hashed as it is copied into the
# cache) against `cp` of the same file on the same disk, same run, alternating, page cache warm for both.
#
#   bench/bundle.sh [--size-mib 2048] [--runs 3]
#
# Goal: import at >= 0.8x the disk's copy speed, verification included.
set -euo pipefail
size_mib=2048
runs=3
while [ $# -gt 0 ]; do
    case "$1" in
        --size-mib) size_mib=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/modeldepot-bundlebench.XXXXXX)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
. "$root/bench/lib.sh"
bin=$(build_release "$root")

mkdir -p "$work/mirror/acme/big"
head -c "$((size_mib << 20))" /dev/urandom > "$work/mirror/acme/big/weights.bin"
echo '{"model_type": "bench"}' > "$work/mirror/acme/big/config.json"
port=$(free_port)
"$bin" serve --root "$work/mirror" --port "$port" > "$work/serve.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" > /dev/null && break; sleep 0.1; done
"$bin" lock acme/big -o "$work/big.lock" --endpoint "http://127.0.0.1:$port" > /dev/null
"$bin" pull --locked "$work/big.lock" --endpoint "http://127.0.0.1:$port" --cache-dir "$work/source" --quiet > /dev/null 2>&1
"$bin" export --lock "$work/big.lock" --to "$work/bundle" --cache-dir "$work/source" > /dev/null
rm -rf "$work/mirror" "$work/source"
file="$work/bundle/models/acme/big/weights.bin"

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
cat "$file" > /dev/null  # warm the page cache for both
for run in $(seq "$runs"); do
    start=$(now); cp "$file" "$work/copy.bin"; sync "$work/copy.bin"; elapsed "$start" "$(now)" >> "$work/cp.txt"
    rm -f "$work/copy.bin"
    start=$(now); "$bin" import "$work/bundle" --cache-dir "$work/cache-$run" > /dev/null; sync -f "$work"
    elapsed "$start" "$(now)" >> "$work/import.txt"
    rm -rf "$work/cache-$run"
done
cp_time=$(median < "$work/cp.txt")
import_time=$(median < "$work/import.txt")
python3 - "$cp_time" "$import_time" "$size_mib" <<'PY'
import sys
cp, imported, mib = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
ratio = cp / imported
print(f"{mib} MiB bundle: cp {cp:.2f} s ({mib / cp:.0f} MiB/s); import with SHA-256 {imported:.2f} s ({mib / imported:.0f} MiB/s);"
      f" {ratio:.2f}x cp's speed ({'MET' if ratio >= 0.8 else 'MISSED'} >= 0.8)")
PY
