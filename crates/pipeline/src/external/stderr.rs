//! The end of a command's stderr, kept for error messages while the rest is drained.

use std::collections::VecDeque;
use std::fmt;
use std::io::Read;

/// Bytes of stderr kept.
const KEEP_BYTES: usize = 4096;
/// Lines of stderr shown.
const SHOW_LINES: usize = 12;

/// The last lines a command wrote to stderr (empty if it wrote nothing).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StderrTail(String);

impl StderrTail {
    /// Reads `stream` to its end, keeping only the last [`SHOW_LINES`] lines (of the last
    /// [`KEEP_BYTES`] bytes).
    pub(crate) fn collect(mut stream: impl Read) -> StderrTail {
        let mut kept: VecDeque<u8> = VecDeque::with_capacity(KEEP_BYTES);
        let mut buf = [0u8; 8192];
        loop {
            match stream.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    kept.extend(&buf[..n]);
                    let excess = kept.len().saturating_sub(KEEP_BYTES);
                    kept.drain(..excess);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        let bytes: Vec<u8> = kept.into();
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text.trim_end().lines().collect();
        let shown = &lines[lines.len().saturating_sub(SHOW_LINES)..];
        StderrTail(shown.join("\n"))
    }

    /// The kept text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for StderrTail {
    /// Nothing when empty; else a new line, a heading and the lines indented.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return Ok(());
        }
        f.write_str("\nthe command's stderr ended with:")?;
        for line in self.0.lines() {
            write!(f, "\n    {line}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_lines_only() {
        let text: String = (1..=5000).map(|i| format!("line {i}\n")).collect();
        let tail = StderrTail::collect(text.as_bytes());
        let lines: Vec<&str> = tail.as_str().lines().collect();
        assert_eq!(lines.len(), SHOW_LINES);
        assert_eq!(lines.last(), Some(&"line 5000"));
        assert_eq!(lines[0], format!("line {}", 5000 - SHOW_LINES + 1));
        assert_eq!(StderrTail::collect(&b""[..]).to_string(), "");
        assert_eq!(
            StderrTail::collect(&b"boom\n"[..]).to_string(),
            "\nthe command's stderr ended with:\n    boom"
        );
    }
}
