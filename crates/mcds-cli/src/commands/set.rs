//! `mcds set`, `mcds table` and `mcds sharded-set`: the mcds-set
//! structures (sets of strings, tables, sharded sets).

use clap::{Args, Subcommand};
use mcds_core::Error;
use mcds_set::{Set, ShardedSet, Table};
use serde_json::json;

use crate::context::{CliResult, Ctx, json_line, line};
use crate::{NEGATIVE, OK};

pub(crate) fn set(ctx: &Ctx, cmd: SetCmd) -> CliResult {
    match cmd {
        SetCmd::Add { name, members } => {
            open(ctx, &name)?.add(&members)?;
            if ctx.json {
                json_line(json!({ "set": name, "added": members }));
            }
            Ok(OK)
        }
        SetCmd::Remove { name, members } => {
            open(ctx, &name)?.remove(&members)?;
            if ctx.json {
                json_line(json!({ "set": name, "removed": members }));
            }
            Ok(OK)
        }
        SetCmd::Members { name } => {
            let members = open(ctx, &name)?.members_utf8()?;
            if ctx.json {
                json_line(json!({ "set": name, "members": members }));
            } else {
                for m in members {
                    line(m);
                }
            }
            Ok(OK)
        }
        SetCmd::Contains { name, member } => {
            let found = open(ctx, &name)?.contains(&member)?;
            ctx.print(
                found,
                json!({ "set": name, "member": member, "contains": found }),
            );
            Ok(if found { OK } else { NEGATIVE })
        }
        SetCmd::Compact { name } => {
            let rewritten = open(ctx, &name)?.compact()?;
            ctx.print(rewritten, json!({ "set": name, "compacted": rewritten }));
            Ok(OK)
        }
    }
}

/// The set NAME.
fn open(ctx: &Ctx, name: &str) -> Result<Set, Error> {
    Set::new(&ctx.scope, name)
}

/// Bytes as text: members and values are stored as bytes, and printed
/// lossily (invalid UTF-8 becomes U+FFFD).
fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

pub(crate) fn table(ctx: &Ctx, cmd: TableCmd) -> CliResult {
    let open = |name: &str| Table::new(&ctx.scope, name);
    match cmd {
        TableCmd::Set {
            name,
            member,
            value,
        } => {
            open(&name)?.set(&member, value.as_bytes())?;
            if ctx.json {
                json_line(json!({ "table": name, "member": member, "value": value }));
            }
            Ok(OK)
        }
        TableCmd::Get { name, member } => match open(&name)?.get(&member)? {
            Some(value) => {
                let value = text(&value);
                ctx.print(
                    &value,
                    json!({ "table": name, "member": member, "value": value }),
                );
                Ok(OK)
            }
            None => {
                if ctx.json {
                    json_line(json!({ "table": name, "member": member, "value": null }));
                }
                Ok(NEGATIVE)
            }
        },
        TableCmd::Has { name, member } => {
            let found = open(&name)?.has(&member)?;
            ctx.print(
                found,
                json!({ "table": name, "member": member, "contains": found }),
            );
            Ok(if found { OK } else { NEGATIVE })
        }
        TableCmd::Delete { name, member } => {
            let existed = open(&name)?.delete(&member)?;
            if ctx.json {
                json_line(json!({ "table": name, "member": member, "deleted": existed }));
            }
            Ok(if existed { OK } else { NEGATIVE })
        }
        TableCmd::Entries { name } => {
            let entries = open(&name)?.entries()?;
            if ctx.json {
                let entries: Vec<_> = entries
                    .iter()
                    .map(|(m, v)| json!({ "member": text(m), "value": text(v) }))
                    .collect();
                json_line(json!({ "table": name, "entries": entries }));
            } else {
                for (m, v) in entries {
                    line(format_args!("{}\t{}", text(&m), text(&v)));
                }
            }
            Ok(OK)
        }
        TableCmd::Keys { name } => {
            let keys: Vec<String> = open(&name)?.keys()?.iter().map(|k| text(k)).collect();
            if ctx.json {
                json_line(json!({ "table": name, "members": keys }));
            } else {
                for k in keys {
                    line(k);
                }
            }
            Ok(OK)
        }
    }
}

