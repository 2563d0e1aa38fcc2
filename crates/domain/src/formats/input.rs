//! Opening inputs (plain or gzip, told apart by magic bytes) and reading them line by line.

use super::error::{FormatError, ParseError};
use flate2::bufread::MultiGzDecoder;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

/// A readable input, decompressed when it was gzip.
pub type Input = Box<dyn BufRead + Send>;

/// The two magic bytes that open every gzip member.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
/// Read buffer size: large enough that a gzip decoder and the line reader are not starved.
const BUFFER_BYTES: usize = 256 * 1024;
/// Longest line read by default (memory stays bounded whatever the input): far above any real
/// record. A server may set a lower bound for uploads ([`LineSource::with_max_line`]).
pub const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// A record together with the line (or parquet row) it came from, 1-based.
#[derive(Debug, Clone, PartialEq)]
pub struct Located<T> {
    /// 1-based line number; for parquet tables, the 1-based row number.
    pub line: usize,
    /// The record itself.
    pub record: T,
}

/// Opens `path` for reading, decompressing it when its first bytes are the gzip magic. While a
/// [`Watch`] of the path is held ([`watch`]), reads count towards it and fail once it is
/// cancelled; while [`ReadBounds`] of it are held ([`bound`]), it gives at most so many bytes
/// (decompressed).
pub fn open_input(path: &Path) -> Result<Input, FormatError> {
    let io_error = |source| FormatError::Io {
        file: path.display().to_string(),
        source,
    };
    let file = File::open(path).map_err(io_error)?;
    let input = match watch_of(path) {
        Some(watch) => decompressed(BufReader::with_capacity(
            BUFFER_BYTES,
            Watched { inner: file, watch },
        )),
        None => decompressed(BufReader::with_capacity(BUFFER_BYTES, file)),
    }
    .map_err(io_error)?;
    Ok(bounded(
        input,
        bounds_of(path).map(|b| b.max_decompressed_bytes),
    ))
}

/// What reading one file may give: the server's bounds on an upload, whatever it imports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadBounds {
    /// The most bytes the file may hold once decompressed.
    pub max_decompressed_bytes: u64,
    /// The longest line (at most [`MAX_LINE_BYTES`]).
    pub max_line_bytes: usize,
}

/// The bounds held, by path.
static BOUNDS: Mutex<Vec<(PathBuf, Weak<ReadBounds>)>> = Mutex::new(Vec::new());

/// Bounds every read of the file at `path` ([`open_input`], and the lines of every reader that
/// opens it by path) for as long as the returned handle lives: the one place an import's
/// limits apply, whichever reader (corpus, claims, run, judgments, format detection) reads it.
pub fn bound(path: &Path, bounds: ReadBounds) -> Arc<ReadBounds> {
    let held = Arc::new(bounds);
    let mut all = BOUNDS.lock().unwrap_or_else(|p| p.into_inner());
    all.retain(|(_, b)| b.strong_count() > 0);
    all.push((path.to_path_buf(), Arc::downgrade(&held)));
    held
}

/// The bounds held on reads of `path`, if any.
pub(crate) fn bounds_of(path: &Path) -> Option<ReadBounds> {
    let all = BOUNDS.lock().unwrap_or_else(|p| p.into_inner());
    all.iter()
        .rev()
        .find(|(p, _)| p == path)
        .and_then(|(_, b)| b.upgrade())
        .map(|b| *b)
}

/// How far the readers of one file have got, and whether they should stop: a background
/// import's progress bar and cancel button, without threading a handle through every reader.
#[derive(Debug, Default)]
pub struct Watch {
    read: AtomicU64,
    cancelled: AtomicBool,
}

impl Watch {
    /// Bytes of the file read so far (the compressed bytes, for gzip), by every reader of it.
    pub fn bytes_read(&self) -> u64 {
        self.read.load(Ordering::Relaxed)
    }

