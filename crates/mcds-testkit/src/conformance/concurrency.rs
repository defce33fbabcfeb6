//! Races: several threads on one key lose nothing and create once.

use mcds_core::Ttl;

use super::{Env, bump, k, value};

/// Concurrent updates from 4 threads lose nothing.
pub fn update_concurrent(env: &Env) {
    let key = k("updc");
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..25 {
                    env.s().update(&key, Ttl::Never, 1000, &mut bump).unwrap();
                }
            });
        }
    });
    assert_eq!(value(env, &key).unwrap(), b"100");
}

/// incr_or_init from 4 threads: no increment lost, exactly one creation.
pub fn incr_or_init_concurrent(env: &Env) {
    let key = k("ioic");
    let created = std::sync::atomic::AtomicU32::new(0);
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..250 {
                    if env.s().incr_or_init(&key, 1, 1, Ttl::Never).unwrap() == 1 {
                        created.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    }
                }
            });
        }
    });
    assert_eq!(env.s().get(&key).unwrap().unwrap().counter(), Some(1000));
    assert_eq!(created.load(std::sync::atomic::Ordering::SeqCst), 1);
}

/// append_or_add from 4 threads: every piece lands exactly once.
pub fn append_or_add_concurrent(env: &Env) {
    let key = k("aoac");
    std::thread::scope(|scope| {
        for t in 0..4 {
            let key = &key;
            scope.spawn(move || {
                for i in 0..50 {
                    env.s()
                        .append_or_add(key, format!("{t}.{i} ").as_bytes(), Ttl::Never)
                        .unwrap();
                }
            });
        }
    });
    let text = String::from_utf8(value(env, &key).unwrap()).unwrap();
    let mut pieces: Vec<&str> = text.split_whitespace().collect();
    pieces.sort_unstable();
    let mut want: Vec<String> = (0..4)
        .flat_map(|t| (0..50).map(move |i| format!("{t}.{i}")))
        .collect();
    want.sort_unstable();
    assert_eq!(pieces, want);
}

/// add from 4 threads on one key: exactly one wins.
pub fn add_race_one_winner(env: &Env) {
    let wins = std::sync::atomic::AtomicU32::new(0);
    std::thread::scope(|scope| {
        for t in 0..4 {
            let wins = &wins;
            scope.spawn(move || {
                for round in 0..20 {
                    let key = k(&format!("race{round}"));
                    if env
                        .s()
                        .add(&key, format!("{t}").as_bytes(), Ttl::Never)
                        .unwrap()
                        .is_stored()
                    {
                        wins.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    }
                }
            });
        }
    });
    assert_eq!(wins.load(std::sync::atomic::Ordering::SeqCst), 20);
}
