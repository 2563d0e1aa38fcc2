//! The lead report (issue "Lead dashboards: is the pool deep and wide enough?"): how the
//! evidence and the systems' scores depend on the pool's depth and on which systems built it
//! (SciFact-Open, Wadden et al. 2022, §5; Zobel 1998), the systems at the current depth, the
//! collection's evidence, and annotation progress and agreement.
//!
//! Definitions. The evidence *discovered* at depth `d` is the pairs of the depth-`d` pool (the
//! project's strategy, pooled systems only) whose final label is SUPPORT or CONTRADICT and that
//! are not citation evidence. A system's scores at depth `d` are the release's
//! (`metrics::JudgedRun`): against the gold = citation evidence + evidence discovered at `d`,
//! every other pair NEI, over all the project's claims.
//!
//! Flow: the database layer fills a [`Snapshot`]; [`Report::compute`] checks it, ranks each
//! pooled system once and judges each system once, then derives every depth's and every
//! system subset's pool from the ranks (a pair's entry depth for a set of systems is the
//! smallest rank any of them gives it). Each table renders as CSV ([`Report::csv_tables`]).

mod agreement;
mod annotation;
mod by_name;
mod csv;
mod depth;
mod engine;
mod error;
mod evidence;
mod prepared;
mod significance;
mod snapshot;
mod subsets;
pub mod survey;
mod systems;

#[cfg(test)]
mod tests;

pub use annotation::{
    AgreementReport, AnnotationReport, AnnotatorRow, AwaitingAdjudication, Disagreement,
    PassAgreement, Progress, StageProgress,
};
pub use by_name::ByName;
pub use csv::CsvTable;
pub use depth::{
    absolute_change_pct, auto_step, curve_depths, DepthCurve, DepthPoint, DepthScores,
    AUTO_STEP_POINTS,
};
pub use error::ReportError;
pub use evidence::{EvidenceCountRow, EvidenceReport, SpecificityCounts};
pub use significance::{Significance, SystemComparison, DEFAULT_PERMUTATIONS, SIGNIFICANCE_ALPHA};
pub use snapshot::{
    AnnotationRecord, FinalLabel, LabelledPair, PairId, PoolSetting, Provenance, Rationale,
    ReportOptions, ReportOptionsError, SecondPassMode, Seconds, SecondsError, Snapshot,
    Specificity, SpecificityNote, Stage, SystemPrediction, SystemSnapshot,
    DEFAULT_BOOTSTRAP_SAMPLES, DEFAULT_ORDERING_SAMPLES, DEFAULT_STEP, EXACT_ORDERINGS_UP_TO,
};
pub use subsets::{CountPoint, Inclusion, InclusionRow, MeanSd, SystemCountCurve};
pub use systems::{Overlap, SystemSummary, SystemsReport};

use engine::Engine;
use prepared::Prepared;
use serde::{Deserialize, Serialize};

/// The names of the report's CSV tables, in [`Report::csv_tables`] order.
pub const CSV_TABLES: [&str; 20] = [
    "depth_curve",
    "system_count_curve",
    "inclusion",
    "system_scores",
    "system_confusion",
    "system_overlap",
    "system_significance",
    "agreement",
    "agreement_confusion",
    "awaiting_adjudication",
    "agreement_annotators",
    "agreement_alpha",
    "agreement_by_depth",
    "agreement_by_system",
    "agreement_by_stage",
    "evidence_per_claim",
    "conflicting_claims",
    "specificity",
    "annotation_progress",
    "annotators",
];

/// The whole lead report. Its JSON has the top-level keys `depth_curve`,
/// `system_count_curve`, `inclusion`, `systems`, `agreement`, `evidence` and `annotation`.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct Report {
    /// Evidence discovered and every system's scores at each depth up to the current one.
    pub depth_curve: DepthCurve,
    /// Evidence discovered and every system's F1 at the current depth when `k` pooled systems
    /// build the pool, averaged over orderings of the pooled systems.
    pub system_count_curve: SystemCountCurve,
    /// Each pooled system's F1 with and without its own pool contributions.
    pub inclusion: Inclusion,
    /// Every system at the current depth.
    pub systems: SystemsReport,
    /// First-vs-second-pass agreement and pairs awaiting adjudication.
    pub agreement: AgreementReport,
    /// The collection's evidence at the current depth.
    pub evidence: EvidenceReport,
    /// Annotation progress and annotators' throughput.
    pub annotation: AnnotationReport,
}

impl Report {
    /// Computes the report of `snapshot`. Fails on a snapshot that breaks the rules of
    /// [`Snapshot`] (see [`ReportError`]).
    pub fn compute(snapshot: &Snapshot, options: &ReportOptions) -> Result<Report, ReportError> {
        Report::compute_with(snapshot, options, EXACT_ORDERINGS_UP_TO)
    }

    /// [`Report::compute`], enumerating every ordering up to `exact_up_to` pooled systems.
    pub(crate) fn compute_with(
        snapshot: &Snapshot,
        options: &ReportOptions,
        exact_up_to: usize,
    ) -> Result<Report, ReportError> {
        let prepared = Prepared::new(snapshot)?;
        let engine = Engine::new(&prepared)?;
        let current = engine.discovered(&engine.full_entry(), prepared.depth);
        Ok(Report {
            depth_curve: depth::depth_curve(&prepared, &engine, options.step),
            system_count_curve: subsets::system_count_curve(
                &prepared,
                &engine,
                options,
                exact_up_to,
            ),
            inclusion: subsets::inclusion(&prepared, &engine),
            systems: systems::systems_report(snapshot, &prepared, &engine, &current, options)?,
            agreement: annotation::agreement_report(snapshot, &prepared, &engine, options.step),
            evidence: evidence::evidence_report(snapshot, &prepared, &engine, &current),
            annotation: annotation::annotation_report(snapshot, &prepared, &engine),
        })
    }

    /// Every table and plot series, each with its name (a file stem), as [`CSV_TABLES`] lists
    /// them.
    pub fn csv_tables(&self) -> Vec<CsvTable> {
        let mut tables = vec![
            self.depth_curve.csv_table(),
            self.system_count_curve.csv_table(),
            self.inclusion.csv_table(),
        ];
        tables.extend(self.systems.csv_tables());
        tables.extend(self.agreement.csv_tables());
        tables.extend(self.evidence.csv_tables());
        tables.extend(self.annotation.csv_tables());
        tables
    }

    /// The CSV text of the table named `name` (see [`Report::csv_tables`]).
    pub fn to_csv(&self, name: &str) -> Option<String> {
        self.csv_tables()
            .into_iter()
            .find(|t| t.name == name)
            .map(|t| t.to_csv())
    }
}
