//! `claimpool assessor`: register a system's predictions on the pool, or an external command's
//! answers about it, as a model assessor, list a project's model assessors, and choose the one
//! whose labels annotators see as suggestions (issue 16), through the command layer as the
//! shell's operator (audited with no user). Only here can a command assessor be registered: no
//! page or API route starts a command.

use app::domain::assessor::AssessorSource;
use clap::{ArgGroup, Subcommand};
use commands::assessor::{self, AddAssessor, AddCommandAssessor, SetSuggestions};
use commands::Operator;

#[derive(Subcommand)]
pub enum AssessorCommand {
    /// Register a system's predictions on the pooled pairs, or an external command's answers
    /// about them, as a model assessor: its labels are stored apart, never final, never in
    /// qrels.txt or claims.jsonl
    #[command(group(ArgGroup::new("source").required(true).args(["system", "command"])))]
    Add {
        #[arg(long)]
        project: String,
        /// The system (a run imported into the project) whose predictions label the pool
        #[arg(long)]
        system: Option<String>,
        /// A command run once over every pooled pair, speaking the external scorer's protocol
        /// (claims with their pooled abstracts as JSONL on stdin, a label per pair on stdout);
        /// split into words like a shell, run without one. Stored and shown as given
        #[arg(long, value_name = "CMD ARGS")]
        command: Option<String>,
        /// The assessor's name (letters, digits, '.', '_', '-') [default: the system's name;
        /// required with --command]
        #[arg(long)]
        name: Option<String>,
    },
    /// Show annotators one model assessor's label for the pair they label, at the first and
    /// second pass (never its name, its system or a score), or stop (--off, the default).
    /// Annotators shown a model's label tend to agree with it: agreement with the model and
    /// among annotators is then inflated, so keep it off for test collections unless you
    /// measure that
    #[command(group(ArgGroup::new("choice").required(true).args(["assessor", "off"])))]
    Suggest {
        #[arg(long)]
        project: String,
        /// The model assessor of the project whose labels are suggested
        #[arg(long)]
        assessor: Option<String>,
        /// Turn suggestions off
        #[arg(long)]
        off: bool,
    },
    /// List the project's model assessors: name, source (a system, or "command"), labels,
    /// evidence labels, pairs the run does not hold (NEI)
    List {
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
        .replacen("system: ", "--system: ", 1)
        .replacen("command: ", "--command: ", 1)
        .replacen("name: ", "--name: ", 1)
        .replacen("assessor: ", "--assessor: ", 1))
}

/// A progress bar of `total` claims on stderr (hidden when stderr is not a terminal).
fn claims_bar(total: u64) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(total);
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{elapsed_precise} [{bar:40}] {pos}/{len} claims ({per_sec}, eta {eta})",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

pub async fn run(db: &commands::Db, command: AssessorCommand) -> anyhow::Result<()> {
    match command {
        AssessorCommand::Add {
            project,
            system: Some(system),
            command: None,
            name,
        } => {
            let add = AddAssessor::parse(&system, name.as_deref()).map_err(option_error)?;
            let lead = Operator::at_the_shell().lead(db, &project).await?;
            let added = add.run(db, &lead).await?;
            print(&format!(
                "registered model assessor {} ({}): {} pooled pairs labelled, {} as evidence, \
                 {} not in the run (NEI)",
                added.name, added.source, added.labels, added.evidence, added.not_in_run
            ))
        }
        AssessorCommand::Add {
            project,
            system: None,
            command: Some(line),
            name,
        } => {
            let add = AddCommandAssessor::parse(&line, name.as_deref()).map_err(option_error)?;
            let bar = claims_bar(0);
            let shown = bar.clone();
            let added = add
                .run(db, &Operator::at_the_shell(), &project, move |n, total| {
                    shown.set_length(total);
                    shown.set_position(n);
                })
                .await;
            bar.finish_and_clear();
            let added = added?;
            print(&format!(
                "registered model assessor {} ({}): {} pooled pairs labelled, {} as evidence",
                added.name, added.source, added.labels, added.evidence
            ))
        }
        AssessorCommand::Add { .. } => {
            anyhow::bail!("give exactly one of --system SYSTEM and --command \"CMD ARGS\"")
        }
        AssessorCommand::Suggest {
            project,
            assessor,
            off,
        } => {
            let set = SetSuggestions::parse(if off { None } else { assessor.as_deref() })
                .map_err(option_error)?;
            let lead = Operator::at_the_shell().lead(db, &project).await?;
            let now = set.run(db, &lead).await.map_err(option_error)?;
            print(&match now.current {
                Some(name) => format!(
                    "annotators of {project} now see model assessor {name}'s label for each pair \
                     at the first and second pass (not its name); agreement may be inflated by \
                     anchoring"
                ),
                None => format!("annotators of {project} see no model suggestions"),
            })
        }
        AssessorCommand::List { project, json } => {
            let lead = Operator::at_the_shell().lead(db, &project).await?;
            let assessors = assessor::list(db, &lead).await?;
            if json {
                return print(&serde_json::to_string_pretty(&assessors)?);
            }
            print("name\tsource\tlabels\tevidence\tnot_in_run\tcreated_by")?;
            for a in assessors {
                let source = match &a.source {
                    AssessorSource::System { system } => format!("system: {system}"),
                    AssessorSource::Command { command, .. } => format!("command: {command}"),
                };
                print(&format!(
                    "{}\t{}\t{}\t{}\t{}\t{}",
                    a.name,
                    source,
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
