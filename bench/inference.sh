#!/usr/bin/env bash
# Streaming client overhead: `OpenAICompatibleProvider.stream` vs a raw reader of the same HTTP stream (same
# transport, bytes scanned for content events), alternating in one process, against the real llama.cpp server
# (llama-cpp-python in the venv scripts/test creates) running the tiny test model.
#
#   bench/inference.sh [--runs 20] [--max-tokens 200] [--invocations 3]
#
# Goals: client throughput >= 0.95x the raw reader's; time to first token at most 1 ms more. Also printed: this
# process's CPU time per token for each reader (the client's parsing cost, free of the server's speed noise).
set -euo pipefail
runs=20
max_tokens=200
invocations=3
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs=$2; shift 2 ;;
        --max-tokens) max_tokens=$2; shift 2 ;;
        --invocations) invocations=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
python="$root/.venv/bin/python"
"$python" -c "import llama_cpp.server" 2>/dev/null \
    || { echo "llama-cpp-python is missing from $root/.venv: run scripts/test once" >&2; exit 1; }
work=$(mktemp -d /tmp/modeldepot-inferencebench.XXXXXX)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
. "$root/bench/lib.sh"
bin=$(build_release "$root" modeldepot-bench)

"$python" "$root/Tests/PythonPeers/write_chat_model.py" "$work/tiny.gguf" > /dev/null
port=$(free_port)
"$python" -m llama_cpp.server --model "$work/tiny.gguf" --model_alias tiny --host 127.0.0.1 --port "$port" \
    --n_ctx 2048 --interrupt_requests false --verbose false > "$work/server.log" 2>&1 &
pids+=($!)
for _ in $(seq 200); do curl -sf "http://127.0.0.1:$port/v1/models" > /dev/null && break; sleep 0.1; done

echo "llama-cpp-python $("$python" -c 'import llama_cpp; print(llama_cpp.__version__)'), tiny model, $max_tokens tokens per reply, $runs runs per reader"
for invocation in $(seq "$invocations"); do
    "$bin" chat --endpoint "http://127.0.0.1:$port/v1" --runs "$runs" --max-tokens "$max_tokens" > "$work/result.json"
    python3 - "$work/result.json" "$invocation" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
client, raw = report["readers"]
ratio = client["medianTokensPerSecond"] / raw["medianTokensPerSecond"]
extra = client["medianTimeToFirstTokenMs"] - raw["medianTimeToFirstTokenMs"]
print(f"invocation {sys.argv[2]}: client {client['medianTokensPerSecond']:.0f} tok/s, TTFT {client['medianTimeToFirstTokenMs']:.2f} ms;"
      f" raw {raw['medianTokensPerSecond']:.0f} tok/s, TTFT {raw['medianTimeToFirstTokenMs']:.2f} ms;"
      f" throughput {ratio:.3f}x ({'MET' if ratio >= 0.95 else 'MISSED'} >= 0.95),"
      f" TTFT {extra:+.2f} ms ({'MET' if extra <= 1.0 else 'MISSED'} <= +1 ms);"
      f" CPU per token: client {client['medianCPUMicrosecondsPerToken']:.1f} us, raw {raw['medianCPUMicrosecondsPerToken']:.1f} us;"
      f" client parsing alone (replayed from memory) {report['clientParsingMicrosecondsPerToken']:.1f} us per token")
PY
done
