//! What changed between two releases of a project (issue 17): the judged pairs whose final
//! label changed, that were added or that were withdrawn, and each evaluated system's
//! precision, recall and F1 under both releases with the difference (`b - a`) and a paired
//! bootstrap 95% interval over claims.
//!
//! A release is read from its archive as domain values ([`ReleaseContents::from_archive`]):
//! `claims.jsonl` (the claims and the gold, as `claimpool eval` reads it), `qrels-labels.txt`
//! (every judged pair's final label, NEI included) and the runs `MANIFEST.json` lists.
//! Invariants checked there: the qrels' evidence is exactly the claims file's, no pair is
//! labelled twice, every labelled pair's claim is a claim of the release.
//!
//! Scores: a system's run in a release is evaluated against that release's gold over that
//! release's claims ([`JudgedRun`], the figures of [`super::evaluate`]). The bootstrap draws
//! the union of both releases' claims with replacement ([`ClaimResampler`], seeded); each
//! resample weighs each release's claims by their draws, so that a claim of one release only
//! counts on its side, and the weights of 1 give back each release's own figures. Every system
//! shares the same resamples. The interval is the 2.5th and 97.5th percentiles of the resampled
//! differences ([`percentile`]).

use super::error::EvalError;
use super::evaluate::{gold_from_claims, run_from_records};
use crate::formats::{
    decompressed, ClaimsReader, Judgment, ParseError, QrelsReader, RunFormat, RunReadOptions,
    RunReader,
};
use crate::ids::{ClaimId, DocId};
use crate::label::Label;
use crate::metrics::{
    percentile, BootstrapSamples, BootstrapSamplesError, ClaimResampler, Gold, JudgedRun, Metrics,
    MetricsError, Run,
};
pub use crate::model::release_diff::{
    DiffBootstrap, DiffDifferences, DiffScores, LabelChange, PairLabel, ReleaseDiff,
    ScoreDifference, SystemDiff,
};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{Cursor, Read};

/// Why a release cannot be read, or two releases not compared.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    #[error("release {release}: the archive cannot be read: {source}")]
    Archive {
        release: u32,
        #[source]
        source: std::io::Error,
    },
    #[error("release {release}: {path} is missing from the archive")]
    MissingFile { release: u32, path: String },
    #[error("release {release}: MANIFEST.json: {message}")]
    Manifest { release: u32, message: String },
    #[error("release {release}: {source}")]
    Read {
        release: u32,
        #[source]
        source: EvalError,
    },
    #[error("release {release}: {source}")]
    Parse {
        release: u32,
        #[source]
        source: ParseError,
    },
    #[error(
        "release {release}: qrels-labels.txt line {line}: a relevance grade where a label (SUPPORT, CONTRADICT, NEI) belongs"
    )]
    NotALabel { release: u32, line: usize },
    #[error("release {release}: pair ({claim}, {doc}) is labelled twice")]
    DuplicateLabel {
        release: u32,
        claim: ClaimId,
        doc: DocId,
    },
    #[error(
        "release {release}: the label of ({claim}, {doc}): claim {claim} is not a claim of the release"
    )]
    UnknownClaim {
        release: u32,
        claim: ClaimId,
        doc: DocId,
    },
    #[error(
        "release {release}: claims.jsonl and qrels-labels.txt disagree on ({claim}, {doc}): {claims_file} in the claims, {qrels} in the qrels"
    )]
    Inconsistent {
        release: u32,
        claim: ClaimId,
        doc: DocId,
        claims_file: String,
        qrels: String,
    },
    #[error("release {release}: system {system:?}: {source}")]
    System {
        release: u32,
        system: String,
        #[source]
        source: MetricsError,
    },
    #[error("releases of different projects: {a:?} and {b:?}")]
    DifferentProjects { a: String, b: String },
    #[error("bootstrap: {0}")]
    Samples(#[from] BootstrapSamplesError),
}

