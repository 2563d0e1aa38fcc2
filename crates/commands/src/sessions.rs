//! Where login sessions are kept: the `sessions` table of the database, as the server's session
//! layer (tower-sessions) stores them, on either engine.

/// The session store ([`Sessions::open`] on the server's database handle).
pub use store::sessions::Sessions;
