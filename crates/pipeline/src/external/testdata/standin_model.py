#!/usr/bin/env python3
"""A stand-in for a claim-verification model, for claimpool's external-scorer tests.

Reads claims with candidate abstracts as JSONL on stdin (one line per claim) and writes one
prediction per claim/abstract pair on stdout. Its "model" is word overlap: with W the claim's
distinct words (lower-cased runs of letters and digits) and m the share of W found in the
title + abstract, p_support = 0.9 m and p_contradict = 0.05 m (rounded to 6 places); the label is
SUPPORT when p_support > 0.5, else NEI; the rationale is every sentence sharing at least two
words of W. The first argument picks a misbehaviour (see MODES), for tests of error handling.
"""

import json
import os
import re
import signal
import sys

MODES = {
    "good", "bad-json-line-3", "prob-1.5", "unknown-doc", "exit-1", "skip-second", "crash",
    "read-all-first", "noisy-stderr", "no-read", "no-label",
}


def words(text):
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def predict(claim, candidate):
    w = words(claim["claim"])
    text = candidate["title"] + " " + " ".join(candidate["abstract"])
    m = len(w & words(text)) / len(w) if w else 0.0
    p_support = round(0.9 * m, 6)
    p_contradict = round(0.05 * m, 6)
    return {
        "claim_id": claim["claim_id"],
        "doc_id": candidate["doc_id"],
        "predicted_label": "SUPPORT" if p_support > 0.5 else "NEI",
        "p_support": p_support,
        "p_contradict": p_contradict,
        "p_nei": round(1.0 - p_support - p_contradict, 6),
        "sentences": [i for i, s in enumerate(candidate["abstract"]) if len(w & words(s)) >= 2],
    }


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "good"
    if mode not in MODES:
        sys.exit(f"unknown mode {mode}")
    if mode == "no-read":
        return
    if mode == "noisy-stderr":
        for i in range(20000):
            sys.stderr.write(f"warming up the model, step {i}\n")
        sys.stderr.flush()
    claims = sys.stdin if mode != "read-all-first" else sys.stdin.readlines()
    out = []
    for line in claims:
        claim = json.loads(line)
        for candidate in claim["candidates"]:
            out.append(predict(claim, candidate))
            lines = len(out)
            if mode == "bad-json-line-3" and lines == 3:
                print('{"claim_id": "oops", ')
            elif mode == "prob-1.5" and lines == 2:
                print(json.dumps(dict(out[-1], p_support=1.5)))
            elif mode == "unknown-doc" and lines == 1:
                print(json.dumps(dict(out[-1], doc_id="no-such-doc")))
            elif mode == "no-label" and lines == 1:
                print(json.dumps({k: v for k, v in out[-1].items() if k != "predicted_label"}))
            elif mode == "skip-second" and lines == 2:
                pass
            elif mode == "crash" and lines == 2:
                sys.stdout.flush()
                os.kill(os.getpid(), signal.SIGSEGV)
            else:
                print(json.dumps(out[-1]))
        sys.stdout.flush()
    if mode == "exit-1":
        sys.stderr.write("model exploded: CUDA out of memory\n")
        sys.exit(1)


if __name__ == "__main__":
    main()
