//! The command line: one binary, a subcommand per job. Each calls the same store and domain
//! functions the web pages use.

use crate::{demo, http};
use anyhow::{bail, Context};
use app::domain::account::{NewPassword, Role, Username};
use app::store;
use clap::{Args, Parser, Subcommand};
use std::io::Read;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

#[derive(Parser)]
#[command(name = "claimpool", version, about = "Build scientific claim-verification test collections by pooling")]
pub struct Cli {
    /// The SQLite database file [default: ./claimpool.db; for `demo`: ./claimpool-demo.db]
    #[arg(long, global = true, env = "CLAIMPOOL_DB", value_name = "PATH")]
    db: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the web application
    Serve(ServeArgs),
    /// Create a fresh demo database from the shipped SciFact sample and serve it
    Demo(ServeArgs),
    /// Manage user accounts
    #[command(subcommand)]
    User(UserCommand),
    /// Manage projects
    #[command(subcommand)]
    Project(ProjectCommand),
}

#[derive(Args)]
struct ServeArgs {
    /// Address to listen on
    #[arg(long, default_value = "127.0.0.1:3000", value_name = "HOST:PORT")]
    addr: SocketAddr,
}

#[derive(Subcommand)]
enum UserCommand {
    /// Create a user; the password is read from standard input
    Add {
        #[arg(long)]
        username: String,
        /// admin, lead or annotator
        #[arg(long)]
        role: String,
        /// Read the password from standard input (the only way: never on the command line)
        #[arg(long, required = true)]
        password_stdin: bool,
    },
    /// List users
    List,
}

#[derive(Subcommand)]
enum ProjectCommand {
    /// Create a project
    Create {
        name: String,
        #[arg(long, default_value = "")]
        description: String,
    },
    /// List projects with their counts
    List,
}

const DEFAULT_DB: &str = "claimpool.db";

async fn open_db(path: &Path) -> anyhow::Result<store::Db> {
    store::open(path).await.map_err(anyhow::Error::from)
}

pub async fn run(cli: Cli) -> anyhow::Result<()> {
    let db_path = cli.db.clone();
    let db_or_default = || db_path.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_DB));
    match cli.command {
        Command::Serve(args) => http::serve(open_db(&db_or_default()).await?, args.addr).await,
        Command::Demo(args) => {
            let path = db_path.unwrap_or_else(|| PathBuf::from(demo::DEFAULT_DB));
            let db = demo::create(&path).await?;
            http::serve(db, args.addr).await
        }
        Command::User(UserCommand::Add {
            username,
            role,
            password_stdin,
        }) => {
            if !password_stdin {
                bail!("give --password-stdin and the password on standard input");
            }
            let username = Username::parse(&username).context("--username")?;
            let role = Role::parse(&role).context("--role")?;
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("reading the password from standard input")?;
            let password = NewPassword::parse(text.lines().next().unwrap_or_default()).context("the password")?;
            let db = open_db(&db_or_default()).await?;
            let hash = app::auth::hash_password(&password)?;
            let user = store::users::create(&db, &username, role, &hash, None).await?;
            println!("created {} ({})", user.username, user.role);
            Ok(())
        }
        Command::User(UserCommand::List) => {
            let db = open_db(&db_or_default()).await?;
            for user in store::users::list(&db).await? {
                let state = if user.active { "" } else { " (inactive)" };
                println!("{}\t{}{state}", user.username, user.role);
            }
            Ok(())
        }
        Command::Project(ProjectCommand::Create { name, description }) => {
            let db = open_db(&db_or_default()).await?;
            let id = store::projects::create(&db, &name, &description, None).await?;
            println!("created project {name} (id {id})");
            Ok(())
        }
        Command::Project(ProjectCommand::List) => {
            let db = open_db(&db_or_default()).await?;
            println!("{}", serde_json::to_string_pretty(&store::projects::list(&db).await?)?);
            Ok(())
        }
    }
}