/// One release, as the diff reads it.
#[derive(Clone, Debug)]
pub struct ReleaseContents {
    project: String,
    number: u32,
    gold: Gold,
    /// The final label of every judged pair, NEI included.
    labels: BTreeMap<(ClaimId, DocId), Label>,
    /// Published runs, by system name.
    runs: BTreeMap<String, Run>,
}

/// The manifest fields the diff reads.
#[derive(Deserialize)]
struct Manifest {
    project: String,
    release: u32,
    systems: Vec<ManifestSystem>,
}

#[derive(Deserialize)]
struct ManifestSystem {
    name: String,
    run_file: Option<String>,
}

impl ReleaseContents {
    /// A release from its values: its claims, every judged pair's final label (the gold is the
    /// SUPPORT and CONTRADICT ones) and its published runs.
    pub fn new(
        project: impl Into<String>,
        number: u32,
        claims: impl IntoIterator<Item = ClaimId>,
        labels: impl IntoIterator<Item = (ClaimId, DocId, Label)>,
        runs: impl IntoIterator<Item = (String, Run)>,
    ) -> Result<ReleaseContents, DiffError> {
        let claims: BTreeSet<ClaimId> = claims.into_iter().collect();
        let mut by_pair = BTreeMap::new();
        for (claim, doc, label) in labels {
            if !claims.contains(&claim) {
                return Err(DiffError::UnknownClaim {
                    release: number,
                    claim,
                    doc,
                });
            }
            if by_pair
                .insert((claim.clone(), doc.clone()), label)
                .is_some()
            {
                return Err(DiffError::DuplicateLabel {
                    release: number,
                    claim,
                    doc,
                });
            }
        }
        let evidence = by_pair
            .iter()
            .filter(|(_, label)| label.is_evidence())
            .map(|((c, d), l)| (c.clone(), d.clone(), *l));
        let gold = Gold::new(claims, evidence).map_err(|source| DiffError::Read {
            release: number,
            source: source.into(),
        })?;
        let runs = runs.into_iter().collect::<BTreeMap<_, _>>();
        for (system, run) in &runs {
            JudgedRun::new(&gold, run).map_err(|source| DiffError::System {
                release: number,
                system: system.clone(),
                source,
            })?;
        }
        Ok(ReleaseContents {
            project: project.into(),
            number,
            gold,
            labels: by_pair,
            runs,
        })
    }

    /// Reads release `number` from its `.tar.gz` archive (as `claimpool export` writes it and
    /// the store keeps it). The manifest must name the same number.
    pub fn from_archive(number: u32, archive: &[u8]) -> Result<ReleaseContents, DiffError> {
        let mut files = unpack(archive).map_err(|source| DiffError::Archive {
            release: number,
            source,
        })?;
        let mut take = |path: &str| {
            files.remove(path).ok_or_else(|| DiffError::MissingFile {
                release: number,
                path: path.to_owned(),
            })
        };
        let manifest: Manifest =
            serde_json::from_slice(&take(super::MANIFEST)?).map_err(|e| DiffError::Manifest {
                release: number,
                message: e.to_string(),
            })?;
        if manifest.release != number {
            return Err(DiffError::Manifest {
                release: number,
                message: format!("names release {}", manifest.release),
            });
        }
        let read = |source: EvalError| DiffError::Read {
            release: number,
            source,
        };
        let input = |bytes: Vec<u8>| {
            decompressed(Cursor::new(bytes)).map_err(|source| DiffError::Archive {
                release: number,
                source,
            })
        };
        let claims_gold = gold_from_claims(ClaimsReader::from_input(
            input(take("claims.jsonl")?)?,
            "claims.jsonl",
        ))
        .map_err(read)?;
        let mut labels = Vec::new();
        for qrel in QrelsReader::from_input(input(take("qrels-labels.txt")?)?, "qrels-labels.txt") {
            let qrel = qrel.map_err(|source| DiffError::Parse {
                release: number,
                source,
            })?;
            match qrel.record.judgment {
                Judgment::Label(label) => {
                    labels.push((qrel.record.claim_id, qrel.record.doc_id, label))
                }
                Judgment::Relevance(_) => {
                    return Err(DiffError::NotALabel {
                        release: number,
                        line: qrel.line,
                    })
                }
            }
        }
        let mut runs = Vec::new();
        for system in manifest.systems {
            let Some(path) = system.run_file else {
                continue;
            };
            let reader = RunReader::from_input(
                input(take(&path)?)?,
                path.as_str(),
                RunFormat::Canonical,
                &RunReadOptions::default(),
            )
            .map_err(|e| read(e.into()))?;
            let run = run_from_records(reader, &path, None).map_err(read)?;
            runs.push((system.name, run));
        }
        let contents = ReleaseContents::new(
            manifest.project,
            number,
            claims_gold.claims().iter().cloned(),
            labels,
            runs,
        )?;
        contents.check_evidence(&claims_gold)?;
        Ok(contents)
    }

