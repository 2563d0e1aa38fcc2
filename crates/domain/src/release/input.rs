//! What a release is made of: the state of a project, as plain values the caller gathers.

use crate::annotation::{Provenance, Specificity};
use crate::assessor::AssessorLabels;
use crate::formats::{Document, RunRecord};
use crate::ids::{ClaimId, DocId};
use crate::label::Label;
use crate::pool::{Role, Strategy};
use std::collections::BTreeMap;
use std::fmt;
use std::num::NonZeroU32;

/// Everything a release is written from. The order of the lists does not matter: every file
/// is written in a fixed order (claims by [`ClaimId`], then documents by [`DocId`]), so the same
/// state always gives the same bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct ReleaseInput {
    /// The project's name.
    pub project: String,
    /// The release number (1, 2, ...).
    pub number: NonZeroU32,
    /// The date of the state released (not the time of the export), so that exporting the same
    /// state twice gives the same bytes.
    pub date: ReleaseDate,
    /// Whether annotation was still under way: some pooled pairs have no final label yet.
    pub partial: bool,
    /// How the pool was built; `None` when it never was (citation evidence only).
    pub pool: Option<PoolSettings>,
    /// The project's systems.
    pub systems: Vec<SystemInfo>,
    /// Every claim of the collection, with or without evidence.
    pub claims: Vec<ClaimText>,
    /// The final label of every judged pair, NEI included.
    pub final_labels: Vec<FinalLabel>,
    /// Pooled pairs that have no final label yet.
    pub unjudged_pooled: Vec<(ClaimId, DocId)>,
    /// How the claim relates to the evidence, where annotators said so.
    pub specificity: Vec<SpecificityNote>,
    /// At least every document of a judged pair (more are written too).
    pub documents: Vec<Document>,
    /// Runs to publish, by system name (a name of [`ReleaseInput::systems`]).
    pub runs: Vec<(String, Vec<RunRecord>)>,
    /// The project's model assessors and their labels: written only to `qrels-model.txt`, and
    /// only with [`ReleaseOptions::model_qrels`]; never to `qrels.txt` or `claims.jsonl`.
    pub model_labels: Vec<AssessorLabels>,
    /// What the datasheet says of the collection's recall.
    pub recall: RecallStatement,
}

/// The collection's recall, as the datasheet states it.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum RecallStatement {
    /// Not estimated: no judged random sample of the pairs beyond the pool says how much
    /// evidence it missed.
    #[default]
    NotEstimated,
    /// Estimated from a judged stratified random sample of the pairs beyond the pool's depth
    /// (`pool build --sample`): Horvitz–Thompson estimates of the evidence among the pairs the
    /// pooled systems rank within `reach`.
    Sampled {
        /// Evidence judged in that universe, and the estimated total with its 95% interval.
        found: usize,
        total: f64,
        low: f64,
        high: f64,
        /// The depth the sample lies beyond, its reach, its strata and pairs drawn.
        depth: u32,
        reach: u32,
        strata: usize,
        drawn: usize,
    },
}

impl RecallStatement {
    /// Recall `found / total` and its 95% interval (`found / high`, `found / low`), each at
    /// most 1; `None` when not estimated or no evidence is estimated.
    pub fn recall(&self) -> Option<(f64, f64, f64)> {
        let RecallStatement::Sampled {
            found,
            total,
            low,
            high,
            ..
        } = *self
        else {
            return None;
        };
        let found = found as f64;
        let share = |of: f64| {
            if of <= 0.0 || of < found {
                1.0
            } else {
                found / of
            }
        };
        (total > 0.0).then(|| (share(total), share(high), share(low)))
    }
}

/// How the written files differ, beyond the state itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReleaseOptions {
    /// Also list pooled pairs without a final label in `qrels.txt`, with relevance -1.
    pub qrels_unjudged: bool,
    /// Also write `qrels-model.txt`: every model assessor's labels, apart from the people's.
    pub model_qrels: bool,
}

/// The calendar date of a release, `YYYY-MM-DD`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ReleaseDate(String);

/// Text that is not a `YYYY-MM-DD` calendar date.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a date written YYYY-MM-DD")]
pub struct ReleaseDateError(pub String);

impl ReleaseDate {
    /// Parses `YYYY-MM-DD` (a real day of the Gregorian calendar, years 1000 to 9999).
    pub fn parse(text: &str) -> Result<ReleaseDate, ReleaseDateError> {
        let error = || ReleaseDateError(text.to_owned());
        let bytes = text.as_bytes();
        let well_formed = bytes.len() == 10
            && bytes[4] == b'-'
            && bytes[7] == b'-'
            && bytes
                .iter()
                .enumerate()
                .all(|(i, b)| i == 4 || i == 7 || b.is_ascii_digit());
        if !well_formed {
            return Err(error());
        }
        let number = |range: std::ops::Range<usize>| text.get(range).and_then(|s| s.parse().ok());
        let (Some(year), Some(month), Some(day)) = (number(0..4), number(5..7), number(8..10))
        else {
            return Err(error());
        };
        if year < 1000 || !(1..=days_in_month(year, month)).contains(&day) {
            return Err(error());
        }
        Ok(ReleaseDate(text.to_owned()))
    }

