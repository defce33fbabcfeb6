//! `mcds hll`, `mcds bloom`, `mcds bitmap`, `mcds leaderboard` and `mcds
//! sbloom`: the mcds-sketch structures.

use mcds_core::Ttl;
use mcds_sketch::{ActivityBitmap, BloomFilter, HyperLogLog, Leaderboard, ScalableBloomFilter};
use serde_json::{Value, json};

use crate::args::{
    BitmapCmd, BitmapShape, BloomCmd, BloomShape, HllCmd, LeaderboardCmd, SbloomCmd, SbloomShape,
};
use crate::context::{CliResult, Ctx, json_line, line};
use crate::{NEGATIVE, OK};

pub(crate) fn hll(ctx: &Ctx, cmd: HllCmd) -> CliResult {
    let open = |name: &str| HyperLogLog::new(&ctx.scope, name);
    match cmd {
        HllCmd::Add { name, elements } => {
            let changed = open(&name)?.add_many(&elements)?;
            ctx.print(
                u8::from(changed),
                json!({ "hll": name, "changed": changed }),
            );
        }
        HllCmd::Count { names } => {
            let sketches = names
                .iter()
                .map(|n| open(n))
                .collect::<Result<Vec<_>, _>>()?;
            let refs: Vec<&HyperLogLog> = sketches.iter().collect();
            let count = HyperLogLog::count_union(&refs)?;
            ctx.print(count, json!({ "hll": names, "count": count }));
        }
        HllCmd::Merge { target, sources } => {
            let sketches = sources
                .iter()
                .map(|n| open(n))
                .collect::<Result<Vec<_>, _>>()?;
            let refs: Vec<&HyperLogLog> = sketches.iter().collect();
            let target_hll = open(&target)?;
            target_hll.merge(&refs)?;
            let count = target_hll.count()?;
            ctx.print(
                count,
                json!({ "hll": target, "merged": sources, "count": count }),
            );
        }
    }
    Ok(OK)
}

pub(crate) fn bloom(ctx: &Ctx, cmd: BloomCmd) -> CliResult {
    let open = |name: &str, shape: &BloomShape| {
        BloomFilter::new(&ctx.scope, name, shape.capacity, shape.fpr)
    };
    match cmd {
        BloomCmd::Add {
            name,
            elements,
            shape,
        } => {
            let new = open(&name, &shape)?.add_many(&elements)?;
            ctx.print(new, json!({ "bloom": name, "new": new }));
            Ok(OK)
        }
        BloomCmd::Check {
            name,
            element,
            shape,
        } => {
            let found = open(&name, &shape)?.contains(&element)?;
            if ctx.json {
                json_line(json!({ "bloom": name, "element": element, "maybe_present": found }));
            }
            Ok(if found { OK } else { NEGATIVE })
        }
    }
}

pub(crate) fn bitmap(ctx: &Ctx, cmd: BitmapCmd) -> CliResult {
    let open = |name: &str, shape: &BitmapShape| {
        ActivityBitmap::new(&ctx.scope, name, shape.start, shape.unit)
    };
    match cmd {
        BitmapCmd::Mark {
            name,
            at_ms,
            index,
            shape,
        } => {
            let b = open(&name, &shape)?;
            let previous = match (index, at_ms) {
                (Some(i), _) => b.set(i)?,
                (None, Some(at)) => b.mark(at)?,
                (None, None) => b.mark_now()?,
            };
            ctx.print(
                u8::from(previous),
                json!({ "bitmap": name, "previous": previous }),
            );
        }
        BitmapCmd::Count {
            name,
            first,
            last,
            shape,
        } => {
            let count = open(&name, &shape)?.count_bits(first, last)?;
            ctx.print(
                count,
                json!({ "bitmap": name, "first": first, "last": last, "count": count }),
            );
        }
    }
    Ok(OK)
}

