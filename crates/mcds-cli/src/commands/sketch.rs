//! `mcds hll`, `mcds bloom`, `mcds bitmap`, `mcds leaderboard` and `mcds
//! sbloom`: the mcds-sketch structures.

use clap::{Args, Subcommand};
use mcds_core::Ttl;
use mcds_sketch::{ActivityBitmap, BloomFilter, HyperLogLog, Leaderboard, ScalableBloomFilter};
use serde_json::{Value, json};

use crate::args::positive_duration;
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
            // One batch: 2 round trips while the elements fit the newest
            // layer, where one `add` each took 2 per element.
            let added = open(&name, &shape)?.add_many(&elements)?;
            let new = added.iter().filter(|&&n| n).count() as u64;
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

// ---- the command line: clap's types for these commands (their doc
// comments are the `--help` text) ----

#[derive(Subcommand, Debug)]
pub(crate) enum HllCmd {
    /// Add elements; prints 1 if the estimate may have changed, else 0
    Add {
        /// The sketch
        name: String,
        /// The elements to add
        #[arg(required = true)]
        elements: Vec<String>,
    },
    /// Print the estimated number of distinct elements (of the union, for
    /// several names)
    Count {
        /// The sketches (several: the count of their union)
        #[arg(required = true)]
        names: Vec<String>,
    },
    /// Write the union of TARGET and SOURCES into TARGET
    Merge {
        /// The sketch to merge into (it keeps its own elements)
        target: String,
        /// The sketches to merge
        #[arg(required = true)]
        sources: Vec<String>,
    },
}

#[derive(Args, Debug)]
pub(crate) struct BloomShape {
    /// Expected number of elements (every client must use the same)
    #[arg(long)]
    pub(crate) capacity: u64,
    /// False-positive rate at capacity, e.g. 0.01
    #[arg(long, default_value_t = 0.01)]
    pub(crate) fpr: f64,
}

#[derive(Subcommand, Debug)]
pub(crate) enum BloomCmd {
    /// Add elements; prints how many were new
    Add {
        /// The filter
        name: String,
        /// The elements to add
        #[arg(required = true)]
        elements: Vec<String>,
        #[command(flatten)]
        shape: BloomShape,
    },
    /// Exit 0 if ELEMENT may have been added, 1 if it certainly was not
    Check {
        /// The filter
        name: String,
        /// The element to look for
        element: String,
        #[command(flatten)]
        shape: BloomShape,
    },
}

#[derive(Args, Debug)]
pub(crate) struct BitmapShape {
    /// Unix seconds of bit 0
    #[arg(long, default_value_t = 0)]
    pub(crate) start: u64,
    /// Time per bit (86400, 1d, 1h, 500ms)
    #[arg(long, value_parser = crate::duration::parse, default_value = "1d")]
    pub(crate) unit: std::time::Duration,
}

#[derive(Subcommand, Debug)]
pub(crate) enum BitmapCmd {
    /// Set the bit of the unit containing --at-ms (default now), or bit
    /// --index; prints the previous bit
    Mark {
        /// The bitmap
        name: String,
        /// Unix milliseconds (default now)
        #[arg(long, conflicts_with = "index")]
        at_ms: Option<u64>,
        /// A bit index instead of a time
        #[arg(long)]
        index: Option<u64>,
        #[command(flatten)]
        shape: BitmapShape,
    },
    /// Print how many bits are set in FIRST..=LAST (bit indexes)
    Count {
        /// The bitmap
        name: String,
        /// The first bit index counted
        first: u64,
        /// The last bit index counted
        last: u64,
        #[command(flatten)]
        shape: BitmapShape,
    },
}

/// The shape of a leaderboard.
#[derive(Args, Debug)]
pub(crate) struct BoardShape {
    /// Members the board keeps: counts are exact up to this many members,
    /// then each overestimates by at most total/capacity (shown as its
    /// error). Every client of a board must use the same
    #[arg(long)]
    pub(crate) capacity: u32,
}

#[derive(Subcommand, Debug)]
pub(crate) enum LeaderboardCmd {
    /// Add BY (default 1) to MEMBER's count; prints its new count
    Incr {
        /// The board
        name: String,
        /// The member (at most 128 bytes; the empty member is one too)
        member: String,
        /// How much to add, at least 1 (default 1)
        by: Option<u64>,
        /// Let the board expire this long after its last increment (30, 5m,
        /// 1d; default: never)
        #[arg(long, value_parser = positive_duration)]
        ttl: Option<std::time::Duration>,
        #[command(flatten)]
        shape: BoardShape,
    },
    /// Print the K members with the largest counts, largest first:
    /// `member<TAB>count<TAB>error` per line
    ///
    /// The error is how much the count may overestimate (0 while the board
    /// is exact). --json prints one array of {"member", "count", "error"}
    /// objects.
    Top {
        /// The board
        name: String,
        /// How many members
        #[arg(short = 'k', value_name = "K", default_value_t = 10)]
        k: usize,
        #[command(flatten)]
        shape: BoardShape,
    },
    /// Print MEMBER's count; exit 1 (printing nothing) if it is not on the
    /// board
    ///
    /// --json adds its error (how much the count may overestimate). A
    /// member off the board has a true count of at most the board's
    /// max_error (see `summary`).
    Score {
        /// The board
        name: String,
        /// The member
        member: String,
        #[command(flatten)]
        shape: BoardShape,
    },
    /// Print the board's state: `members=N capacity=C total=T exact=BOOL
    /// max_error=E`
    ///
    /// total is the sum of every increment counted; max_error how much a
    /// count may overestimate, and the most a member off the board can have
    /// (0 while exact).
    Summary {
        /// The board
        name: String,
        #[command(flatten)]
        shape: BoardShape,
    },
    /// Delete the board
    Clear {
        /// The board
        name: String,
    },
}

/// The shape of a scalable Bloom filter: every client of one filter must
/// use the same.
#[derive(Args, Debug)]
pub(crate) struct SbloomShape {
    /// Elements the first layer takes; when it is full a layer --growth
    /// times larger is added, and so on
    #[arg(long)]
    pub(crate) capacity: u64,
    /// False-positive rate of the whole filter, however many layers it
    /// grows, e.g. 0.01
    #[arg(long, default_value_t = 0.01)]
    pub(crate) fpr: f64,
    /// How many times larger each layer is than the one before, 1 to 16
    #[arg(long, default_value_t = 2)]
    pub(crate) growth: u32,
}

#[derive(Subcommand, Debug)]
pub(crate) enum SbloomCmd {
    /// Add elements; prints how many were new
    Add {
        /// The filter
        name: String,
        /// The elements to add
        #[arg(required = true)]
        elements: Vec<String>,
        #[command(flatten)]
        shape: SbloomShape,
    },
    /// Exit 0 if every ELEMENT may have been added, 1 if one certainly was
    /// not
    ///
    /// Prints nothing; --json prints one object per element, with
    /// "maybe_present".
    Check {
        /// The filter
        name: String,
        /// The elements to look for (one round trip for all)
        #[arg(required = true)]
        elements: Vec<String>,
        #[command(flatten)]
        shape: SbloomShape,
    },
    /// Print how many layers the filter has grown to
    Layers {
        /// The filter
        name: String,
        #[command(flatten)]
        shape: SbloomShape,
    },
    /// Delete the filter, every layer of it
    Clear {
        /// The filter
        name: String,
        #[command(flatten)]
        shape: SbloomShape,
    },
}
