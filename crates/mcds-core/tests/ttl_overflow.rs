//! An adversarial review found: `Ttl::from(Duration)` "rounds up to whole seconds; saturates
//! at `u32::MAX` seconds". For `Duration::MAX` (`u64::MAX` s and a
//! fraction) the round-up adds 1 to `u64::MAX`: a panic in debug builds,
//! and in release builds it wraps to 0, which `Ttl::secs` turns into ONE
//! second. `Lock::new` passes `ttl.saturating_add(2 s)` through it, so any
//! TTL within 2 s of `u64::MAX` seconds lands there.

use std::time::Duration;

use mcds_core::Ttl;

#[test]
fn ttl_from_the_largest_duration_saturates() {
    let cases = [
        Duration::MAX,
        Duration::from_secs(u64::MAX).saturating_add(Duration::from_secs(2)),
        Duration::new(u64::MAX, 1),
    ];
    let mut wrong = Vec::new();
    for d in cases {
        let got = std::panic::catch_unwind(|| Ttl::from(d));
        match got {
            Ok(ttl) if ttl == Ttl::secs(u32::MAX) => println!("{d:?} -> {ttl:?}"),
            Ok(ttl) => {
                println!("{d:?} -> {ttl:?} (as_secs {:?})", ttl.as_secs());
                wrong.push(format!("{d:?} -> {ttl:?}"));
            }
            Err(_) => {
                println!("{d:?} -> panic");
                wrong.push(format!("{d:?} -> panic (add with overflow)"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "Ttl::from must saturate at u32::MAX seconds: {wrong:?}"
    );
}
