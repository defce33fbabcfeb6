//! `mcds set`: sets of strings (mcds-set).

use mcds_core::Error;
use mcds_set::Set;
use serde_json::json;

use crate::args::SetCmd;
use crate::context::{CliResult, Ctx};
use crate::{NEGATIVE, OK};

pub(crate) fn set(ctx: &Ctx, cmd: SetCmd) -> CliResult {
    match cmd {
        SetCmd::Add { name, members } => {
            open(ctx, &name)?.add(&members)?;
            if ctx.json {
                println!("{}", json!({ "set": name, "added": members }));
            }
            Ok(OK)
        }
        SetCmd::Remove { name, members } => {
            open(ctx, &name)?.remove(&members)?;
            if ctx.json {
                println!("{}", json!({ "set": name, "removed": members }));
            }
            Ok(OK)
        }
        SetCmd::Members { name } => {
            let members = open(ctx, &name)?.members_utf8()?;
            if ctx.json {
                println!("{}", json!({ "set": name, "members": members }));
            } else {
                for m in members {
                    println!("{m}");
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
    }
}

/// The set NAME.
fn open(ctx: &Ctx, name: &str) -> Result<Set, Error> {
    Set::new(&ctx.scope, name)
}
