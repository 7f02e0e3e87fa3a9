#!/usr/bin/env bash
# Signature checking cost: `verify --signature` of a 2 GiB model signed by PyPI's model-signing 1.1.1, against one
# SHA-256 pass over the same file (`openssl dgst -sha256`, SHA-NI where the CPU has it; same run) and against
# model-signing's own verification of the folder.
#
#   bench/signature.sh [--size-mib 2048] [--runs 3]
#
# Goal: checking a signature costs no more than hashing the model once. Warm: the download's verified digests are
# reused (nothing re-hashed); cold: the verification memory deleted, so every file is hashed once; shards: the same
# bytes signed in model-signing's 1 GB pieces, each hashed (one pass over the file).
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
python="$root/.venv-signing/bin/python"
[ -x "$python" ] || { echo "bench/signature.sh needs .venv-signing (scripts/test makes it)" >&2; exit 1; }
work=$(mktemp -d /tmp/modeldepot-signbench.XXXXXX)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
. "$root/bench/lib.sh"
bin=$(build_release "$root")

model="$work/mirror/acme/big"
mkdir -p "$model"
head -c "$((size_mib << 20))" /dev/urandom > "$model/weights.bin"
echo '{"model_type": "bench"}' > "$model/config.json"
openssl ecparam -name prime256v1 -genkey -noout -out "$work/key.pem" 2>/dev/null
openssl pkcs8 -topk8 -nocrypt -in "$work/key.pem" -out "$work/key8.pem"
openssl ec -in "$work/key.pem" -pubout -out "$work/pub.pem" 2>/dev/null
# The same bytes signed in shards (model-signing's default 1 GB pieces): every piece is hashed, in one pass.
sharded="$work/mirror/acme/sharded"
mkdir -p "$sharded"
ln "$model/weights.bin" "$sharded/weights.bin"
cp "$model/config.json" "$sharded/config.json"
"$python" - "$model" "$sharded" "$work/key8.pem" <<'PY'
import pathlib, sys
from model_signing import hashing, signing
model, sharded, key = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3]
config = hashing.Config().set_ignored_paths(paths=["model.sig"])
signing.Config().use_elliptic_key_signer(private_key=key).set_hashing_config(config).sign(model, model / "model.sig")
config = hashing.Config().use_shard_serialization().set_ignored_paths(paths=["model.sig"])
signing.Config().use_elliptic_key_signer(private_key=key).set_hashing_config(config).sign(sharded, sharded / "model.sig")
PY
port=$(free_port)
"$bin" serve --root "$work/mirror" --port "$port" > "$work/serve.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" > /dev/null && break; sleep 0.1; done
cache="$work/cache"
"$bin" pull acme/big --require-signature --trusted-key "$work/pub.pem" --endpoint "http://127.0.0.1:$port" \
    --cache-dir "$cache" --quiet > /dev/null 2>&1
"$bin" pull acme/sharded --require-signature --trusted-key "$work/pub.pem" --endpoint "http://127.0.0.1:$port" \
    --cache-dir "$cache" --quiet > /dev/null 2>&1
blob=$(readlink -f "$cache"/models--acme--big/snapshots/*/weights.bin)

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
cat "$blob" > /dev/null  # page cache warm for every contender
for run in $(seq "$runs"); do
    start=$(now); openssl dgst -sha256 "$blob" > /dev/null; elapsed "$start" "$(now)" >> "$work/hash.txt"
    start=$(now); "$bin" verify acme/big --signature --trusted-key "$work/pub.pem" --cache-dir "$cache" > /dev/null
    elapsed "$start" "$(now)" >> "$work/warm.txt"
    rm -f "$cache"/models--acme--big/.modeldepot/verified.json
    start=$(now); "$bin" verify acme/big --signature --trusted-key "$work/pub.pem" --cache-dir "$cache" > /dev/null
    elapsed "$start" "$(now)" >> "$work/cold.txt"
    start=$(now); "$bin" verify acme/sharded --signature --trusted-key "$work/pub.pem" --cache-dir "$cache" > /dev/null
    elapsed "$start" "$(now)" >> "$work/shards.txt"
    start=$(now)
    "$python" - "$model" "$work/pub.pem" <<'PY'
import pathlib, sys
from model_signing import hashing, verifying
model = pathlib.Path(sys.argv[1])
config = hashing.Config().set_ignored_paths(paths=["model.sig"])
verifying.Config().use_elliptic_key_verifier(public_key=sys.argv[2]).set_hashing_config(config).verify(model, model / "model.sig")
PY
    elapsed "$start" "$(now)" >> "$work/theirs.txt"
done
python3 - "$(median < "$work/hash.txt")" "$(median < "$work/warm.txt")" "$(median < "$work/cold.txt")" \
    "$(median < "$work/theirs.txt")" "$(median < "$work/shards.txt")" "$size_mib" <<'PY'
import sys
hashed, warm, cold, theirs, shards, mib = map(float, sys.argv[1:])
print(f"{mib:.0f} MiB model: openssl dgst -sha256 {hashed:.2f} s; verify --signature warm {warm:.2f} s ({warm / hashed:.2f}x one hash),"
      f" cold {cold:.2f} s ({cold / hashed:.2f}x); model-signing verify {theirs:.2f} s ({theirs / hashed:.2f}x)")
print(f"signed in 1 GB shards: verify --signature {shards:.2f} s ({shards / hashed:.2f}x one hash; every piece hashed)")
verdict = "MET" if warm <= hashed and cold <= hashed * 1.1 and shards <= hashed * 1.1 else "MISSED"
print(f"goal (no more than one hash of the model; cold within 10 %): {verdict}")
PY
