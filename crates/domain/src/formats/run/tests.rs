//! Run formats on hand-made lines: records, ranks, confidences, errors, detection, gzip, parquet.

use super::*;
use crate::formats::input::decompressed;
use crate::ids::{ClaimId, DocId};
use crate::label::{Label, Probability};
use flate2::write::GzEncoder;
use flate2::Compression;
use std::io::Write;

fn reader(text: &str, format: RunFormat, options: &RunReadOptions) -> RunReader {
    let input = decompressed(std::io::Cursor::new(text.as_bytes().to_vec())).unwrap();
    RunReader::from_input(input, "runs.jsonl", format, options).unwrap()
}

fn read_all(text: &str, format: RunFormat) -> Vec<Result<Located<RunRecord>, ParseError>> {
    reader(text, format, &RunReadOptions::default()).collect()
}

fn records(text: &str, format: RunFormat) -> Vec<Located<RunRecord>> {
    read_all(text, format)
        .into_iter()
        .map(|r| r.unwrap())
        .collect()
}

fn first_error(text: &str, format: RunFormat) -> ParseError {
    read_all(text, format)
        .into_iter()
        .find_map(Result::err)
        .expect("an error")
}

fn p(x: f64) -> Option<Probability> {
    Some(Probability::new(x).unwrap())
}

fn claim(id: &str) -> ClaimId {
    ClaimId::parse(id).unwrap()
}

fn doc(id: &str) -> DocId {
    DocId::parse(id).unwrap()
}

#[test]
fn canonical_lines_read_every_field() {
    let text = r#"{"claim_id": 1, "doc_id": "MED-4", "predicted_label": "SUPPORT", "p_support": 0.7, "p_contradict": 0.1, "p_nei": 0.2, "rank": 3, "sentences": [0, 4]}
{"system": "bm25", "claim_id": "2", "doc_id": 9, "score": 12.5}
{"model": "m", "claim_id": 3, "doc_id": 9, "label": "REFUTES", "p_support": null}"#;
    let got = records(text, RunFormat::Canonical);
    assert_eq!(got.len(), 3);
    assert_eq!(
        got[0].record,
        RunRecord {
            system: None,
            claim_id: claim("1"),
            doc_id: doc("MED-4"),
            label: Some(Label::Support),
            p_support: p(0.7),
            p_contradict: p(0.1),
            p_nei: p(0.2),
            score: None,
            rank: Some(3),
            sentences: Some(vec![0, 4]),
        }
    );
    assert_eq!(got[0].record.confidence(), 0.7);
    assert_eq!(got[1].line, 2);
    assert_eq!(got[1].record.system.as_deref(), Some("bm25"));
    assert_eq!(got[1].record.confidence(), 12.5);
    assert_eq!(got[2].record.system.as_deref(), Some("m"));
    assert_eq!(got[2].record.label, Some(Label::Contradict));
    assert_eq!(got[2].record.p_support, None);
    assert_eq!(got[2].record.confidence(), 1.0);
}

#[test]
fn canonical_errors_name_file_line_and_field_and_reading_goes_on() {
    let text = "{\"claim_id\": 1, \"doc_id\": 1, \"p_support\": 0.2}\n\
                {\"claim_id\": 1, \"doc_id\": 2, \"p_support\": 1.3}\n\
                {\"claim_id\": 1, \"doc_id\": 3, \"predicted_label\": \"MAYBE\"}\n\
                {\"doc_id\": 4}\n\
                {\"claim_id\": 1, \"doc_id\": 5, \"rank\": -1}\n\
                {\"claim_id\": 1, \"doc_id\": 6, \"sentences\": [1, \"x\"]}\n\
                {\"claim_id\": 1, \"doc_id\": \"a b\"}\n\
                {\"claim_id\": 1, \"doc_id\": 8, \"p_contradict\": -0.5, \"rank\": 1}\n\
                not json\n\
                {\"claim_id\": 1, \"doc_id\": 10}\n";
    let got = read_all(text, RunFormat::Canonical);
    assert_eq!(got.len(), 10);
    assert!(got[0].is_ok() && got[9].is_ok());
    assert_eq!(got[9].as_ref().unwrap().line, 10);
    let errors: Vec<(usize, Option<String>)> = got[1..9]
        .iter()
        .map(|r| {
            let e = r.as_ref().unwrap_err();
            assert!(
                e.to_string()
                    .starts_with(&format!("runs.jsonl:{}: ", e.line)),
                "{e}"
            );
            (e.line, e.field.clone())
        })
        .collect();
    let field = |s: &str| Some(s.to_owned());
    assert_eq!(
        errors,
        vec![
            (2, field("p_support")),
            (3, field("predicted_label")),
            (4, field("claim_id")),
            (5, field("rank")),
            (6, field("sentences")),
            (7, field("doc_id")),
            (8, field("p_contradict")),
            (9, None),
        ]
    );
    assert_eq!(
        got[1].as_ref().unwrap_err().to_string(),
        "runs.jsonl:2: field \"p_support\": 1.3 is not a probability (a number in [0, 1])"
    );
}

