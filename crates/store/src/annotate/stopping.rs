//! The live `cal` order's stopping samples: drawn, when a lead asks, from the order's
//! candidates unjudged at that moment ([`domain::judging::StopSample::draw`]), stored with the
//! test's `K` and `N` (`cal_stop_samples`, `cal_stop_pairs`), served before the order's
//! proposals ([`super::cal::CalLive::set_sample`]: every server reads the latest sample at each
//! request, so several servers serve the same one) and tested once all judged.

use super::super::audit::AuditEvent;
use super::super::{now_ms, Db, StoreError, StoreResult};
use super::begin_write;
use super::judging::{settings, with_cal};
use crate::values::ValuesInsert;
use domain::field::Field;
use domain::judging::{JudgingOrder, JudgingSettings, RecallTarget, StopSample, StopStatus};
use domain::model::annotate::CalStopView;
use domain::model::survey::Stopping;
use domain::pool::Pair;
use sqlx::AnyConnection;

type RowPair = Pair<i64, i64>;

/// A stopping sample drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct DrawnStopSample {
    pub id: i64,
    /// Pairs drawn.
    pub size: u64,
    /// The test's `K` and `N`: evidence among the candidates judged, candidates unjudged.
    pub found: u64,
    pub unjudged: u64,
}

/// The pairs of stopping sample `id`, in draw order (none for id 0).
pub(super) async fn sample_pairs(conn: &mut AnyConnection, id: i64) -> StoreResult<Vec<RowPair>> {
    if id == 0 {
        return Ok(Vec::new());
    }
    let rows: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT claim_id, doc_id FROM cal_stop_pairs WHERE sample_id = $1 ORDER BY position",
    )
    .bind(id)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows.into_iter().map(|(c, d)| Pair::new(c, d)).collect())
}

/// Draws a stopping sample of `size` pairs (None: as many as the test needs) from the project's
/// `cal` candidates unjudged now, for `target`, deterministic for `seed`; it is served before
/// the order's next proposals. `Ok(None)` when no sample is needed (even were every unjudged
/// candidate evidence, recall would reach the target). Refused unless the order is `cal`.
pub async fn draw_stop_sample(
    db: &Db,
    project_id: i64,
    actor: Option<i64>,
    target: RecallTarget,
    size: Option<u64>,
    seed: u64,
) -> StoreResult<Option<DrawnStopSample>> {
    let mut tx = begin_write(db).await?;
    let settings = settings(&mut tx, project_id).await?;
    if settings.order != JudgingOrder::Cal {
        return Err(StoreError::invalid(
            Field::Order,
            format!(
                "a stopping sample is drawn from cal's candidates; the order is {}",
                settings.order
            ),
        ));
    }
    let (found, unjudged) = with_cal(&mut tx, db, project_id, &settings, |cal| {
        let (found, unjudged) = cal.order.unjudged();
        let rows: Vec<RowPair> = unjudged.iter().filter_map(|p| cal.row_pair(p)).collect();
        (found, rows)
    })
    .await?
    .ok_or_else(|| StoreError::Fault("the cal order was not built".into()))?;
    let population = unjudged.len() as u64;
    let sample = StopSample::draw(target, found, unjudged, size, seed)
        .map_err(|e| StoreError::invalid(Field::SampleSize, e.to_string()))?;
    let Some(sample) = sample else {
        return Ok(None);
    };
    let size = sample.pairs.len() as u64;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO cal_stop_samples (project_id, target_recall, alpha, found, unjudged, size, seed, drawn_by, drawn_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id",
    )
    .bind(project_id)
    .bind(target.recall())
    .bind(target.alpha())
    .bind(i64::try_from(found).unwrap_or(i64::MAX))
    .bind(i64::try_from(population).unwrap_or(i64::MAX))
    .bind(i64::try_from(size).unwrap_or(i64::MAX))
    .bind(seed.cast_signed())
    .bind(actor)
    .bind(now_ms())
    .fetch_one(&mut *tx)
    .await?;
    let engine = crate::db::engine_of(&tx);
    for (chunk_index, chunk) in sample.pairs.chunks(500).enumerate() {
        let rows = ValuesInsert::new(
            engine,
            "INSERT INTO cal_stop_pairs (sample_id, position, claim_id, doc_id) ",
            chunk.iter().enumerate(),
            |b, (i, pair)| {
                let position = i64::try_from(chunk_index * 500 + i).unwrap_or(i64::MAX);
                b.bind(id).bind(position).bind(pair.claim).bind(pair.doc);
            },
        );
        if let Some((sql, args)) = rows.finish()? {
            sqlx::query_with(&sql, args).execute(&mut *tx).await?;
        }
    }
    AuditEvent {
        project_id: Some(project_id),
        actor_id: actor,
        action: "cal_stop_sample",
        entity: "cal_stop_sample",
        entity_id: Some(id.to_string()),
        old_value: None,
        new_value: Some(serde_json::json!({
            "target_recall": target.recall(),
            "alpha": target.alpha(),
            "found": found,
            "unjudged": population,
            "size": size,
            "seed": seed,
        })),
    }
    .record(&mut tx)
    .await?;
    tx.commit().await?;
    Ok(Some(DrawnStopSample {
        id,
        size,
        found,
        unjudged: population,
    }))
}

