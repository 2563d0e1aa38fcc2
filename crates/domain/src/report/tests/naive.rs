//! The reference: every figure computed the plain way, with no shared code path with the
//! report's engine. Each pool is rebuilt with `pool::Ranking` from the pooled systems of the
//! set, each evaluation builds a `metrics::Gold` and judges each run afresh.

use crate::ids::{ClaimId, DocId};
use crate::label::Label;
use crate::metrics::{Gold, JudgedRun, Metrics, Run, RunPair};
use crate::pool::{Pair, Ranking, Role, Score, ScoredPair, SystemRun};
use crate::report::{PairId, Provenance, Snapshot, SystemSnapshot};
use std::collections::{BTreeMap, BTreeSet};

pub struct Naive<'a> {
    pub snap: &'a Snapshot,
    claims: Vec<ClaimId>,
    docs: Vec<DocId>,
    pub citation: BTreeMap<PairId, Label>,
    pub finals: BTreeMap<PairId, (Label, Provenance)>,
}

impl<'a> Naive<'a> {
    pub fn new(snap: &'a Snapshot) -> Naive<'a> {
        let claims: BTreeSet<ClaimId> = snap.claims.iter().cloned().collect();
        let mut docs: BTreeSet<DocId> = BTreeSet::new();
        for s in &snap.systems {
            docs.extend(s.predictions.iter().map(|p| p.pair.doc.clone()));
        }
        Naive {
            snap,
            claims: claims.into_iter().collect(),
            docs: docs.into_iter().collect(),
            citation: snap
                .citation_evidence
                .iter()
                .map(|c| (c.pair.clone(), c.label))
                .collect(),
            finals: snap
                .final_labels
                .iter()
                .map(|f| (f.pair.clone(), (f.label, f.provenance)))
                .collect(),
        }
    }

    pub fn depth(&self) -> u32 {
        self.snap.pool.map_or(0, |p| p.depth.get())
    }

    pub fn pooled(&self) -> Vec<usize> {
        (0..self.snap.systems.len())
            .filter(|&i| self.snap.systems[i].role == Role::Pooled)
            .collect()
    }

    fn key(&self, pair: &PairId) -> Pair<u32, u32> {
        let c = self.claims.binary_search(&pair.claim).unwrap() as u32;
        let d = self.docs.binary_search(&pair.doc).unwrap() as u32;
        Pair::new(c, d)
    }

    /// The depth-`depth` pool of the systems `members` (snapshot indexes).
    pub fn pool(&self, members: &[usize], depth: u32) -> BTreeSet<PairId> {
        let strategy = self
            .snap
            .pool
            .map_or(crate::pool::Strategy::Confidence, |p| p.strategy);
        let mut ranking = Ranking::new(strategy);
        for &m in members {
            let system: &SystemSnapshot = &self.snap.systems[m];
            let pairs = system
                .predictions
                .iter()
                .map(|p| {
                    let k = self.key(&p.pair);
                    ScoredPair::new(
                        k.claim,
                        k.doc,
                        Score::new(p.confidence.get()).unwrap(),
                        p.retrieval_rank,
                    )
                })
                .collect();
            ranking
                .add(SystemRun::new(system.name.clone(), Role::Pooled, pairs).unwrap())
                .unwrap();
        }
        ranking
            .pool(depth)
            .pairs()
            .iter()
            .map(|p| {
                Pair::new(
                    self.claims[p.pair.claim as usize].clone(),
                    self.docs[p.pair.doc as usize].clone(),
                )
            })
            .collect()
    }

    /// Evidence discovered by a pool.
    pub fn discovered(&self, pool: &BTreeSet<PairId>) -> BTreeMap<PairId, Label> {
        pool.iter()
            .filter(|p| !self.citation.contains_key(p))
            .filter_map(|p| match self.finals.get(p) {
                Some(&(label, _)) if label.is_evidence() => Some((p.clone(), label)),
                _ => None,
            })
            .collect()
    }

    /// The gold of a pool: citation evidence plus discovered evidence.
    pub fn gold_labels(&self, pool: &BTreeSet<PairId>) -> BTreeMap<PairId, Label> {
        let mut gold = self.citation.clone();
        gold.extend(self.discovered(pool));
        gold
    }

    pub fn gold(&self, pool: &BTreeSet<PairId>) -> Gold {
        Gold::new(
            self.snap.claims.iter().cloned(),
            self.gold_labels(pool)
                .into_iter()
                .map(|(p, l)| (p.claim, p.doc, l)),
        )
        .unwrap()
    }

    pub fn run(&self, system: usize) -> Run {
        Run::new(
            self.snap.systems[system]
                .predictions
                .iter()
                .map(|p| RunPair {
                    claim: p.pair.claim.clone(),
                    doc: p.pair.doc.clone(),
                    prediction: p.prediction,
                    confidence: p.confidence,
                }),
        )
        .unwrap()
    }

    pub fn judged(&self, system: usize, gold: &Gold) -> JudgedRun {
        JudgedRun::new(gold, &self.run(system)).unwrap()
    }

    pub fn metrics(&self, system: usize, gold: &Gold) -> Metrics {
        self.judged(system, gold).metrics()
    }

    /// Evidence discovered and every system's F1 when `members` build the pool at the
    /// current depth.
    pub fn outcome(&self, members: &[usize]) -> (f64, Vec<f64>) {
        let pool = self.pool(members, self.depth());
        let gold = self.gold(&pool);
        let f1 = (0..self.snap.systems.len())
            .map(|s| self.metrics(s, &gold).f1)
            .collect();
        (self.discovered(&pool).len() as f64, f1)
    }

    /// Pairs labelled before annotation.
    pub fn prior(&self) -> BTreeSet<PairId> {
        let mut prior: BTreeSet<PairId> = self.citation.keys().cloned().collect();
        prior.extend(
            self.finals
                .iter()
                .filter(|(_, (_, p))| *p != Provenance::Pooling)
                .map(|(pair, _)| pair.clone()),
        );
        prior
    }
}

/// Every permutation of `items` (Heap's algorithm).
pub fn permutations(items: &[usize]) -> Vec<Vec<usize>> {
    fn heap(k: usize, a: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if k <= 1 {
            out.push(a.clone());
            return;
        }
        heap(k - 1, a, out);
        for i in 0..k - 1 {
            if k.is_multiple_of(2) {
                a.swap(i, k - 1);
            } else {
                a.swap(0, k - 1);
            }
            heap(k - 1, a, out);
        }
    }
    let mut a = items.to_vec();
    let mut out = Vec::new();
    heap(a.len(), &mut a, &mut out);
    out
}

/// Mean and population standard deviation, by the textbook formula.
pub fn mean_sd(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    (mean, var.sqrt())
}