pub(crate) fn leaderboard(ctx: &Ctx, cmd: LeaderboardCmd) -> CliResult {
    let open = |name: &str, capacity: u32| Leaderboard::new(&ctx.scope, name, capacity);
    match cmd {
        LeaderboardCmd::Incr {
            name,
            member,
            by,
            ttl,
            shape,
        } => {
            let mut board = open(&name, shape.capacity)?;
            if let Some(ttl) = ttl {
                board = board.with_ttl(Ttl::from(ttl));
            }
            let count = board.incr(&member, by.unwrap_or(1))?;
            ctx.print(
                count,
                json!({ "leaderboard": name, "member": member, "count": count }),
            );
        }
        LeaderboardCmd::Top { name, k, shape } => {
            let top = open(&name, shape.capacity)?.top(k)?;
            if ctx.json {
                let entries: Vec<Value> = top
                    .iter()
                    .map(|e| {
                        json!({
                            "member": String::from_utf8_lossy(&e.member),
                            "count": e.count,
                            "error": e.error,
                        })
                    })
                    .collect();
                json_line(json!({ "leaderboard": name, "top": entries }));
            } else {
                for e in top {
                    let member = String::from_utf8_lossy(&e.member);
                    line(format!("{member}\t{}\t{}", e.count, e.error));
                }
            }
        }
        LeaderboardCmd::Score {
            name,
            member,
            shape,
        } => {
            let entry = open(&name, shape.capacity)?.score(&member)?;
            let Some(entry) = entry else {
                if ctx.json {
                    json_line(json!({ "leaderboard": name, "member": member, "count": null }));
                }
                return Ok(NEGATIVE);
            };
            ctx.print(
                entry.count,
                json!({
                    "leaderboard": name, "member": member, "count": entry.count, "error": entry.error
                }),
            );
        }
        LeaderboardCmd::Summary { name, shape } => {
            let board = open(&name, shape.capacity)?.summary()?;
            let (members, total, exact) = (board.len(), board.total(), board.is_exact());
            let (capacity, max_error) = (board.capacity(), board.max_error());
            ctx.print(
                format!(
                    "members={members} capacity={capacity} total={total} exact={exact} max_error={max_error}"
                ),
                json!({
                    "leaderboard": name, "members": members, "capacity": capacity,
                    "total": total, "exact": exact, "max_error": max_error,
                }),
            );
        }
        LeaderboardCmd::Clear { name } => {
            // Clearing deletes the board's one item, whatever its capacity.
            open(&name, 1)?.clear()?;
            if ctx.json {
                json_line(json!({ "leaderboard": name, "cleared": true }));
            }
        }
    }
    Ok(OK)
}

pub(crate) fn sbloom(ctx: &Ctx, cmd: SbloomCmd) -> CliResult {
    let open = |name: &str, shape: &SbloomShape| {
        ScalableBloomFilter::new(&ctx.scope, name, shape.capacity, shape.fpr)?
            .with_growth(shape.growth)
    };
    match cmd {
        SbloomCmd::Add {
            name,
            elements,
            shape,
        } => {
            let filter = open(&name, &shape)?;
            let mut new = 0u64;
            for element in &elements {
                new += u64::from(filter.add(element)?);
            }
            ctx.print(new, json!({ "sbloom": name, "new": new }));
        }
        SbloomCmd::Check {
            name,
            elements,
            shape,
        } => {
            let found = open(&name, &shape)?.contains_many(&elements)?;
            if ctx.json {
                for (element, found) in elements.iter().zip(&found) {
                    json_line(
                        json!({ "sbloom": name, "element": element, "maybe_present": found }),
                    );
                }
            }
            return Ok(if found.iter().all(|f| *f) {
                OK
            } else {
                NEGATIVE
            });
        }
        SbloomCmd::Layers { name, shape } => {
            let layers = open(&name, &shape)?.layers()?;
            ctx.print(layers, json!({ "sbloom": name, "layers": layers }));
        }
        SbloomCmd::Clear { name, shape } => {
            open(&name, &shape)?.clear()?;
            if ctx.json {
                json_line(json!({ "sbloom": name, "cleared": true }));
            }
        }
    }
    Ok(OK)
}
