//! The lead report (issue "Lead dashboards"): the figures of `domain::report`, computed from
//! the project's judgments so far, as plain data the dashboard draws. Every number here is
//! one of the report's; the page only places them.

use crate::error::ApiError;
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// The most bootstrap resamples a page or a download may ask for.
pub const MAX_WEB_BOOTSTRAP: u32 = 10_000;

/// The most depths a page's or a download's depth curve may have: the depth step must be at
/// least the pool's depth / this (issue 35: step 1 on a deep pool of 40 systems took 55 s).
pub const MAX_WEB_DEPTHS: u32 = 100;

/// The defaults a request leaves out: the domain's depth step and bootstrap resamples
/// (`domain::report::DEFAULT_STEP`, `DEFAULT_BOOTSTRAP_SAMPLES`; a test checks they agree),
/// and seed 0.
pub const DEFAULT_STEP: u32 = 25;
pub const DEFAULT_BOOTSTRAP: u32 = 1_000;
pub const DEFAULT_SEED: u64 = 0;

/// The three labels in the report's matrix order (rows and columns of every confusion matrix).
pub const LABELS: [&str; 3] = ["SUPPORT", "CONTRADICT", "NEI"];

/// The report of one project, for the dashboard.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReportView {
    pub project: String,
    /// The options the report was computed with.
    pub step: u32,
    pub bootstrap_samples: u32,
    pub seed: u64,
    /// The pool as last built: strategy and depth; `None` before the first build.
    pub strategy: Option<String>,
    pub depth: u32,
    /// Every system, in report order: (name, role).
    pub systems: Vec<(String, String)>,
    /// Pooled systems added after the last pool build.
    pub not_yet_pooled: Vec<String>,
    pub depth_curve: Vec<DepthRow>,
    pub count_curve: Vec<CountRow>,
    pub inclusion: Vec<InclusionRowView>,
    pub scores: Vec<SystemScores>,
    pub overlap: Vec<OverlapRow>,
    /// Every pair of systems: F1 and AP differences, and which are significant after Holm.
    pub significance: crate::model::significance::Significance,
    pub evidence: EvidenceView,
    pub agreement: AgreementView,
    pub progress: ProgressView,
    pub annotators: Vec<AnnotatorView>,
}

/// One depth of the depth curve; `scores` in [`ReportView::systems`] order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DepthRow {
    pub depth: u32,
    pub pool_size: u64,
    pub judged: u64,
    pub evidence: u64,
    pub scores: Vec<DepthScoresView>,
}

/// A system's scores at one depth.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct DepthScoresView {
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
    pub average_precision: f64,
    pub f1_change_pct: Option<f64>,
    pub average_precision_change_pct: Option<f64>,
}

/// A mean over system orderings with its standard deviation.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MeanSdView {
    pub mean: f64,
    pub sd: f64,
}

/// One count of the system-count curve; `f1` in [`ReportView::systems`] order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CountRow {
    pub count: u64,
    pub orderings: u64,
    pub exact: bool,
    pub evidence: MeanSdView,
    pub f1: Vec<MeanSdView>,
}

/// A pooled system's F1 with and without its own pool contributions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InclusionRowView {
    pub system: String,
    pub included_f1: f64,
    pub excluded_f1: f64,
    pub change_pct: Option<f64>,
    pub unique_evidence: u64,
}

/// A system's scores at the current depth with bootstrap standard deviations, and its
/// confusion matrix (gold rows, predicted columns, [`LABELS`] order) when it states labels.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SystemScores {
    pub system: String,
    pub role: String,
    pub precision: f64,
    pub precision_sd: f64,
    pub recall: f64,
    pub recall_sd: f64,
    pub f1: f64,
    pub f1_sd: f64,
    pub average_precision: f64,
    pub average_precision_sd: f64,
    pub confusion: Option<[[u64; 3]; 3]>,
}

/// The Jaccard overlap of two systems' predicted evidence pairs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OverlapRow {
    pub system_a: String,
    pub system_b: String,
    pub citation: f64,
    pub non_citation: f64,
}

/// The collection's evidence at the current depth.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EvidenceView {
    pub citation: u64,
    pub discovered: u64,
    pub total: u64,
    /// (evidence pairs, claims with exactly that many, cumulative share of claims 0–1)
    pub claims_by_count: Vec<(u64, u64, f64)>,
    pub conflicting_claims: Vec<String>,
    /// (relation as stored, its label, count)
    pub specificity: Vec<(String, String, u64)>,
}

