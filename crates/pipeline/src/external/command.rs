//! A user's model command: a program and its arguments, split from one command line the way a
//! POSIX shell splits words, but run without a shell (no variables, globs, pipes or
//! redirections). Whoever needs those writes `sh -c '...'` themselves, in plain view.

use std::fmt;
use std::process::{Child, Command, Stdio};

/// A program and its arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExternalCommand {
    program: String,
    args: Vec<String>,
}

/// Why a command line cannot be split into words.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CommandLineError {
    #[error("the command is empty")]
    Empty,
    #[error("the command has an unclosed {0} quote")]
    UnclosedQuote(&'static str),
    #[error("the command ends with a lone backslash")]
    TrailingBackslash,
}

impl ExternalCommand {
    /// Splits `line` into words: blanks separate words; 'single quotes' keep everything
    /// literally; "double quotes" keep everything but `\"` and `\\`; a backslash outside quotes
    /// keeps the next character. Nothing else is special.
    pub fn parse(line: &str) -> Result<ExternalCommand, CommandLineError> {
        let mut words: Vec<String> = Vec::new();
        let mut word: Option<String> = None;
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            match c {
                c if c.is_whitespace() => {
                    if let Some(done) = word.take() {
                        words.push(done);
                    }
                }
                '\'' => {
                    let current = word.get_or_insert_with(String::new);
                    loop {
                        match chars.next() {
                            None => return Err(CommandLineError::UnclosedQuote("single")),
                            Some('\'') => break,
                            Some(c) => current.push(c),
                        }
                    }
                }
                '"' => {
                    let current = word.get_or_insert_with(String::new);
                    loop {
                        match chars.next() {
                            None => return Err(CommandLineError::UnclosedQuote("double")),
                            Some('"') => break,
                            Some('\\') => match chars.next() {
                                None => return Err(CommandLineError::UnclosedQuote("double")),
                                Some(escaped @ ('"' | '\\')) => current.push(escaped),
                                Some(other) => {
                                    current.push('\\');
                                    current.push(other);
                                }
                            },
                            Some(c) => current.push(c),
                        }
                    }
                }
                '\\' => match chars.next() {
                    None => return Err(CommandLineError::TrailingBackslash),
                    Some(escaped) => word.get_or_insert_with(String::new).push(escaped),
                },
                c => word.get_or_insert_with(String::new).push(c),
            }
        }
        words.extend(word);
        let mut words = words.into_iter();
        let program = words.next().ok_or(CommandLineError::Empty)?;
        Ok(ExternalCommand {
            program,
            args: words.collect(),
        })
    }

    /// A command from a program and its arguments, as they are.
    pub fn new(program: impl Into<String>, args: Vec<String>) -> ExternalCommand {
        ExternalCommand {
            program: program.into(),
            args,
        }
    }

    /// The program (a path, or a name looked up on `PATH`).
    pub fn program(&self) -> &str {
        &self.program
    }

    /// The arguments.
    pub fn args(&self) -> &[String] {
        &self.args
    }

    /// Starts the command with piped stdin, stdout and stderr, in a process group of its own so
    /// that [`Running::kill`] ends whatever it started too.
    pub(crate) fn spawn(&self) -> std::io::Result<Running> {
        let mut command = Command::new(&self.program);
        command
            .args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            command.process_group(0);
        }
        Ok(Running {
            child: command.spawn()?,
        })
    }
}

impl fmt::Display for ExternalCommand {
    /// The words, each quoted when it holds anything but plain characters.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plain = |w: &str| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_alphanumeric() || "-_./=:,+@%".contains(c))
        };
        for (i, word) in std::iter::once(&self.program).chain(&self.args).enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            if plain(word) {
                f.write_str(word)?;
            } else {
                write!(f, "'{}'", word.replace('\'', r"'\''"))?;
            }
        }
        Ok(())
    }
}

/// A started command.
pub(crate) struct Running {
    pub(crate) child: Child,
}

impl Running {
    /// Kills the command and every process of its group (best effort: it may have ended).
    /// Call it only before the child is waited for, so its pid cannot have been reused.
    pub(crate) fn kill(&mut self) {
        kill_group(self.child.id());
        let _ = self.child.kill();
    }
}

/// Kills the process group led by `pid` (a command started by [`ExternalCommand::spawn`] that
/// has not been waited for yet).
pub(crate) fn kill_group(pid: u32) {
    #[cfg(unix)]
    if let Ok(pid) = i32::try_from(pid) {
        // SAFETY: kill(2) with a negative pid signals the process group the child leads
        // (spawned with process_group(0)); it touches no memory of this process.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = pid;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        let c = ExternalCommand::parse(line).unwrap();
        std::iter::once(c.program).chain(c.args).collect()
    }

    #[test]
    fn splits_words_like_a_shell_without_expanding() {
        assert_eq!(
            words("python3 model.py --k 5"),
            ["python3", "model.py", "--k", "5"]
        );
        assert_eq!(words("  a\t b  "), ["a", "b"]);
        assert_eq!(
            words("run 'two words' \"and $HOME\""),
            ["run", "two words", "and $HOME"]
        );
        assert_eq!(words(r#"a "q\"uote\\" b\ c"#), ["a", "q\"uote\\", "b c"]);
        assert_eq!(words(r#"x "\n" ''"#), ["x", "\\n", ""]);
        assert_eq!(words("sh -c 'cat | wc -l'"), ["sh", "-c", "cat | wc -l"]);
        assert_eq!(words("a'b'\"c\"d"), ["abcd"]);
    }

    #[test]
    fn refuses_empty_and_unbalanced_lines() {
        assert_eq!(ExternalCommand::parse("  "), Err(CommandLineError::Empty));
        assert_eq!(
            ExternalCommand::parse("a 'b"),
            Err(CommandLineError::UnclosedQuote("single"))
        );
        assert_eq!(
            ExternalCommand::parse("a \"b"),
            Err(CommandLineError::UnclosedQuote("double"))
        );
        assert_eq!(
            ExternalCommand::parse("a \\"),
            Err(CommandLineError::TrailingBackslash)
        );
    }

    #[test]
    fn displays_words_quoted_where_needed_and_reparses_to_the_same() {
        for line in [
            "python3 model.py --k=5",
            "sh -c 'cat | wc -l'",
            "a 'it'\\''s' ''",
        ] {
            let command = ExternalCommand::parse(line).unwrap();
            let shown = command.to_string();
            assert_eq!(ExternalCommand::parse(&shown).unwrap(), command, "{shown}");
        }
        assert_eq!(
            ExternalCommand::parse("sh -c 'cat | wc'")
                .unwrap()
                .to_string(),
            "sh -c 'cat | wc'"
        );
    }
}
