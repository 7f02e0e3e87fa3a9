#!/usr/bin/env bash
# Delta pulls through Xet: what a second file that shares most of its chunks with one already pulled costs on the
# wire, ours against huggingface_hub + hf_xet, both pulling from the same release-build mirror (serve --xet).
# A repository holds model-a (MIB MiB, half float32, half random) and model-b: model-a with one 1 MiB "tensor"
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
python3 - "$work/root/acme/delta" "$mib" <<'PY'
import math, os, random, struct, sys
folder, mib = sys.argv[1], int(sys.argv[2])
rng = random.Random(7)
half = mib << 19
block = b"".join(struct.pack("<f", math.sin(i / 50) * 0.02) for i in range(1 << 18))
data = bytearray()
while len(data) < half: data += block
del data[half:]
data += rng.randbytes(half)
open(os.path.join(folder, "model-a.safetensors"), "wb").write(data)
middle = len(data) // 2 + (1 << 19)
data[middle:middle + (1 << 20)] = rng.randbytes(1 << 20)
data += rng.randbytes(1 << 20)
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

ours() {
    "$bin" pull acme/delta --endpoint "$endpoint" --cache-dir "$work/ours" --xet always --quiet --include "$1" > /dev/null
}
ours model-a.safetensors
before=$(lo); started=$(now)
ours model-b.safetensors
ours_bytes=$(( $(lo) - before )); ours_time=$(elapsed "$started" "$(now)")

theirs() {
    HF_ENDPOINT="$endpoint" HF_HUB_CACHE="$work/theirs" HF_HUB_DISABLE_PROGRESS_BARS=1 HF_HUB_DISABLE_TELEMETRY=1 \
        "$root/.venv/bin/python" -c "import sys; from huggingface_hub import hf_hub_download; hf_hub_download('acme/delta', sys.argv[1])" "$1"
}
theirs model-a.safetensors
before=$(lo); started=$(now)
theirs model-b.safetensors
theirs_bytes=$(( $(lo) - before )); theirs_time=$(elapsed "$started" "$(now)")
cmp "$work/root/acme/delta/model-b.safetensors" "$work/ours/models--acme--delta/snapshots/"*/model-b.safetensors
pct() { python3 -c "print(f'{100 * $1 / $2:.2f} %')"; }
echo "model-b: $size_b bytes, after model-a is cached; loopback bytes received while model-b is pulled"
echo "  modeldepot pull --xet always:       $ours_bytes bytes ($(pct "$ours_bytes" "$size_b") of the file), ${ours_time} s"
echo "  huggingface_hub 2.4 + hf_xet 1.8:   $theirs_bytes bytes ($(pct "$theirs_bytes" "$size_b") of the file), ${theirs_time} s"
