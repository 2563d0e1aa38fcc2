//! Step 6 of a release site build: each file of the site's package compressed once, at the
//! build, instead of on every response: `compressed/claimpool.wasm.br` (brotli, quality 11) and
//! `compressed/claimpool.wasm.gz` (gzip, level 9) for `claimpool.wasm`, and so on.
//!
//! [`MANIFEST`] lists the files compressed with the SHA-256 of each one's content. The server
//! (server/src/assets.rs) serves a compressed copy only for the content the manifest names, so
//! a package rebuilt by another tool (`cargo leptos watch` rewrites the files, not their
//! compressed copies) is never answered with a stale copy. The copies are in a directory of
//! their own, not beside the files: leptos's file handler, which serves a package without a
//! manifest, sends a `.br` or `.gz` beside a file without asking whether it is current. A
//! development build removes the manifest and the copies.

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::Path;

/// The list of compressed files, in the package directory: a line `<file> <sha256 hex>` each.
pub const MANIFEST: &str = "precompressed.txt";
/// The copies' directory, in the package directory.
pub const COPIES: &str = "compressed";

/// The package's files that are compressed (every file a page loads).
const EXTENSIONS: [&str; 3] = ["js", "wasm", "css"];

/// Compresses every JavaScript, WebAssembly and CSS file of `pkg` and writes [`MANIFEST`];
/// returns the bytes of the distinct contents before and after brotli, for the build's log.
pub fn precompress(pkg: &Path) -> Result<(u64, u64)> {
    remove(pkg)?;
    let copies = pkg.join(COPIES);
    std::fs::create_dir(&copies).with_context(|| format!("creating {}", copies.display()))?;
    let mut manifest = String::new();
    let (mut plain, mut brotli_bytes) = (0, 0);
    // Files of equal content (claimpool_bg.wasm is claimpool.wasm under wasm-bindgen's own
    // name) are compressed once.
    let mut done: std::collections::HashMap<String, (Vec<u8>, Vec<u8>)> = Default::default();
    for file in files(pkg)? {
        let path = pkg.join(&file);
        let content =
            std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        let digest = hex(&Sha256::digest(&content));
        if !done.contains_key(&digest) {
            let br = brotli(&content)?;
            let gz = gzip(&content).with_context(|| format!("gzip of {}", path.display()))?;
            plain += content.len() as u64;
            brotli_bytes += br.len() as u64;
            done.insert(digest.clone(), (br, gz));
        }
        let (br, gz) = &done[&digest];
        write(&copies.join(format!("{file}.br")), br)?;
        write(&copies.join(format!("{file}.gz")), gz)?;
        manifest.push_str(&format!("{file} {digest}\n"));
    }
    write(&pkg.join(MANIFEST), manifest.as_bytes())?;
    Ok((plain, brotli_bytes))
}

/// Removes the manifest and every compressed copy (a development build serves from disk).
pub fn remove(pkg: &Path) -> Result<()> {
    for (path, result) in [
        (pkg.join(MANIFEST), std::fs::remove_file(pkg.join(MANIFEST))),
        (pkg.join(COPIES), std::fs::remove_dir_all(pkg.join(COPIES))),
    ] {
        match result {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("removing {}", path.display())),
        }
    }
    Ok(())
}

/// The names of the package's files to compress, sorted.
fn files(pkg: &Path) -> Result<Vec<String>> {
    let mut names = Vec::new();
    let entries = std::fs::read_dir(pkg).with_context(|| format!("listing {}", pkg.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("listing {}", pkg.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let ext = Path::new(&name).extension().and_then(|e| e.to_str());
        if ext.is_some_and(|ext| EXTENSIONS.contains(&ext)) && entry.path().is_file() {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

fn brotli(content: &[u8]) -> Result<Vec<u8>> {
    let params = brotli::enc::BrotliEncoderParams {
        quality: 11,
        lgwin: 24,
        ..Default::default()
    };
    let mut out = Vec::new();
    brotli::BrotliCompress(&mut &content[..], &mut out, &params).context("brotli")?;
    Ok(out)
}

fn gzip(content: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(content)?;
    encoder.finish()
}

fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn each_copy_decompresses_to_its_file_and_the_manifest_names_its_hash() {
        let dir = tempdir();
        let wasm: Vec<u8> = (0..50_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        std::fs::write(dir.join("claimpool.wasm"), &wasm).unwrap();
        std::fs::write(dir.join("claimpool_bg.wasm"), &wasm).unwrap();
        std::fs::write(dir.join("claimpool.css"), "body { color: black }\n").unwrap();
        std::fs::write(dir.join("notes.txt"), "not a page's file").unwrap();
        let (plain, br) = precompress(&dir).unwrap();
        assert_eq!(plain, wasm.len() as u64 + 22);
        assert!(br < plain / 4, "{br} of {plain}");

        let mut unbrotli = Vec::new();
        brotli::BrotliDecompress(
            &mut std::fs::File::open(dir.join("compressed/claimpool.wasm.br")).unwrap(),
            &mut unbrotli,
        )
        .unwrap();
        assert_eq!(unbrotli, wasm);
        let mut ungzip = Vec::new();
        flate2::read::GzDecoder::new(
            std::fs::File::open(dir.join("compressed/claimpool.wasm.gz")).unwrap(),
        )
        .read_to_end(&mut ungzip)
        .unwrap();
        assert_eq!(ungzip, wasm);
        assert!(!dir.join("compressed/notes.txt.br").exists());
        assert_eq!(
            std::fs::read(dir.join("compressed/claimpool_bg.wasm.br")).unwrap(),
            std::fs::read(dir.join("compressed/claimpool.wasm.br")).unwrap()
        );

        // The manifest's hashes, checked against sha256sum's.
        let manifest = std::fs::read_to_string(dir.join(MANIFEST)).unwrap();
        let sha256sum = std::process::Command::new("sha256sum")
            .args(["claimpool.css", "claimpool.wasm", "claimpool_bg.wasm"])
            .current_dir(&dir)
            .output()
            .unwrap();
        let expected: String = String::from_utf8(sha256sum.stdout)
            .unwrap()
            .lines()
            .map(|l| {
                let (hash, file) = l.split_once("  ").unwrap();
                format!("{file} {hash}\n")
            })
            .collect();
        assert_eq!(manifest, expected);

        remove(&dir).unwrap();
        assert!(!dir.join(MANIFEST).exists());
        assert!(!dir.join("compressed/claimpool.wasm.br").exists());
        assert!(!dir.join("compressed").exists());
        assert!(dir.join("claimpool.wasm").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn tempdir() -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("xtask-compress-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
}
