//! `mcds hll`, `mcds bloom` and `mcds bitmap`: the mcds-sketch structures.

use mcds_sketch::{ActivityBitmap, BloomFilter, HyperLogLog};
use serde_json::json;

use crate::args::{BitmapCmd, BitmapShape, BloomCmd, BloomShape, HllCmd};
use crate::context::{CliResult, Ctx, line};
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
                line(json!({ "bloom": name, "element": element, "maybe_present": found }));
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