#[test]
fn writer_output_reads_back_unchanged_plain_and_gzip() {
    let mut full = RunRecord::bare(claim("12"), doc("MED-3"));
    full.system = Some("sys \"quoted\"".to_owned());
    full.label = Some(Label::Nei);
    full.p_support = p(0.1);
    full.p_contradict = p(1.0 / 3.0);
    full.p_nei = p(0.0);
    full.score = Some(-1.0e-7);
    full.rank = Some(4_000_000_000);
    full.sentences = Some(vec![]);
    let bare = RunRecord::bare(claim("x"), doc("9"));
    let mut scored = RunRecord::bare(claim("x"), doc("10"));
    scored.score = Some(0.1 + 0.2);
    let originals = vec![full, bare, scored];

    let mut writer = RunWriter::new(Vec::new());
    for r in &originals {
        writer.write(r).unwrap();
    }
    let bytes = writer.finish().unwrap();
    let text = String::from_utf8(bytes.clone()).unwrap();
    assert_eq!(text.lines().count(), 3);
    let back: Vec<RunRecord> = records(&text, RunFormat::Canonical)
        .into_iter()
        .map(|l| l.record)
        .collect();
    assert_eq!(back, originals);
    assert_eq!(
        RunFormat::detect_line(text.lines().next().unwrap()),
        Ok(RunFormat::Canonical)
    );

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl.gz");
    let mut gz = RunWriter::new(GzEncoder::new(
        std::fs::File::create(&path).unwrap(),
        Compression::default(),
    ));
    for r in &originals {
        gz.write(r).unwrap();
    }
    gz.finish().unwrap().finish().unwrap();
    assert_eq!(RunFormat::detect_file(&path).unwrap(), RunFormat::Canonical);
    let back: Vec<RunRecord> =
        RunReader::open(&path, RunFormat::Canonical, &RunReadOptions::default())
            .unwrap()
            .map(|r| r.unwrap().record)
            .collect();
    assert_eq!(back, originals);

    let mut bad = RunRecord::bare(claim("1"), doc("1"));
    bad.score = Some(f64::NAN);
    assert!(RunWriter::new(Vec::new()).write(&bad).is_err());
}

