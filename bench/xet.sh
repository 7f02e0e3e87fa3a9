#!/usr/bin/env bash
# The Xet primitives against the references, on the same bytes in the same run: keyed BLAKE3 over 64 KiB chunks
# (PyPI blake3, C with SIMD, one thread), LZ4 decompression of 64 KiB blocks (PyPI lz4, C), and the file hash
# (chunking, chunk hashes, tree) against hf_xet's hash_files (Rust). Python's figures are taken inside Python
# around the calls alone (no interpreter start-up).
#
#   bench/xet.sh [--mib 256] [--runs 3]
set -euo pipefail
mib=256
runs=3
while [ $# -gt 0 ]; do
    case "$1" in
        --mib) mib=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
python="$root/.venv-xet/bin/python"
"$python" -c "import blake3, lz4, hf_xet" 2>/dev/null || { echo "$root/.venv-xet is missing: run scripts/test once" >&2; exit 1; }
work=$(mktemp -d /tmp/modeldepot-xetbench.XXXXXX)
trap 'rm -rf "$work"' EXIT
. "$root/bench/lib.sh"
bin=$(build_release "$root" modeldepot-bench)

# Half floats (safetensors-like, compressible), half random (incompressible): blocks of both kinds.
"$python" - "$work/data" "$work/blocks" "$mib" "$runs" > "$work/python.json" <<'PY'
import json, math, os, struct, sys, time
import blake3, hf_xet, lz4.block
path, blocks, mib, runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
half = mib << 19
floats = b"".join(struct.pack("<f", math.sin(i / 50) * 0.02) for i in range(half // 4))
data = floats + os.urandom(half)
open(path, "wb").write(data)
key = bytes([102, 151, 245, 119, 91, 149, 80, 222, 49, 53, 203, 172, 165, 151, 24, 28, 157, 228, 33, 16, 155, 235,
             43, 88, 180, 208, 176, 75, 147, 173, 242, 41])
chunks = [data[i:i + 65536] for i in range(0, len(data), 65536)]
compressed = [lz4.block.compress(c, store_size=False) for c in chunks]
with open(blocks, "wb") as out:
    for c, original in zip(compressed, chunks):
        out.write(struct.pack("<II", len(c), len(original)) + c)
def best(work):
    fastest = math.inf
    for _ in range(runs):
        start = time.perf_counter(); work(); fastest = min(fastest, time.perf_counter() - start)
    return fastest
size = len(data) / 1048576
b3 = best(lambda: [blake3.blake3(c, key=key).digest() for c in chunks])
lz = best(lambda: [lz4.block.decompress(c, uncompressed_size=65536) for c in compressed])
xh = best(lambda: hf_xet.hash_files([path]))
# hf_xet may use threads: its CPU time per wall second says how many it kept busy.
wall, cpu = time.perf_counter(), time.process_time()
hf_xet.hash_files([path])
cores = (time.process_time() - cpu) / (time.perf_counter() - wall)
print(json.dumps({"blake3": size / b3, "lz4": size / lz, "file": size / xh, "cores": cores,
                  "hash": hf_xet.hash_files([path])[0].hash}))
PY
"$bin" xet --file "$work/data" --blocks "$work/blocks" --runs "$runs" > "$work/ours.json"
"$python" - "$work/python.json" "$work/ours.json" "$mib" <<'PY'
import json, sys
peer, ours, mib = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
print(f"{mib} MiB (half float32 sine, half random), best of the runs; ModelDepot on one thread, "
      f"hf_xet kept {peer['cores']:.2f} cores busy")
rows = [("keyed BLAKE3, 64 KiB chunks", ours["blake3MiBPerSecond"], peer["blake3"], "PyPI blake3 1.0.11 (C, SIMD)"),
        ("LZ4 decompress, 64 KiB blocks", ours["lz4MiBPerSecond"], peer["lz4"], "PyPI lz4 4.4.4 (C)"),
        ("file hash (chunk + hash + tree)", ours["fileHashMiBPerSecond"], peer["file"], "hf_xet 1.8.0 hash_files (Rust)")]
for label, a, b, who in rows:
    print(f"  {label:34s} ModelDepot {a:8.1f} MiB/s   {who} {b:8.1f} MiB/s   ratio {a / b:.2f}x")
print(f"  chunking alone: {ours['chunkingMiBPerSecond']:.1f} MiB/s")
print(f"  file hashes equal: {ours['fileHash'] == peer['hash']}")
PY