/// First-vs-second-pass agreement and the disagreements awaiting adjudication.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgreementView {
    pub second_pass_mode: String,
    pub confirm_mode: bool,
    /// `None` when no pair has both passes yet.
    pub passes: Option<PassesView>,
    /// (claim, doc, first label, second label)
    pub awaiting: Vec<(String, String, String, String)>,
    /// Pairwise κ, α, and both by depth band, system and stage pair (issue 16).
    pub reliability: crate::model::agreement::Reliability,
}

/// Agreement over the pairs labelled in both passes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PassesView {
    pub pairs: u64,
    pub kappa: Option<f64>,
    pub percent_agreement: f64,
    pub expected_agreement: f64,
    /// First pass in rows, second in columns, [`LABELS`] order.
    pub confusion: [[u64; 3]; 3],
}

/// Annotation progress of the current pool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProgressView {
    pub pool_pairs: u64,
    pub prior_judged: u64,
    pub to_annotate: u64,
    pub finalized: u64,
    /// (stage, distinct pairs, label records)
    pub stages: Vec<(String, u64, u64)>,
}

/// One annotator's throughput.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnnotatorView {
    pub annotator: String,
    pub items: u64,
    pub timed_items: u64,
    pub median_seconds: Option<f64>,
    pub items_per_hour: Option<f64>,
}

/// The CSV download of table `table` of a project's report with the same options as `view`.
pub fn csv_href(view: &ReportView, table: &str) -> String {
    format!(
        "/lead/projects/{}/report/csv/{}?step={}&bootstrap={}&seed={}",
        encode_path_segment(&view.project),
        table,
        view.step,
        view.bootstrap_samples,
        view.seed
    )
}

/// Percent-encodes a path segment (RFC 3986 unreserved characters pass through).
pub fn encode_path_segment(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}

/// The report options of a request: defaults for what is left out (the depth step from the
/// pool's depth, [`crate::domain::report::auto_step`], so that the curves have points to show),
/// refused beyond the web's limits.
#[cfg(feature = "ssr")]
pub fn web_options(
    step: Option<u32>,
    bootstrap: Option<u32>,
    seed: Option<u64>,
    pool_depth: Option<u32>,
) -> Result<crate::domain::report::ReportOptions, ApiError> {
    let auto = || pool_depth.map_or(DEFAULT_STEP, |d| crate::domain::report::auto_step(d).get());
    let options = crate::domain::report::ReportOptions::parse(
        step.unwrap_or_else(auto),
        bootstrap.unwrap_or(DEFAULT_BOOTSTRAP),
        seed.unwrap_or(DEFAULT_SEED),
        MAX_WEB_BOOTSTRAP,
    )
    .map_err(|e| ApiError::Invalid(e.to_string()))?;
    if let Some(depth) = pool_depth {
        let least = depth.div_ceil(MAX_WEB_DEPTHS).max(1);
        if options.step.get() < least {
            return Err(ApiError::Invalid(format!(
                "step: at least {least} for this pool's depth {depth} (a depth curve has at most {MAX_WEB_DEPTHS} depths), not {}",
                options.step
            )));
        }
    }
    Ok(options)
}

/// The report of project `project` with the options of a request (see [`web_options`]),
/// computed in its turn among the server's heavy work (`heavy`; refused when too many wait).
/// The caller must lead the project (the proof gives its id).
#[cfg(feature = "ssr")]
pub async fn web_report(
    db: &commands::Db,
    lead: &commands::Lead,
    heavy: &crate::state::HeavyWork,
    step: Option<u32>,
    bootstrap: Option<u32>,
    seed: Option<u64>,
) -> Result<
    (
        crate::domain::report::ReportOptions,
        commands::report::ProjectReport,
    ),
    ApiError,
> {
    use commands::report::{pool_depth, project_report};
    let options = web_options(step, bootstrap, seed, pool_depth(db, lead).await?)?;
    let _turn = heavy.turn("report").await?;
    Ok((options, project_report(db, lead, options).await?))
}

/// The dashboard's data: the whole report of `project` (defaults: a depth step from the pool's
/// depth, 1,000 bootstrap resamples, seed 0).
#[server(endpoint = "report/view")]
pub async fn load_report(
    project: String,
    step: Option<u32>,
    bootstrap: Option<u32>,
    seed: Option<u64>,
) -> Result<ReportView, ApiError> {
    crate::api::respond(
        async {
            let caller =
                crate::auth::require_project(&project, crate::domain::account::ProjectRole::Lead)
                    .await?;
            let db = crate::state::db()?;
            let lead = commands::Lead::of(&caller)?;
            let heavy = crate::state::heavy()?;
            let (options, computed) = web_report(&db, &lead, &heavy, step, bootstrap, seed).await?;
            Ok(ReportView::new(project, &options, computed))
        }
        .await,
    )
}

