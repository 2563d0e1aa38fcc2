//! `README.md`: the release's datasheet. What the collection is, how it was built, its counts,
//! its files and formats, and licence notes. Everything in it comes from the release's state, so
//! the same state gives the same text.

use super::checked::Checked;
use super::counts::ReleaseCounts;
use super::input::{RecallStatement, ReleaseOptions, SystemInfo};
use crate::assessor::AssessorSource;
use crate::pool::{Role, Strategy};

/// The datasheet's file name.
pub const README: &str = "README.md";

/// Text built line by line.
#[derive(Default)]
struct Text(String);

impl Text {
    fn line(&mut self, line: &str) {
        self.0.push_str(line);
        self.0.push('\n');
    }

    fn blank(&mut self) {
        self.0.push('\n');
    }
}

/// User text on one line (descriptions and names go into headings and list items).
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Writes `README.md`; `paths` are the release's other files, sorted.
pub(crate) fn write(
    release: &Checked<'_>,
    options: &ReleaseOptions,
    counts: &ReleaseCounts,
    paths: &[&str],
) -> Vec<u8> {
    let input = release.input;
    let mut t = Text::default();
    t.line(&format!(
        "# {}: claim verification test collection, release {}",
        one_line(&input.project),
        input.number
    ));
    t.blank();
    t.line(&format!("Date of the state released: {}.", input.date));
    if input.partial {
        t.line(&format!(
            "**Partial release:** annotation was still under way; {} pooled pairs had no final \
             label yet.",
            counts.unjudged_pooled_pairs
        ));
    }
    t.blank();
    what_it_is(&mut t);
    how_built(&mut t, release, counts);
    recall(&mut t, &input.recall);
    counts_table(&mut t, counts);
    files(&mut t, release, options, paths);
    evaluating(&mut t);
    licences(&mut t);
    citing(&mut t);
    t.0.into_bytes()
}

fn what_it_is(t: &mut Text) {
    t.line("## What this is");
    t.blank();
    t.line(
        "A test collection for scientific claim verification, built as SciFact-Open was \
         (Wadden et al., 2022): a set of claims, a set of candidate abstracts, and for claim/abstract \
         pairs a final label: SUPPORT (the abstract supports the claim), CONTRADICT (it \
         contradicts the claim) or NEI (not enough information). A pair that is not listed counts \
         as NEI. Systems are evaluated on the claim/abstract pairs they predict as evidence.",
    );
    t.blank();
}

fn how_built(t: &mut Text, release: &Checked<'_>, counts: &ReleaseCounts) {
    let input = release.input;
    t.line("## How it was built");
    t.blank();
    let by = &counts.evidence_by_provenance;
    t.line(&format!("- Claims: {} claims.", counts.claims));
    t.line(&format!(
        "- Evidence that came with the claims (provenance `citation`, e.g. SciFact's cited \
         abstracts): {} pairs.",
        by.citation
    ));
    match input.pool {
        None => t.line("- Pooling: no pool was built."),
        Some(pool) => {
            let how = match pool.strategy {
                Strategy::Confidence => format!(
                    "each pooled system's predictions over all claims were ranked by confidence, \
                     and its top {} claim/abstract pairs entered the pool (SciFact-Open's method)",
                    pool.depth
                ),
                Strategy::PerClaim => format!(
                    "for each claim, each pooled system's top {} abstracts by confidence entered \
                     the pool (TREC-style depth pooling)",
                    pool.depth
                ),
            };
            t.line(&format!(
                "- Pooling (strategy `{}`, depth {}): {how}. Ties went to the better retrieval \
                 rank, then the lower claim id, then the lower doc id.",
                pool.strategy.as_str(),
                pool.depth
            ));
        }
    }
    t.line(&format!(
        "- Annotation: annotators gave pooled pairs a final label (provenance `pooling`): {} \
         evidence pairs. Labels imported from earlier annotation (provenance `import`, written \
         as `pooling` in `claims.jsonl`): {} evidence pairs.",
        by.pooling, by.import
    ));
    systems(t, release, Role::Pooled, "Pooled systems");
    systems(
        t,
        release,
        Role::EvaluationOnly,
        "Evaluation-only systems (never pooled)",
    );
    t.blank();
    t.line(
        "Pairs that no pooled system ranked high enough were never judged; some of them may be \
         evidence. Evaluating a system that did not contribute to the pool may therefore \
         understate its precision, as the SciFact-Open authors discuss.",
    );
    t.blank();
}

