//! The release as a deterministic `.tar.gz`: the same files give the same bytes.
//!
//! Entries are sorted: the root directory `<project>-release-<number>/`, then each file in path
//! order, with each subdirectory (`runs/`) just before its first file. Every header is a GNU
//! header with mtime 0, uid and gid 0, no user or group name, mode 0755 for directories and 0644
//! for files. The gzip header has mtime 0, no file name and OS byte 255 ("unknown"); the
//! compression level is fixed.

use super::files::ReleaseFiles;
use flate2::{Compression, GzBuilder};
use std::collections::BTreeSet;
use std::io::{self, Write};
use tar::{Builder, EntryType, Header};

const DIR_MODE: u32 = 0o755;
const FILE_MODE: u32 = 0o644;
/// Gzip level: fixed, so that the bytes do not depend on a default.
const LEVEL: u32 = 6;

impl ReleaseFiles {
    /// The release as `.tar.gz` bytes.
    pub fn to_tar_gz(&self) -> io::Result<Vec<u8>> {
        self.write_tar_gz(Vec::new())
    }

    /// Writes the release as `.tar.gz` to `out` and gives it back.
    pub fn write_tar_gz<W: Write>(&self, out: W) -> io::Result<W> {
        let gz = GzBuilder::new()
            .mtime(0)
            .operating_system(255)
            .write(out, Compression::new(LEVEL));
        let mut tar = Builder::new(gz);
        let root = self.root();
        append_dir(&mut tar, root)?;
        let mut dirs_done = BTreeSet::new();
        for file in self.files() {
            // Each directory between the root and the file, once, before its first file.
            let parts: Vec<&str> = file.path.split('/').collect();
            for depth in 1..parts.len() {
                let dir = parts[..depth].join("/");
                if dirs_done.insert(dir.clone()) {
                    append_dir(&mut tar, &format!("{root}/{dir}"))?;
                }
            }
            let mut header = header(EntryType::Regular, FILE_MODE, file.bytes.len() as u64);
            tar.append_data(
                &mut header,
                format!("{root}/{}", file.path),
                file.bytes.as_slice(),
            )?;
        }
        tar.into_inner()?.finish()
    }
}

fn header(kind: EntryType, mode: u32, size: u64) -> Header {
    let mut header = Header::new_gnu();
    header.set_entry_type(kind);
    header.set_mode(mode);
    header.set_size(size);
    header.set_mtime(0);
    header.set_uid(0);
    header.set_gid(0);
    header
}

fn append_dir<W: Write>(tar: &mut Builder<W>, path: &str) -> io::Result<()> {
    let mut header = header(EntryType::Directory, DIR_MODE, 0);
    tar.append_data(&mut header, format!("{path}/"), io::empty())
}