    /// The UTC calendar day of a timestamp in milliseconds since the Unix epoch (the unit of
    /// every timestamp column), e.g. the time of the latest change to a project's state.
    pub fn from_unix_ms(ms: i64) -> Result<ReleaseDate, ReleaseDateError> {
        let (year, month, day) = civil_from_days(ms.div_euclid(MS_PER_DAY));
        ReleaseDate::parse(&format!("{year:04}-{month:02}-{day:02}"))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

const MS_PER_DAY: i64 = 86_400_000;

/// (year, month, day) of the proleptic Gregorian calendar for a count of days since 1970-01-01
/// (H. Hinnant's `civil_from_days`: 400-year eras of 146,097 days, years starting in March).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Days of `month` (1 to 12) in `year`; 0 for a month that does not exist.
fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => {
            29
        }
        2 => 28,
        _ => 0,
    }
}

impl fmt::Display for ReleaseDate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// How the pool was built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolSettings {
    pub strategy: Strategy,
    /// Pairs pooled per system (confidence) or per system and claim (per-claim).
    pub depth: NonZeroU32,
}

/// A system of the project.
#[derive(Debug, Clone, PartialEq)]
pub struct SystemInfo {
    /// Unique within the project.
    pub name: String,
    pub role: Role,
    pub description: String,
    /// Share of negatives sampled for training, when the system's authors say (at least 0).
    pub negative_sampling_ratio: Option<f64>,
}

/// A claim of the collection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimText {
    pub id: ClaimId,
    pub text: String,
}

/// The final label of a judged pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FinalLabel {
    pub claim: ClaimId,
    pub doc: DocId,
    pub label: Label,
    pub provenance: Provenance,
    /// Rationales: sets of sentence indices into the abstract, each enough to decide the label.
    pub sentences: Vec<Vec<u32>>,
    /// The rank each system gave the pair, when it was pooled.
    pub model_ranks: Option<BTreeMap<String, u32>>,
}

/// How a claim relates to an abstract, as an annotator noted it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecificityNote {
    pub claim: ClaimId,
    pub doc: DocId,
    pub relation: Option<Specificity>,
    /// The claim, rewritten so that the abstract decides it.
    pub revised_claim: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_real_calendar_days() {
        for ok in ["2024-02-29", "2000-02-29", "2023-12-31", "1999-01-01"] {
            assert_eq!(ReleaseDate::parse(ok).unwrap().as_str(), ok);
        }
        for bad in [
            "2023-02-29",
            "1900-02-29",
            "2023-13-01",
            "2023-00-10",
            "2023-04-31",
            "2023-4-01",
            "2023-04-01T00:00",
            "0999-01-01",
            "２０２３-01-01",
            "",
        ] {
            assert!(ReleaseDate::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn timestamps_give_their_utc_day() {
        let day = |ms| ReleaseDate::from_unix_ms(ms).unwrap().as_str().to_owned();
        assert_eq!(day(0), "1970-01-01");
        assert_eq!(day(86_399_999), "1970-01-01");
        assert_eq!(day(86_400_000), "1970-01-02");
        assert_eq!(day(-1), "1969-12-31");
        assert_eq!(day(951_782_400_000), "2000-02-29");
        assert_eq!(day(1_763_683_200_000), "2025-11-21");
        assert_eq!(day(4_102_444_799_999), "2099-12-31");
        assert!(ReleaseDate::from_unix_ms(i64::MAX).is_err());
        assert!(ReleaseDate::from_unix_ms(-40_000_000_000_000).is_err());
    }

    #[test]
    fn timestamps_agree_with_counting_days_one_by_one() {
        // Walk the calendar from 1970-01-01 a day at a time, for about 110 years.
        let (mut year, mut month, mut day) = (1970u32, 1u32, 1u32);
        for n in 0..40_000i64 {
            let ms = n * MS_PER_DAY + (n * 7_919) % MS_PER_DAY;
            let want = format!("{year:04}-{month:02}-{day:02}");
            assert_eq!(
                ReleaseDate::from_unix_ms(ms).unwrap().as_str(),
                want,
                "day {n}"
            );
            day += 1;
            if day > days_in_month(year, month) {
                day = 1;
                month += 1;
                if month > 12 {
                    month = 1;
                    year += 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod recall_tests {
    use super::RecallStatement;

    fn sampled(found: usize, total: f64, low: f64, high: f64) -> RecallStatement {
        RecallStatement::Sampled {
            found,
            total,
            low,
            high,
            depth: 10,
            reach: 80,
            strata: 3,
            drawn: 14,
        }
    }

    #[test]
    fn recall_is_found_over_the_estimated_total_its_interval_from_the_totals() {
        let (r, from, to) = sampled(9, 24.8, 13.6, 41.5).recall().unwrap();
        assert!((r - 9.0 / 24.8).abs() < 1e-12);
        assert!((from - 9.0 / 41.5).abs() < 1e-12);
        assert!((to - 9.0 / 13.6).abs() < 1e-12);
        // An interval reaching below what was found, or to 0, caps recall at 1.
        let (_, _, to) = sampled(9, 12.0, 8.0, 16.0).recall().unwrap();
        assert_eq!(to, 1.0);
        assert_eq!(sampled(0, 0.0, 0.0, 0.0).recall(), None);
        assert_eq!(RecallStatement::NotEstimated.recall(), None);
    }
}
