//! Replays the fuzz seed corpus and every saved regression input through the
//! harnesses the fuzz targets call, on stable Rust, and checks that every
//! fuzz target is listed in [`mcds_fuzz::TARGETS`] (so it is replayed here).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

fn inputs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_none_or(|e| e != "md"))
        .collect();
    files.sort();
    files
}

#[test]
fn replay_seeds_and_regressions() {
    let fuzz = fuzz_dir();
    let mut total = 0;
    for &(target, harness) in mcds_fuzz::TARGETS {
        let seeds = inputs(&fuzz.join("seeds").join(target));
        assert!(!seeds.is_empty(), "no seed corpus for {target}");
        let regressions = inputs(&fuzz.join("regressions").join(target));
        for file in seeds.iter().chain(&regressions) {
            let data = std::fs::read(file).unwrap();
            let outcome = std::panic::catch_unwind(|| harness(&data));
            assert!(outcome.is_ok(), "{target}: {} fails", file.display());
            total += 1;
        }
        println!(
            "{target}: {} seeds, {} regressions replayed",
            seeds.len(),
            regressions.len()
        );
    }
    println!("fuzz replay: {total} inputs, 0 failures");
}

/// The targets in `fuzz/fuzz_targets/`, the `[[bin]]`s of `fuzz/Cargo.toml`
/// and [`mcds_fuzz::TARGETS`] name the same targets: a target left out of
/// `TARGETS` would never be replayed on stable.
#[test]
fn every_fuzz_target_is_replayed() {
    let fuzz = fuzz_dir();
    let files: BTreeSet<String> = std::fs::read_dir(fuzz.join("fuzz_targets"))
        .expect("fuzz/fuzz_targets")
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            Some(name.strip_suffix(".rs")?.to_string())
        })
        .collect();
    let manifest = std::fs::read_to_string(fuzz.join("Cargo.toml")).expect("fuzz/Cargo.toml");
    let bins: BTreeSet<String> = manifest
        .split("[[bin]]")
        .skip(1)
        .filter_map(|bin| {
            let line = bin.lines().find(|l| l.trim_start().starts_with("name"))?;
            Some(line.split('"').nth(1)?.to_string())
        })
        .collect();
    let listed: BTreeSet<String> = mcds_fuzz::TARGETS
        .iter()
        .map(|(name, _)| name.to_string())
        .collect();
    assert!(listed.len() >= 6, "found only {listed:?}");
    assert_eq!(
        files, listed,
        "fuzz/fuzz_targets/*.rs vs mcds_fuzz::TARGETS"
    );
    assert_eq!(
        bins, listed,
        "[[bin]]s of fuzz/Cargo.toml vs mcds_fuzz::TARGETS"
    );
}