    /// The claims file's evidence must be the qrels' (the same pairs with the same labels).
    fn check_evidence(&self, claims_gold: &Gold) -> Result<(), DiffError> {
        let name = |label: Option<Label>| match label {
            Some(label) if label.is_evidence() => label.as_str().to_owned(),
            Some(_) => "NEI".to_owned(),
            None => "no label".to_owned(),
        };
        let from_claims: BTreeMap<(&ClaimId, &DocId), Label> = claims_gold
            .evidence()
            .map(|(c, d, l)| ((c, d), l))
            .collect();
        let from_qrels: BTreeMap<(&ClaimId, &DocId), Label> =
            self.gold.evidence().map(|(c, d, l)| ((c, d), l)).collect();
        let mismatch = from_claims
            .iter()
            .find(|(pair, label)| from_qrels.get(*pair) != Some(*label))
            .map(|(pair, _)| *pair)
            .or_else(|| {
                from_qrels
                    .keys()
                    .find(|pair| !from_claims.contains_key(*pair))
                    .copied()
            });
        match mismatch {
            None => Ok(()),
            Some((claim, doc)) => Err(DiffError::Inconsistent {
                release: self.number,
                claim: claim.clone(),
                doc: doc.clone(),
                claims_file: name(from_claims.get(&(claim, doc)).copied()),
                qrels: name(self.labels.get(&(claim.clone(), doc.clone())).copied()),
            }),
        }
    }

    pub fn project(&self) -> &str {
        &self.project
    }

    pub fn number(&self) -> u32 {
        self.number
    }

    /// The release's claims, in id order.
    pub fn claims(&self) -> &[ClaimId] {
        self.gold.claims()
    }

    /// A system's scores against this release (None: the release publishes no run of it).
    pub fn scores(&self, system: &str) -> Option<Result<DiffScores, DiffError>> {
        let run = self.runs.get(system)?;
        Some(
            self.judge(system, run)
                .map(|judged| scores(&judged.metrics())),
        )
    }

    fn judge(&self, system: &str, run: &Run) -> Result<JudgedRun, DiffError> {
        JudgedRun::new(&self.gold, run).map_err(|source| DiffError::System {
            release: self.number,
            system: system.to_owned(),
            source,
        })
    }
}

/// The files of a release archive, by path below its root directory.
fn unpack(archive: &[u8]) -> std::io::Result<BTreeMap<String, Vec<u8>>> {
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(archive));
    let mut files = BTreeMap::new();
    for entry in tar.entries()? {
        let mut entry = entry?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let path = entry.path()?.to_string_lossy().into_owned();
        // `<project>-release-<n>/claims.jsonl` -> `claims.jsonl`
        let inner = path.split_once('/').map_or(path.as_str(), |(_, rest)| rest);
        let inner = inner.to_owned();
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes)?;
        files.insert(inner, bytes);
    }
    Ok(files)
}

