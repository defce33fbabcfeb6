//! Builds the C test (ffi/tests/c/test_mcds.c) against the real libmcds and
//! runs it against real memcached: with -Wall -Wextra -Wpedantic -Werror,
//! with ASan+UBSan, and under valgrind. The Python package
//! (bindings/python) and the PHP extension (bindings/php) have their own
//! suites, run by scripts/check-python.sh and scripts/check-php.sh.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mcds_testkit::MemcachedServer;

/// target/<profile>, where cargo put libmcds_ffi.so and libmcds_ffi.a.
fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let deps = exe.parent().expect("target/<profile>/deps");
    let profile = deps.parent().expect("target/<profile>");
    // `cargo test` refreshes deps/; target/<profile> holds what the last
    // `cargo build` left, which may be older: take the newer.
    let built = |d: &&Path| {
        std::fs::metadata(d.join(CARGO_SO))
            .and_then(|m| m.modified())
            .ok()
    };
    [profile, deps]
        .into_iter()
        .filter(|d| d.join(CARGO_SO).exists() && d.join(CARGO_A).exists())
        .max_by_key(|d| built(d))
        .unwrap_or_else(|| {
            panic!(
                "{CARGO_SO}/{CARGO_A} not found in {}: build with `cargo build -p mcds-ffi`",
                profile.display()
            )
        })
        .to_path_buf()
}

fn ffi_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A directory of the test's own for what it compiles, removed when the
/// test ends (a static C test binary with debug info is about 76 MB, and
/// nextest runs each test in a process of its own).
fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("mcds-ffi-")
        .tempdir()
        .expect("a scratch directory")
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let text = format!(
        "{cmd:?}\n--- stdout\n{}--- stderr\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    print!("{}", String::from_utf8_lossy(&out.stdout));
    out
}

/// `cc` with the strict flags, the include path and the C test source.
fn cc() -> Command {
    let mut cmd = Command::new("cc");
    cmd.args([
        "-std=c11",
        "-D_POSIX_C_SOURCE=200809L",
        // The suite shares handles between two threads.
        "-pthread",
        "-Wall",
        "-Wextra",
        "-Wpedantic",
        "-Werror",
    ])
    .arg(format!("-I{}", ffi_dir().join("../include").display()))
    .arg(ffi_dir().join("tests/c/test_mcds.c"));
    cmd
}

/// The shared and static libraries as cargo names them (for the crate,
/// mcds_ffi); installed, they are libmcds.so.<version> and libmcds.a.
const CARGO_SO: &str = "libmcds_ffi.so";
const CARGO_A: &str = "libmcds_ffi.a";

/// The SONAME that ffi/build.rs gives libmcds.so.
const SONAME: &str = "libmcds.so.0";

/// A directory laid out as an installed libmcds is: the library under its
/// SONAME, and `libmcds.so` linking to it for the linker. A program linked
/// here records the SONAME and loads `libmcds.so.0` at run time, as it
/// would from an install, so the tests fail if the SONAME is missing.
fn lay_out_installed_lib(scratch: &Path) -> PathBuf {
    let dir = scratch.join("lib");
    std::fs::create_dir_all(&dir).unwrap();
    let real = dir.join(SONAME);
    let _ = std::fs::remove_file(&real);
    std::fs::copy(lib_dir().join(CARGO_SO), &real).expect("copy libmcds_ffi.so");
    let link = dir.join("libmcds.so");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(SONAME, &link).expect("symlink libmcds.so");
    dir
}

/// Compile the C test with `extra` flags, linked to the shared library.
fn compile(scratch: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let lib = lay_out_installed_lib(scratch);
    let exe = scratch.join(name);
    run(cc()
        .arg("-g")
        .args(extra)
        .arg(format!("-L{}", lib.display()))
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        // RPATH, not RUNPATH: searched before LD_LIBRARY_PATH, which cargo
        // sets for tests and which can name a stale libmcds.so.
        .arg("-Wl,--disable-new-dtags")
        .args(["-lmcds", "-o"])
        .arg(&exe));
    exe
}