#[cfg(feature = "ssr")]
mod convert {
    use super::*;
    use crate::domain::label::Label;
    use crate::domain::metrics::ConfusionMatrix;
    use crate::domain::pool::Role;
    use crate::domain::report::{ReportOptions, SecondPassMode, Specificity};
    use commands::report::ProjectReport;

    fn role(role: Role) -> String {
        match role {
            Role::Pooled => "pooled",
            Role::EvaluationOnly => "evaluation-only",
        }
        .to_owned()
    }

    fn matrix(m: &ConfusionMatrix) -> [[u64; 3]; 3] {
        Label::ALL.map(|row| Label::ALL.map(|column| m.count(row, column)))
    }

    fn count(n: usize) -> u64 {
        u64::try_from(n).unwrap_or(u64::MAX)
    }

    impl ReportView {
        /// The view of a computed report.
        pub fn new(project: String, options: &ReportOptions, computed: ProjectReport) -> Self {
            let r = computed.report;
            let systems: Vec<(String, String)> = r
                .systems
                .by_system
                .iter()
                .map(|(name, s)| (name.to_owned(), role(s.role)))
                .collect();
            let depth_curve = r
                .depth_curve
                .0
                .iter()
                .map(|p| DepthRow {
                    depth: p.depth,
                    pool_size: count(p.pool_size),
                    judged: count(p.judged),
                    evidence: p.evidence,
                    scores: systems
                        .iter()
                        .filter_map(|(name, _)| p.systems.get(name))
                        .map(|s| DepthScoresView {
                            precision: s.precision,
                            recall: s.recall,
                            f1: s.f1,
                            average_precision: s.average_precision,
                            f1_change_pct: s.f1_change_pct,
                            average_precision_change_pct: s.average_precision_change_pct,
                        })
                        .collect(),
                })
                .collect();
            let count_curve = r
                .system_count_curve
                .0
                .iter()
                .map(|p| CountRow {
                    count: count(p.count),
                    orderings: p.orderings,
                    exact: p.exact,
                    evidence: MeanSdView {
                        mean: p.evidence_mean,
                        sd: p.evidence_sd,
                    },
                    f1: systems
                        .iter()
                        .filter_map(|(name, _)| p.f1.get(name))
                        .map(|m| MeanSdView {
                            mean: m.mean,
                            sd: m.sd,
                        })
                        .collect(),
                })
                .collect();
            let inclusion = r
                .inclusion
                .0
                .iter()
                .map(|row| InclusionRowView {
                    system: row.system.clone(),
                    included_f1: row.included_f1,
                    excluded_f1: row.excluded_f1,
                    change_pct: row.change_pct,
                    unique_evidence: row.unique_evidence,
                })
                .collect();
            let scores = r
                .systems
                .by_system
                .iter()
                .map(|(name, s)| SystemScores {
                    system: name.to_owned(),
                    role: role(s.role),
                    precision: s.scores.precision,
                    precision_sd: s.scores.precision_sd,
                    recall: s.scores.recall,
                    recall_sd: s.scores.recall_sd,
                    f1: s.scores.f1,
                    f1_sd: s.scores.f1_sd,
                    average_precision: s.scores.average_precision,
                    average_precision_sd: s.scores.average_precision_sd,
                    confusion: s.confusion.as_ref().map(matrix),
                })
                .collect();
            let overlap = r
                .systems
                .overlap
                .iter()
                .map(|o| OverlapRow {
                    system_a: o.system_a.clone(),
                    system_b: o.system_b.clone(),
                    citation: o.citation,
                    non_citation: o.non_citation,
                })
                .collect();
            let e = &r.evidence;
            let evidence = EvidenceView {
                citation: e.citation,
                discovered: e.discovered,
                total: e.total,
                claims_by_count: e
                    .claims_by_evidence_count
                    .iter()
                    .map(|row| (row.evidence_pairs, row.claims, row.cumulative_share))
                    .collect(),
                conflicting_claims: e
                    .conflicting_claims
                    .iter()
                    .map(|c| c.as_str().to_owned())
                    .collect(),
                specificity: Specificity::ALL
                    .iter()
                    .map(|&s| {
                        (
                            s.as_str().to_owned(),
                            s.human().to_owned(),
                            e.specificity.get(s),
                        )
                    })
                    .collect(),
            };
            let a = &r.agreement;
            let agreement = AgreementView {
                second_pass_mode: match a.second_pass_mode {
                    SecondPassMode::Confirm => "confirm",
                    SecondPassMode::Blind => "blind",
                }
                .to_owned(),
                confirm_mode: a.confirm_mode,
                reliability: a.reliability.clone(),
                passes: a.first_vs_second.as_ref().map(|p| PassesView {
                    pairs: p.agreement.pairs,
                    kappa: p.agreement.kappa,
                    percent_agreement: p.percent_agreement,
                    expected_agreement: p.agreement.expected_agreement,
                    confusion: matrix(&p.agreement.confusion),
                }),
                awaiting: a
                    .awaiting_adjudication
                    .pairs
                    .iter()
                    .map(|d| {
                        (
                            d.pair.claim.as_str().to_owned(),
                            d.pair.doc.as_str().to_owned(),
                            d.first.as_str().to_owned(),
                            d.second.as_str().to_owned(),
                        )
                    })
                    .collect(),
            };
            let p = &r.annotation.progress;
            let progress = ProgressView {
                pool_pairs: count(p.pool_pairs),
                prior_judged: count(p.prior_judged),
                to_annotate: count(p.to_annotate),
                finalized: count(p.finalized),
                stages: p
                    .stages
                    .iter()
                    .map(|s| {
                        (
                            s.stage.as_str().to_owned(),
                            count(s.pairs),
                            count(s.records),
                        )
                    })
                    .collect(),
            };
            let annotators = r
                .annotation
                .annotators
                .iter()
                .map(|a| AnnotatorView {
                    annotator: a.annotator.clone(),
                    items: count(a.items),
                    timed_items: count(a.timed_items),
                    median_seconds: a.median_seconds,
                    items_per_hour: a.items_per_hour,
                })
                .collect();
            ReportView {
                project,
                step: options.step.get(),
                bootstrap_samples: options.bootstrap_samples.get(),
                seed: options.seed,
                strategy: computed.pool.map(|p| p.strategy.as_str().to_owned()),
                depth: r.systems.depth,
                systems,
                not_yet_pooled: computed.not_yet_pooled,
                depth_curve,
                count_curve,
                inclusion,
                scores,
                overlap,
                significance: r.systems.significance.clone(),
                evidence,
                agreement,
                progress,
                annotators,
            }
        }
    }
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use super::*;

