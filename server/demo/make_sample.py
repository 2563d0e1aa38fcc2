#!/usr/bin/env python3
"""Builds claimpool's demo sample from the SciFact release (run once by a maintainer; the output is
committed, so users need neither this script nor the release).

Picks 40 SciFact dev claims (30 with evidence, 10 without, evenly spread over the ids), and keeps the
abstracts they cite plus the 12 best BM25 matches of each claim over the whole corpus, so that
systems run over the sample find realistic distractors.

usage: make_sample.py SCIFACT_DIR OUT_DIR
"""
import json, math, re, sys
from collections import Counter

src, out = sys.argv[1], sys.argv[2]
claims = [json.loads(l) for l in open(f"{src}/claims_dev.jsonl")]
corpus = [json.loads(l) for l in open(f"{src}/corpus.jsonl")]

with_ev = [c for c in claims if c["evidence"]]
without = [c for c in claims if not c["evidence"]]
pick = lambda xs, n: [xs[round(i * (len(xs) - 1) / (n - 1))] for i in range(n)]
chosen = sorted(pick(with_ev, 30) + pick(without, 10), key=lambda c: c["id"])

stop = set("a an the of in on for to and or is are was were be by with as at from that this these those it its".split())
tok = lambda s: [w for w in re.findall(r"[a-z0-9]+", s.lower()) if w not in stop]
docs = [tok(d["title"] + " " + " ".join(d["abstract"])) for d in corpus]
df = Counter(w for d in docs for w in set(d))
n, avg = len(docs), sum(map(len, docs)) / len(docs)
tfs = [Counter(d) for d in docs]

def bm25(q, i, k1=1.2, b=0.75):
    s, L = 0.0, len(docs[i])
    for w in q:
        if w in tfs[i]:
            idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
            f = tfs[i][w]
            s += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * L / avg))
    return s

keep = set()
for c in chosen:
    keep.update(c["cited_doc_ids"])
    q = tok(c["claim"])
    top = sorted(range(n), key=lambda i: -bm25(q, i))[:12]
    keep.update(corpus[i]["doc_id"] for i in top)

with open(f"{out}/claims.jsonl", "w") as f:
    for c in chosen:
        f.write(json.dumps(c) + "\n")
with open(f"{out}/corpus.jsonl", "w") as f:
    for d in corpus:
        if d["doc_id"] in keep:
            f.write(json.dumps(d) + "\n")
print(f"{len(chosen)} claims ({sum(1 for c in chosen if c['evidence'])} with evidence), {len(keep)} abstracts")
