//! Projects and their membership.

use super::audit::{json, AuditEvent};
use super::{now_ms, Constraint, Db, Field, OnConstraint, StoreError, StoreResult};
use domain::account::{ProjectRole, Role};
use domain::model::{ClaimRow, Member, Page, ProjectSummary};
use sqlx::Row;

/// A project name: 1 to 100 characters, no control characters.
pub fn check_name(name: &str) -> StoreResult<&str> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 100 || name.chars().any(char::is_control) {
        return Err(StoreError::invalid(
            None,
            format!("a project name has 1 to 100 printable characters (got {name:?})"),
        ));
    }
    Ok(name)
}

pub async fn create(
    db: &Db,
    name: &str,
    description: &str,
    actor_id: Option<i64>,
) -> StoreResult<i64> {
    let name = check_name(name)?;
    let mut tx = super::write_gate::begin(db).await?;
    let id = sqlx::query_scalar::<_, i64>(
        "INSERT INTO projects (name, description, created_at) VALUES ($1, $2, $3) RETURNING id",
    )
    .bind(name)
    .bind(description)
    .bind(now_ms())
    .fetch_one(&mut *tx)
    .await
    .on_unique(Constraint::ProjectName, || {
        format!("a project named {name:?} exists already")
    })?;
    // Whoever creates a project in the browser or through the API leads it.
    if let Some(actor) = actor_id {
        sqlx::query(
            "INSERT INTO project_members (project_id, user_id, active, added_at, role)
             SELECT $1, id, 1, $2, 'lead' FROM users WHERE id = $3 AND role IN ('lead', 'admin')",
        )
        .bind(id)
        .bind(now_ms())
        .bind(actor)
        .execute(&mut *tx)
        .await?;
    }
    AuditEvent {
        project_id: Some(id),
        actor_id,
        action: "create",
        entity: "project",
        entity_id: Some(id.to_string()),
        old_value: None,
        new_value: json(&serde_json::json!({ "name": name, "description": description })),
    }
    .record(&mut tx)
    .await?;
    tx.commit().await?;
    Ok(id)
}

/// The id of the project with this name.
pub async fn id_by_name(db: &Db, name: &str) -> StoreResult<i64> {
    sqlx::query_scalar("SELECT id FROM projects WHERE name = $1")
        .bind(name)
        .fetch_optional(db)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("project {name:?}")))
}

const SUMMARY_SQL: &str = "SELECT p.id, p.name, p.description,
    (SELECT COUNT(*) FROM documents d WHERE d.project_id = p.id) AS documents,
    (SELECT COUNT(*) FROM claims c WHERE c.project_id = p.id) AS claims,
    (SELECT COUNT(*) FROM systems s WHERE s.project_id = p.id AND s.ready = 1) AS systems,
    (SELECT COUNT(*) FROM predictions pr JOIN systems s ON s.id = pr.system_id WHERE s.project_id = p.id AND s.ready = 1) AS predictions,
    (SELECT COUNT(*) FROM pool_entries e WHERE e.project_id = p.id) AS pooled,
    (SELECT COUNT(*) FROM final_labels f WHERE f.project_id = p.id) AS final_labels
  FROM projects p";

fn summary_from_row(row: &sqlx::any::AnyRow) -> StoreResult<ProjectSummary> {
    Ok(ProjectSummary {
        id: row.try_get("id")?,
        name: row.try_get("name")?,
        description: row.try_get("description")?,
        documents: row.try_get("documents")?,
        claims: row.try_get("claims")?,
        systems: row.try_get("systems")?,
        predictions: row.try_get("predictions")?,
        pooled: row.try_get("pooled")?,
        final_labels: row.try_get("final_labels")?,
    })
}

/// Every project (for the command line and admins).
pub async fn list(db: &Db) -> StoreResult<Vec<ProjectSummary>> {
    sqlx::query(&format!("{SUMMARY_SQL} ORDER BY p.name"))
        .fetch_all(db)
        .await?
        .iter()
        .map(summary_from_row)
        .collect()
}