/// Three servers for the C suite's quorum lock, and `a,b,c`.
fn quorum() -> (Vec<MemcachedServer>, String) {
    let servers: Vec<MemcachedServer> = (0..3).map(|_| MemcachedServer::start_default()).collect();
    let list = servers
        .iter()
        .map(MemcachedServer::addr)
        .collect::<Vec<_>>()
        .join(",");
    (servers, list)
}

#[test]
fn c_test_suite() {
    let server = MemcachedServer::start_default();
    let (_quorum, members) = quorum();
    let scratch = scratch();
    let exe = compile(scratch.path(), "test_mcds", &[]);
    let out = run(Command::new(&exe)
        .env("MCDS_TEST_SERVERS", server.addr())
        .env("MCDS_TEST_QUORUM", &members));
    assert!(String::from_utf8_lossy(&out.stdout).contains("= 40000"));
}

#[test]
fn c_test_suite_with_asan_and_ubsan() {
    let server = MemcachedServer::start_default();
    let scratch = scratch();
    let exe = compile(
        scratch.path(),
        "test_mcds_asan",
        &["-fsanitize=address,undefined", "-fno-omit-frame-pointer"],
    );
    let (_quorum, members) = quorum();
    run(Command::new(&exe)
        .env("MCDS_TEST_SERVERS", server.addr())
        .env("MCDS_TEST_QUORUM", &members)
        .env("ASAN_OPTIONS", "detect_leaks=1:halt_on_error=1")
        .env("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1"));
}

#[test]
fn c_test_suite_under_valgrind() {
    let server = MemcachedServer::start_default();
    let (_quorum, members) = quorum();
    let scratch = scratch();
    let exe = compile(scratch.path(), "test_mcds_valgrind", &[]);
    let out = run(Command::new("valgrind")
        .args([
            "--error-exitcode=1",
            "--leak-check=full",
            "--errors-for-leak-kinds=definite",
            // Only definite leaks are shown: threads that live as long as
            // the process (futures-timer's timer thread, which a quorum
            // lock's wait for a slow server starts, and each thread's own
            // handle) end with it, and valgrind calls what they hold
            // "possibly lost".
            "--show-leak-kinds=definite",
            "--quiet",
        ])
        .arg(&exe)
        .env("MCDS_TEST_SERVERS", server.addr())
        .env("MCDS_TEST_QUORUM", &members)
        // Forked children would each be checked too; the plain run covers them.
        .env("MCDS_TEST_NO_FORK", "1"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.trim().is_empty(),
        "valgrind reported errors:\n{stderr}"
    );
}

#[test]
fn the_shared_library_has_its_soname_and_programs_record_it() {
    let lib = lib_dir().join(CARGO_SO);
    let out = run(Command::new("readelf").arg("-d").arg(&lib));
    let dynamic = String::from_utf8_lossy(&out.stdout);
    assert!(
        dynamic.contains(&format!("Library soname: [{SONAME}]")),
        "{} has no SONAME {SONAME}:\n{dynamic}",
        lib.display()
    );
    let scratch = scratch();
    let exe = compile(scratch.path(), "test_mcds_needed", &[]);
    let out = run(Command::new("readelf").arg("-d").arg(&exe));
    let dynamic = String::from_utf8_lossy(&out.stdout);
    assert!(
        dynamic.contains(&format!("Shared library: [{SONAME}]")),
        "a program linked with -lmcds does not need {SONAME}:\n{dynamic}"
    );
}

#[test]
fn c_links_statically() {
    let lib = lib_dir();
    let scratch = scratch();
    let exe = scratch.path().join("test_mcds_static");
    run(cc()
        .arg(lib.join(CARGO_A))
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&exe));
    let server = MemcachedServer::start_default();
    run(Command::new(&exe).env("MCDS_TEST_SERVERS", server.addr()));
}
