//! Key construction is injective: two different (kind, name, part) never
//! give the same key, whatever the names hold (`:`, `%`, UTF-8; a name with
//! a space is refused).

use mcds_core::{Key, escape_name};
use proptest::prelude::*;

/// Every kind a structure uses in its keys.
const KINDS: &[&str] = &[
    "counter", "views", "window", "shadow", "rate", "log", "lock", "set", "sset", "ints", "table",
    "bloom", "hll", "bitmap",
];

fn name() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just(':'),
            Just('%'),
            Just('a'),
            Just('b'),
            Just(' '),
            Just('3'),
            Just('A'),
            Just('é')
        ],
        1..12,
    )
    .prop_map(|c| c.into_iter().collect())
}

fn part() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("owner".to_string()),
        Just("members".to_string()),
        Just("log".to_string()),
        (0u64..1000).prop_map(|n| n.to_string()),
        name()
            .prop_map(|m| format!("v:{m}"))
            .prop_filter("key bytes", |p| !p.contains(' ')),
    ]
}

proptest! {
    #![proptest_config(mcds_testkit::seed::proptest_config(file!(), 2000))]

    #[test]
    fn different_parts_give_different_keys(
        a in (0..KINDS.len(), name(), part()),
        b in (0..KINDS.len(), name(), part()),
    ) {
        let ka = Key::parts("app/", KINDS[a.0], &a.1, &a.2);
        let kb = Key::parts("app/", KINDS[b.0], &b.1, &b.2);
        if let (Ok(ka), Ok(kb)) = (ka, kb) {
            let same = (KINDS[a.0], &a.1, &a.2) == (KINDS[b.0], &b.1, &b.2);
            prop_assert_eq!(ka == kb, same, "{:?} {:?} -> {:?} {:?}", a, b, ka, kb);
        }
    }

    /// The colliding shape of unescaped keys: moving what follows a name's
    /// first `:` into the part gave the same bytes.
    #[test]
    fn a_separator_moved_from_name_to_part_gives_another_key(
        kind in 0..KINDS.len(),
        head in name(),
        tail in name(),
        p in part(),
    ) {
        let whole = format!("{head}:{tail}");
        let a = Key::parts("", KINDS[kind], &whole, &p);
        let b = Key::parts("", KINDS[kind], &head, format!("{tail}:{p}"));
        if let (Ok(a), Ok(b)) = (a, b) {
            prop_assert_ne!(a, b);
        }
    }

    #[test]
    fn escaped_names_have_no_separator_and_round_trip(n in name()) {
        let e = escape_name(&n);
        prop_assert!(!e.contains(':'));
        // Undo the escapes: the name comes back.
        let bytes = e.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'%' {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
                out.push(u8::from_str_radix(hex, 16).unwrap());
                i += 3;
            } else {
                out.push(bytes[i]);
                i += 1;
            }
        }
        prop_assert_eq!(String::from_utf8(out).unwrap(), n);
    }
}

#[test]
fn the_reported_collision_is_gone() {
    let list = Key::parts("", "table", "users:v:admin", "members").unwrap();
    let member = Key::parts("", "table", "users", "v:admin:members").unwrap();
    assert_ne!(list, member);
    assert_eq!(list.as_bytes(), b"table:users%3Av%3Aadmin:members");
    // Plain names are unchanged.
    assert_eq!(
        Key::parts("", "lock", "nightly", "owner")
            .unwrap()
            .as_bytes(),
        b"lock:nightly:owner"
    );
}