/// The projects `user_id` leads (an active lead membership).
pub async fn led_by(db: &Db, user_id: i64) -> StoreResult<Vec<ProjectSummary>> {
    sqlx::query(&format!(
        "{SUMMARY_SQL} WHERE p.id IN (SELECT project_id FROM project_members
                                     WHERE user_id = $1 AND role = 'lead' AND active = 1)
         ORDER BY p.name"
    ))
    .bind(user_id)
    .fetch_all(db)
    .await?
    .iter()
    .map(summary_from_row)
    .collect()
}

pub async fn summary(db: &Db, name: &str) -> StoreResult<ProjectSummary> {
    let row = sqlx::query(&format!("{SUMMARY_SQL} WHERE p.name = $1"))
        .bind(name)
        .fetch_optional(db)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("project {name:?}")))?;
    summary_from_row(&row)
}

/// The longest claim search, in characters: far above a claim's id or any phrase worth looking
/// for, and far below SQLite's bound on a `LIKE` pattern (50,000 bytes), which refused longer
/// ones with a server error.
pub const MAX_SEARCH_CHARS: usize = 1_000;

/// A page of a project's claims, optionally only those whose id or text contains `search` (at
/// most [`MAX_SEARCH_CHARS`] characters).
pub async fn claims_page(
    db: &Db,
    project_id: i64,
    search: &str,
    offset: i64,
    limit: i64,
) -> StoreResult<Page<ClaimRow>> {
    let chars = search.trim().chars().count();
    if chars > MAX_SEARCH_CHARS {
        return Err(StoreError::invalid(
            Field::Search,
            format!("at most {MAX_SEARCH_CHARS} characters; this one has {chars}"),
        ));
    }
    let pattern = format!(
        "%{}%",
        search
            .trim()
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_")
    );
    let filter =
        "c.project_id = $1 AND (c.claim_id LIKE $2 ESCAPE '\\' OR c.text LIKE $2 ESCAPE '\\')";
    let total: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM claims c WHERE {filter}"))
        .bind(project_id)
        .bind(&pattern)
        .fetch_one(db)
        .await?;
    let cited = super::dialect::json_array_length(super::db::engine(db), "c.cited_doc_ids");
    let rows = sqlx::query(&format!(
        "SELECT c.claim_id, c.text,
            COALESCE({cited}, 0) AS cited,
            (SELECT COUNT(*) FROM pool_entries e WHERE e.claim_id = c.id) AS pooled,
            (SELECT COUNT(*) FROM final_labels f WHERE f.claim_id = c.id AND f.label != 'NEI') AS evidence
         FROM claims c WHERE {filter}
         ORDER BY CAST(c.claim_id AS INTEGER), c.claim_id LIMIT $3 OFFSET $4"
    ))
    .bind(project_id)
    .bind(&pattern)
    .bind(limit)
    .bind(offset)
    .fetch_all(db)
    .await?;
    let items = rows
        .iter()
        .map(|row| {
            Ok(ClaimRow {
                claim_id: row.try_get("claim_id")?,
                text: row.try_get("text")?,
                cited: row.try_get("cited")?,
                pooled: row.try_get("pooled")?,
                evidence: row.try_get("evidence")?,
            })
        })
        .collect::<StoreResult<Vec<_>>>()?;
    Ok(Page {
        items,
        total,
        offset,
        limit,
    })
}

/// A project's id and name, with `user_id`'s active role in it (None: not a member), read in
/// one statement: the check every project page and server function runs.
#[derive(Clone, Debug)]
pub struct Membership {
    pub project_id: i64,
    pub project: String,
    pub role: Option<ProjectRole>,
}

/// [`Membership`] in the project named `name`.
pub async fn membership_by_name(db: &Db, name: &str, user_id: i64) -> StoreResult<Membership> {
    membership(db, ProjectKey::Name(name), user_id).await
}

