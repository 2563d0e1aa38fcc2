//! Test and bench support: writes a report `Snapshot` (e.g. a generated SciFact-Open-size
//! project) into a fresh database as the application's own rows, so that reading it back with
//! `store::report` can be checked against the snapshot and timed. Users, judgments and
//! final labels are inserted directly with SQL (there is no annotation store to drive yet).

#![allow(dead_code)]

use app::domain::metrics::Prediction;
use app::domain::pool::Role;
use app::domain::report::{PairId, Provenance, Snapshot, Stage};
use std::collections::{BTreeSet, HashMap};
use store::{self, Db};

/// A stand-in password hash: the schema wants the argon2id prefix; nobody logs in with it.
pub const NO_LOGIN_HASH: &str = "$argon2id$v=19$m=19456,t=2,p=1$bm8tbG9naW4$bm8tbG9naW4";

/// Inserts a user who cannot log in; returns its id.
pub async fn user(db: &Db, name: &str, role: &str) -> i64 {
    sqlx::query_scalar::<_, i64>("INSERT INTO users (username, role, password_hash, created_at) VALUES ($1, $2, $3, 0) RETURNING id")
        .bind(name)
        .bind(role)
        .bind(NO_LOGIN_HASH)
        .fetch_one(db)
        .await
        .expect("insert user")
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::Pooled => "pooled",
        Role::EvaluationOnly => "evaluation-only",
    }
}

