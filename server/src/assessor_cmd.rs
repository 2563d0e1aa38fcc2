//! `claimpool assessor`: register a system's predictions on the pool as a model assessor, and
//! list a project's model assessors (issue 16), through the command layer as the shell's
//! operator (audited with no user).

use anyhow::Context;
use app::command::assessor::{self, AddAssessor};
use app::command::Operator;
use app::store;
use clap::Subcommand;
use std::io::Write;

#[derive(Subcommand)]
pub enum AssessorCommand {
    /// Register a system's predictions on the pooled pairs as a model assessor: its labels are
    /// stored apart, never final, never in qrels.txt or claims.jsonl
    Add {
        #[arg(long)]
        project: String,
        /// The system (a run imported into the project) whose predictions label the pool
        #[arg(long)]
        system: String,
        /// The assessor's name (letters, digits, '.', '_', '-') [default: the system's name]
        #[arg(long)]
        name: Option<String>,
    },
    /// List the project's model assessors: name, system, labels, evidence labels, pairs the
    /// run does not hold (NEI)
    List {
        #[arg(long)]
        project: String,
        #[arg(long)]
        json: bool,
    },
}

fn print(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}") {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        other => other.context("writing to standard output"),
    }
}

pub async fn run(db: &store::Db, command: AssessorCommand) -> anyhow::Result<()> {
    match command {
        AssessorCommand::Add {
            project,
            system,
            name,
        } => {
            let add = AddAssessor::parse(&system, name.as_deref()).map_err(|e| {
                anyhow::anyhow!(e
                    .to_string()
                    .replacen("system: ", "--system: ", 1)
                    .replacen("name: ", "--name: ", 1))
            })?;
            let lead = Operator::at_the_shell().lead(db, &project).await?;
            let added = add.run(db, &lead).await?;
            print(&format!(
                "registered model assessor {} (system {}): {} pooled pairs labelled, {} as \
                 evidence, {} not in the run (NEI)",
                added.name, added.system, added.labels, added.evidence, added.not_in_run
            ))
        }
        AssessorCommand::List { project, json } => {
            let lead = Operator::at_the_shell().lead(db, &project).await?;
            let assessors = assessor::list(db, &lead).await?;
            if json {
                return print(&serde_json::to_string_pretty(&assessors)?);
            }
            print("name\tsystem\tlabels\tevidence\tnot_in_run\tcreated_by")?;
            for a in assessors {
                print(&format!(
                    "{}\t{}\t{}\t{}\t{}\t{}",
                    a.name,
                    a.system,
                    a.labels,
                    a.evidence,
                    a.not_in_run,
                    a.created_by.as_deref().unwrap_or("(shell)")
                ))?;
            }
            Ok(())
        }
    }
}