/// [`Membership`] in the project with id `project_id`.
pub async fn membership_at(db: &Db, project_id: i64, user_id: i64) -> StoreResult<Membership> {
    membership(db, ProjectKey::Id(project_id), user_id).await
}

/// How a caller names a project.
#[derive(Clone, Copy)]
enum ProjectKey<'a> {
    Name(&'a str),
    Id(i64),
}

async fn membership(db: &Db, key: ProjectKey<'_>, user_id: i64) -> StoreResult<Membership> {
    let which = match key {
        ProjectKey::Name(_) => "p.name = $2",
        ProjectKey::Id(_) => "p.id = $2",
    };
    let sql = format!(
        "SELECT p.id, p.name, m.role FROM projects p
         LEFT JOIN project_members m ON m.project_id = p.id AND m.user_id = $1 AND m.active = 1
         WHERE {which}"
    );
    let query = sqlx::query_as::<_, (i64, String, Option<String>)>(&sql).bind(user_id);
    let query = match key {
        ProjectKey::Name(name) => query.bind(name),
        ProjectKey::Id(id) => query.bind(id),
    };
    let (project_id, project, role) = query.fetch_optional(db).await?.ok_or_else(|| {
        StoreError::NotFound(match key {
            ProjectKey::Name(name) => format!("project {name:?}"),
            ProjectKey::Id(id) => format!("project #{id}"),
        })
    })?;
    let role = role
        .map(|r| ProjectRole::parse(&r).map_err(StoreError::unreadable))
        .transpose()?;
    Ok(Membership {
        project_id,
        project,
        role,
    })
}

/// Adds a user to a project with `role` (or reactivates them, or changes their role), and hands
/// a new annotator waiting work. The user's account must fit the role: leads (and admins) lead,
/// annotators annotate.
pub async fn add_member(
    db: &Db,
    project_id: i64,
    user_id: i64,
    role: ProjectRole,
    actor_id: Option<i64>,
) -> StoreResult<()> {
    let mut tx = super::annotate::begin_write(db).await?;
    let (username, account): (String, String) =
        sqlx::query_as("SELECT username, role FROM users WHERE id = $1")
            .bind(user_id)
            .fetch_optional(&mut *tx)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("user #{user_id}")))?;
    let account = Role::parse(&account).map_err(StoreError::unreadable)?;
    if !role.fits(account) {
        return Err(StoreError::invalid(
            None,
            format!(
                "{username} is {} {account}: a project's {role}s must be {}",
                if account == Role::Lead { "a" } else { "an" },
                match role {
                    ProjectRole::Lead => "leads or admins",
                    ProjectRole::Annotator => "annotators",
                }
            ),
        ));
    }
    let old: Option<(String, crate::flag::Flag)> = sqlx::query_as(
        "SELECT role, active = 1 FROM project_members WHERE project_id = $1 AND user_id = $2",
    )
    .bind(project_id)
    .bind(user_id)
    .fetch_optional(&mut *tx)
    .await?;
    sqlx::query(
        "INSERT INTO project_members (project_id, user_id, active, added_at, role) VALUES ($1, $2, 1, $3, $4)
         ON CONFLICT (project_id, user_id) DO UPDATE SET active = 1, role = excluded.role",
    )
    .bind(project_id)
    .bind(user_id)
    .bind(now_ms())
    .bind(role.as_str())
    .execute(&mut *tx)
    .await?;
    AuditEvent {
        project_id: Some(project_id),
        actor_id,
        action: "add_member",
        entity: "user",
        entity_id: Some(user_id.to_string()),
        old_value: old
            .map(|(role, active)| serde_json::json!({ "role": role, "active": active.0 })),
        new_value: json(&serde_json::json!({ "user": username, "role": role.as_str() })),
    }
    .record(&mut tx)
    .await?;
    if role == ProjectRole::Annotator {
        super::annotate::assign_pending(&mut tx, project_id, actor_id).await?;
    }
    tx.commit().await?;
    Ok(())
}

