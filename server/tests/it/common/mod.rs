//! Test harness: the real app on port 0 with a fresh database each.

#![allow(dead_code)]

use app::domain::account::{NewPassword, Role, Username};
use store::{self, Db};

pub use crate::support::postgres;
use std::net::SocketAddr;

pub struct TestApp {
    pub addr: SocketAddr,
    pub db: Db,
    pub dir: tempfile::TempDir,
    /// The database as `claimpool --db` takes it: the SQLite file, or the PostgreSQL URL.
    pub db_arg: String,
}

/// The message a client shows for an error response of a server function.
pub async fn error_message(res: reqwest::Response) -> String {
    let body = res.text().await.expect("body");
    let err: app::error::ApiError =
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("not an ApiError ({e}): {body}"));
    err.to_string()
}

/// A fresh, migrated database of the tested engine (a SQLite file in `dir`), and its `--db`.
pub async fn fresh_db(dir: &std::path::Path) -> (Db, String) {
    let arg = postgres::fresh_test_database(dir);
    (open_db(&arg).await, arg)
}

/// The database `arg` names as `claimpool --db` takes it (a SQLite file or a `postgres://`
/// URL), opened and migrated.
pub async fn open_db(arg: &str) -> Db {
    let target: store::DbTarget = arg.parse().expect("a database");
    store::db::connect(&target).await.expect("open db")
}

/// The operator (the shell's authority) as the lead of the project with row id `project`, for
/// tests that run a lead's command on a project they made in the store.
pub async fn operator_lead(db: &Db, project: i64) -> commands::Lead {
    let name: String = sqlx::query_scalar("SELECT name FROM projects WHERE id = $1")
        .bind(project)
        .fetch_one(db)
        .await
        .expect("the project");
    commands::Operator::at_the_shell()
        .lead(db, &name)
        .await
        .expect("the operator leads every project")
}

/// Records a release of the project's state, partial if need be, as the operator.
pub async fn release_partial(db: &Db, project: i64) -> commands::release::Created {
    let lead = operator_lead(db, project).await;
    commands::release::CreateRelease {
        partial: true,
        ..Default::default()
    }
    .run(db, &lead)
    .await
    .expect("a release")
}

/// How long a test waits for the answer to one request before the request fails.
const REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// What every test client starts from: redirects are not followed, and a request that gets no
/// answer in [`REQUEST_TIMEOUT`] fails with its URL instead of hanging the test run.
pub fn client_builder() -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(REQUEST_TIMEOUT)
}

/// The password every test user gets.
pub const PASSWORD: &str = "correct horse";

impl TestApp {
    pub async fn spawn() -> TestApp {
        TestApp::spawn_inner(server::http::ServeOptions::default(), false).await
    }

    /// The app with these pipeline settings and the job worker running.
    pub async fn spawn_with_jobs(pipeline: app::pipeline::job::PipelineSettings) -> TestApp {
        let options = server::http::ServeOptions {
            pipeline: std::sync::Arc::new(pipeline),
            ..Default::default()
        };
        TestApp::spawn_inner(options, true).await
    }

    /// The app with these serve options and the job worker running.
    pub async fn spawn_with_options_and_jobs(options: server::http::ServeOptions) -> TestApp {
        TestApp::spawn_inner(options, true).await
    }

    /// The app with these serve options (no job worker).
    pub async fn spawn_with(options: server::http::ServeOptions) -> TestApp {
        TestApp::spawn_inner(options, false).await
    }