    /// Makes every further read of the file fail with "the import was cancelled".
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }
}

/// The watches held, by path.
static WATCHES: Mutex<Vec<(PathBuf, Weak<Watch>)>> = Mutex::new(Vec::new());

/// Watches the reads of the file at `path` for as long as the returned handle (or a reader
/// opened meanwhile, which holds it too) lives.
pub fn watch(path: &Path) -> Arc<Watch> {
    let watch = Arc::new(Watch::default());
    let mut watches = WATCHES.lock().unwrap_or_else(|p| p.into_inner());
    watches.retain(|(_, w)| w.strong_count() > 0);
    watches.push((path.to_path_buf(), Arc::downgrade(&watch)));
    watch
}

fn watch_of(path: &Path) -> Option<Arc<Watch>> {
    let watches = WATCHES.lock().unwrap_or_else(|p| p.into_inner());
    watches
        .iter()
        .rev()
        .find(|(p, _)| p == path)
        .and_then(|(_, w)| w.upgrade())
}

/// A file whose reads count towards a [`Watch`].
struct Watched<R> {
    inner: R,
    watch: Arc<Watch>,
}

impl<R: Read> Read for Watched<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.watch.cancelled.load(Ordering::Relaxed) {
            return Err(std::io::Error::other("the import was cancelled"));
        }
        let n = self.inner.read(buf)?;
        self.watch.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Wraps `reader` in a gzip decoder (all members) when it starts with the gzip magic.
///
/// For inputs that are not files, such as uploads already in memory.
pub fn decompressed<R: BufRead + Send + 'static>(mut reader: R) -> std::io::Result<Input> {
    if is_gzip(&mut reader)? {
        Ok(Box::new(BufReader::with_capacity(
            BUFFER_BYTES,
            MultiGzDecoder::new(reader),
        )))
    } else {
        Ok(Box::new(reader))
    }
}

/// Whether the unread part of `reader` starts with the gzip magic (nothing is consumed).
pub(crate) fn is_gzip<R: BufRead>(reader: &mut R) -> std::io::Result<bool> {
    Ok(reader.fill_buf()?.starts_with(&GZIP_MAGIC))
}

pub use crate::units::size_text;

/// An input that fails with a clear error once it has given more than `limit` bytes: the bound
/// on what a (decompressed) file may hold.
pub struct Bounded<R> {
    inner: R,
    left: u64,
    limit: u64,
}

impl<R: BufRead> Bounded<R> {
    pub fn new(inner: R, limit: u64) -> Self {
        Bounded {
            inner,
            left: limit,
            limit,
        }
    }
}

impl<R: BufRead> BufRead for Bounded<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.left == 0 && !self.inner.fill_buf()?.is_empty() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "the file holds more than {} (decompressed), the limit of this server",
                    size_text(self.limit)
                ),
            ));
        }
        let buf = self.inner.fill_buf()?;
        let n = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        Ok(&buf[..n])
    }

    fn consume(&mut self, amt: usize) {
        self.inner.consume(amt);
        self.left = self.left.saturating_sub(amt as u64);
    }
}

impl<R: BufRead> Read for Bounded<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let buf = self.fill_buf()?;
        let n = buf.len().min(out.len());
        out[..n].copy_from_slice(&buf[..n]);
        self.consume(n);
        Ok(n)
    }
}

/// `input` bounded to `limit` bytes, or as it is without a limit.
pub fn bounded(input: Input, limit: Option<u64>) -> Input {
    match limit {
        Some(limit) => Box::new(Bounded::new(input, limit)),
        None => input,
    }
}

/// The non-blank lines of an input with their 1-based numbers; a read error ends it.
pub(crate) struct LineSource {
    reader: Input,
    file: String,
    buf: Vec<u8>,
    line: usize,
    finished: bool,
    max_line: usize,
}