/// The latest stopping sample and its test, while the order is `cal` (None otherwise, or
/// before any sample).
pub(super) async fn stop_view(
    conn: &mut AnyConnection,
    db: &Db,
    project_id: i64,
    settings: &JudgingSettings,
) -> StoreResult<Option<CalStopView>> {
    #[allow(clippy::type_complexity)]
    let row: Option<(i64, f64, f64, i64, i64, i64)> = sqlx::query_as(
        "SELECT id, target_recall, alpha, found, unjudged, drawn_at FROM cal_stop_samples
         WHERE project_id = $1 ORDER BY id DESC LIMIT 1",
    )
    .bind(project_id)
    .fetch_optional(&mut *conn)
    .await?;
    let Some((id, recall, alpha, found, unjudged, drawn_at)) = row else {
        return Ok(None);
    };
    let corrupt = |e: String| StoreError::Corrupt(format!("stopping sample {id}: {e}"));
    let target = RecallTarget::new(recall, alpha).map_err(|e| corrupt(e.to_string()))?;
    let pairs = sample_pairs(conn, id).await?;
    let found = u64::try_from(found).map_err(|e| corrupt(e.to_string()))?;
    let unjudged = u64::try_from(unjudged).map_err(|e| corrupt(e.to_string()))?;
    let status = with_cal(conn, db, project_id, settings, |cal| {
        // The candidates were made again since (new retrievals): the sample no longer tests
        // them, and is not shown.
        let keyed: Vec<_> = pairs.iter().filter_map(|p| cal.key(p)).collect();
        if keyed.len() != pairs.len() {
            return None;
        }
        let sample = StopSample {
            target,
            found,
            unjudged,
            pairs: keyed,
        };
        let (now_found, now_unjudged) = cal.order.unjudged();
        Some(
            sample
                .status(|p| cal.order.label(p), now_found, now_unjudged.len() as u64)
                .map_err(|e| corrupt(e.to_string())),
        )
    })
    .await?;
    let Some(Some(status)) = status else {
        return Ok(None);
    };
    let size = pairs.len() as u64;
    let (judged, stopping) = match status? {
        StopStatus::Waiting { judged, .. } => (judged, Stopping::Waiting),
        StopStatus::Tested {
            sample,
            decision,
            next_draws,
        } => (
            size,
            Stopping::Tested {
                target_recall: target.recall(),
                alpha: target.alpha(),
                sample: sample.into(),
                decision: decision.into(),
                draws_to_stop: next_draws,
            },
        ),
    };
    Ok(Some(CalStopView {
        target_recall: target.recall(),
        confidence: 1.0 - target.alpha(),
        size,
        judged,
        unjudged,
        found,
        drawn_at,
        stopping,
    }))
}