#[test]
fn leaderboard_maps_label_probs_by_order_and_ranks_by_position() {
    let text = r#"{"id": 1, "evidence": {}}
{"id": 3, "evidence": {"14717500": {"label": "SUPPORT", "sentences": [2, 5], "label_probs": [0.125, 0.25, 0.625]}, "7": {"label": "REFUTE", "label_probs": [0.5, 0.25, 0.25]}}}"#;
    let got = records(text, RunFormat::Leaderboard);
    assert_eq!(got.len(), 2);
    let (a, b) = (&got[0], &got[1]);
    assert_eq!((a.line, b.line), (2, 2));
    assert_eq!(a.record.claim_id, claim("3"));
    assert_eq!(a.record.doc_id, doc("14717500"));
    assert_eq!(a.record.label, Some(Label::Support));
    assert_eq!(
        (a.record.p_contradict, a.record.p_nei, a.record.p_support),
        (p(0.125), p(0.25), p(0.625))
    );
    assert_eq!(a.record.sentences, Some(vec![2, 5]));
    assert_eq!((a.record.rank, b.record.rank), (Some(1), Some(2)));
    assert_eq!(a.record.confidence(), 0.625);
    assert_eq!(b.record.label, Some(Label::Contradict));
    assert_eq!(b.record.sentences, None);
    assert_eq!(b.record.confidence(), 0.5);

    let options = RunReadOptions {
        label_order: "SUPPORT,CONTRADICT,NEI".parse().unwrap(),
        ..RunReadOptions::default()
    };
    let other: Vec<RunRecord> = reader(text, RunFormat::Leaderboard, &options)
        .map(|r| r.unwrap().record)
        .collect();
    assert_eq!(
        (other[0].p_support, other[0].p_contradict, other[0].p_nei),
        (p(0.125), p(0.25), p(0.625))
    );

    let e = first_error(
        r#"{"id": 3, "evidence": {"14717500": {"label": "SUPPORT", "label_probs": [0.5, 0.5]}}}"#,
        RunFormat::Leaderboard,
    );
    assert_eq!(e.field.as_deref(), Some("evidence.14717500.label_probs"));
    assert!(
        e.message
            .contains("expected 3 probabilities in the order CONTRADICT,NEI,SUPPORT, got 2"),
        "{e}"
    );
    let e = first_error(
        r#"{"id": 3, "evidence": {"5": {"label": "SUPPORT", "label_probs": [0.5, 0.5, 1.5]}}}"#,
        RunFormat::Leaderboard,
    );
    assert_eq!(e.field.as_deref(), Some("evidence.5.label_probs"));
    let e = first_error(
        r#"{"id": 3, "evidence": {"5": {"label": "MAYBE"}}}"#,
        RunFormat::Leaderboard,
    );
    assert_eq!(e.field.as_deref(), Some("evidence.5.label"));
}

#[test]
fn verisci_confidence_is_the_predicted_labels_probability() {
    let text = r#"{"claim_id": 5, "labels": {"10": {"label": "NOT_ENOUGH_INFO", "confidence": 0.75}, "11": {"label": "SUPPORT", "confidence": 0.875}, "12": {"label": "CONTRADICT", "confidence": 1}}}"#;
    let got: Vec<RunRecord> = records(text, RunFormat::VeriSci)
        .into_iter()
        .map(|l| l.record)
        .collect();
    assert_eq!(got.len(), 3);
    assert_eq!(
        (got[0].label, got[0].p_nei, got[0].p_support),
        (Some(Label::Nei), p(0.75), None)
    );
    assert_eq!(got[0].confidence(), 0.25);
    assert_eq!((got[1].p_support, got[1].confidence()), (p(0.875), 0.875));
    assert_eq!((got[2].p_contradict, got[2].confidence()), (p(1.0), 1.0));
    let ranks: Vec<Option<u32>> = got.iter().map(|r| r.rank).collect();
    assert_eq!(ranks, vec![Some(1), Some(2), Some(3)]);
    let e = first_error(
        r#"{"claim_id": 5, "labels": {"10": {"label": "SUPPORT", "confidence": 2}}}"#,
        RunFormat::VeriSci,
    );
    assert_eq!(e.field.as_deref(), Some("labels.10.confidence"));
}

#[test]
fn trec_runs_carry_score_rank_and_tag() {
    let text = "1 Q0 MED-10 1 14.5 bm25\n1 Q0 MED-11 2 -3e2 bm25\n";
    let got = records(text, RunFormat::Trec);
    let r = &got[1].record;
    assert_eq!((r.claim_id.as_str(), r.doc_id.as_str()), ("1", "MED-11"));
    assert_eq!((r.rank, r.score, r.label), (Some(2), Some(-300.0), None));
    assert_eq!(r.system.as_deref(), Some("bm25"));
    assert_eq!(r.confidence(), -300.0);
    for (line, field) in [
        ("1 Q0 D 1 2.0", None),
        ("1 Q0 D x 2.0 t", Some("rank")),
        ("1 Q0 D 1 NaN t", Some("score")),
        ("1 Q0 D 1 inf t", Some("score")),
    ] {
        let e = first_error(line, RunFormat::Trec);
        assert_eq!(e.field.as_deref(), field, "{line}: {e}");
        assert_eq!(e.line, 1);
    }
}

