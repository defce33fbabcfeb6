//! `mcds set`, `mcds table` and `mcds sharded-set`: the mcds-set
//! structures (sets of strings, tables, sharded sets).

use mcds_core::Error;
use mcds_set::{Set, ShardedSet, Table};
use serde_json::json;

use crate::args::{SetCmd, ShardedSetCmd, TableCmd};
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