/// The project's members (active or not), leads first, then by name. A lead membership of an
/// account that cannot lead (demoted since) is listed inactive: it leads nothing.
pub async fn members(db: &Db, project_id: i64) -> StoreResult<Vec<Member>> {
    let rows: Vec<(String, String, crate::flag::Flag)> = sqlx::query_as(
        "SELECT u.username, m.role,
                (m.active = 1 AND u.active = 1 AND (m.role != 'lead' OR u.role != 'annotator'))
         FROM project_members m
         JOIN users u ON u.id = m.user_id WHERE m.project_id = $1
         ORDER BY m.role = 'annotator', u.username",
    )
    .bind(project_id)
    .fetch_all(db)
    .await?;
    rows.into_iter()
        .map(|(username, role, active)| {
            Ok(Member {
                username,
                role: ProjectRole::parse(&role).map_err(StoreError::unreadable)?,
                active: active.0,
            })
        })
        .collect()
}

/// Ends `username`'s membership of the project: an annotator's open items go to the other
/// active annotators ([`super::annotate::set_active`]); a lead no longer leads it. The row stays
/// (inactive): judgments keep naming their annotator.
pub async fn remove_member(
    db: &Db,
    project_id: i64,
    username: &str,
    actor_id: Option<i64>,
) -> StoreResult<()> {
    let member: Option<(i64, String)> = sqlx::query_as(
        "SELECT u.id, m.role FROM project_members m JOIN users u ON u.id = m.user_id
         WHERE m.project_id = $1 AND u.username = $2 AND m.active = 1",
    )
    .bind(project_id)
    .bind(username)
    .fetch_optional(db)
    .await?;
    match member {
        None => Err(StoreError::NotFound(format!(
            "{username} is not a member of the project"
        ))),
        Some((_, role)) if role == "annotator" => {
            super::annotate::set_active(db, project_id, username, false, actor_id)
                .await
                .map(drop)
        }
        Some((user_id, _)) => remove_lead(db, project_id, user_id, actor_id).await,
    }
}