#[test]
fn sentence_scores_give_max_score_and_sentences_above_half() {
    let text =
        r#"{"claim_id": 1, "evidence": {"10": [0.1, 0.9, 0.5, 0.51], "11": [], "12": [3e-06]}}"#;
    let got: Vec<RunRecord> = records(text, RunFormat::SentenceScores)
        .into_iter()
        .map(|l| l.record)
        .collect();
    assert_eq!(
        (got[0].score, got[0].sentences.clone(), got[0].rank),
        (Some(0.9), Some(vec![1, 3]), Some(1))
    );
    assert_eq!(
        (got[1].score, got[1].sentences.clone()),
        (None, Some(vec![]))
    );
    assert_eq!(
        (got[2].score, got[2].rank, got[2].label),
        (Some(3e-06), Some(3), None)
    );
    let e = first_error(
        r#"{"claim_id": 1, "evidence": {"10": [0.1, "x"]}}"#,
        RunFormat::SentenceScores,
    );
    assert_eq!(e.field.as_deref(), Some("evidence.10"));
}

#[test]
fn retrieved_claims_are_a_ranked_retrieval_run() {
    let text = r#"{"id": 1, "claim": "C.", "evidence": {}, "cited_doc_ids": [5], "doc_ids": ["9", "5", "7"]}"#;
    let got: Vec<RunRecord> = records(text, RunFormat::RetrievedClaims)
        .into_iter()
        .map(|l| l.record)
        .collect();
    let listed: Vec<(&str, Option<u32>, f64)> = got
        .iter()
        .map(|r| (r.doc_id.as_str(), r.rank, r.confidence()))
        .collect();
    assert_eq!(
        listed,
        vec![
            ("9", Some(1), 0.0),
            ("5", Some(2), 0.0),
            ("7", Some(3), 0.0)
        ]
    );
}

#[test]
fn a_pair_twice_in_one_system_names_both_lines() {
    let text = "{\"system\": \"a\", \"claim_id\": 1, \"doc_id\": 2}\n\
                {\"system\": \"b\", \"claim_id\": 1, \"doc_id\": 2}\n\
                {\"system\": \"a\", \"claim_id\": 1, \"doc_id\": 3}\n\
                {\"system\": \"a\", \"claim_id\": \"1\", \"doc_id\": \"2\"}\n";
    let got = read_all(text, RunFormat::Canonical);
    assert!(got[..3].iter().all(Result::is_ok));
    let e = got[3].as_ref().unwrap_err();
    assert_eq!((e.line, e.field.as_deref()), (4, Some("doc_id")));
    assert_eq!(
        e.message,
        "claim 1 / doc 2 of system \"a\" was already given on line 1"
    );
    let unchecked = RunReadOptions {
        check_duplicates: false,
        ..RunReadOptions::default()
    };
    assert!(reader(text, RunFormat::Canonical, &unchecked).all(|r| r.is_ok()));
    // Within one JSON line too.
    let e = first_error(
        r#"{"id": 1, "claim": "C", "doc_ids": ["9", "5", "9"]}"#,
        RunFormat::RetrievedClaims,
    );
    assert_eq!(e.message, "claim 1 / doc 9 was already given on line 1");
}

