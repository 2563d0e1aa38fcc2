//! The caller's own judgments in a project (their history page, `work/history`): filtered,
//! paged, newest first, with the submission they may still undo. Only their own rows: nobody
//! else's label is read.

use crate::access::ProjectCaller;
use crate::error::{CommandError, CommandResult};
use domain::annotation::{AnnotatorId, Stage};
use domain::label::Label;
use domain::model::history::{page_count, HistoryFilter, HistoryPage, MAX_FILTER_CHARS};
use store::annotate::OwnHistoryQuery;
use store::Db;

/// What `filter` asks for, checked: a label, a stage an annotator judges at, a short text.
pub fn parse_filter(filter: &HistoryFilter) -> CommandResult<OwnHistoryQuery> {
    let chosen = |value: &Option<String>| {
        value
            .as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty() && *v != "any")
            .map(str::to_owned)
    };
    let label = chosen(&filter.label)
        .map(|l| {
            Label::parse(&l).map_err(|_| {
                CommandError::Invalid(format!(
                    "label: choose SUPPORT, CONTRADICT or NEI, not {l:?}"
                ))
            })
        })
        .transpose()?;
    let stage = chosen(&filter.stage)
        .map(|s| match Stage::parse(&s) {
            Ok(stage @ (Stage::First | Stage::Second | Stage::Adjudication)) => Ok(stage),
            _ => Err(CommandError::Invalid(format!(
                "stage: choose the first pass, the second pass or adjudication, not {s:?}"
            ))),
        })
        .transpose()?;
    let text = chosen(&filter.text);
    if let Some(t) = &text {
        let chars = t.chars().count();
        if chars > MAX_FILTER_CHARS {
            return Err(CommandError::Invalid(format!(
                "text: at most {MAX_FILTER_CHARS} characters; this one has {chars}"
            )));
        }
    }
    Ok(OwnHistoryQuery {
        label,
        stage,
        text,
        with_undone: filter.with_undone,
    })
}

/// Page `page` (0-based) of the caller's judgments in their project that `filter` lets through.
pub async fn own_history(
    db: &Db,
    caller: &ProjectCaller,
    filter: &HistoryFilter,
    page: usize,
) -> CommandResult<HistoryPage> {
    let query = parse_filter(filter)?;
    let me = AnnotatorId(caller.user().id);
    let (rows, total) =
        store::annotate::own_history(db, me, caller.project_id(), &query, page).await?;
    let last = store::annotate::last_submission(db, me, caller.project_id()).await?;
    Ok(HistoryPage {
        project: caller.project().to_owned(),
        rows,
        total,
        page,
        pages: page_count(total),
        last,
        server_ms: store::now_ms(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(label: &str, stage: &str, text: &str) -> HistoryFilter {
        HistoryFilter {
            label: Some(label.to_owned()),
            stage: Some(stage.to_owned()),
            text: Some(text.to_owned()),
            with_undone: false,
        }
    }

    #[test]
    fn a_filter_is_checked_and_any_means_none() {
        let q = parse_filter(&filter("NEI", "second", " heart ")).unwrap();
        assert_eq!(q.label, Some(Label::Nei));
        assert_eq!(q.stage, Some(Stage::Second));
        assert_eq!(q.text.as_deref(), Some("heart"));
        let q = parse_filter(&filter("any", "", "")).unwrap();
        assert!(q.label.is_none() && q.stage.is_none() && q.text.is_none());
        for bad in [
            filter("maybe", "", ""),
            filter("", "final", ""),
            filter("", "", &"x".repeat(201)),
        ] {
            let e = parse_filter(&bad).unwrap_err().to_string();
            assert!(e.contains("choose") || e.contains("at most"), "{e}");
        }
    }
}
