//! Step 2a: the front end's module split at its lazy points (leptos's `#[lazy]` and
//! `#[lazy_route]`), as `cargo leptos build --split` splits it: the lead's and the admin's pages
//! go into modules of their own, which the browser fetches when such a page is first shown, so
//! that an annotator's first load carries none of them. The main module then goes through
//! wasm-bindgen as the unsplit one did.
//!
//! The split needs the linker's relocations in the module (`-C link-args=--emit-relocs`, set for
//! the wasm target in .cargo/config.toml).

use anyhow::{anyhow, Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The loader the main module imports, under the name leptos's `<HydrationScripts>` looks for
/// when file hashing is off; it sits beside `claimpool.js` and fetches each split module relative
/// to its own address (so the versioned `/v/{version}/pkg/` path holds for them all).
pub const LINK_NAME: &str = "__wasm_split.______________________.js";
/// Which modules each lazy point needs: read by leptos on the server to preload them.
pub const MANIFEST: &str = "__wasm_split_manifest.json";

/// Splits the module `input` into `main_out` (the main module, for wasm-bindgen) and split
/// modules in `pkg`, with the loader and the manifest; returns the split modules' paths. The
/// split modules of an earlier build are removed first.
pub fn split(input: &Path, pkg: &Path, main_out: &Path) -> Result<Vec<PathBuf>> {
    remove_stale(pkg)?;
    let bytes = std::fs::read(input).with_context(|| format!("reading {}", input.display()))?;
    let link = format!("./{LINK_NAME}");
    let mut options = wasm_split_cli_support::Options::new(&bytes);
    options.output_dir = pkg;
    options.main_out_path = main_out;
    options.link_name = &link;
    // Relative to the loader: the very module the page imported, not a second copy of it.
    options.main_module = "./claimpool.js";
    let split = wasm_split_cli_support::transform(options)
        .map_err(|e| anyhow!("splitting {}: {e:?}", input.display()))?;
    let manifest: BTreeMap<String, Vec<String>> = split.prefetch_map.into_iter().collect();
    let json = serde_json::to_string_pretty(&manifest).context("the split manifest")?;
    std::fs::write(pkg.join(MANIFEST), json)
        .with_context(|| format!("writing {}", pkg.join(MANIFEST).display()))?;
    let mut modules = split.split_modules;
    modules.sort();
    Ok(modules)
}

/// Whether `name` is a file of the package's split (a split module, the loader, the manifest).
fn is_split_file(name: &str) -> bool {
    let main = [
        format!("{}.wasm", crate::OUTPUT_NAME),
        format!("{}_bg.wasm", crate::OUTPUT_NAME),
    ];
    name == LINK_NAME
        || name == MANIFEST
        || (name.ends_with(".wasm") && !main.iter().any(|m| m == name))
}

fn remove_stale(pkg: &Path) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(pkg) else {
        return Ok(());
    };
    for entry in entries {
        let entry = entry.with_context(|| format!("listing {}", pkg.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if is_split_file(&name) && entry.path().is_file() {
            std::fs::remove_file(entry.path())
                .with_context(|| format!("removing {}", entry.path().display()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_split_files_are_stale() {
        for name in [
            LINK_NAME,
            MANIFEST,
            "split_report_page_12.wasm",
            "chunk_0_a.wasm",
        ] {
            assert!(is_split_file(name), "{name}");
        }
        for name in [
            "claimpool.wasm",
            "claimpool_bg.wasm",
            "claimpool.js",
            "claimpool.css",
            "precompressed.txt",
        ] {
            assert!(!is_split_file(name), "{name}");
        }
    }
}