fn scores(m: &Metrics) -> DiffScores {
    DiffScores {
        precision: m.precision,
        recall: m.recall,
        f1: m.f1,
    }
}

/// Release `b` against release `a` (see the module notes); `bootstrap.samples` at least 2.
pub fn diff(
    a: &ReleaseContents,
    b: &ReleaseContents,
    bootstrap: DiffBootstrap,
) -> Result<ReleaseDiff, DiffError> {
    if a.project != b.project {
        return Err(DiffError::DifferentProjects {
            a: a.project.clone(),
            b: b.project.clone(),
        });
    }
    let samples = BootstrapSamples::new(bootstrap.samples)?;
    let (changed, added, withdrawn) = pair_changes(&a.labels, &b.labels);
    let claims_a: BTreeSet<&ClaimId> = a.claims().iter().collect();
    let claims_b: BTreeSet<&ClaimId> = b.claims().iter().collect();
    let names: BTreeSet<&String> = a.runs.keys().chain(b.runs.keys()).collect();
    let mut systems = Vec::with_capacity(names.len());
    // Systems of both releases, judged once per release, for the bootstrap.
    let mut paired: Vec<Paired> = Vec::new();
    for name in names {
        let judged_a = a.runs.get(name).map(|run| a.judge(name, run)).transpose()?;
        let judged_b = b.runs.get(name).map(|run| b.judge(name, run)).transpose()?;
        systems.push(SystemDiff {
            system: name.clone(),
            under_a: judged_a.as_ref().map(|j| scores(&j.metrics())),
            under_b: judged_b.as_ref().map(|j| scores(&j.metrics())),
            difference: None,
        });
        if let (Some(ja), Some(jb)) = (judged_a, judged_b) {
            paired.push(Paired {
                index: systems.len() - 1,
                name: name.clone(),
                a: ja,
                b: jb,
            });
        }
    }
    let intervals = paired_intervals(a, b, &paired, samples, bootstrap.seed)?;
    for (system, difference) in paired.iter().zip(intervals) {
        systems[system.index].difference = Some(difference);
    }
    Ok(ReleaseDiff {
        project: b.project.clone(),
        a: a.number,
        b: b.number,
        claims_a: claims_a.len() as u64,
        claims_b: claims_b.len() as u64,
        claims_only_in_a: claims_a
            .difference(&claims_b)
            .map(|c| (*c).clone())
            .collect(),
        claims_only_in_b: claims_b
            .difference(&claims_a)
            .map(|c| (*c).clone())
            .collect(),
        changed,
        added,
        withdrawn,
        systems,
        bootstrap: DiffBootstrap {
            samples: samples.get(),
            seed: bootstrap.seed,
        },
    })
}

type Labels = BTreeMap<(ClaimId, DocId), Label>;

/// A system both releases publish, judged against each.
struct Paired {
    /// Its position in the diff's systems.
    index: usize,
    name: String,
    a: JudgedRun,
    b: JudgedRun,
}

/// Changed, added and withdrawn pairs, each in (claim, doc) order.
fn pair_changes(a: &Labels, b: &Labels) -> (Vec<LabelChange>, Vec<PairLabel>, Vec<PairLabel>) {
    let (mut changed, mut added, mut withdrawn) = (Vec::new(), Vec::new(), Vec::new());
    let pair_label = |(claim, doc): &(ClaimId, DocId), label: Label| PairLabel {
        claim: claim.clone(),
        doc: doc.clone(),
        label,
    };
    for (pair, &old) in a {
        match b.get(pair) {
            Some(&new) if new != old => changed.push(LabelChange {
                claim: pair.0.clone(),
                doc: pair.1.clone(),
                old,
                new,
            }),
            Some(_) => {}
            None => withdrawn.push(pair_label(pair, old)),
        }
    }
    for (pair, &label) in b {
        if !a.contains_key(pair) {
            added.push(pair_label(pair, label));
        }
    }
    (changed, added, withdrawn)
}

