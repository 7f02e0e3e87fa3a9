"""Writes a tiny llama-architecture chat model (F32, ~0.3 MB) that llama.cpp's server loads and runs: a
SentencePiece-style vocabulary of byte tokens, ASCII characters, ChatML markers and whole words; random
seeded weights tilted so the model only ever emits whole words (so streamed text is always valid UTF-8); mean
pooling so /v1/embeddings returns one vector per text. It never emits its end-of-sequence token: a reply ends
by max_tokens (finish_reason "length") or a stop string.

Usage: write_chat_model.py OUTPUT.gguf
"""
import sys
import numpy as np
import gguf

WORDS = """the a model file cache hub local device byte token stream chat reply fast safe disk network
download verify resume mirror server swift python llama vector search memory green blue red cat dog tree river
mountain sun moon star light dark day night""".split()

path = sys.argv[1]
n_embd, n_ff, n_head, n_layer, n_ctx = 64, 128, 4, 2, 2048
rng = np.random.default_rng(1234)

tokens, scores, types = [], [], []
T = gguf.TokenType


def add(text, kind, score=0.0):
    tokens.append(text)
    types.append(kind)
    scores.append(score)


add("<unk>", T.UNKNOWN)
add("<s>", T.CONTROL)
add("</s>", T.CONTROL)
for byte in range(256):
    add(f"<0x{byte:02X}>", T.BYTE)
add("<|im_start|>", T.CONTROL)
add("<|im_end|>", T.CONTROL)
add("\u2581", T.NORMAL, -1.0)
for code in range(33, 127):
    add(chr(code), T.NORMAL, -2.0)
first_word_token = len(tokens)
seen = set(tokens)
for word in WORDS:
    # SentencePiece merges pairwise, so every prefix of "▁word" must be a token for the word to form.
    piece = "\u2581" + word
    for end in range(2, len(piece) + 1):
        prefix = piece[:end]
        if prefix not in seen:
            seen.add(prefix)
            add(prefix, T.NORMAL, float(end))
word_tokens = [i for i, t in enumerate(tokens) if t.startswith("\u2581") and t[1:] in WORDS]
n_vocab = len(tokens)

writer = gguf.GGUFWriter(path, "llama")
writer.add_name("modeldepot-tiny-chat")
writer.add_context_length(n_ctx)
writer.add_embedding_length(n_embd)
writer.add_block_count(n_layer)
writer.add_feed_forward_length(n_ff)
writer.add_head_count(n_head)
writer.add_head_count_kv(n_head)
writer.add_rope_dimension_count(n_embd // n_head)
writer.add_rope_freq_base(10000.0)
writer.add_layer_norm_rms_eps(1e-5)
writer.add_file_type(gguf.LlamaFileType.ALL_F32)
writer.add_pooling_type(gguf.PoolingType.MEAN)
writer.add_tokenizer_model("llama")
writer.add_token_list(tokens)
writer.add_token_scores(scores)
writer.add_token_types(types)
writer.add_bos_token_id(1)
writer.add_eos_token_id(2)
writer.add_add_bos_token(True)
writer.add_chat_template(
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def weights(*shape, scale=0.02):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


embeddings = weights(n_vocab, n_embd, scale=0.5)
embeddings[:, 0] = 4.0  # a constant feature every token shares...
output = weights(n_vocab, n_embd, scale=0.5)
output[:, 0] = -50.0  # ...which pushes every token's logit down...
output[word_tokens, 0] = 0.0  # ...except whole words: only they are ever sampled.
writer.add_tensor("token_embd.weight", embeddings)
writer.add_tensor("output_norm.weight", np.ones(n_embd, dtype=np.float32))
writer.add_tensor("output.weight", output)
for block in range(n_layer):
    prefix = f"blk.{block}."
    writer.add_tensor(prefix + "attn_norm.weight", np.ones(n_embd, dtype=np.float32))
    for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
        writer.add_tensor(prefix + name + ".weight", weights(n_embd, n_embd))
    writer.add_tensor(prefix + "ffn_norm.weight", np.ones(n_embd, dtype=np.float32))
    writer.add_tensor(prefix + "ffn_gate.weight", weights(n_ff, n_embd))
    writer.add_tensor(prefix + "ffn_up.weight", weights(n_ff, n_embd))
    writer.add_tensor(prefix + "ffn_down.weight", weights(n_embd, n_ff))
writer.write_header_to_file()
writer.write_kv_data_to_file()
writer.write_tensors_to_file()
writer.close()
print(path)
