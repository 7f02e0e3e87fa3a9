#!/usr/bin/env bash
# Push and pull of a model to and from an OCI registry (Debian's docker-registry, the CNCF distribution registry
# 2.8, on loopback): ours (release build) against skopeo copy, measured in the same run, and a second push of the
# same model, which must upload no blob.
#
# The model: a folder served by our mirror, pulled into a Hub cache (not timed): weights.bin of --mib MiB random
# bytes (LFS) and a small config.json. Push: ours `modeldepot push` to registry A against `skopeo copy dir:… docker://`
# of the same artifact (taken from A into a dir layout first, not timed) to a fresh registry B. Pull: `modeldepot pull
# oci://` into a fresh cache (the files confirmed against the mirror's listing as the Hub's, every layer
# digest-checked, linked into the snapshot) against `skopeo copy docker://… dir:` (digest-checked too), both from
# registry A, each run twice alternately (the best of each counts). Needs about 7× --mib of disk.
#
#   bench/oci.sh [--mib 1024]
set -euo pipefail
mib=1024
while [ $# -gt 0 ]; do
    case "$1" in
        --mib) mib=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
command -v docker-registry >/dev/null && command -v skopeo >/dev/null || {
    echo "bench/oci.sh needs docker-registry and skopeo: apt-get install -y docker-registry skopeo" >&2; exit 1; }
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/modeldepot-oci.XXXXXX)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
. "$root/bench/lib.sh"
bin=$(build_release "$root")

mkdir -p "$work/models/acme/big"
head -c $((mib << 20)) /dev/urandom > "$work/models/acme/big/weights.bin"
echo '{"model_type":"bench"}' > "$work/models/acme/big/config.json"
mirror=$(free_port)
"$bin" serve --root "$work/models" --port "$mirror" > "$work/mirror.log" 2>&1 &
pids+=($!)
for _ in $(seq 200); do curl -sf "http://127.0.0.1:$mirror/healthz" > /dev/null && break; sleep 0.05; done
"$bin" pull acme/big --endpoint "http://127.0.0.1:$mirror" --cache-dir "$work/cache" -q > /dev/null

# start_registry NAME: a registry storing under $work/NAME; sets `port`.
start_registry() {
    port=$(free_port)
    mkdir -p "$work/$1"
    printf 'version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: 127.0.0.1:%s\n' \
        "$work/$1/storage" "$port" > "$work/$1/config.yml"
    docker-registry serve "$work/$1/config.yml" > "$work/$1/log" 2>&1 &
    pids+=($!)
    for _ in $(seq 200); do curl -sf "http://127.0.0.1:$port/v2/" > /dev/null && break; sleep 0.05; done
}
start_registry a; a=$port
start_registry b; b=$port
seconds() { local started; started=$(now); "$@" > /dev/null 2>&1; elapsed "$started" "$(now)"; }

t_push=$(seconds "$bin" push acme/big "oci://127.0.0.1:$a/acme/big:v1" --cache-dir "$work/cache")
again=$("$bin" push acme/big "oci://127.0.0.1:$a/acme/big:v1" --cache-dir "$work/cache" --json)
t_again=$(seconds "$bin" push acme/big "oci://127.0.0.1:$a/acme/big:v1" --cache-dir "$work/cache")
skopeo copy --src-tls-verify=false "docker://127.0.0.1:$a/acme/big:v1" "dir:$work/layout" > /dev/null
t_skopeo_push=$(seconds skopeo copy --dest-tls-verify=false "dir:$work/layout" "docker://127.0.0.1:$b/acme/big:v1")

pull_ours() {
    rm -rf "$work/pulled"
    seconds "$bin" pull "oci://127.0.0.1:$a/acme/big:v1" --cache-dir "$work/pulled" --endpoint "http://127.0.0.1:$mirror"
}
pull_skopeo() {
    rm -rf "$work/out"
    seconds skopeo copy --src-tls-verify=false "docker://127.0.0.1:$a/acme/big:v1" "dir:$work/out"
}
s1=$(pull_skopeo); o1=$(pull_ours); s2=$(pull_skopeo); o2=$(pull_ours)
best() { python3 -c "print(min($1, $2))"; }
t_pull=$(best "$o1" "$o2"); t_skopeo_pull=$(best "$s1" "$s2")
cmp "$work/models/acme/big/weights.bin" "$work/pulled/models--acme--big/snapshots/"*/weights.bin
ratio() { python3 -c "print(f'{$1 / $2:.2f}')"; }
rate() { python3 -c "print(f'{$mib / $1:.0f}')"; }

echo "$mib MiB model (weights.bin + config.json), docker-registry 2.8 on loopback, release build, 2 cores"
echo "  push, ours:                         ${t_push} s ($(rate "$t_push") MiB/s)"
echo "  push, skopeo copy dir: → docker://: ${t_skopeo_push} s ($(rate "$t_skopeo_push") MiB/s)   ours ÷ skopeo: $(ratio "$t_push" "$t_skopeo_push")"
echo "  second push of the same model:      ${t_again} s, $(python3 -c "import json,sys; r=json.loads(sys.argv[1]); print(f\"{r['blobsUploaded']} blobs uploaded, {r['bytesUploaded']} bytes sent, {r['blobsPresent']} already there\")" "$again")"
echo "  pull, ours (into the cache):        ${t_pull} s ($(rate "$t_pull") MiB/s)   (runs: $o1, $o2)"
echo "  pull, skopeo copy docker:// → dir:: ${t_skopeo_pull} s ($(rate "$t_skopeo_pull") MiB/s)   (runs: $s1, $s2)   ours ÷ skopeo: $(ratio "$t_pull" "$t_skopeo_pull")"