fn recall(t: &mut Text, statement: &RecallStatement) {
    t.line("## Recall");
    t.blank();
    match (statement, statement.recall()) {
        (
            RecallStatement::Sampled {
                found,
                total,
                low,
                high,
                depth,
                reach,
                strata,
                drawn,
            },
            Some((recall, from, to)),
        ) => t.line(&format!(
            "Estimated recall of the evidence among the pairs the pooled systems rank within \
             {reach} (best rank): {:.1}% (95% interval {:.1}% to {:.1}%). {found} evidence pairs \
             were judged there, of an estimated {total:.1} (95% interval {low:.1} to {high:.1}). \
             How: a stratified random sample of {drawn} pairs beyond depth {depth} ({strata} \
             strata by best rank) was judged, and Horvitz-Thompson estimates of the evidence \
             were made from it; evidence no pooled system ranks within {reach} is not covered.",
            100.0 * recall,
            100.0 * from,
            100.0 * to
        )),
        (RecallStatement::Sampled { found, reach, .. }, None) => t.line(&format!(
            "A judged random sample found no evidence among the pairs the pooled systems rank \
             within {reach}: recall is not estimated ({found} evidence pairs judged there)."
        )),
        (RecallStatement::NotEstimated, _) => t.line(
            "Not estimated: no judged random sample of the pairs beyond the pool says how much \
             evidence the pool missed (`claimpool pool build --sample N` draws one).",
        ),
    }
    t.blank();
}

fn systems(t: &mut Text, release: &Checked<'_>, role: Role, heading: &str) {
    let of_role: Vec<&SystemInfo> = release
        .systems
        .values()
        .copied()
        .filter(|s| s.role == role)
        .collect();
    if of_role.is_empty() {
        t.line(&format!("- {heading}: none."));
        return;
    }
    t.line(&format!("- {heading}:"));
    for s in of_role {
        let mut item = format!("  - `{}`", one_line(&s.name));
        let description = one_line(&s.description);
        if !description.is_empty() {
            item.push_str(&format!(": {description}"));
        }
        if let Some(ratio) = s.negative_sampling_ratio {
            item.push_str(&format!(" (negative sampling ratio {ratio})"));
        }
        t.line(&item);
    }
}

fn counts_table(t: &mut Text, c: &ReleaseCounts) {
    t.line("## Counts");
    t.blank();
    t.line("| | |");
    t.line("|---|---:|");
    let rows: [(&str, u64); 11] = [
        ("Claims", c.claims),
        ("Claims with evidence", c.claims_with_evidence),
        ("Evidence pairs", c.evidence_pairs),
        ("SUPPORT pairs", c.evidence_by_label.support),
        ("CONTRADICT pairs", c.evidence_by_label.contradict),
        ("Judged NEI pairs", c.nei_pairs),
        ("Judged pairs", c.judged_pairs),
        (
            "Pooled pairs without a final label",
            c.unjudged_pooled_pairs,
        ),
        ("Documents (judged abstracts and candidates)", c.documents),
        ("Specificity notes", c.specificity_notes),
        ("Published runs", c.runs),
    ];
    for (name, value) in rows {
        t.line(&format!("| {name} | {value} |"));
    }
    t.blank();
}