/// For each system of both releases, the differences `b - a` with their paired bootstrap
/// intervals, every system on the same resamples of the union of both releases' claims.
fn paired_intervals(
    a: &ReleaseContents,
    b: &ReleaseContents,
    paired: &[Paired],
    samples: BootstrapSamples,
    seed: u64,
) -> Result<Vec<DiffDifferences>, DiffError> {
    let union: Vec<&ClaimId> = a
        .claims()
        .iter()
        .chain(b.claims())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let position = |claim: &ClaimId| union.binary_search(&claim).unwrap_or(usize::MAX);
    let map_a: Vec<usize> = a.claims().iter().map(position).collect();
    let map_b: Vec<usize> = b.claims().iter().map(position).collect();
    let weights_of = |map: &[usize], drawn: &[u32]| -> Vec<u32> {
        map.iter()
            .map(|&u| drawn.get(u).copied().unwrap_or(0))
            .collect()
    };
    let mut resampler = ClaimResampler::new(union.len(), seed);
    // Per system: resampled differences of precision, recall, F1.
    let mut draws: Vec<[Vec<f64>; 3]> = paired
        .iter()
        .map(|_| std::array::from_fn(|_| Vec::with_capacity(samples.get() as usize)))
        .collect();
    for _ in 0..samples.get() {
        let drawn = resampler.next_weights();
        let (wa, wb) = (weights_of(&map_a, drawn), weights_of(&map_b, drawn));
        for (system, out) in paired.iter().zip(&mut draws) {
            let error = |release: u32, source| DiffError::System {
                release,
                system: system.name.clone(),
                source,
            };
            let ma = system
                .a
                .metrics_weighted(&wa)
                .map_err(|e| error(a.number, e))?;
            let mb = system
                .b
                .metrics_weighted(&wb)
                .map_err(|e| error(b.number, e))?;
            out[0].push(mb.precision - ma.precision);
            out[1].push(mb.recall - ma.recall);
            out[2].push(mb.f1 - ma.f1);
        }
    }
    Ok(paired
        .iter()
        .zip(draws)
        .map(|(system, [p, r, f])| {
            let (ma, mb) = (system.a.metrics(), system.b.metrics());
            DiffDifferences {
                precision: difference(mb.precision - ma.precision, p),
                recall: difference(mb.recall - ma.recall, r),
                f1: difference(mb.f1 - ma.f1, f),
            }
        })
        .collect())
}