#[test]
fn formats_are_detected_from_the_first_line_where_unambiguous() {
    let cases = [
        (
            r#"{"claim_id": 1, "doc_id": 2, "p_support": 0.5}"#,
            Ok(RunFormat::Canonical),
        ),
        (r#"{"id": 1, "evidence": {}}"#, Ok(RunFormat::Leaderboard)),
        (
            r#"{"id": 1, "evidence": {"5": {"label": "NEI"}}}"#,
            Ok(RunFormat::Leaderboard),
        ),
        (r#"{"claim_id": 1, "labels": {}}"#, Ok(RunFormat::VeriSci)),
        ("1 Q0 D 1 2.5 tag", Ok(RunFormat::Trec)),
        (
            r#"{"claim_id": 1, "evidence": {"5": [0.5, 0.25]}}"#,
            Ok(RunFormat::SentenceScores),
        ),
        (
            r#"{"id": 1, "claim": "C", "doc_ids": ["1"]}"#,
            Ok(RunFormat::RetrievedClaims),
        ),
    ];
    for (line, want) in cases {
        assert_eq!(RunFormat::detect_line(line), want, "{line}");
    }
    for ambiguous in [
        r#"{"claim_id": 1, "evidence": {"5": [1, 2]}}"#,
        r#"{"claim_id": 1, "evidence": {"5": []}}"#,
        r#"{"claim_id": 1, "evidence": {}}"#,
        r#"{"id": 1, "claim": "C", "evidence": {}}"#,
        "1 0 10 SUPPORT",
        "{not json",
    ] {
        assert!(RunFormat::detect_line(ambiguous).is_err(), "{ambiguous}");
    }
    for format in RunFormat::ALL {
        assert_eq!(format.as_str().parse::<RunFormat>(), Ok(format));
    }
    assert!("csv".parse::<RunFormat>().is_err());
}

mod parquet_fixtures {
    use super::*;
    use ::parquet::basic::{Compression as PqCompression, GzipLevel};
    use ::parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int32Type, Int64Type};
    use ::parquet::file::properties::WriterProperties;
    use ::parquet::file::writer::SerializedFileWriter;
    use ::parquet::schema::parser::parse_message_type;
    use std::path::Path;
    use std::sync::Arc;

    /// One column of a fixture table: values, `None` for null.
    pub(super) enum Column {
        Text(Vec<Option<&'static str>>),
        Long(Vec<Option<i64>>),
        Int(Vec<Option<i32>>),
        Double(Vec<Option<f64>>),
    }

    fn split<T: Clone>(values: &[Option<T>]) -> (Vec<T>, Vec<i16>) {
        let present = values.iter().flatten().cloned().collect();
        let defs = values.iter().map(|v| i16::from(v.is_some())).collect();
        (present, defs)
    }

    /// Writes a one-row-group table with optional columns.
    pub(super) fn write_table(path: &Path, compression: PqCompression, columns: &[(&str, Column)]) {
        let fields: Vec<String> = columns
            .iter()
            .map(|(name, column)| match column {
                Column::Text(_) => format!("optional binary {name} (UTF8);"),
                Column::Long(_) => format!("optional int64 {name};"),
                Column::Int(_) => format!("optional int32 {name};"),
                Column::Double(_) => format!("optional double {name};"),
            })
            .collect();
        let schema = Arc::new(
            parse_message_type(&format!("message schema {{ {} }}", fields.join(" "))).unwrap(),
        );
        let props = Arc::new(
            WriterProperties::builder()
                .set_compression(compression)
                .build(),
        );
        let file = std::fs::File::create(path).unwrap();
        let mut writer = SerializedFileWriter::new(file, schema, props).unwrap();
        let mut group = writer.next_row_group().unwrap();
        for (_, column) in columns {
            let mut out = group.next_column().unwrap().unwrap();
            match column {
                Column::Text(v) => {
                    let (values, defs) = split(v);
                    let values: Vec<ByteArray> = values.into_iter().map(ByteArray::from).collect();
                    out.typed::<ByteArrayType>()
                        .write_batch(&values, Some(&defs), None)
                        .unwrap();
                }
                Column::Long(v) => {
                    let (values, defs) = split(v);
                    out.typed::<Int64Type>()
                        .write_batch(&values, Some(&defs), None)
                        .unwrap();
                }
                Column::Int(v) => {
                    let (values, defs) = split(v);
                    out.typed::<Int32Type>()
                        .write_batch(&values, Some(&defs), None)
                        .unwrap();
                }
                Column::Double(v) => {
                    let (values, defs) = split(v);
                    out.typed::<DoubleType>()
                        .write_batch(&values, Some(&defs), None)
                        .unwrap();
                }
            }
            out.close().unwrap();
        }
        group.close().unwrap();
        writer.close().unwrap();
    }

    /// The SciFact-Open table shape: two models, pandas-style float rank with NaN.
    pub(super) fn scifact_open_table(path: &Path, compression: PqCompression) {
        write_table(
            path,
            compression,
            &[
                (
                    "model",
                    Column::Text(vec![
                        Some("multivers_10"),
                        Some("multivers_10"),
                        Some("arsjoint"),
                        Some("arsjoint"),
                    ]),
                ),
                (
                    "claim_id",
                    Column::Long(vec![Some(1), Some(1), Some(1), Some(3)]),
                ),
                (
                    "doc_id",
                    Column::Long(vec![
                        Some(31715818),
                        Some(10),
                        Some(31715818),
                        Some(14717500),
                    ]),
                ),
                (
                    "predicted_label",
                    Column::Text(vec![Some("SUPPORT"), Some("NEI"), Some("CONTRADICT"), None]),
                ),
                (
                    "rank",
                    Column::Double(vec![Some(1.0), Some(2.0), Some(f64::NAN), None]),
                ),
                (
                    "p_support",
                    Column::Double(vec![Some(0.75), Some(0.125), None, Some(f64::NAN)]),
                ),
                (
                    "p_contradict",
                    Column::Double(vec![Some(0.125), Some(0.0625), None, None]),
                ),
                (
                    "__index_level_0__",
                    Column::Int(vec![Some(0), Some(1), Some(2), Some(3)]),
                ),
            ],
        );
    }

    #[test]
    fn reads_the_scifact_open_table_one_system_per_model() {
        let dir = tempfile::tempdir().unwrap();
        for (name, compression) in [
            ("snappy.parquet", PqCompression::SNAPPY),
            ("gzip.parquet", PqCompression::GZIP(GzipLevel::default())),
            ("plain.parquet", PqCompression::UNCOMPRESSED),
        ] {
            let path = dir.path().join(name);
            scifact_open_table(&path, compression);
            assert_eq!(
                RunFormat::detect_file(&path).unwrap(),
                RunFormat::SciFactOpenParquet
            );
            let got: Vec<Located<RunRecord>> = RunReader::open(
                &path,
                RunFormat::SciFactOpenParquet,
                &RunReadOptions::default(),
            )
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
            assert_eq!(got.len(), 4, "{name}");
            assert_eq!(
                got.iter().map(|l| l.line).collect::<Vec<_>>(),
                vec![1, 2, 3, 4]
            );
            let first = &got[0].record;
            assert_eq!(first.system.as_deref(), Some("multivers_10"));
            assert_eq!(
                (first.claim_id.as_str(), first.doc_id.as_str()),
                ("1", "31715818")
            );
            assert_eq!((first.label, first.rank), (Some(Label::Support), Some(1)));
            assert_eq!(
                (first.p_support, first.p_contradict, first.p_nei),
                (p(0.75), p(0.125), None)
            );
            assert_eq!(first.confidence(), 0.75);
            let third = &got[2].record;
            assert_eq!(third.system.as_deref(), Some("arsjoint"));
            assert_eq!(
                (third.rank, third.p_support, third.confidence()),
                (None, None, 1.0)
            );
            let fourth = &got[3].record;
            assert_eq!(
                (fourth.label, fourth.rank, fourth.p_support),
                (None, None, None)
            );
        }
    }

    #[test]
    fn gzip_compressed_tables_and_opened_inputs_are_spooled() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        scifact_open_table(&path, PqCompression::SNAPPY);
        let bytes = std::fs::read(&path).unwrap();
        let gz_path = dir.path().join("t.parquet.gz");
        let mut enc = GzEncoder::new(Vec::new(), Compression::fast());
        enc.write_all(&bytes).unwrap();
        std::fs::write(&gz_path, enc.finish().unwrap()).unwrap();
        assert_eq!(
            RunFormat::detect_file(&gz_path).unwrap(),
            RunFormat::SciFactOpenParquet
        );
        let want: Vec<RunRecord> = RunReader::open(
            &path,
            RunFormat::SciFactOpenParquet,
            &RunReadOptions::default(),
        )
        .unwrap()
        .map(|r| r.unwrap().record)
        .collect();
        let from_gz: Vec<RunRecord> = RunReader::open(
            &gz_path,
            RunFormat::SciFactOpenParquet,
            &RunReadOptions::default(),
        )
        .unwrap()
        .map(|r| r.unwrap().record)
        .collect();
        assert_eq!(from_gz, want);
        let input = decompressed(std::io::Cursor::new(bytes)).unwrap();
        let uploaded: Vec<RunRecord> = RunReader::from_input(
            input,
            "upload.parquet",
            RunFormat::SciFactOpenParquet,
            &RunReadOptions::default(),
        )
        .unwrap()
        .map(|r| r.unwrap().record)
        .collect();
        assert_eq!(uploaded, want);
    }

    #[test]
    fn bad_rows_and_tables_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.parquet");
        write_table(
            &path,
            PqCompression::SNAPPY,
            &[
                (
                    "model",
                    Column::Text(vec![
                        Some("m"),
                        Some("m"),
                        Some("m"),
                        Some("m"),
                        Some("m"),
                        Some("m"),
                    ]),
                ),
                (
                    "claim_id",
                    Column::Text(vec![
                        Some("1"),
                        Some("1"),
                        None,
                        Some("1"),
                        Some("1"),
                        Some("1"),
                    ]),
                ),
                (
                    "doc_id",
                    Column::Int(vec![Some(1), Some(2), Some(3), Some(4), Some(5), Some(1)]),
                ),
                (
                    "predicted_label",
                    Column::Text(vec![Some("NEI"), Some("MAYBE"), None, None, None, None]),
                ),
                (
                    "rank",
                    Column::Double(vec![None, None, None, Some(1.5), None, None]),
                ),
                (
                    "p_support",
                    Column::Double(vec![None, None, None, None, Some(1.3), None]),
                ),
            ],
        );
        let got: Vec<Result<Located<RunRecord>, ParseError>> = RunReader::open(
            &path,
            RunFormat::SciFactOpenParquet,
            &RunReadOptions::default(),
        )
        .unwrap()
        .collect();
        assert!(got[0].is_ok());
        let errors: Vec<(usize, Option<String>)> = got[1..]
            .iter()
            .map(|r| {
                let e = r.as_ref().unwrap_err();
                (e.line, e.field.clone())
            })
            .collect();
        let f = |s: &str| Some(s.to_owned());
        assert_eq!(
            errors,
            vec![
                (2, f("predicted_label")),
                (3, f("claim_id")),
                (4, f("rank")),
                (5, f("p_support")),
                (6, f("doc_id"))
            ]
        );
        let e = got[4].as_ref().unwrap_err().to_string();
        assert!(
            e.ends_with(
                "bad.parquet:5: field \"p_support\": 1.3 is not a probability (a number in [0, 1])"
            ),
            "{e}"
        );
        let dup = got[5].as_ref().unwrap_err();
        assert_eq!(
            dup.message,
            "claim 1 / doc 1 of system \"m\" was already given on row 1"
        );

        let no_doc = dir.path().join("nodoc.parquet");
        write_table(
            &no_doc,
            PqCompression::SNAPPY,
            &[("claim_id", Column::Long(vec![Some(1)]))],
        );
        let err = RunReader::open(
            &no_doc,
            RunFormat::SciFactOpenParquet,
            &RunReadOptions::default(),
        )
        .err()
        .unwrap();
        assert!(matches!(err, FormatError::Parquet { .. }), "{err}");
        assert!(err.to_string().contains("no column \"doc_id\""), "{err}");
        let not_parquet = dir.path().join("x.parquet");
        std::fs::write(&not_parquet, b"PAR1 but not really").unwrap();
        assert!(RunReader::open(
            &not_parquet,
            RunFormat::SciFactOpenParquet,
            &RunReadOptions::default()
        )
        .is_err());
    }
}

