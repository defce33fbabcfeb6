//! What the multi-process tests share: starting worker processes.

use std::process::{Output, Stdio};

const WORKER: &str = env!("CARGO_BIN_EXE_mcds-stress-worker");

/// Start `n` workers at once with `args` (`{id}` replaced by the worker's
/// number); wait for all; their stdout lines.
pub fn run_workers(n: usize, args: &[&str]) -> Vec<String> {
    let children: Vec<_> = (0..n)
        .map(|id| {
            // Tied to this process: a killed test leaves no worker behind.
            mcds_testkit::spawn_tied(WORKER, |c| {
                c.args(args.iter().map(|a| a.replace("{id}", &id.to_string())))
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped());
            })
            .expect("spawn worker")
        })
        .collect();
    children
        .into_iter()
        .map(|c| {
            let Output {
                status,
                stdout,
                stderr,
            } = c.wait_with_output().expect("wait for worker");
            assert!(
                status.success(),
                "worker failed: {}",
                String::from_utf8_lossy(&stderr)
            );
            String::from_utf8_lossy(&stdout).trim().to_string()
        })
        .collect()
}
