//! `mcds completions` and `mcds man` produce what bash and man read.

use std::process::Command;

fn mcds() -> Command {
    Command::new(assert_cmd::cargo::cargo_bin("mcds"))
}

/// What bash offers after `words`, with the script from `mcds completions
/// bash` loaded (the word under the cursor is the last one).
fn complete(words: &[&str]) -> Vec<String> {
    let script = mcds().args(["completions", "bash"]).output().unwrap();
    assert!(script.status.success());
    // A file of its own per call: the tests run at once in one process, and
    // a script rewritten while another bash sources it completes nothing.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = tempfile::Builder::new()
        .prefix("mcds-completion-")
        .tempdir()
        .expect("a scratch directory");
    let file = dir.path().join(format!("mcds-{call}.bash"));
    std::fs::write(&file, &script.stdout).unwrap();
    let words: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let probe = format!(
        "source {file}; COMP_WORDS=({words}); COMP_CWORD={cword}; COMP_LINE=\"${{COMP_WORDS[*]}}\"; \
         COMP_POINT=${{#COMP_LINE}}; _mcds mcds \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"; \
         printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        file = file.display(),
        words = words.join(" "),
        cword = words.len() - 1,
    );
    let out = Command::new("bash").args(["-c", &probe]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn bash_completes_commands_and_flock_options() {
    let top = complete(&["mcds", "lo"]);
    assert!(
        top.contains(&"lock".to_string()) && top.contains(&"log".to_string()),
        "{top:?}"
    );
    let sub = complete(&["mcds", "lock", ""]);
    assert!(
        sub.contains(&"run".to_string()) && sub.contains(&"status".to_string()),
        "{sub:?}"
    );
    let opts = complete(&["mcds", "lock", "run", "--"]);
    for flag in [
        "--nonblock",
        "--wait",
        "--conflict-exit-code",
        "--command",
        "--ttl",
        "--fencing",
        "--key",
    ] {
        assert!(
            opts.contains(&flag.to_string()),
            "{flag} not offered: {opts:?}"
        );
    }
    let shells = complete(&["mcds", "completions", ""]);
    assert!(shells.contains(&"zsh".to_string()), "{shells:?}");
}

/// Issue 19's commands and their shape options are offered too.
#[test]
fn bash_completes_the_time_series_and_sketch_commands() {
    let top = complete(&["mcds", ""]);
    for cmd in ["series", "packed", "map", "leaderboard", "sbloom"] {
        assert!(top.contains(&cmd.to_string()), "{cmd} not offered: {top:?}");
    }
    let sub = complete(&["mcds", "series", ""]);
    for cmd in ["record", "range", "aggregate", "union", "intersection"] {
        assert!(sub.contains(&cmd.to_string()), "{cmd} not offered: {sub:?}");
    }
    let opts = complete(&["mcds", "series", "range", "--"]);
    for flag in ["--resolution", "--step", "--from-ms", "--to-ms", "--last"] {
        assert!(
            opts.contains(&flag.to_string()),
            "{flag} not offered: {opts:?}"
        );
    }
    let widths = complete(&["mcds", "packed", "incr", "--width", ""]);
    assert_eq!(widths, ["u8", "u16", "u32"]);
}

#[test]
fn the_man_page_renders() {
    let page = mcds().arg("man").output().unwrap();
    assert!(page.status.success());
    let dir = std::env::temp_dir().join(format!("mcds-man-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("mcds.1");
    std::fs::write(&file, &page.stdout).unwrap();
    let out = Command::new("man")
        .arg("-l")
        .arg(&file)
        .env("MANWIDTH", "100")
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .output()
        .expect("man (Debian's man-db) renders the page");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for part in [
        "NAME",
        "mcds - Distributed data structures on memcached",
        "SYNOPSIS",
        "--servers",
        "EXIT STATUS",
        "unavailable: connection, timeout or server error (retrying may help)",
        "configuration: --servers/MCDS_SERVERS does not parse or open",
        "mcds-lock(1)",
    ] {
        assert!(
            text.contains(part),
            "the rendered page lacks {part:?}:\n{text}"
        );
    }
    // The exit codes are the EXIT STATUS section, before VERSION, not an
    // EXTRA section.
    assert!(!text.contains("EXTRA"), "{text}");
    assert!(
        text.find("EXIT STATUS").unwrap() > text.find("OPTIONS").unwrap()
            && text.find("EXIT STATUS").unwrap() < text.find("VERSION").unwrap(),
        "{text}"
    );
    // One page per subcommand into DIR (as `mcds man --help` says), lock
    // run's included, each with the exit codes; `--dir DIR` is the same.
    for (i, args) in [vec!["man"], vec!["man", "--dir"]].into_iter().enumerate() {
        let pages = dir.join(format!("pages{i}"));
        let status = mcds().args(&args).arg(&pages).status().unwrap();
        assert!(status.success(), "{args:?}");
        let run = std::fs::read_to_string(pages.join("mcds-lock-run.1")).unwrap();
        assert!(run.contains("nonblock"), "{run}");
        assert!(run.contains(".SH \"EXIT STATUS\""), "{run}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