fn difference(value: f64, mut resampled: Vec<f64>) -> ScoreDifference {
    resampled.sort_by(f64::total_cmp);
    ScoreDifference {
        value,
        low: percentile(&resampled, 0.025),
        high: percentile(&resampled, 0.975),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::label::Probability;
    use crate::metrics::{Confidence, Prediction, RunPair};

    fn id(n: u32) -> ClaimId {
        ClaimId::parse(n.to_string()).unwrap()
    }

    fn doc(n: u32) -> DocId {
        DocId::parse(n.to_string()).unwrap()
    }

    fn run(pairs: &[(u32, u32, Label, f64)]) -> Run {
        Run::new(pairs.iter().map(|&(c, d, label, confidence)| RunPair {
            claim: id(c),
            doc: doc(d),
            prediction: Prediction::Scored {
                label,
                p_support: Probability::new(confidence).unwrap(),
                p_contradict: Probability::new(0.0).unwrap(),
            },
            confidence: Confidence::new(confidence).unwrap(),
        }))
        .unwrap()
    }

    use Label::{Contradict as C, Nei as N, Support as S};

    /// System `s`, published by both releases (the same run).
    fn run_s() -> Run {
        run(&[
            (1, 11, S, 0.9),
            (1, 12, S, 0.8),
            (2, 21, S, 0.7),
            (3, 31, S, 0.6),
            (3, 32, N, 0.1),
        ])
    }

    fn labels(list: &[(u32, u32, Label)]) -> Vec<(ClaimId, DocId, Label)> {
        list.iter().map(|&(c, d, l)| (id(c), doc(d), l)).collect()
    }

    /// A: claims 1-3; (1, 11) S, (1, 12) NEI, (2, 21) C, (3, 31) S; runs of `s` and `gone`.
    /// B: claims 1-4; (1, 12) becomes S, (2, 22) C is added, (3, 31) is withdrawn, (4, 41) NEI
    /// is added; runs of `s` and `new`.
    fn releases() -> (ReleaseContents, ReleaseContents) {
        let a = ReleaseContents::new(
            "p",
            1,
            [id(1), id(2), id(3)],
            labels(&[(1, 11, S), (1, 12, N), (2, 21, C), (3, 31, S)]),
            [
                ("s".to_owned(), run_s()),
                ("gone".to_owned(), run(&[(1, 11, S, 0.5)])),
            ],
        )
        .unwrap();
        let b = ReleaseContents::new(
            "p",
            2,
            [id(1), id(2), id(3), id(4)],
            labels(&[(1, 11, S), (1, 12, S), (2, 21, C), (2, 22, C), (4, 41, N)]),
            [
                ("s".to_owned(), run_s()),
                ("new".to_owned(), run(&[(4, 41, C, 0.5)])),
            ],
        )
        .unwrap();
        (a, b)
    }

    #[test]
    fn every_kind_of_change_is_listed() {
        let (a, b) = releases();
        let d = diff(
            &a,
            &b,
            DiffBootstrap {
                samples: 200,
                seed: 7,
            },
        )
        .unwrap();
        assert_eq!((d.a, d.b, d.claims_a, d.claims_b), (1, 2, 3, 4));
        assert!(d.claims_only_in_a.is_empty());
        assert_eq!(d.claims_only_in_b, vec![id(4)]);
        assert_eq!(
            d.changed,
            vec![LabelChange {
                claim: id(1),
                doc: doc(12),
                old: N,
                new: S
            }]
        );
        let pair = |c, dd, label| PairLabel {
            claim: id(c),
            doc: doc(dd),
            label,
        };
        assert_eq!(d.added, vec![pair(2, 22, C), pair(4, 41, N)]);
        assert_eq!(d.withdrawn, vec![pair(3, 31, S)]);
        let names: Vec<&str> = d.systems.iter().map(|s| s.system.as_str()).collect();
        assert_eq!(names, ["gone", "new", "s"]);
        let gone = &d.systems[0];
        assert!(gone.under_a.is_some() && gone.under_b.is_none() && gone.difference.is_none());
        let new = &d.systems[1];
        assert!(new.under_a.is_none() && new.difference.is_none());
        // `new` predicts (4, 41) CONTRADICT, NEI in B: precision 0, no gold evidence found.
        assert_eq!(
            new.under_b,
            Some(DiffScores {
                precision: 0.0,
                recall: 0.0,
                f1: 0.0
            })
        );
    }

    #[test]
    fn scores_and_differences_match_a_hand_computation() {
        let (a, b) = releases();
        let bootstrap = DiffBootstrap {
            samples: 500,
            seed: 3,
        };
        let d = diff(&a, &b, bootstrap).unwrap();
        let s = &d.systems[2];
        // Under A: gold (1, 11) S, (2, 21) C, (3, 31) S; predicted evidence (1, 11), (1, 12),
        // (2, 21), (3, 31); correct (1, 11) and (3, 31). P 2/4, R 2/3, F1 4/7.
        // Under B: gold (1, 11) S, (1, 12) S, (2, 21) C, (2, 22) C; correct (1, 11) and (1, 12).
        // P 2/4, R 2/4, F1 1/2.
        let close = |x: f64, y: f64| (x - y).abs() < 1e-12;
        let ua = s.under_a.unwrap();
        let ub = s.under_b.unwrap();
        assert!(close(ua.precision, 0.5) && close(ua.recall, 2.0 / 3.0) && close(ua.f1, 4.0 / 7.0));
        assert!(close(ub.precision, 0.5) && close(ub.recall, 0.5) && close(ub.f1, 0.5));
        let diff = s.difference.unwrap();
        assert!(close(diff.precision.value, 0.0));
        assert!(close(diff.recall.value, -1.0 / 6.0));
        assert!(close(diff.f1.value, 0.5 - 4.0 / 7.0));

        // The interval, recomputed from per-claim counts (correct, predicted evidence, gold
        // evidence) written out by hand, on the same draws of the union of the claims 1-4.
        let per_a = [(1u64, 2u64, 1u64), (0, 1, 1), (1, 1, 1), (0, 0, 0)];
        let per_b = [(2u64, 2u64, 2u64), (0, 1, 2), (0, 1, 0), (0, 0, 0)];
        let prf = |per: &[(u64, u64, u64)], w: &[u32]| {
            let (mut c, mut p, mut g) = (0, 0, 0);
            for (x, &w) in per.iter().zip(w) {
                c += x.0 * u64::from(w);
                p += x.1 * u64::from(w);
                g += x.2 * u64::from(w);
            }
            let ratio = |n: u64, d: u64| if d == 0 { 0.0 } else { n as f64 / d as f64 };
            let (precision, recall) = (ratio(c, p), ratio(c, g));
            let f1 = if precision + recall == 0.0 {
                0.0
            } else {
                2.0 * precision * recall / (precision + recall)
            };
            (precision, recall, f1)
        };
        let mut resampler = ClaimResampler::new(4, bootstrap.seed);
        let (mut dp, mut dr, mut df) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..bootstrap.samples {
            let w = resampler.next_weights().to_vec();
            let (pa, ra, fa) = prf(&per_a, &w);
            let (pb, rb, fb) = prf(&per_b, &w);
            dp.push(pb - pa);
            dr.push(rb - ra);
            df.push(fb - fa);
        }
        for (got, mut want) in [(diff.precision, dp), (diff.recall, dr), (diff.f1, df)] {
            want.sort_by(f64::total_cmp);
            assert!(close(got.low, percentile(&want, 0.025)), "{got:?}");
            assert!(close(got.high, percentile(&want, 0.975)), "{got:?}");
            assert!(got.low <= got.high);
        }
        // The same seed gives the same diff; another seed other draws.
        assert_eq!(
            diff,
            super::diff(&a, &b, bootstrap).unwrap().systems[2]
                .difference
                .unwrap()
        );
    }

    #[test]
    fn refusals_name_what_is_wrong() {
        let (a, _) = releases();
        let other = ReleaseContents::new("q", 2, [id(1)], [], []).unwrap();
        let e = diff(
            &a,
            &other,
            DiffBootstrap {
                samples: 10,
                seed: 0,
            },
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "releases of different projects: \"p\" and \"q\""
        );
        let e = diff(
            &a,
            &a,
            DiffBootstrap {
                samples: 1,
                seed: 0,
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("at least 2 samples"), "{e}");
        let e = ReleaseContents::new("p", 3, [id(1)], labels(&[(2, 21, S)]), []).unwrap_err();
        assert_eq!(
            e.to_string(),
            "release 3: the label of (2, 21): claim 2 is not a claim of the release"
        );
        let e = ReleaseContents::new("p", 3, [id(1)], labels(&[(1, 11, S), (1, 11, N)]), [])
            .unwrap_err();
        assert_eq!(e.to_string(), "release 3: pair (1, 11) is labelled twice");
        let e = ReleaseContents::from_archive(4, b"not an archive").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("release 4: the archive cannot be read"),
            "{e}"
        );
    }
}
