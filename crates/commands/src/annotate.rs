//! Annotation behind a project caller's proof: the annotator's queue and form, the lead's
//! annotation management and adjudication (the server functions' `work/...` and
//! `lead/annotation/...`). Who may do what is decided here, from the caller's role in the
//! project; the store checks only that an item is the caller's (a query on their id).

use crate::access::ProjectCaller;
use crate::error::{CommandError, CommandResult};
use crate::proof::Lead;
use domain::account::User;
use domain::annotation::{AnnotationDraft, AnnotatorId, SecondPassMode, SubmissionKey};
use domain::model::annotate::{
    AnnotationOverview, CommentView, ItemView, LastSubmission, OpenItemRow, QueueHead,
};
use store::annotate::{QueueTerms, Submitted, Target};
use store::Db;

/// The caller as the store records them.
fn annotator(caller: &ProjectCaller) -> AnnotatorId {
    AnnotatorId(caller.user().id)
}

/// What the caller's queue serves and shows: a project's lead gets no gold checks, and sees both
/// annotations and the discussion of every item (an annotator, only at adjudication).
fn queue_terms(caller: &ProjectCaller) -> QueueTerms {
    QueueTerms {
        serves_gold: !caller.is_lead(),
        shows_discussion: caller.is_lead(),
    }
}

/// `user` as a caller of something on pair `entry_id`, who must be able to act as `role` in
/// its project (404 for a pair that does not exist).
pub async fn caller_of_entry(
    db: &Db,
    user: User,
    entry_id: i64,
    role: domain::account::ProjectRole,
) -> CommandResult<ProjectCaller> {
    let project = store::annotate::project_of_entry(db, entry_id).await?;
    crate::access::project_access_at(db, user, project, role).await
}

/// The caller's queue head; no item before they confirmed the current guidelines.
pub async fn queue_head(db: &Db, caller: &ProjectCaller) -> CommandResult<QueueHead> {
    let mut head = store::annotate::queue_head(
        db,
        annotator(caller),
        caller.project_id(),
        queue_terms(caller),
    )
    .await?;
    if head.guidelines_to_confirm.is_some() {
        head.current = None;
        head.next = None;
    }
    Ok(head)
}

/// A pair of the caller's project, or not found.
pub async fn check_entry(db: &Db, caller: &ProjectCaller, entry_id: i64) -> CommandResult<()> {
    if store::annotate::project_of_entry(db, entry_id).await? != caller.project_id() {
        return Err(CommandError::NotFound(format!(
            "pair #{entry_id} in {}",
            caller.project()
        )));
    }
    Ok(())
}

/// Submits the caller's annotation of their open item `assignment_id`, once per `key` when
/// there is one (the browser's key for this submission, the same when it sends it again after
/// a reply it never got). None: the key had stored it already, and nothing was written.
pub async fn submit(
    db: &Db,
    caller: &ProjectCaller,
    assignment_id: i64,
    draft: &AnnotationDraft,
    seconds_spent: f64,
    key: Option<&str>,
) -> CommandResult<Option<LastSubmission>> {
    let key = key
        .map(SubmissionKey::parse)
        .transpose()
        .map_err(|e| CommandError::Invalid(format!("submission key: {e}")))?;
    let submitted = store::annotate::submit(
        db,
        annotator(caller),
        // A project's lead may adjudicate a pair neither of whose passes is theirs.
        Target::Assignment {
            id: assignment_id,
            adjudicates_any: caller.is_lead(),
        },
        draft,
        seconds_spent,
        key.as_ref(),
    )
    .await?;
    Ok(match submitted {
        Submitted::Stored(last) => Some(*last),
        Submitted::Repeated => None,
    })
}

