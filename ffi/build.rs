//! Gives libmcds.so its SONAME, `libmcds.so.<ABI>`.
//!
//! The ABI number is the C ABI's own version, not the crate's: it changes
//! only when a change to `include/mcds.h` breaks programs linked against
//! the previous library (a removed or changed function, a renumbered code),
//! and CHANGELOG.md says so. Programs link to `libmcds.so`, record
//! `libmcds.so.0` and load that at run time, so two ABIs can be installed
//! side by side. `scripts/install-libmcds.sh` installs the file as
//! `libmcds.so.<crate version>` with the two links.

/// The C ABI version: the number in the SONAME.
const ABI: u32 = 0;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    // ELF platforms read -soname; macOS and Windows name libraries otherwise.
    if !matches!(os.as_str(), "macos" | "ios" | "windows") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libmcds.so.{ABI}");
    }
}