    /// Issue 35 F10: a depth curve of at most MAX_WEB_DEPTHS depths; the error names `step`.
    #[test]
    fn the_depth_step_is_bounded_by_the_pools_depth() {
        assert!(web_options(Some(1), None, None, Some(MAX_WEB_DEPTHS)).is_ok());
        let err = web_options(Some(1), None, None, Some(MAX_WEB_DEPTHS + 1)).unwrap_err();
        assert!(err.to_string().starts_with("step: at least 2"), "{err}");
        assert!(web_options(Some(2), None, None, Some(2 * MAX_WEB_DEPTHS)).is_ok());
        assert!(web_options(Some(2), None, None, Some(2 * MAX_WEB_DEPTHS + 1)).is_err());
        // The automatic step always fits.
        for depth in [1, 99, 100, 101, 250, 1_000, 12_345, 1_000_000] {
            assert!(
                web_options(None, None, None, Some(depth)).is_ok(),
                "{depth}"
            );
        }
    }

    #[test]
    fn web_defaults_are_the_domains() {
        use crate::domain::report::{DEFAULT_BOOTSTRAP_SAMPLES, DEFAULT_STEP as STEP};
        assert_eq!(DEFAULT_STEP, STEP.get());
        assert_eq!(DEFAULT_BOOTSTRAP, DEFAULT_BOOTSTRAP_SAMPLES);
        let options = web_options(None, None, None, None).unwrap();
        assert_eq!(
            (
                options.step.get(),
                options.bootstrap_samples.get(),
                options.seed
            ),
            (25, 1_000, 0)
        );
        assert!(web_options(Some(0), None, None, None).is_err());
        assert!(web_options(None, Some(1), None, None).is_err());
        assert!(web_options(None, Some(MAX_WEB_BOOTSTRAP + 1), None, None).is_err());
        // Without a step, the pool's depth chooses one; a given step wins.
        assert_eq!(
            web_options(None, None, None, Some(30)).unwrap().step.get(),
            5
        );
        assert_eq!(
            web_options(Some(25), None, None, Some(30))
                .unwrap()
                .step
                .get(),
            25
        );
    }

