//! `claimpool gold`: a project's gold checks and qualification (issue 16) — settings, gold
//! items, admitting a candidate by hand, and every annotator's figures — through the command
//! layer as the shell's operator (audited with no user).

use app::model::gold::{GoldFigures, GoldOverview};
use clap::Subcommand;
use commands::gold::{self, AddGold, SetGold};
use commands::Operator;

#[derive(Subcommand)]
pub enum GoldCommand {
    /// Set one gold check among every N items an annotator works, and the qualification new
    /// annotators pass before real items
    Settings {
        #[arg(long)]
        project: String,
        /// One gold check among every N items (2 to 1000; "off" for none)
        #[arg(long, default_value = "off")]
        every: String,
        /// Qualification: training items, each followed by the reference annotation
        #[arg(long, default_value = "0")]
        training: String,
        /// Qualification: graded items (0: no qualification)
        #[arg(long, default_value = "0")]
        graded: String,
        /// The share of graded items to get right ("0.8" or "80%")
        #[arg(long, default_value = "0.8")]
        pass: String,
    },
    /// Add decided pairs as gold items: the claims' citation evidence ("citation"), or a
    /// sample of the pool's final labels, for test–retest ("final")
    Add {
        #[arg(long)]
        project: String,
        #[arg(long, value_name = "citation|final")]
        from: String,
        /// How many (default: every pair not yet gold)
        #[arg(long, default_value = "all")]
        count: String,
        /// Seed of the draw
        #[arg(long, default_value = "0")]
        seed: String,
    },
    /// Send each disagreement to a fresh annotator before adjudication (on), or straight to
    /// adjudication (off, the default)
    Reannotation {
        #[arg(long)]
        project: String,
        #[arg(value_name = "on|off")]
        setting: String,
    },
    /// Admit a qualification candidate by hand, whatever their score
    Admit {
        #[arg(long)]
        project: String,
        #[arg(long)]
        user: String,
    },
    /// Every annotator's accuracy on gold, label confusion, rationale F1 and drift, and the
    /// qualification's candidates
    Report {
        #[arg(long)]
        project: String,
        #[arg(long)]
        json: bool,
    },
}

/// A line on standard output, through the CLI's one writer (quiet when the reader has gone).
fn print(text: &str) -> anyhow::Result<()> {
    crate::release_cmd::say(text)
}

/// A command-layer error with its field named as the option that gave it.
fn option_error(e: impl Into<app::error::ApiError>) -> anyhow::Error {
    let e: app::error::ApiError = e.into();
    anyhow::anyhow!(e
        .to_string()
        .replacen("gold_every: ", "--every: ", 1)
        .replacen("qualification_training: ", "--training: ", 1)
        .replacen("qualification_graded: ", "--graded: ", 1)
        .replacen("qualification_pass: ", "--pass: ", 1)
        .replacen("source: ", "--from: ", 1)
        .replacen("count: ", "--count: ", 1)
        .replacen("seed: ", "--seed: ", 1))
}

fn percent(share: Option<f64>) -> String {
    share.map_or_else(|| "–".to_owned(), |s| format!("{:.1} %", s * 100.0))
}

fn figures(f: &GoldFigures) -> String {
    format!(
        "{}\t{}\t{}\t{}",
        f.answered,
        f.correct,
        percent(f.accuracy),
        f.rationale
            .f1
            .map_or_else(|| "–".to_owned(), |v| format!("{v:.3}"))
    )
}

fn text(o: &GoldOverview) -> anyhow::Result<()> {
    print(&format!(
        "gold checks: {}; qualification: {}",
        o.every
            .map_or_else(|| "off".to_owned(), |n| format!("one in every {n} items")),
        if o.graded == 0 {
            "off".to_owned()
        } else {
            format!(
                "{} training + {} graded, pass {:.0} %",
                o.training,
                o.graded,
                o.pass * 100.0
            )
        }
    ))?;
    print(&format!(
        "re-annotation of disagreements: {}",
        if o.reannotate { "on" } else { "off" }
    ))?;
    print(&format!(
        "gold items: {} citation, {} final ({} and {} more available)",
        o.items_citation, o.items_final, o.available_citation, o.available_final
    ))?;
    print("annotator\tchecks\tcorrect\taccuracy\trationale_f1\tgraded\tcorrect\taccuracy\trationale_f1")?;
    for a in &o.annotators {
        print(&format!(
            "{}\t{}\t{}",
            a.username,
            figures(&a.checks),
            figures(&a.graded)
        ))?;
    }
    if !o.candidates.is_empty() {
        print("candidate\ttraining\tgraded\tcorrect\tstanding")?;
        for c in &o.candidates {
            print(&format!(
                "{}\t{}\t{}\t{}\t{}{}",
                c.username,
                c.training_done,
                c.graded_done,
                c.correct,
                c.standing,
                c.admitted_by
                    .as_ref()
                    .map(|by| format!(" (by {by})"))
                    .unwrap_or_default()
            ))?;
        }
    }
    Ok(())
}

pub async fn run(db: &commands::Db, command: GoldCommand) -> anyhow::Result<()> {
    match command {
        GoldCommand::Settings {
            project,
            every,
            training,
            graded,
            pass,
        } => {
            let set =
                SetGold::parse_form(&every, &training, &graded, &pass).map_err(option_error)?;
            let lead = Operator::at_the_shell().lead(db, &project).await?;
            set.run(db, &lead).await?;
            text(&gold::overview(db, &lead).await?)
        }
        GoldCommand::Add {
            project,
            from,
            count,
            seed,
        } => {
            let add = AddGold::parse(&from, &count, &seed).map_err(option_error)?;
            let lead = Operator::at_the_shell().lead(db, &project).await?;
            let added = add.run(db, &lead).await?;
            print(&format!(
                "added {added} gold items from {}",
                add.source.as_str()
            ))
        }
        GoldCommand::Reannotation { project, setting } => {
            let lead = Operator::at_the_shell().lead(db, &project).await?;
            gold::set_reannotation(db, &lead, &setting)
                .await
                .map_err(|e| anyhow::anyhow!(e.to_string().replacen("reannotate: ", "", 1)))?;
            print(&format!("re-annotation in {project}: {}", setting.trim()))
        }
        GoldCommand::Admit { project, user } => {
            let lead = Operator::at_the_shell().lead(db, &project).await?;
            gold::admit(db, &lead, &user).await?;
            print(&format!("admitted {user} to {project}"))
        }
        GoldCommand::Report { project, json } => {
            let lead = Operator::at_the_shell().lead(db, &project).await?;
            let overview = gold::overview(db, &lead).await?;
            if json {
                return print(&serde_json::to_string_pretty(&overview)?);
            }
            text(&overview)
        }
    }
}