#[test]
fn limits_on_decompressed_size_line_length_and_sentences_name_the_line() {
    let line = |doc: u32, sentences: &str| {
        format!(
            "{{\"claim_id\": 1, \"doc_id\": {doc}, \"score\": 0.5, \"sentences\": {sentences}}}\n"
        )
    };
    let text = format!(
        "{}{}{}",
        line(1, "[0, 1]"),
        line(2, "[0, 1, 2]"),
        line(3, "[]")
    );
    let bounded = |options: RunReadOptions| -> Vec<Result<Located<RunRecord>, ParseError>> {
        let mut gz = GzEncoder::new(Vec::new(), Compression::default());
        gz.write_all(text.as_bytes()).unwrap();
        let input = decompressed(std::io::Cursor::new(gz.finish().unwrap())).unwrap();
        RunReader::from_input(input, "runs.jsonl.gz", RunFormat::Canonical, &options)
            .unwrap()
            .collect()
    };
    // Exactly the file's size passes; one byte less fails on the last line, naming the limit.
    let exact = RunReadOptions {
        max_decompressed_bytes: Some(text.len() as u64),
        ..RunReadOptions::default()
    };
    assert!(bounded(exact).iter().all(Result::is_ok));
    let short = RunReadOptions {
        max_decompressed_bytes: Some(text.len() as u64 - 1),
        ..RunReadOptions::default()
    };
    let read = bounded(short);
    assert_eq!(read.iter().filter(|r| r.is_ok()).count(), 2);
    let err = read.into_iter().find_map(Result::err).unwrap().to_string();
    assert_eq!(
        err,
        format!(
            "runs.jsonl.gz:3: read error: the file holds more than {} bytes (decompressed), the limit of this server",
            text.len() - 1
        )
    );
    let sentences = RunReadOptions {
        max_sentences: 2,
        ..RunReadOptions::default()
    };
    let read = bounded(sentences);
    assert!(read[0].is_ok() && read[2].is_ok());
    assert_eq!(
        read[1].as_ref().unwrap_err().to_string(),
        "runs.jsonl.gz:2: field \"sentences\": 3 predicted sentences; this server takes at most 2 per prediction"
    );
    let longest = line(2, "[0, 1, 2]").len() - 1;
    let lines = RunReadOptions {
        max_line_bytes: longest - 1,
        ..RunReadOptions::default()
    };
    let read = bounded(lines);
    assert!(read[0].is_ok());
    assert_eq!(
        read[1].as_ref().unwrap_err().to_string(),
        format!(
            "runs.jsonl.gz:2: the line is longer than {} bytes, the limit of this server",
            longest - 1
        )
    );
    let lines = RunReadOptions {
        max_line_bytes: longest,
        ..RunReadOptions::default()
    };
    assert!(bounded(lines).iter().all(Result::is_ok));
}

