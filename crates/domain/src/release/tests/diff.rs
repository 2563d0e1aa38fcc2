//! A release read back from its archive for the diff is the release that was written.

use super::fixtures::{c, d, small_input};
use crate::label::Label;
use crate::model::release_diff::DiffBootstrap;
use crate::release::{
    diff, evaluate, read_run, DiffError, ReleaseContents, ReleaseFiles, ReleaseOptions,
};

#[test]
fn an_archive_reads_back_as_the_release_written() {
    let input = small_input();
    let files = ReleaseFiles::build(&input, &ReleaseOptions::default()).unwrap();
    let archive = files.to_tar_gz().unwrap();
    let release = ReleaseContents::from_archive(2, &archive).unwrap();
    assert_eq!(release.project(), "Demo project");
    assert_eq!(release.number(), 2);
    let claims: Vec<&str> = release.claims().iter().map(|c| c.as_str()).collect();
    assert_eq!(claims.len(), 4);

    // Against itself: nothing changed, every difference 0.
    let same = diff(
        &release,
        &release,
        DiffBootstrap {
            samples: 50,
            seed: 1,
        },
    )
    .unwrap();
    assert!(same.changed.is_empty() && same.added.is_empty() && same.withdrawn.is_empty());
    let names: Vec<&str> = same.systems.iter().map(|s| s.system.as_str()).collect();
    assert_eq!(names, ["a", "b/c"]);
    for s in &same.systems {
        let d = s.difference.unwrap();
        for x in [d.precision, d.recall, d.f1] {
            assert_eq!((x.value, x.low, x.high), (0.0, 0.0, 0.0), "{}", s.system);
        }
    }

    // The scores are those `claimpool eval` gives for the written claims.jsonl and run.
    let dir = tempfile::tempdir().unwrap();
    files.write_to_dir(dir.path(), false).unwrap();
    let gold = crate::release::read_gold(&dir.path().join("claims.jsonl")).unwrap();
    let run = read_run(
        &dir.path().join("runs/a.jsonl"),
        crate::formats::RunFormat::Canonical,
        &Default::default(),
        None,
    )
    .unwrap();
    let report = evaluate(&gold, &run, None, false).unwrap();
    let a = release.scores("a").unwrap().unwrap();
    assert_eq!(
        (a.precision, a.recall, a.f1),
        (report.precision, report.recall, report.f1)
    );

    // A later state: (1, 20) becomes SUPPORT, (1, 7) is withdrawn.
    let mut later = small_input();
    later.number = std::num::NonZeroU32::new(3).unwrap();
    later.final_labels.retain(|l| l.doc != d("7"));
    for l in &mut later.final_labels {
        if l.claim == c("1") && l.doc == d("20") {
            l.label = Label::Support;
            l.sentences = vec![vec![0]];
        }
    }
    later.runs[0].1.retain(|r| r.doc_id != d("7"));
    let archive = ReleaseFiles::build(&later, &ReleaseOptions::default())
        .unwrap()
        .to_tar_gz()
        .unwrap();
    let next = ReleaseContents::from_archive(3, &archive).unwrap();
    let changes = diff(
        &release,
        &next,
        DiffBootstrap {
            samples: 50,
            seed: 1,
        },
    )
    .unwrap();
    assert_eq!(changes.changed.len(), 1);
    assert_eq!(
        (changes.changed[0].old, changes.changed[0].new),
        (Label::Nei, Label::Support)
    );
    assert_eq!(changes.withdrawn.len(), 1);
    assert_eq!(changes.withdrawn[0].doc, d("7"));
    assert!(changes.added.is_empty());

    // The manifest must name the number asked for.
    let e = ReleaseContents::from_archive(5, &archive).unwrap_err();
    assert!(matches!(e, DiffError::Manifest { release: 5, .. }), "{e}");
    assert_eq!(e.to_string(), "release 5: MANIFEST.json: names release 3");
}