async fn remove_lead(
    db: &Db,
    project_id: i64,
    user_id: i64,
    actor_id: Option<i64>,
) -> StoreResult<()> {
    let mut tx = super::annotate::begin_write(db).await?;
    let changed = sqlx::query(
        "UPDATE project_members SET active = 0
         WHERE project_id = $1 AND user_id = $2 AND role = 'lead' AND active = 1",
    )
    .bind(project_id)
    .bind(user_id)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if changed == 0 {
        return Err(StoreError::NotFound(format!(
            "user #{user_id} is no lead of the project"
        )));
    }
    AuditEvent {
        project_id: Some(project_id),
        actor_id,
        action: "remove_member",
        entity: "user",
        entity_id: Some(user_id.to_string()),
        old_value: json(&serde_json::json!({ "role": "lead", "active": true })),
        new_value: None,
    }
    .record(&mut tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// The systems of a project with their prediction counts.
pub async fn systems(db: &Db, project_id: i64) -> StoreResult<Vec<domain::model::SystemRow>> {
    let rows: Vec<(String, String, String, String, Option<f64>, i64)> = sqlx::query_as(
        "SELECT s.name, s.role, s.scoring, s.description, s.negative_sampling_ratio,
                (SELECT COUNT(*) FROM predictions p WHERE p.system_id = s.id)
         FROM systems s WHERE s.project_id = $1 AND s.ready = 1 ORDER BY s.name",
    )
    .bind(project_id)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(
            |(name, role, scoring, description, negative_sampling_ratio, predictions)| {
                domain::model::SystemRow {
                    name,
                    role,
                    scoring,
                    description,
                    negative_sampling_ratio,
                    predictions,
                }
            },
        )
        .collect())
}

/// A claim and its pooled, cited and judged pairs.
pub async fn claim_detail(
    db: &Db,
    project_id: i64,
    claim_id: &str,
) -> StoreResult<domain::model::ClaimDetail> {
    let (key, text, cited): (i64, String, Option<String>) = sqlx::query_as(
        "SELECT id, text, cited_doc_ids FROM claims WHERE project_id = $1 AND claim_id = $2",
    )
    .bind(project_id)
    .bind(claim_id)
    .fetch_optional(db)
    .await?
    .ok_or_else(|| StoreError::NotFound(format!("claim {claim_id}")))?;
    let cited: Vec<String> = cited
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or_default();
    #[derive(sqlx::FromRow)]
    struct PairRow {
        doc_id: String,
        title: String,
        entry: Option<i64>,
        depth: Option<i64>,
        label: Option<String>,
        provenance: Option<String>,
        specificity: Option<String>,
        revised_claim: Option<String>,
    }
    let cited_clause = if cited.is_empty() {
        String::new()
    } else {
        format!(
            " OR d.doc_id IN ({})",
            super::dialect::params(3, cited.len())
        )
    };
    let sql = format!(
        "SELECT d.doc_id, d.title, e.id AS entry, e.entry_depth AS depth, f.label, f.provenance,
                j.specificity, j.revised_claim
         FROM documents d
         LEFT JOIN pool_entries e ON e.claim_id = $1 AND e.doc_id = d.id
         LEFT JOIN final_labels f ON f.claim_id = $1 AND f.doc_id = d.id
         LEFT JOIN judgments j ON j.id = f.judgment_id
         WHERE d.project_id = $2 AND (e.id IS NOT NULL OR f.label IS NOT NULL{cited_clause})"
    );
    let mut query = sqlx::query_as::<_, PairRow>(&sql)
        .bind(key)
        .bind(project_id);
    for doc in &cited {
        query = query.bind(doc.as_str());
    }
    let rows: Vec<PairRow> = query.fetch_all(db).await?;
    let ranks: Vec<(i64, String, i64)> = sqlx::query_as(
        "SELECT r.pool_entry_id, s.name, r.rank FROM pool_ranks r
         JOIN pool_entries e ON e.id = r.pool_entry_id JOIN systems s ON s.id = r.system_id
         WHERE e.claim_id = $1
         UNION ALL
         SELECT f.pool_entry_id, 'search', f.result_rank FROM search_finds f WHERE f.claim_id = $1
         ORDER BY 2",
    )
    .bind(key)
    .fetch_all(db)
    .await?;
    let model_labels: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT d.doc_id,
                a.name || CASE WHEN a.command IS NULL THEN '' ELSE ' (command)' END, l.label
         FROM model_labels l
         JOIN model_assessors a ON a.id = l.assessor_id
         JOIN documents d ON d.id = l.doc_id
         WHERE l.claim_id = $1 ORDER BY a.name",
    )
    .bind(key)
    .fetch_all(db)
    .await?;
    let mut pairs: Vec<domain::model::ClaimPair> = rows
        .into_iter()
        .map(|row| domain::model::ClaimPair {
            cited: cited.contains(&row.doc_id),
            entry_depth: row.depth.and_then(|d| u32::try_from(d).ok()),
            model_ranks: ranks
                .iter()
                .filter(|(e, _, _)| Some(*e) == row.entry)
                .map(|(_, s, r)| (s.clone(), u32::try_from(*r).unwrap_or(u32::MAX)))
                .collect(),
            model_labels: model_labels
                .iter()
                .filter(|(doc, _, _)| *doc == row.doc_id)
                .map(|(_, assessor, label)| (assessor.clone(), label.clone()))
                .collect(),
            doc_id: row.doc_id,
            title: row.title,
            final_label: row.label,
            provenance: row.provenance,
            specificity: row.specificity,
            revised_claim: row.revised_claim,
        })
        .collect();
    pairs.sort_by_key(|p| (p.entry_depth.unwrap_or(u32::MAX), p.doc_id.clone()));
    Ok(domain::model::ClaimDetail {
        claim_id: claim_id.to_owned(),
        text,
        pairs,
    })
}