fn files(t: &mut Text, release: &Checked<'_>, options: &ReleaseOptions, paths: &[&str]) {
    t.line("## Files");
    t.blank();
    t.line("- `MANIFEST.json`: release number, date, pool settings, systems, counts, and the size and SHA-256 of every other file.");
    for path in paths {
        let what = match *path {
            "README.md" => "this datasheet.".to_owned(),
            "claims.jsonl" => "every claim, one JSON object per line, in the SciFact-Open format: `{\"id\", \"claim\", \"evidence\": {doc_id: {\"provenance\", \"label\", \"sentences\", \"model_ranks\"}}}`. Only SUPPORT and CONTRADICT pairs are listed; `sentences` is the union of the rationale sentences (0-based indices into the abstract); `model_ranks` gives each system's rank of the pair, or `null` for citation evidence.".to_owned(),
            "qrels.txt" => {
                let mut s = "TREC qrels, `claim_id 0 doc_id relevance`: 1 for evidence, 0 for judged NEI".to_owned();
                if options.qrels_unjudged {
                    s.push_str(", -1 for pooled pairs without a final label");
                }
                s.push('.');
                s
            }
            "qrels-model.txt" => {
                let assessors: Vec<String> = input_assessors(release);
                format!("labels of model assessors, not of people: `claim_id assessor doc_id SUPPORT|CONTRADICT|NEI`, one line per pooled pair each assessor labelled, by assessor, claim and doc. A model assessor is a system's predictions on the pool (its stated label, else the most probable of SUPPORT, CONTRADICT and NEI; NEI for pooled pairs the run does not hold), or the labels an external command (a model run by the server's administrator) gave every pooled pair. These labels are never final and are in neither `qrels.txt` nor `claims.jsonl`. Assessors: {}.", assessors.join(", "))
            }
            "qrels-labels.txt" => "the final label of every judged pair, `claim_id 0 doc_id SUPPORT|CONTRADICT|NEI`.".to_owned(),
            "specificity.jsonl" => "annotators' notes on how the claim relates to the evidence, `{\"claim_id\", \"doc_id\", \"relation\", \"revised_claim\"}`; `relation` is `matches`, `evidence_more_specific`, `evidence_more_general` or `closely_related`.".to_owned(),
            "corpus_candidates.jsonl" => "every abstract of a judged pair (and any other candidate exported), in the SciFact corpus format `{\"doc_id\", \"title\", \"abstract\": [sentences], ...}`.".to_owned(),
            other => match release.runs.iter().find(|(_, run)| run.path == other) {
                Some((name, _)) => format!("the predictions of system `{}`, in claimpool's canonical run format (one pair per line: `claim_id`, `doc_id`, `predicted_label`, `p_support`, `p_contradict`, `p_nei`, `score`, `rank`, `sentences`).", one_line(name)),
                None => "part of the release.".to_owned(),
            },
        };
        t.line(&format!("- `{path}`: {what}"));
    }
    t.blank();
}

/// Each model assessor as `` `name` (system `system`) `` or `` `name` (command `line`) ``.
fn input_assessors(release: &Checked<'_>) -> Vec<String> {
    let mut named: Vec<String> = release
        .input
        .model_labels
        .iter()
        .map(|a| {
            let (kind, what) = match &a.source {
                AssessorSource::System { system } => ("system", system),
                AssessorSource::Command { command, .. } => ("command", command),
            };
            format!(
                "`{}` ({kind} `{}`)",
                one_line(&a.name),
                one_line(&what.replace('`', "'"))
            )
        })
        .collect();
    named.sort();
    if named.is_empty() {
        named.push("none".to_owned());
    }
    named
}

fn evaluating(t: &mut Text) {
    t.line("## Evaluating a system");
    t.blank();
    t.line(
        "As SciFact-Open: for each claim, the system lists the abstracts it predicts SUPPORT or \
         CONTRADICT. Precision is the share of those pairs whose predicted label equals the \
         final label; recall is the share of evidence pairs found with the right label; F1 is \
         their harmonic mean. Average precision ranks the predicted pairs by confidence. \
         Standard deviations come from a bootstrap over claims.",
    );
    t.blank();
}

fn licences(t: &mut Text) {
    t.line("## Licences");
    t.blank();
    t.line(
        "Check the licences of your sources before you use or redistribute this release: claims \
         and abstracts keep the terms of the data they came from. For example, SciFact's claims \
         are released under CC BY 4.0 and its corpus of abstracts under ODC-By 1.0; abstracts \
         from other sources may carry other terms. The runs under `runs/` are the outputs of \
         their systems and belong to those systems' authors.",
    );
    t.blank();
}

fn citing(t: &mut Text) {
    t.line("## References");
    t.blank();
    t.line("- David Wadden, Kyle Lo, Bailey Kuehl, Arman Cohan, Iz Beltagy, Lucy Lu Wang and Hannaneh Hajishirzi. 2022. SciFact-Open: Towards open-domain scientific claim verification. Findings of EMNLP 2022.");
    t.line("- David Wadden, Shanchuan Lin, Kyle Lo, Lucy Lu Wang, Madeleine van Zuylen, Arman Cohan and Hannaneh Hajishirzi. 2020. Fact or Fiction: Verifying Scientific Claims. EMNLP 2020.");
}
