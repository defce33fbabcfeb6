//! `mcds completions` and `mcds man`: shell completions (clap_complete)
//! and man pages (clap_mangen), generated from the same clap definition as
//! `--help`. `scripts/install-cli.sh` installs both.

use std::path::Path;

use clap::CommandFactory;

use crate::args::Cli;
use crate::context::{CliResult, Failure};
use crate::{INVALID_INPUT, OK};

/// Print the completion script for `shell` on stdout.
pub(crate) fn completions(shell: clap_complete::Shell) {
    clap_complete::generate(shell, &mut Cli::command(), "mcds", &mut std::io::stdout());
}

/// Print mcds(1) on stdout, or write it and a page per subcommand
/// (`mcds-lock-run.1`, …) into `dir`.
pub(crate) fn man(dir: Option<&Path>) -> CliResult {
    let failed = |what: String, e: std::io::Error| Failure {
        code: INVALID_INPUT,
        message: format!("{what}: {e}"),
    };
    let cmd = Cli::command();
    match dir {
        None => match clap_mangen::Man::new(cmd).render(&mut std::io::stdout()) {
            // `mcds man | head`: the reader has seen enough.
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                return Err(failed("cannot print the man page".into(), e));
            }
            _ => {}
        },
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .map_err(|e| failed(format!("cannot create {}", dir.display()), e))?;
            clap_mangen::generate_to(cmd, dir)
                .map_err(|e| failed(format!("cannot write man pages into {}", dir.display()), e))?;
        }
    }
    Ok(OK)
}
