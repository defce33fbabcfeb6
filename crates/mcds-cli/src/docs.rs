//! `mcds completions` and `mcds man`: shell completions (clap_complete)
//! and man pages (clap_mangen), generated from the same clap definition as
//! `--help`. `scripts/install-cli.sh` installs both.

use std::io::Write;
use std::path::Path;

use clap::CommandFactory;

use crate::args::{Cli, EXIT_CODES};
use crate::context::{CliResult, Failure};
use crate::{INVALID_INPUT, OK};

/// Print the completion script for `shell` on stdout.
pub(crate) fn completions(shell: clap_complete::Shell) {
    clap_complete::generate(shell, &mut Cli::command(), "mcds", &mut std::io::stdout());
}

/// Print mcds(1) on stdout, or write it and a page per subcommand
/// (`mcds-lock-run.1`, …) into `dir`, creating it if missing.
pub(crate) fn man(dir: Option<&Path>) -> CliResult {
    let failed = |what: String, e: std::io::Error| Failure {
        code: INVALID_INPUT,
        message: format!("{what}: {e}"),
    };
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    match dir {
        None => match std::io::stdout().write_all(&page(cmd)) {
            // `mcds man | head`: the reader has seen enough.
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                return Err(failed("cannot print the man page".into(), e));
            }
            _ => {}
        },
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .map_err(|e| failed(format!("cannot create {}", dir.display()), e))?;
            write_pages(cmd, dir)
                .map_err(|e| failed(format!("cannot write man pages into {}", dir.display()), e))?;
        }
    }
    Ok(OK)
}

/// `cmd`'s page and its subcommands' (`mcds-lock-run.1`), into `dir`.
fn write_pages(cmd: clap::Command, dir: &Path) -> std::io::Result<()> {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_pages(sub.clone(), dir)?;
    }
    let name = clap_mangen::Man::new(cmd.clone()).get_filename();
    std::fs::write(dir.join(name), page(cmd))
}

/// `cmd`'s man page: clap_mangen's sections, with the exit codes in an
/// EXIT STATUS section (where man-pages(7) puts them, after OPTIONS)
/// rather than as the EXTRA section clap_mangen makes of `--help`'s text.
fn page(cmd: clap::Command) -> Vec<u8> {
    let cmd = cmd.after_help(None::<&str>);
    let mut page = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = clap_mangen::Man::new(cmd).render(&mut page);
    let mut status = roff::Roff::new();
    status.control("SH", ["EXIT STATUS"]);
    for (code, meaning) in EXIT_CODES {
        status.control("TP", []);
        status.text([roff::bold(*code)]);
        status.text([roff::roman(*meaning)]);
    }
    let status = status.render().into_bytes();
    // Before VERSION (or at the end), after OPTIONS and SUBCOMMANDS.
    let at = find(&page, b"\n.SH VERSION").map_or(page.len(), |i| i + 1);
    page.splice(at..at, status);
    page
}

/// Where `needle` first starts in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
