//! One handler per command group, grouped by the crate whose structures
//! they drive. A handler opens its structure on the [`Ctx`](crate::context::Ctx)'s
//! scope, runs the subcommand, prints the result and returns the exit code.

mod counter;
mod kv;
mod lock;
mod log;
mod pool;
mod set;
mod sketch;
mod timeseries;

use clap::Subcommand;

use crate::args::Global;
use crate::context::{CliResult, open};
pub(crate) use kv::stats;
pub(crate) use lock::LockCmd;
pub(crate) use pool::{PoolCmd, pool};

use counter::{CounterCmd, LimitCmd, MapCmd, ShadowCmd, ViewCmd, WindowCmd};
use kv::KvCmd;
use log::LogCmd;
use set::{SetCmd, ShardedSetCmd, TableCmd};
use sketch::{BitmapCmd, BloomCmd, HllCmd, LeaderboardCmd, SbloomCmd};
use timeseries::{PackedCmd, SeriesCmd};

/// A structure's command group (and `kv`), flattened into `mcds`'s
/// commands ([`crate::args::Cmd`]): a new structure's commands are its
/// module here, a variant below and its arm in [`StructureCmd::run`].
#[derive(Subcommand, Debug)]
pub(crate) enum StructureCmd {
    /// Exact counters
    #[command(subcommand)]
    Counter(CounterCmd),
    /// A distributed lock; `lock run` works like flock(1)
    #[command(subcommand)]
    Lock(LockCmd),
    /// Sets of strings
    #[command(subcommand)]
    Set(SetCmd),
    /// An event log
    #[command(subcommand)]
    Log(LogCmd),
    /// Sliding-window counters (e.g. users online in the last 5 minutes)
    #[command(subcommand)]
    Window(WindowCmd),
    /// Rate limits
    #[command(subcommand)]
    Limit(LimitCmd),
    /// HyperLogLog distinct counts (PFADD, PFCOUNT, PFMERGE)
    #[command(subcommand)]
    Hll(HllCmd),
    /// Bloom filters: "seen before?" with a bounded false-positive rate
    #[command(subcommand)]
    Bloom(BloomCmd),
    /// Activity bitmaps: one bit per time unit (SETBIT, BITCOUNT)
    #[command(subcommand)]
    Bitmap(BitmapCmd),
    /// Tables: a member set with a value per member (a distributed map)
    #[command(subcommand)]
    Table(TableCmd),
    /// Shadow counters: the count of the previous period (visitors last hour)
    #[command(subcommand)]
    Shadow(ShadowCmd),
    /// View counters: a cached count seeded from your database's total
    #[command(subcommand)]
    View(ViewCmd),
    /// Sets spread over several keys, for sets too large for one item
    #[command(subcommand)]
    ShardedSet(ShardedSetCmd),
    /// Time series: count, sum, min, max and average of integer samples
    /// per time bucket, at several resolutions
    #[command(subcommand)]
    Series(SeriesCmd),
    /// Packed series: a small counter per time slot, many slots to one
    /// item (Redis BITFIELD counters)
    #[command(subcommand)]
    Packed(PackedCmd),
    /// Counter maps: named fields, each an atomic signed counter (HINCRBY,
    /// HINCRBYFLOAT, HGETALL, HDEL)
    #[command(subcommand)]
    Map(MapCmd),
    /// Leaderboards: the top members by count (ZINCRBY, ZREVRANGE), exact
    /// up to --capacity members
    #[command(subcommand)]
    Leaderboard(LeaderboardCmd),
    /// Scalable Bloom filters: "seen before?" that grows with the elements
    /// added, keeping its false-positive rate
    #[command(subcommand)]
    Sbloom(SbloomCmd),
    /// Raw store operations on single keys (--prefix applies), for operators
    ///
    /// `kv` rather than top-level get/set/delete: `mcds set` is the set
    /// structure. The key is KEY with --prefix prepended, used as it is
    /// (no escaping, unlike structure names).
    #[command(subcommand)]
    Kv(KvCmd),
}

impl StructureCmd {
    /// Open the store (`lock` with its connection checks) and run the
    /// command.
    pub(crate) fn run(self, global: &Global) -> CliResult {
        let ctx = || open(global, false);
        match self {
            StructureCmd::Lock(cmd) => lock::lock(&open(global, true)?, cmd),
            StructureCmd::Counter(cmd) => counter::counter(&ctx()?, cmd),
            StructureCmd::Set(cmd) => set::set(&ctx()?, cmd),
            StructureCmd::Log(cmd) => log::log(&ctx()?, cmd),
            StructureCmd::Window(cmd) => counter::window(&ctx()?, cmd),
            StructureCmd::Limit(cmd) => counter::limit(&ctx()?, cmd),
            StructureCmd::Hll(cmd) => sketch::hll(&ctx()?, cmd),
            StructureCmd::Bloom(cmd) => sketch::bloom(&ctx()?, cmd),
            StructureCmd::Bitmap(cmd) => sketch::bitmap(&ctx()?, cmd),
            StructureCmd::Table(cmd) => set::table(&ctx()?, cmd),
            StructureCmd::Shadow(cmd) => counter::shadow(&ctx()?, cmd),
            StructureCmd::View(cmd) => counter::view(&ctx()?, cmd),
            StructureCmd::ShardedSet(cmd) => set::sharded_set(&ctx()?, cmd),
            StructureCmd::Series(cmd) => timeseries::series(&ctx()?, cmd),
            StructureCmd::Packed(cmd) => timeseries::packed(&ctx()?, cmd),
            StructureCmd::Map(cmd) => counter::map(&ctx()?, cmd),
            StructureCmd::Leaderboard(cmd) => sketch::leaderboard(&ctx()?, cmd),
            StructureCmd::Sbloom(cmd) => sketch::sbloom(&ctx()?, cmd),
            StructureCmd::Kv(cmd) => kv::kv(&ctx()?, cmd),
        }
    }
}