    async fn spawn_inner(options: server::http::ServeOptions, jobs: bool) -> TestApp {
        // RUST_LOG=... shows the server's log (e.g. its faults, or sqlx::query=debug).
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_test_writer()
            .try_init();
        let dir = tempfile::tempdir().expect("temp dir");
        let (db, db_arg) = fresh_db(dir.path()).await;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        if jobs {
            // Runs until the test's runtime ends.
            let _worker = server::jobs::spawn(
                db.clone(),
                options.pipeline.clone(),
                options.lifecycle.job_lease,
            );
        }
        let router = server::http::router_with(db.clone(), addr, options)
            .await
            .expect("router");
        tokio::spawn(async move {
            axum::serve(
                listener,
                router.into_make_service_with_connect_info::<std::net::SocketAddr>(),
            )
            .await
        });
        TestApp {
            addr,
            db,
            dir,
            db_arg,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    pub async fn add_user(&self, name: &str, role: Role) -> i64 {
        let hash = app::auth::hash_password(&NewPassword::parse(PASSWORD).expect("password"))
            .expect("hash");
        store::users::create(
            &self.db,
            &Username::parse(name).expect("name"),
            role,
            &hash,
            None,
        )
        .await
        .expect("create user")
        .id
    }

    /// A project named `name` holding the demo sample's corpus and claims (with their citation
    /// evidence, or `bare`: without, so that every pooled pair waits for annotation) and one
    /// pooled system `s` predicting `pairs` (claim id, doc id, p_support); nothing pooled yet.
    pub async fn demo_project(
        &self,
        name: &str,
        bare: bool,
        pairs: &[(String, String, f64)],
    ) -> i64 {
        let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("demo");
        let project = store::projects::create(&self.db, name, "", None)
            .await
            .expect("project");
        commands::import::corpus(
            &self.db,
            &crate::common::operator_lead(&self.db, project).await,
            &demo.join("corpus.jsonl"),
            None,
        )
        .await
        .expect("corpus");
        let mut claims = demo.join("claims.jsonl");
        if bare {
            let text: String = demo_lines("claims.jsonl")
                .iter()
                .map(|c| {
                    format!(
                        "{}\n",
                        serde_json::json!({ "id": c["id"], "claim": c["claim"] })
                    )
                })
                .collect();
            claims = self.dir.path().join(format!("{name}-claims.jsonl"));
            std::fs::write(&claims, text).expect("claims");
        }
        commands::import::claims(
            &self.db,
            &crate::common::operator_lead(&self.db, project).await,
            &claims,
        )
        .await
        .expect("claims");
        let run: String = pairs
            .iter()
            .map(|(claim, doc, p)| {
                format!(
                    "{{\"claim_id\": {claim}, \"doc_id\": {doc}, \"p_support\": {p}, \"p_contradict\": 0.0}}\n"
                )
            })
            .collect();
        let path = self.dir.path().join(format!("{name}-run.jsonl"));
        std::fs::write(&path, run).expect("run");
        commands::import::run(
            &self.db,
            &crate::common::operator_lead(&self.db, project).await,
            commands::import::RunImport {
                path,
                format: Some(app::domain::formats::RunFormat::Canonical),
                options: Default::default(),
                system: commands::import::SystemSpec {
                    name: Some("s".into()),
                    role: app::domain::pool::Role::Pooled,
                    description: String::new(),
                    negative_sampling_ratio: None,
                },
                allow_missing_docs: false,
            },
        )
        .await
        .expect("run");
        project
    }

    /// A user with the lead role who leads the project named `project`.
    pub async fn add_lead(&self, name: &str, project: &str) -> i64 {
        let id = self.add_user(name, Role::Lead).await;
        let project = store::projects::id_by_name(&self.db, project)
            .await
            .expect("project");
        store::projects::add_member(
            &self.db,
            project,
            id,
            app::domain::account::ProjectRole::Lead,
            None,
        )
        .await
        .expect("make the user a lead of the project");
        id
    }

    /// A client with its own cookie jar that does not follow redirects.
    pub fn client(&self) -> reqwest::Client {
        client_builder().cookie_store(true).build().expect("client")
    }

    /// Calls the login server function.
    pub async fn login(
        &self,
        client: &reqwest::Client,
        name: &str,
        password: &str,
    ) -> reqwest::Response {
        client
            .post(self.url("/api/login"))
            .form(&[("username", name), ("password", password), ("next", "/")])
            .send()
            .await
            .expect("login request")
    }

    /// Posts `form` to the server function at `path` as `client`; the response.
    pub async fn post_form(
        &self,
        client: &reqwest::Client,
        path: &str,
        form: &[(&str, &str)],
    ) -> reqwest::Response {
        client
            .post(self.url(path))
            .form(form)
            .send()
            .await
            .expect("request")
    }

    /// Polls the job server function at `path` (form `project`, `id`) until `finished` says the
    /// job has ended (at most two minutes); the job as it ended.
    pub async fn wait_for_job<T: serde::de::DeserializeOwned>(
        &self,
        client: &reqwest::Client,
        path: &str,
        project: &str,
        id: i64,
        finished: impl Fn(&T) -> bool,
    ) -> T {
        let id_text = id.to_string();
        for _ in 0..1200 {
            let job: T = self
                .post_form(client, path, &[("project", project), ("id", &id_text)])
                .await
                .json()
                .await
                .expect("a job");
            if finished(&job) {
                return job;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        panic!("job {id} did not finish in two minutes");
    }

    /// A client logged in as `name`.
    pub async fn logged_in(&self, name: &str) -> reqwest::Client {
        let client = self.client();
        let res = self.login(&client, name, PASSWORD).await;
        assert!(
            res.status().is_success(),
            "login of {name} failed: {}",
            res.status()
        );
        client
    }
}

/// The lines of a file of the demo sample (`server/demo/`), parsed.
pub fn demo_lines(file: &str) -> Vec<serde_json::Value> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("demo")
        .join(file);
    std::fs::read_to_string(path)
        .expect("demo file")
        .lines()
        .map(|l| serde_json::from_str(l).expect("demo line"))
        .collect()
}
