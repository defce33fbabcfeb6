//! Replays the fuzz seed corpus and every saved regression input through the
//! harnesses the fuzz targets call, on stable Rust.

use std::path::{Path, PathBuf};

type Harness = fn(&[u8]);

const TARGETS: [(&str, Harness); 6] = [
    ("set_text", mc_testkit::fuzz::set_text_codec),
    ("set_binary", mc_testkit::fuzz::set_binary_codec),
    ("event_frames", mc_testkit::fuzz::event_frames),
    ("hll_registers", mc_testkit::fuzz::hll_registers),
    ("bloom_blocks", mc_testkit::fuzz::bloom_blocks),
    ("bitmap_bits", mc_testkit::fuzz::bitmap_bits),
];

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
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let mut total = 0;
    for (target, harness) in TARGETS {
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
