//! The Python arms of the `peers` bench: a Python process
//! (`bindings/python/benches/peers_arms.py`) that runs mcds's
//! `Counter.incr` or pylibmc's `incr` on request, so that the Python row
//! is measured in the same interleaved rounds, against the same memcached,
//! as every other row of the table.
//!
//! The interpreter comes from `$PEERS_PYTHON`: one that imports `mcds` and
//! `pylibmc` (`scripts/bench-python-env.sh` makes one). Without it the row
//! is left out, with a message, as the redis rows are without redis-server.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::time::Duration;

use mcds_testkit::spawn_tied;

/// The running Python process; killed on drop (and with the bench: it is
/// started through [`spawn_tied`]).
pub struct PythonArms {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Drop for PythonArms {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl PythonArms {
    /// Start the arms' process for the memcached at `addr` with the
    /// interpreter named by `$PEERS_PYTHON`. `Err` says why the row is left
    /// out: no `$PEERS_PYTHON`, or a process that did not get ready (its
    /// stderr is the bench's).
    pub fn start(addr: &str) -> Result<PythonArms, String> {
        let Some(python) = std::env::var_os("PEERS_PYTHON") else {
            return Err(
                "no $PEERS_PYTHON: PEERS_PYTHON=$(scripts/bench-python-env.sh) runs it".into(),
            );
        };
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../bindings/python/benches/peers_arms.py");
        let mut child = spawn_tied(&python, |c| {
            c.arg(&script)
                .arg(addr)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped());
        })
        .map_err(|e| format!("cannot run {}: {e}", python.to_string_lossy()))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            return Err("no pipes to the Python process".into());
        };
        let mut arms = PythonArms {
            child,
            stdin,
            stdout: BufReader::new(stdout),
        };
        match arms.line() {
            Ok(line) if line == "ready" => Ok(arms),
            Ok(line) => Err(format!("the Python process said {line:?}, not \"ready\"")),
            Err(e) => Err(format!("the Python process did not start: {e}")),
        }
    }

    fn line(&mut self) -> std::io::Result<String> {
        let mut line = String::new();
        if self.stdout.read_line(&mut line)? == 0 {
            return Err(std::io::Error::other("it exited (see its stderr above)"));
        }
        Ok(line.trim().to_string())
    }

    /// Run `ops` sequential increments of arm `name` (`mcds` or
    /// `pylibmc`); the time they took, as the Python process measured it.
    /// Panics if the process fails: the bench's figures would be wrong.
    pub fn run(&mut self, name: &str, ops: u64) -> Duration {
        writeln!(self.stdin, "{name} {ops}").expect("request to the Python arms");
        self.stdin.flush().expect("request to the Python arms");
        let line = self.line().expect("reply of the Python arms");
        let nanos: u64 = line
            .parse()
            .unwrap_or_else(|_| panic!("the Python arms answered {line:?}"));
        Duration::from_nanos(nanos)
    }
}