/// A lead's final label of pair `entry_id` (of the caller's project: see [`check_entry`]);
/// 403 for a caller who does not lead the project: only a lead adjudicates a pair outside their
/// queue.
pub async fn adjudicate(
    db: &Db,
    caller: &ProjectCaller,
    entry_id: i64,
    draft: &AnnotationDraft,
    seconds_spent: f64,
) -> CommandResult<LastSubmission> {
    Lead::of(caller)?;
    match store::annotate::submit(
        db,
        annotator(caller),
        Target::LeadAdjudication { entry_id },
        draft,
        seconds_spent,
        None,
    )
    .await?
    {
        Submitted::Stored(last) => Ok(*last),
        // Only a submission with a key can be a repeat.
        Submitted::Repeated => Err(CommandError::Internal(
            "an adjudication without a key was taken for a repeat".into(),
        )),
    }
}

/// Undoes the caller's last submission in their project (within the window).
pub async fn undo_last(db: &Db, caller: &ProjectCaller) -> CommandResult<String> {
    Ok(store::annotate::undo_last(db, annotator(caller), caller.project_id()).await?)
}

/// Sends the caller's open item to the end of their queue.
pub async fn skip(db: &Db, caller: &ProjectCaller, assignment_id: i64) -> CommandResult<()> {
    Ok(store::annotate::skip(db, annotator(caller), assignment_id).await?)
}

/// Flags the caller's open item "needs attention" (a blank note clears the flag).
pub async fn flag(
    db: &Db,
    caller: &ProjectCaller,
    assignment_id: i64,
    note: &str,
) -> CommandResult<()> {
    Ok(store::annotate::flag(db, annotator(caller), assignment_id, note).await?)
}

/// Adds a comment to pair `entry_id`; returns the pair's comments. Allowed to the project's
/// leads and to annotators who judged the pair or hold its adjudication: never to someone who
/// could learn a label before giving theirs. To anyone else the pair is not there (404, as for
/// a pair that does not exist).
pub async fn add_comment(
    db: &Db,
    caller: &ProjectCaller,
    entry_id: i64,
    body: &str,
) -> CommandResult<Vec<CommentView>> {
    let body = store::annotate::check_comment(body)?;
    if !caller.is_lead() && !store::annotate::has_judged(db, annotator(caller), entry_id).await? {
        return Err(store::annotate::not_yours(&format!("pair #{entry_id}")).into());
    }
    Ok(store::annotate::add_comment(db, annotator(caller), entry_id, body).await?)
}

/// Annotation in the caller's project at a glance.
pub async fn overview(db: &Db, caller: &ProjectCaller) -> CommandResult<AnnotationOverview> {
    Ok(store::annotate::overview(db, caller.project_id()).await?)
}

/// Adds, reactivates or deactivates the annotator `username`; returns how many items moved.
pub async fn set_active(
    db: &Db,
    caller: &ProjectCaller,
    username: &str,
    active: bool,
) -> CommandResult<usize> {
    Ok(store::annotate::set_active(
        db,
        caller.project_id(),
        username,
        active,
        Some(caller.user().id),
    )
    .await?)
}

/// Every open item of the caller's project.
pub async fn open_items(db: &Db, caller: &ProjectCaller) -> CommandResult<Vec<OpenItemRow>> {
    Ok(store::annotate::open_items(db, caller.project_id()).await?)
}

/// Hands the open item `assignment_id` to the active annotator `to`.
pub async fn reassign_item(
    db: &Db,
    caller: &ProjectCaller,
    assignment_id: i64,
    to: &str,
) -> CommandResult<()> {
    Ok(store::annotate::reassign_item(
        db,
        caller.project_id(),
        assignment_id,
        to,
        Some(caller.user().id),
    )
    .await?)
}

/// Sets the project's second-pass mode.
pub async fn set_mode(db: &Db, caller: &ProjectCaller, mode: SecondPassMode) -> CommandResult<()> {
    Ok(store::annotate::set_mode(db, caller.project_id(), mode, Some(caller.user().id)).await?)
}

/// A pooled pair with all its annotations and discussion; 403 for a caller who does not lead
/// the project.
pub async fn item_for_lead(
    db: &Db,
    caller: &ProjectCaller,
    entry_id: i64,
) -> CommandResult<ItemView> {
    Lead::of(caller)?;
    Ok(store::annotate::item_for_lead(db, annotator(caller), entry_id).await?)
}
