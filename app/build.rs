// `sqlx::migrate!` embeds ../migrations: a new or edited migration must rebuild this crate.
fn main() {
    println!("cargo:rerun-if-changed=../migrations");
}
