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

pub(crate) use counter::{counter, limit, map, shadow, view, window};
pub(crate) use kv::{kv, stats};
pub(crate) use lock::lock;
pub(crate) use log::log;
pub(crate) use pool::pool;
pub(crate) use set::{set, sharded_set, table};
pub(crate) use sketch::{bitmap, bloom, hll, leaderboard, sbloom};
pub(crate) use timeseries::{packed, series};

// The clap types of each command, for `crate::args::Cmd`.
pub(crate) use counter::{CounterCmd, LimitCmd, MapCmd, ShadowCmd, ViewCmd, WindowCmd};
pub(crate) use kv::KvCmd;
pub(crate) use lock::LockCmd;
pub(crate) use log::LogCmd;
pub(crate) use pool::PoolCmd;
pub(crate) use set::{SetCmd, ShardedSetCmd, TableCmd};
pub(crate) use sketch::{BitmapCmd, BloomCmd, HllCmd, LeaderboardCmd, SbloomCmd};
pub(crate) use timeseries::{PackedCmd, SeriesCmd};