impl LineSource {
    /// Opens `path` (gzip or not); errors name it as it displays. Reads are bounded as
    /// [`bound`] says.
    pub(crate) fn open(path: &Path) -> Result<Self, FormatError> {
        let lines = LineSource::new(open_input(path)?, path.display().to_string());
        Ok(match bounds_of(path) {
            Some(bounds) => lines.with_max_line(bounds.max_line_bytes),
            None => lines,
        })
    }

    pub(crate) fn new(reader: Input, file: String) -> Self {
        LineSource {
            reader,
            file,
            buf: Vec::with_capacity(4096),
            line: 0,
            finished: false,
            max_line: MAX_LINE_BYTES,
        }
    }

    /// Refuses lines longer than `max_line` bytes (at most [`MAX_LINE_BYTES`]).
    pub(crate) fn with_max_line(mut self, max_line: usize) -> Self {
        self.max_line = max_line.min(MAX_LINE_BYTES);
        self
    }

    /// The next line that is not blank, without its line ending (and without a leading BOM on line 1).
    pub(crate) fn next_line(&mut self) -> Option<Result<LineRef<'_>, ParseError>> {
        let (start, end) = loop {
            if self.finished {
                return None;
            }
            self.buf.clear();
            let mut limited = (&mut self.reader).take(self.max_line as u64 + 1);
            match limited.read_until(b'\n', &mut self.buf) {
                Ok(0) => {
                    self.finished = true;
                    return None;
                }
                Ok(_) => {}
                Err(err) => {
                    self.finished = true;
                    return Some(Err(ParseError::new(
                        &self.file,
                        self.line + 1,
                        None,
                        format!("read error: {err}"),
                    )));
                }
            }
            self.line += 1;
            if self.buf.len() > self.max_line && !self.buf.ends_with(b"\n") {
                self.finished = true;
                return Some(Err(ParseError::new(
                    &self.file,
                    self.line,
                    None,
                    format!(
                        "the line is longer than {}, the limit of this server",
                        size_text(self.max_line as u64)
                    ),
                )));
            }
            let start = if self.line == 1 && self.buf.starts_with(b"\xEF\xBB\xBF") {
                3
            } else {
                0
            };
            let mut end = self.buf.len();
            while end > start && matches!(self.buf[end - 1], b'\n' | b'\r') {
                end -= 1;
            }
            if !self.buf[start..end].iter().all(u8::is_ascii_whitespace) {
                break (start, end);
            }
        };
        Some(match std::str::from_utf8(&self.buf[start..end]) {
            Ok(text) => Ok(LineRef {
                file: &self.file,
                line: self.line,
                text,
            }),
            Err(err) => Err(ParseError::new(
                &self.file,
                self.line,
                None,
                format!("not UTF-8 text: {err}"),
            )),
        })
    }
}

/// One line of an input, borrowed from its [`LineSource`].
#[derive(Debug)]
pub(crate) struct LineRef<'a> {
    /// The file's name, for error messages.
    pub file: &'a str,
    /// 1-based line number.
    pub line: usize,
    /// The line's text, without its ending.
    pub text: &'a str,
}

/// Turns one line of a format into zero or more records.
pub(crate) trait LineParser {
    /// What one line yields.
    type Record;
    /// Parses `text` (line `line` of `file`), pushing its records onto `out`.
    fn parse_line(
        &mut self,
        file: &str,
        line: usize,
        text: &str,
        out: &mut VecDeque<Self::Record>,
    ) -> Result<(), ParseError>;
}

/// A streaming iterator over the records of a line-based input; one line is parsed at a time.
pub(crate) struct LineRecords<P: LineParser> {
    lines: LineSource,
    parser: P,
    pending: VecDeque<P::Record>,
    pending_line: usize,
}

impl<P: LineParser> LineRecords<P> {
    pub(crate) fn new(lines: LineSource, parser: P) -> Self {
        LineRecords {
            lines,
            parser,
            pending: VecDeque::new(),
            pending_line: 0,
        }
    }
}