    #[test]
    fn csv_links_carry_the_options_and_encode_the_project() {
        assert_eq!(encode_path_segment("a b/c"), "a%20b%2Fc");
        assert_eq!(encode_path_segment("scifact-demo"), "scifact-demo");
    }
}

/// The replayed judging orders of a project, as the report page plots them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JudgingReplay {
    /// Judgments replayed: twice the pool, at least 2,000, at most every candidate pair.
    pub budget: usize,
    /// Distinct pairs the pooled systems rank.
    pub candidate_pairs: usize,
    /// The truth: pairs with a SUPPORT or CONTRADICT final label (citation evidence included).
    pub evidence_pairs: usize,
    /// Each order with its curve, (judgments, evidence found), thinned to at most
    /// [`JudgingReplay::MAX_POINTS`] points (the last judgment always kept).
    pub curves: Vec<(String, Vec<(u32, u32)>)>,
}

impl JudgingReplay {
    pub const MAX_POINTS: usize = 200;

    /// Evidence found by `order` within `budget` judgments (the curve's last point at or
    /// before it).
    pub fn evidence_at(&self, order: &str, budget: u32) -> Option<u32> {
        let (_, points) = self.curves.iter().find(|(o, _)| o == order)?;
        points
            .iter()
            .take_while(|(j, _)| *j <= budget)
            .last()
            .map(|&(_, e)| e)
    }
}

/// Every judging order replayed over the project's pooled runs, with its final labels as the
/// truth (what `claimpool simulate --order all` prints).
#[server(endpoint = "report/judging")]
pub async fn judging_curves(project: String) -> Result<JudgingReplay, ApiError> {
    crate::api::respond(
        async {
            use crate::domain::judging::Order;
            use commands::simulate::{pooled_pairs, simulate_orders};
            let (db, lead) = crate::api::lead(&project).await?;
            let budget = (2 * pooled_pairs(&db, &lead).await?).max(2_000);
            let sims = simulate_orders(&db, &lead, &Order::ALL, budget, 0).await?;
            let candidate_pairs = sims.first().map_or(0, |s| s.candidate_pairs);
            let evidence_pairs = sims.first().map_or(0, |s| s.evidence_pairs);
            let curves = sims
                .into_iter()
                .map(|s| (s.order.as_str().to_owned(), thin(s.curve.points())))
                .collect();
            Ok(JudgingReplay {
                budget: budget.min(candidate_pairs),
                candidate_pairs,
                evidence_pairs,
                curves,
            })
        }
        .await,
    )
}

/// At most [`JudgingReplay::MAX_POINTS`] evenly spaced points of a curve, its last kept.
#[cfg(feature = "ssr")]
fn thin(points: &[crate::domain::judging::CurvePoint]) -> Vec<(u32, u32)> {
    let step = points.len().div_ceil(JudgingReplay::MAX_POINTS).max(1);
    let as_pair = |p: &crate::domain::judging::CurvePoint| {
        (
            u32::try_from(p.judgments).unwrap_or(u32::MAX),
            u32::try_from(p.evidence).unwrap_or(u32::MAX),
        )
    };
    let mut out: Vec<(u32, u32)> = points
        .iter()
        .skip(step - 1)
        .step_by(step)
        .map(as_pair)
        .collect();
    if let Some(last) = points.last().map(as_pair) {
        if out.last() != Some(&last) {
            out.push(last);
        }
    }
    out
}

#[cfg(all(test, feature = "ssr"))]
mod judging_tests {
    use super::*;
    use crate::domain::judging::CurvePoint;

    #[test]
    fn a_thinned_curve_keeps_every_kth_point_and_the_last() {
        let points: Vec<CurvePoint> = (1..=450)
            .map(|j| CurvePoint {
                judgments: j,
                evidence: j / 3,
            })
            .collect();
        let thinned = thin(&points);
        assert!(thinned.len() <= JudgingReplay::MAX_POINTS + 1);
        assert_eq!(thinned.first(), Some(&(3, 1)));
        assert_eq!(thinned.last(), Some(&(450, 150)));
        assert!(thinned.windows(2).all(|w| w[0].0 < w[1].0));
        let curves = JudgingReplay {
            budget: 450,
            candidate_pairs: 450,
            evidence_pairs: 150,
            curves: vec![("depth".into(), thinned)],
        };
        assert_eq!(curves.evidence_at("depth", 450), Some(150));
        assert_eq!(curves.evidence_at("depth", 4), Some(1));
        assert_eq!(curves.evidence_at("mtf", 4), None);
        assert_eq!(
            thin(&points[..5]),
            vec![(1, 0), (2, 0), (3, 1), (4, 1), (5, 1)]
        );
    }
}
