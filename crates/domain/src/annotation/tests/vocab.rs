use super::super::*;

/// The words a `CHECK (column IN (...))` of the core migration allows, for the `nth` such check
/// of `column` (0-based).
fn check_list(column: &str, nth: usize) -> Vec<String> {
    let sql = include_str!("../../../../../migrations/sqlite/20261121000001_core.sql");
    let needle = format!("CHECK ({column} IN (");
    let (_, after) = sql
        .match_indices(&needle)
        .nth(nth)
        .map(|(at, _)| sql.split_at(at + needle.len()))
        .unwrap_or_else(|| panic!("no check {nth} on {column} in the migration"));
    let list = after.split(')').next().unwrap();
    list.split(',')
        .map(|w| w.trim().trim_matches('\'').to_owned())
        .collect()
}

fn spellings<T: Copy>(all: &[T], as_str: fn(T) -> &'static str) -> Vec<String> {
    all.iter().map(|&v| as_str(v).to_owned()).collect()
}

#[test]
fn spellings_are_the_schemas() {
    // assignments.stage (first check on `stage`), then judgments.stage (second).
    let work: Vec<String> = spellings(Stage::ALL, Stage::as_str)
        .into_iter()
        .filter(|s| s != "final")
        .collect();
    assert_eq!(check_list("stage", 0), work);
    assert_eq!(check_list("stage", 1), spellings(Stage::ALL, Stage::as_str));
    assert_eq!(
        check_list("second_pass_mode", 0),
        spellings(SecondPassMode::ALL, SecondPassMode::as_str)
    );
    assert_eq!(
        check_list("specificity", 0),
        spellings(Specificity::ALL, Specificity::as_str)
    );
    // judgments.provenance, then final_labels.provenance.
    for nth in 0..2 {
        assert_eq!(
            check_list("provenance", nth),
            spellings(Provenance::ALL, Provenance::as_str)
        );
    }
    let prior: Vec<bool> = Provenance::ALL.iter().map(|p| p.is_prior()).collect();
    assert_eq!(prior, [true, false, true]);
}

#[test]
fn parse_round_trips_and_serde_uses_the_same_spelling() {
    for &s in Specificity::ALL {
        assert_eq!(Specificity::parse(s.as_str()), Ok(s));
        assert_eq!(format!(" {s} ").parse::<Specificity>(), Ok(s));
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(json, format!("\"{}\"", s.as_str()));
        assert_eq!(serde_json::from_str::<Specificity>(&json).unwrap(), s);
        assert!(!s.human().is_empty());
    }
    for &s in Stage::ALL {
        assert_eq!(Stage::parse(s.as_str()), Ok(s));
        assert_eq!(serde_json::to_string(&s).unwrap(), format!("\"{s}\""));
    }
    for &m in SecondPassMode::ALL {
        assert_eq!(SecondPassMode::parse(m.as_str()), Ok(m));
    }
    for &p in Provenance::ALL {
        assert_eq!(Provenance::parse(p.as_str()), Ok(p));
        assert_eq!(serde_json::to_string(&p).unwrap(), format!("\"{p}\""));
    }
}

#[test]
fn unknown_words_are_refused_with_the_accepted_ones() {
    let err = Specificity::parse("Matches").unwrap_err();
    assert_eq!(err.what, "specificity");
    assert_eq!(
        err.to_string(),
        "unknown specificity \"Matches\" (expected one of: matches, evidence_more_specific, \
         evidence_more_general, closely_related)"
    );
    assert!(Stage::parse("").is_err());
    assert!(SecondPassMode::parse("open").is_err());
    assert!(serde_json::from_str::<Stage>("\"third\"").is_err());
}
