//! include/mcds.h must be exactly what cbindgen generates from ffi/src.
//! Regenerate it with `MCDS_BLESS=1 cargo test -p mcds-ffi --test header`.

use std::path::Path;

/// The C header as cbindgen generates it from ffi/src now.
fn generated_c_header() -> Vec<u8> {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("read ffi/cbindgen.toml");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut generated);
    generated
}

#[test]
fn committed_header_is_current() {
    let generated = generated_c_header();
    let header = Path::new(env!("CARGO_MANIFEST_DIR")).join("../include/mcds.h");
    if std::env::var_os("MCDS_BLESS").is_some() {
        std::fs::write(&header, &generated).expect("write include/mcds.h");
    }
    let committed = std::fs::read(&header).unwrap_or_default();
    assert!(
        committed == generated,
        "include/mcds.h is stale: regenerate it with `MCDS_BLESS=1 cargo test -p mcds-ffi --test header` and commit it"
    );
}