#[test]
fn sizes_read_as_people_write_them() {
    use crate::formats::size_text;
    assert_eq!(size_text(512), "512 bytes");
    assert_eq!(size_text(4096), "4 KiB");
    assert_eq!(size_text(1536), "1.5 KiB");
    assert_eq!(size_text(16 << 20), "16 MiB");
    assert_eq!(size_text(8 << 30), "8 GiB");
}

#[test]
fn a_pair_repeated_under_another_run_tag_is_a_duplicate_when_the_file_is_one_system() {
    // Found by the importers' fuzz test: the import names the system, so the tags do not count.
    let text = "10 Q0 1 1 14.5 bm25\n10 Q0 1 2 3.0 bm2\n";
    assert!(reader(text, RunFormat::Trec, &RunReadOptions::default()).all(|r| r.is_ok()));
    let one = RunReadOptions {
        one_system: true,
        ..RunReadOptions::default()
    };
    let err = reader(text, RunFormat::Trec, &one)
        .find_map(Result::err)
        .expect("a duplicate");
    assert_eq!(err.line, 2);
    assert!(
        err.to_string().contains("was already given on line 1"),
        "{err}"
    );
}

#[test]
fn the_forms_list_every_run_format_by_its_name_in_order() {
    let forms: Vec<&str> = crate::model::RUN_FORMATS.iter().map(|(n, _)| *n).collect();
    let formats: Vec<&str> = RunFormat::ALL.iter().map(|f| f.as_str()).collect();
    assert_eq!(forms, formats);
    for name in forms {
        assert_eq!(name.parse::<RunFormat>().unwrap().as_str(), name);
    }
}
