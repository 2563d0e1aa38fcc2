//! `claimpool token`: a user's personal API tokens from the command line (create, list,
//! revoke), through the same token commands as the account page. The CLI acts as the server's
//! operator, an administrator of every account: audited with no actor.

use anyhow::Context;
use clap::Subcommand;
use commands::{tokens, Db, Operator};
use std::io::Write;

#[derive(Subcommand)]
pub enum TokenCommand {
    /// Create a token for a user; the token is printed once (store it now)
    Create {
        #[arg(long)]
        user: String,
        /// A name that tells the user's tokens apart (e.g. the script using it)
        #[arg(long)]
        name: String,
    },
    /// List a user's live tokens (name, created, last used; never the tokens)
    List {
        #[arg(long)]
        user: String,
        #[arg(long)]
        json: bool,
    },
    /// Revoke a user's token by name: it stops working at once
    Revoke {
        #[arg(long)]
        user: String,
        #[arg(long)]
        name: String,
    },
}

fn print(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}").context("writing to standard output")
}

/// The UTC day of a timestamp (milliseconds since the epoch).
fn day(ms: i64) -> String {
    app::domain::release::ReleaseDate::from_unix_ms(ms)
        .map(|d| d.as_str().to_owned())
        .unwrap_or_else(|_| ms.to_string())
}

pub async fn run(db: &Db, command: TokenCommand) -> anyhow::Result<()> {
    let admin = Operator::at_the_shell().admin();
    match command {
        TokenCommand::Create { user, name } => {
            let issued = tokens::create_for(db, &admin, &user, &name).await?;
            eprintln!(
                "created token {:?} for {user}; it is shown only now:",
                issued.token.name
            );
            print(&issued.secret)
        }
        TokenCommand::List { user, json } => {
            let tokens = tokens::list_of(db, &admin, &user).await?;
            if json {
                return print(&serde_json::to_string_pretty(&tokens)?);
            }
            for t in tokens {
                let used = t.last_used_at.map_or_else(|| "never".to_owned(), day);
                print(&format!(
                    "{}\tcreated {}\tlast used {used}",
                    t.name,
                    day(t.created_at)
                ))?;
            }
            Ok(())
        }
        TokenCommand::Revoke { user, name } => {
            let token = tokens::revoke_for(db, &admin, &user, &name).await?;
            print(&format!("revoked {user}'s token {:?}", token.name))
        }
    }
}
