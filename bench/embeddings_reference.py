# The reference for bench/embeddings.sh: a float32 NumPy forward pass over the same safetensors weights,
# warm, tokenization included (Hugging Face's tokenizers), batch 1 and a padded batch of 32 with a mask.
# argv: model folder, batch file, runs. stdout: one JSON object.
import json, math, os, sys, time
import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

folder, batch_file, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
sentence = "The quick brown fox jumps over the lazy dog near the river."
config = json.load(open(os.path.join(folder, "config.json")))
max_length = json.load(open(os.path.join(folder, "sentence_bert_config.json")))["max_seq_length"]
tokenizer = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
tokenizer.no_padding()
tokenizer.enable_truncation(max_length=max_length)
w = {k[5:] if k.startswith("bert.") else k: v.astype(np.float32) for k, v in load_file(os.path.join(folder, "model.safetensors")).items()}
h, heads, eps = config["hidden_size"], config["num_attention_heads"], np.float32(config["layer_norm_eps"])
d = h // heads
try:
    from scipy.special import erf
    erf_name = "scipy"
except ImportError:
    # Vectorised, so NumPy is not slowed by a Python call per value: Abramowitz & Stegun 7.1.26 (error below
    # 1.5e-7, under float32's own rounding at these magnitudes).
    def erf(x):
        sign = np.sign(x)
        x = np.abs(x)
        t = 1 / (1 + np.float32(0.3275911) * x)
        y = 1 - (((((np.float32(1.061405429) * t - np.float32(1.453152027)) * t) + np.float32(1.421413741)) * t
                  - np.float32(0.284496736)) * t + np.float32(0.254829592)) * t * np.exp(-x * x)
        return sign * y
    erf_name = "vectorised Abramowitz-Stegun"

def norm(x, p):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w[p + ".weight"] + w[p + ".bias"]

def linear(x, p):
    return x @ w[p + ".weight"].T + w[p + ".bias"]

def encode(texts):
    encodings = [tokenizer.encode(t).ids for t in texts]
    n = max(len(e) for e in encodings)
    ids = np.array([e + [0] * (n - len(e)) for e in encodings])
    mask = np.array([[1] * len(e) + [0] * (n - len(e)) for e in encodings], dtype=np.float32)
    b = len(texts)
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n] \
        + w["embeddings.token_type_embeddings.weight"][0]
    x = norm(x, "embeddings.LayerNorm")
    bias = (1 - mask)[:, None, None, :] * np.float32(-1e9)
    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        q = linear(x, p + "attention.self.query").reshape(b, n, heads, d).transpose(0, 2, 1, 3)
        k = linear(x, p + "attention.self.key").reshape(b, n, heads, d).transpose(0, 2, 1, 3)
        v = linear(x, p + "attention.self.value").reshape(b, n, heads, d).transpose(0, 2, 1, 3)
        s = q @ k.transpose(0, 1, 3, 2) / np.float32(math.sqrt(d)) + bias
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        c = (s @ v).transpose(0, 2, 1, 3).reshape(b, n, h)
        x = norm(linear(c, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
        inner = linear(x, p + "intermediate.dense")
        inner = np.float32(0.5) * inner * (1 + erf(inner / np.float32(math.sqrt(2))))
        x = norm(linear(inner, p + "output.dense") + x, p + "output.LayerNorm")
    pooled = (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
    return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)

batch = [line for line in open(batch_file).read().split("\n") if line][:32]
encode([sentence])
singles = []
for _ in range(runs):
    start = time.perf_counter()
    encode([sentence])
    singles.append(time.perf_counter() - start)
best = 1e9
for _ in range(3):
    start = time.perf_counter()
    encode(batch)
    best = min(best, time.perf_counter() - start)
blas = "unknown"
try:
    info = np.show_config(mode="dicts")
    blas = info["Build Dependencies"]["blas"]["name"]
except Exception:
    pass
try:
    # The kernels NumPy's bundled OpenBLAS chose on this processor (scipy-openblas names its symbols this way).
    import ctypes, glob
    libs = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    for path in glob.glob(os.path.join(libs, "*openblas*")):
        library = ctypes.CDLL(path)
        for symbol in ["scipy_openblas_get_corename64_", "scipy_openblas_get_corename", "openblas_get_corename"]:
            if hasattr(library, symbol):
                getattr(library, symbol).restype = ctypes.c_char_p
                blas += f", {getattr(library, symbol)().decode()} kernels"
                break
except Exception:
    pass
print(json.dumps({"singleMilliseconds": sorted(singles)[len(singles) // 2] * 1000,
                  "batchSentencesPerSecond": len(batch) / best, "numpy": np.__version__, "blas": blas,
                  "erf": erf_name}))
