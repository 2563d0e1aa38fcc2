//! `claimpool token`: a user's personal API tokens from the command line (create, list,
//! revoke), through the same store functions as the account page. The CLI acts as the server's
//! operator: audited with no actor.

use anyhow::Context;
use clap::Subcommand;
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

pub async fn run(db: &store::Db, command: TokenCommand) -> anyhow::Result<()> {
    match command {
        TokenCommand::Create { user, name } => {
            let id = store::users::id_by_name(db, &user).await?;
            let issued = store::api_tokens::create(db, id, &name, None).await?;
            eprintln!(
                "created token {:?} for {user}; it is shown only now:",
                issued.token.name
            );
            print(&issued.secret)
        }
        TokenCommand::List { user, json } => {
            let id = store::users::id_by_name(db, &user).await?;
            let tokens = store::api_tokens::list(db, id).await?;
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
            let id = store::users::id_by_name(db, &user).await?;
            let token = store::api_tokens::revoke(db, id, &name, None).await?;
            print(&format!("revoked {user}'s token {:?}", token.name))
        }
    }
}