impl<P: LineParser> Iterator for LineRecords<P> {
    type Item = Result<Located<P::Record>, ParseError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(record) = self.pending.pop_front() {
                return Some(Ok(Located {
                    line: self.pending_line,
                    record,
                }));
            }
            let LineRef { file, line, text } = match self.lines.next_line()? {
                Ok(next) => next,
                Err(err) => return Some(Err(err)),
            };
            self.pending_line = line;
            if let Err(err) = self.parser.parse_line(file, line, text, &mut self.pending) {
                self.pending.clear();
                return Some(Err(err));
            }
        }
    }
}

/// The first non-blank line of a file (decompressed when gzip), for format detection.
pub(crate) fn first_line(path: &Path) -> Result<Option<String>, FormatError> {
    match LineSource::open(path)?.next_line() {
        None => Ok(None),
        Some(Ok(line)) => Ok(Some(line.text.to_owned())),
        Some(Err(err)) => Err(err.into()),
    }
}

/// Reads the first bytes of a file (decompressed when gzip), up to `n`.
pub(crate) fn first_bytes(path: &Path, n: usize) -> Result<Vec<u8>, FormatError> {
    let mut head = Vec::with_capacity(n);
    open_input(path)?
        .take(n as u64)
        .read_to_end(&mut head)
        .map_err(|source| FormatError::Io {
            file: path.display().to_string(),
            source,
        })?;
    Ok(head)
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::write::GzEncoder;
    use flate2::Compression;
    use std::io::Write;

    fn gz(bytes: &[u8]) -> Vec<u8> {
        let mut enc = GzEncoder::new(Vec::new(), Compression::fast());
        enc.write_all(bytes).unwrap();
        enc.finish().unwrap()
    }

    fn lines_of(input: Input) -> Vec<(usize, String)> {
        let mut src = LineSource::new(input, "t".into());
        let mut out = Vec::new();
        while let Some(next) = src.next_line() {
            let line = next.unwrap();
            out.push((line.line, line.text.to_owned()));
        }
        out
    }

    #[test]
    fn numbers_lines_skipping_blank_ones_and_endings() {
        let text = b"\xEF\xBB\xBFa\r\n\n  \nb\nc";
        let got = lines_of(decompressed(std::io::Cursor::new(text.to_vec())).unwrap());
        assert_eq!(got, vec![(1, "a".into()), (4, "b".into()), (5, "c".into())]);
    }

    #[test]
    fn an_overlong_line_is_an_error_that_ends_the_input() {
        let mut text = vec![b'x'; MAX_LINE_BYTES];
        text.extend_from_slice(b"\ny\n");
        assert_eq!(
            lines_of(decompressed(std::io::Cursor::new(text.clone())).unwrap()).len(),
            2
        );
        text.insert(0, b'x');
        let mut src = LineSource::new(
            decompressed(std::io::Cursor::new(text)).unwrap(),
            "big".into(),
        );
        let err = src.next_line().unwrap().unwrap_err();
        assert_eq!((err.line, err.field), (1, None));
        assert!(src.next_line().is_none());
    }

    #[test]
    fn gzip_is_detected_by_magic_including_several_members() {
        let mut two = gz(b"x\ny\n");
        two.extend(gz(b"z\n"));
        let got = lines_of(decompressed(std::io::Cursor::new(two)).unwrap());
        assert_eq!(got, vec![(1, "x".into()), (2, "y".into()), (3, "z".into())]);
    }

    #[test]
    fn open_input_reads_plain_and_gzip_files_and_names_missing_ones() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("a.txt");
        let packed = dir.path().join("a.txt.gz");
        std::fs::write(&plain, b"one\ntwo\n").unwrap();
        std::fs::write(&packed, gz(b"one\ntwo\n")).unwrap();
        assert_eq!(
            lines_of(open_input(&plain).unwrap()),
            lines_of(open_input(&packed).unwrap())
        );
        let missing = dir.path().join("none.jsonl");
        let err = open_input(&missing).err().unwrap();
        assert!(err.to_string().contains("none.jsonl"), "{err}");
    }

    #[test]
    fn bad_utf8_and_truncated_gzip_are_errors_with_line_numbers() {
        let got: Vec<_> = {
            let mut src = LineSource::new(
                decompressed(std::io::Cursor::new(b"ok\n\xff\xfe\n".to_vec())).unwrap(),
                "f.jsonl".into(),
            );
            let first = src.next_line().unwrap().unwrap().line;
            let second = src.next_line().unwrap().unwrap_err();
            vec![first, second.line]
        };
        assert_eq!(got, vec![1, 2]);
        let mut packed = gz(b"a\nb\nc\n");
        packed.truncate(packed.len() - 6);
        let mut src = LineSource::new(
            decompressed(std::io::Cursor::new(packed)).unwrap(),
            "t.gz".into(),
        );
        let mut saw_error = false;
        while let Some(next) = src.next_line() {
            if let Err(err) = next {
                assert!(err.to_string().starts_with("t.gz:"), "{err}");
                saw_error = true;
            }
        }
        assert!(saw_error);
    }

    #[test]
    fn bounds_held_on_a_path_bound_every_reader_of_it() {
        let dir = tempfile::tempdir().unwrap();
        let packed = dir.path().join("claims.jsonl.gz");
        let mut text = "\n".repeat(2000);
        text.push_str("{\"id\": 1}\n");
        std::fs::write(&packed, gz(text.as_bytes())).unwrap();
        let long = dir.path().join("long.jsonl");
        std::fs::write(&long, format!("a\n{}\n", "b".repeat(300))).unwrap();
        let bounds = ReadBounds {
            max_decompressed_bytes: 1000,
            max_line_bytes: 100,
        };
        let (held_a, held_b) = (bound(&packed, bounds), bound(&long, bounds));
        let err = LineSource::open(&packed)
            .unwrap()
            .next_line()
            .unwrap()
            .unwrap_err();
        assert_eq!(err.line, 1001, "{err}");
        assert!(err.to_string().contains("more than 1000 bytes"), "{err}");
        let mut lines = LineSource::open(&long).unwrap();
        assert_eq!(lines.next_line().unwrap().unwrap().text, "a");
        let err = lines.next_line().unwrap().unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.to_string().contains("longer than 100 bytes"), "{err}");
        // Released with their handles.
        drop((held_a, held_b));
        assert_eq!(lines_of(open_input(&packed).unwrap()).len(), 1);
        assert_eq!(
            LineSource::open(&long)
                .unwrap()
                .next_line()
                .unwrap()
                .unwrap()
                .line,
            1
        );
        let mut second = LineSource::open(&long).unwrap();
        second.next_line();
        assert!(second.next_line().unwrap().is_ok());
    }

    #[test]
    fn a_watch_counts_the_bytes_read_and_a_cancelled_one_stops_the_reader() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("watched.jsonl");
        let text: String = (0..100_000).map(|i| format!("line {i}\n")).collect();
        std::fs::write(&path, &text).unwrap();
        let watch = watch(&path);
        let mut input = open_input(&path).unwrap();
        let mut first = String::new();
        input.read_line(&mut first).unwrap();
        assert_eq!(first, "line 0\n");
        let read = watch.bytes_read();
        assert!(read > 0 && read <= text.len() as u64, "{read}");
        watch.cancel();
        let mut rest = String::new();
        let err = input.read_to_string(&mut rest).unwrap_err();
        assert!(err.to_string().contains("cancelled"), "{err}");
        // Once the watch and the readers that hold it are dropped, the file reads as usual.
        drop(input);
        drop(watch);
        assert_eq!(lines_of(open_input(&path).unwrap()).len(), 100_000);
    }
}
