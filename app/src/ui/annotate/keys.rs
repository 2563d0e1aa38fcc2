//! The annotation form's keyboard: one key per action, listed on the page.

/// What a key does on the annotation form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// Choose a label (database spelling).
    Label(&'static str),
    /// First pass: the abstract clearly holds no evidence.
    NoEvidence,
    /// Choose a specificity relation (database spelling).
    Specificity(&'static str),
    CursorDown,
    CursorUp,
    /// Toggle the sentence under the cursor as rationale.
    ToggleSentence,
    Submit,
    Undo,
    Skip,
    Flag,
    /// Show or hide the project's guidelines (the page's guidelines panel handles it).
    Guidelines,
    /// Open or close the corpus search for the item's claim (the search panel handles it).
    Search,
    EditRevisedClaim,
    EditNote,
}

/// Every binding, in the order the page lists them: (key as shown, what it does, command).
pub const BINDINGS: &[(&str, &str, Command)] = &[
    ("0", "clearly no evidence (first pass)", Command::NoEvidence),
    ("1", "SUPPORT", Command::Label("SUPPORT")),
    ("2", "CONTRADICT", Command::Label("CONTRADICT")),
    ("3", "NEI", Command::Label("NEI")),
    (
        "m",
        "evidence matches the claim",
        Command::Specificity("matches"),
    ),
    (
        "s",
        "evidence more specific",
        Command::Specificity("evidence_more_specific"),
    ),
    (
        "g",
        "evidence more general",
        Command::Specificity("evidence_more_general"),
    ),
    (
        "r",
        "closely related",
        Command::Specificity("closely_related"),
    ),
    ("j / ↓", "next sentence", Command::CursorDown),
    ("k / ↑", "previous sentence", Command::CursorUp),
    (
        "x / space",
        "toggle sentence as rationale",
        Command::ToggleSentence,
    ),
    ("e", "write the revised claim", Command::EditRevisedClaim),
    ("t", "write a note", Command::EditNote),
    ("Enter", "submit", Command::Submit),
    ("u", "undo your last submission", Command::Undo),
    (".", "skip: send to the end of the queue", Command::Skip),
    ("f", "flag: needs attention", Command::Flag),
    ("?", "guidelines: show or hide", Command::Guidelines),
    ("/", "search the corpus for this claim", Command::Search),
];

/// The command of a key (`KeyboardEvent.key`), outside text fields.
pub fn command(key: &str) -> Option<Command> {
    Some(match key {
        "ArrowDown" | "j" => Command::CursorDown,
        "ArrowUp" | "k" => Command::CursorUp,
        " " | "x" => Command::ToggleSentence,
        "Enter" => Command::Submit,
        other => {
            return BINDINGS
                .iter()
                .find(|(shown, _, _)| *shown == other)
                .map(|(_, _, c)| *c)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_key_works_and_no_key_does_two_things() {
        for (shown, _, cmd) in BINDINGS {
            let first = shown.split(" / ").next().unwrap_or(shown);
            let key = if first == "space" { " " } else { first };
            assert_eq!(command(key), Some(*cmd), "{shown}");
        }
        let mut keys: Vec<&str> = BINDINGS
            .iter()
            .flat_map(|(shown, _, _)| shown.split(" / "))
            .collect();
        let n = keys.len();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), n);
        assert_eq!(command("ArrowDown"), Some(Command::CursorDown));
        assert_eq!(command("q"), None);
    }
}