pub(crate) fn sharded_set(ctx: &Ctx, cmd: ShardedSetCmd) -> CliResult {
    let open = |name: &str, shards: usize| ShardedSet::new(&ctx.scope, name, shards);
    match cmd {
        ShardedSetCmd::Add {
            name,
            members,
            shape,
        } => {
            open(&name, shape.shards)?.add(&members)?;
            if ctx.json {
                json_line(json!({ "sharded_set": name, "added": members }));
            }
            Ok(OK)
        }
        ShardedSetCmd::Remove {
            name,
            members,
            shape,
        } => {
            open(&name, shape.shards)?.remove(&members)?;
            if ctx.json {
                json_line(json!({ "sharded_set": name, "removed": members }));
            }
            Ok(OK)
        }
        ShardedSetCmd::Members { name, shape } => {
            let members: Vec<String> = open(&name, shape.shards)?
                .members()?
                .iter()
                .map(|m| text(m))
                .collect();
            if ctx.json {
                json_line(json!({ "sharded_set": name, "members": members }));
            } else {
                for m in members {
                    line(m);
                }
            }
            Ok(OK)
        }
        ShardedSetCmd::Contains {
            name,
            member,
            shape,
        } => {
            let found = open(&name, shape.shards)?.contains(&member)?;
            ctx.print(
                found,
                json!({ "sharded_set": name, "member": member, "contains": found }),
            );
            Ok(if found { OK } else { NEGATIVE })
        }
        ShardedSetCmd::Compact { name, shape } => {
            open(&name, shape.shards)?.compact()?;
            if ctx.json {
                json_line(json!({ "sharded_set": name, "compacted": true }));
            }
            Ok(OK)
        }
    }
}

// ---- the command line: clap's types for these commands (their doc
// comments are the `--help` text) ----

#[derive(Subcommand, Debug)]
pub(crate) enum SetCmd {
    /// Add members
    Add {
        /// The set
        name: String,
        /// The members to add (any strings)
        #[arg(required = true)]
        members: Vec<String>,
    },
    /// Remove members
    Remove {
        /// The set
        name: String,
        /// The members to remove
        #[arg(required = true)]
        members: Vec<String>,
    },
    /// Print the members, one per line, in insertion order
    Members {
        /// The set
        name: String,
    },
    /// Exit 0 if MEMBER is in the set, 1 if not (prints true or false)
    Contains {
        /// The set
        name: String,
        /// The member
        member: String,
    },
    /// Rewrite the set without the tokens of removed members; prints
    /// whether it was rewritten
    ///
    /// false: there was nothing to drop, or another client wrote meanwhile
    /// (nothing is lost; run it again).
    Compact {
        /// The set
        name: String,
    },
}

/// The shape of a sharded set.
#[derive(Args, Debug)]
pub(crate) struct ShardedShape {
    /// Number of shards, 1 to 4096. Every client must use the same number:
    /// with another one, members are looked for in other shards and seem
    /// missing
    #[arg(long)]
    pub(crate) shards: usize,
}

#[derive(Subcommand, Debug)]
pub(crate) enum ShardedSetCmd {
    /// Add members (one append per shard touched)
    Add {
        /// The set
        name: String,
        /// The members to add
        #[arg(required = true)]
        members: Vec<String>,
        #[command(flatten)]
        shape: ShardedShape,
    },
    /// Remove members
    Remove {
        /// The set
        name: String,
        /// The members to remove
        #[arg(required = true)]
        members: Vec<String>,
        #[command(flatten)]
        shape: ShardedShape,
    },
    /// Print the members, one per line, shard by shard
    Members {
        /// The set
        name: String,
        #[command(flatten)]
        shape: ShardedShape,
    },
    /// Exit 0 if MEMBER is in the set, 1 if not (prints true or false)
    Contains {
        /// The set
        name: String,
        /// The member
        member: String,
        #[command(flatten)]
        shape: ShardedShape,
    },
    /// Rewrite every shard that holds tokens of removed members
    Compact {
        /// The set
        name: String,
        #[command(flatten)]
        shape: ShardedShape,
    },
}

#[derive(Subcommand, Debug)]
pub(crate) enum TableCmd {
    /// Set MEMBER's value, adding the member if it is new
    Set {
        /// The table
        name: String,
        /// The member (any string)
        member: String,
        /// Its value
        value: String,
    },
    /// Print MEMBER's value; exit 1 (printing nothing) if it is absent
    Get {
        /// The table
        name: String,
        /// The member
        member: String,
    },
    /// Print true and exit 0 if MEMBER is present, else false and exit 1
    Has {
        /// The table
        name: String,
        /// The member
        member: String,
    },
    /// Remove MEMBER; exit 1 if it was absent
    Delete {
        /// The table
        name: String,
        /// The member
        member: String,
    },
    /// Print `member<TAB>value` per member, in insertion order
    ///
    /// Members and values are printed as they are (invalid UTF-8 lossily);
    /// for text with tabs or newlines use --json, which prints one array of
    /// {"member": …, "value": …} objects.
    Entries {
        /// The table
        name: String,
    },
    /// Print the members, one per line, in insertion order
    Keys {
        /// The table
        name: String,
    },
}
