#!/usr/bin/env bash
# Pulls through Xet, ours against huggingface_hub + hf_xet, both from the same release-build mirror (serve --xet):
# the time and peak memory of a first pull, and what a second file that shares most of its chunks with the first
# costs on the wire. A repository holds model-a (MIB MiB, half float32 noise, half random bytes: nothing in it
# repeats, as in real weights; numpy from ./.venv) and model-b: model-a with one 1 MiB "tensor"
# rewritten in the middle and 1 MiB appended. The mirror indexes model-a, then model-b (citing model-a's xorb for
# the chunks they share, as hf_xet deduplicates an upload). Each client pulls model-a into a fresh cache, then
# model-b; the bytes model-b took are read from the loopback interface's counters (/proc/net/dev, `lo` receive),
# not from either client's own accounting. Nothing else should use loopback while it runs.
#
#   bench/xet-delta.sh [--mib 256]
set -euo pipefail
mib=256
while [ $# -gt 0 ]; do
    case "$1" in
        --mib) mib=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/modeldepot-xetdelta.XXXXXX)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
. "$root/bench/lib.sh"
bin=$(build_release "$root")
mkdir -p "$work/root/acme/delta"
"$root/.venv/bin/python" - "$work/root/acme/delta" "$mib" <<'PY'
import os, sys
import numpy
folder, mib = sys.argv[1], int(sys.argv[2])
rng = numpy.random.default_rng(7)
half = mib << 19
data = bytearray(rng.normal(0, 0.02, half // 4).astype("<f4").tobytes()) + bytearray(rng.bytes(half))
open(os.path.join(folder, "model-a.safetensors"), "wb").write(data)
middle = len(data) // 2 + (1 << 19)
data[middle:middle + (1 << 20)] = rng.bytes(1 << 20)
data += rng.bytes(1 << 20)
open(os.path.join(folder, "model-b.safetensors"), "wb").write(data)
PY
port=$(free_port)
"$bin" serve --root "$work/root" --port "$port" --xet > "$work/mirror.log" 2>&1 &
pids+=($!)
endpoint="http://127.0.0.1:$port"
for _ in $(seq 200); do curl -sf "$endpoint/healthz" > /dev/null && break; sleep 0.05; done
for name in model-a.safetensors model-b.safetensors; do
    while ! curl -sfI "$endpoint/acme/delta/resolve/main/$name" | grep -qi '^x-xet-hash'; do sleep 0.2; done
done
lo() { awk '/^ *lo:/ { sub(/^ *lo:/, ""); print $1 }' /proc/net/dev; }
size_b=$(stat -c %s "$work/root/acme/delta/model-b.safetensors")

# measured COMMAND…: runs it, prints "seconds peak-RSS-MiB" (the child's, from getrusage).
measured() {
    python3 - "$@" <<'PY'
import resource, subprocess, sys, time
started = time.monotonic()
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
print(f"{time.monotonic() - started:.2f} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f}")
PY
}
ours() {
    "$bin" pull acme/delta --endpoint "$endpoint" --cache-dir "$work/ours" --xet always --quiet --include "$1" > /dev/null
}
read -r ours_first ours_rss < <(measured "$bin" pull acme/delta --endpoint "$endpoint" --cache-dir "$work/ours" \
    --xet always --quiet --include model-a.safetensors)
before=$(lo); started=$(now)
ours model-b.safetensors
ours_bytes=$(( $(lo) - before )); ours_time=$(elapsed "$started" "$(now)")

theirs() {
    HF_ENDPOINT="$endpoint" HF_HUB_CACHE="$work/theirs" HF_HUB_DISABLE_PROGRESS_BARS=1 HF_HUB_DISABLE_TELEMETRY=1 \
        "$root/.venv/bin/python" -c "import sys; from huggingface_hub import hf_hub_download; hf_hub_download('acme/delta', sys.argv[1])" "$1"
}
read -r theirs_first theirs_rss < <(HF_ENDPOINT="$endpoint" HF_HUB_CACHE="$work/theirs" HF_HUB_DISABLE_PROGRESS_BARS=1 \
    HF_HUB_DISABLE_TELEMETRY=1 measured "$root/.venv/bin/python" -c \
    "from huggingface_hub import hf_hub_download; hf_hub_download('acme/delta', 'model-a.safetensors')")
before=$(lo); started=$(now)
theirs model-b.safetensors
theirs_bytes=$(( $(lo) - before )); theirs_time=$(elapsed "$started" "$(now)")
cmp "$work/root/acme/delta/model-b.safetensors" "$work/ours/models--acme--delta/snapshots/"*/model-b.safetensors
pct() { python3 -c "print(f'{100 * $1 / $2:.2f} %')"; }
size_a=$(stat -c %s "$work/root/acme/delta/model-a.safetensors")
echo "model-a: $size_a bytes, first pull through Xet into an empty cache (release build, 2 cores)"
echo "  modeldepot pull --xet always:       ${ours_first} s, peak RSS ${ours_rss} MiB"
echo "  huggingface_hub 2.4 + hf_xet 1.8:   ${theirs_first} s, peak RSS ${theirs_rss} MiB"
echo "  ratio (their time / ours):          $(python3 -c "print(round($theirs_first / $ours_first, 2))")x"
echo "model-b: $size_b bytes, after model-a is cached; loopback bytes received while model-b is pulled"
echo "  modeldepot pull --xet always:       $ours_bytes bytes ($(pct "$ours_bytes" "$size_b") of the file), ${ours_time} s"
echo "  huggingface_hub 2.4 + hf_xet 1.8:   $theirs_bytes bytes ($(pct "$theirs_bytes" "$size_b") of the file), ${theirs_time} s"