/// Writes `snapshot` as project `name`: documents, claims, systems and predictions, the pool
/// built at the snapshot's setting with `store::pool::build`, users, judgments (the annotations,
/// and one per prior final label) and final labels, each resting on the pair's last
/// annotation (or its own judgment), which carries the pair's specificity relation.
pub async fn write(db: &Db, name: &str, snapshot: &Snapshot) -> i64 {
    let project = store::projects::create(db, name, "", None)
        .await
        .expect("project");
    let mode = match snapshot.second_pass_mode {
        app::domain::report::SecondPassMode::Confirm => "confirm",
        app::domain::report::SecondPassMode::Blind => "blind",
    };
    sqlx::query("UPDATE projects SET second_pass_mode = $1 WHERE id = $2")
        .bind(mode)
        .bind(project)
        .execute(db)
        .await
        .unwrap();

    let mut tx = db.begin().await.unwrap();
    let mut doc_names: BTreeSet<&str> = BTreeSet::new();
    for s in &snapshot.systems {
        doc_names.extend(s.predictions.iter().map(|p| p.pair.doc.as_str()));
    }
    doc_names.extend(snapshot.final_labels.iter().map(|f| f.pair.doc.as_str()));
    doc_names.extend(snapshot.annotations.iter().map(|a| a.pair.doc.as_str()));
    // Each abstract as long as the annotations' rationales say.
    let mut lengths: HashMap<&str, u32> = HashMap::new();
    for record in &snapshot.annotations {
        let length = lengths.entry(record.pair.doc.as_str()).or_default();
        *length = (*length).max(record.rationale.abstract_sentences);
    }
    let mut docs: HashMap<&str, i64> = HashMap::new();
    for doc in doc_names {
        let length = lengths.get(doc).copied().unwrap_or(0) as usize;
        let sentences = serde_json::to_string(&vec!["A sentence."; length]).unwrap();
        let id = sqlx::query_scalar::<_, i64>(
            "INSERT INTO document_rows (project_id, doc_id, title, sentences) VALUES ($1, $2, '', $3) RETURNING id",
        )
        .bind(project)
        .bind(doc)
        .bind(sentences)
        .fetch_one(&mut *tx)
        .await
        .unwrap();
        docs.insert(doc, id);
    }
    let mut claims: HashMap<&str, i64> = HashMap::new();
    for claim in &snapshot.claims {
        let id = sqlx::query_scalar::<_, i64>(
            "INSERT INTO claim_rows (project_id, claim_id, text) VALUES ($1, $2, 'x') RETURNING id",
        )
        .bind(project)
        .bind(claim.as_str())
        .fetch_one(&mut *tx)
        .await
        .unwrap();
        claims.insert(claim.as_str(), id);
    }
    let key = |pair: &PairId| (claims[pair.claim.as_str()], docs[pair.doc.as_str()]);
    for system in &snapshot.systems {
        let id = sqlx::query_scalar::<_, i64>(
            "INSERT INTO systems (project_id, name, role, scoring, created_at) VALUES ($1, $2, $3, 'scores', 0) RETURNING id",
        )
        .bind(project)
        .bind(&system.name)
        .bind(role_name(system.role))
        .fetch_one(&mut *tx)
        .await
        .unwrap();
        for chunk in system.predictions.chunks(500) {
            let mut q = sqlx::QueryBuilder::<sqlx::Any>::new(
                "INSERT INTO predictions (system_id, claim_id, doc_id, label, p_support, p_contradict, confidence, retrieval_rank) ",
            );
            q.push_values(chunk, |mut b, p| {
                let (claim, doc) = key(&p.pair);
                let (label, p_support, p_contradict) = match p.prediction {
                    Prediction::Unlabelled => (None, None, None),
                    Prediction::Labelled { label } => (Some(label.as_str()), None, None),
                    Prediction::Scored {
                        label,
                        p_support,
                        p_contradict,
                    } => (
                        Some(label.as_str()),
                        Some(p_support.get()),
                        Some(p_contradict.get()),
                    ),
                };
                b.push_bind(id)
                    .push_bind(claim)
                    .push_bind(doc)
                    .push_bind(label)
                    .push_bind(p_support)
                    .push_bind(p_contradict)
                    .push_bind(p.confidence.get())
                    .push_bind(p.retrieval_rank.map(i64::from));
            });
            // sqlx's builder writes `?` for the Any driver: numbered here, for PostgreSQL.
            use sqlx::Execute;
            let mut query = q.build();
            let sql = numbered(query.sql());
            let args = query.take_arguments().unwrap().unwrap();
            sqlx::query_with(&sql, args)
                .execute(&mut *tx)
                .await
                .unwrap();
        }
    }
    tx.commit().await.unwrap();

    if let Some(pool) = snapshot.pool {
        store::pool::build(db, project, pool.strategy, pool.depth.get(), None)
            .await
            .expect("pool build");
    }

    let mut tx = db.begin().await.unwrap();
    let mut users: HashMap<&str, i64> = HashMap::new();
    for record in &snapshot.annotations {
        if !users.contains_key(record.annotator.as_str()) {
            let id = sqlx::query_scalar::<_, i64>(
                "INSERT INTO users (username, role, password_hash, created_at) VALUES ($1, 'annotator', $2, 0) RETURNING id",
            )
            .bind(&record.annotator)
            .bind(NO_LOGIN_HASH)
            .fetch_one(&mut *tx)
            .await
            .unwrap();
            users.insert(record.annotator.as_str(), id);
        }
    }
    // Each pair's last annotation (by time, then order): the judgment its final label rests on.
    let mut last: HashMap<&PairId, usize> = HashMap::new();
    for (i, record) in snapshot.annotations.iter().enumerate() {
        let entry = last.entry(&record.pair).or_insert(i);
        if record.at_ms >= snapshot.annotations[*entry].at_ms {
            *entry = i;
        }
    }
    let finals: HashMap<&PairId, &app::domain::report::FinalLabel> =
        snapshot.final_labels.iter().map(|f| (&f.pair, f)).collect();
    let relations: HashMap<&PairId, &str> = snapshot
        .specificity
        .iter()
        .map(|n| (&n.pair, n.relation.as_str()))
        .collect();
    let mut judgment_of: HashMap<&PairId, i64> = HashMap::new();
    for (i, record) in snapshot.annotations.iter().enumerate() {
        let (claim, doc) = key(&record.pair);
        let deciding = last.get(&record.pair) == Some(&i)
            && finals
                .get(&record.pair)
                .is_some_and(|f| f.provenance == Provenance::Pooling);
        let stage = match record.stage {
            Stage::First => "first",
            Stage::Second => "second",
            Stage::Adjudication => "adjudication",
        };
        let id = sqlx::query_scalar::<_, i64>(
            "INSERT INTO judgment_rows (project_id, claim_id, doc_id, annotator_id, stage, label, specificity, seconds_spent, provenance, created_at, rationale)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pooling', $9, $10) RETURNING id",
        )
        .bind(project)
        .bind(claim)
        .bind(doc)
        .bind(users[record.annotator.as_str()])
        .bind(stage)
        .bind(record.label.as_str())
        .bind(if deciding { relations.get(&record.pair).copied() } else { None })
        .bind(record.seconds.map(|s| s.get()))
        .bind(record.at_ms)
        .bind(if record.rationale.sentences.is_empty() {
            "[]".to_owned()
        } else {
            serde_json::to_string(&[&record.rationale.sentences]).unwrap()
        })
        .fetch_one(&mut *tx)
        .await
        .unwrap();
        if deciding {
            judgment_of.insert(&record.pair, id);
        }
    }
    for f in &snapshot.final_labels {
        let (claim, doc) = key(&f.pair);
        let judgment = match judgment_of.get(&f.pair) {
            Some(&id) => id,
            None => sqlx::query_scalar::<_, i64>(
                "INSERT INTO judgment_rows (project_id, claim_id, doc_id, stage, label, specificity, provenance, created_at)
                 VALUES ($1, $2, $3, 'final', $4, $5, $6, 0) RETURNING id",
            )
            .bind(project)
            .bind(claim)
            .bind(doc)
            .bind(f.label.as_str())
            .bind(relations.get(&f.pair).copied())
            .bind(f.provenance.as_str())
            .fetch_one(&mut *tx)
            .await
            .unwrap(),
        };
        sqlx::query(
            "INSERT INTO final_label_rows (project_id, claim_id, doc_id, judgment_id, label, provenance, decided_at)
             VALUES ($1, $2, $3, $4, $5, $6, 0)",
        )
        .bind(project)
        .bind(claim)
        .bind(doc)
        .bind(judgment)
        .bind(f.label.as_str())
        .bind(f.provenance.as_str())
        .execute(&mut *tx)
        .await
        .unwrap();
    }
    tx.commit().await.unwrap();
    project
}

/// `sql` with its `?` placeholders numbered (`$1`, `$2`, …), which both engines read.
fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + sql.len() / 4);
    let mut n = 0;
    for c in sql.chars() {
        if c == '?' {
            n += 1;
            out.push_str(&format!("${n}"));
        } else {
            out.push(c);
        }
    }
    out
}
