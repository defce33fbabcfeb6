//! What mcds itself says on stderr: errors, warnings and `-v` progress.
//! As text (`mcds: …`), or under `--json` as one JSON object per line with
//! `level`, `message` and the facts as fields, so a script reads the same
//! facts either way. Results go to stdout (see [`Ctx::print`](crate::context::Ctx::print)).

use serde_json::{Value, json};

use crate::context::Failure;
use crate::{INVALID_INPUT, UNAVAILABLE, USAGE};

/// How to report: JSON or text, and whether `-v` progress is wanted.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Report {
    json: bool,
    verbose: bool,
}

impl Report {
    pub(crate) fn new(json: bool, verbose: bool) -> Report {
        Report { json, verbose }
    }

    /// A `-v` progress message: printed only with `-v`.
    pub(crate) fn info(&self, message: &str, fields: Value) {
        if self.verbose {
            self.emit("info", message, fields);
        }
    }

    /// A warning: always printed.
    pub(crate) fn warn(&self, message: &str, fields: Value) {
        self.emit("warning", message, fields);
    }

    /// The error that ends the command, with the exit code it gets.
    pub(crate) fn error(&self, failure: &Failure) {
        let kind = match failure.code {
            USAGE => "usage",
            INVALID_INPUT => "invalid_input",
            UNAVAILABLE => "unavailable",
            crate::CONFIG => "config",
            _ => "error",
        };
        self.emit(
            "error",
            &failure.message,
            json!({ "exit_code": failure.code, "kind": kind }),
        );
    }

    fn emit(&self, level: &str, message: &str, fields: Value) {
        if self.json {
            let mut object = json!({ "level": level, "message": message });
            if let (Some(out), Value::Object(extra)) = (object.as_object_mut(), fields) {
                out.extend(extra);
            }
            eprintln!("{}", crate::context::exact_numbers(object));
        } else if level == "info" {
            eprintln!("mcds: {message}");
        } else {
            eprintln!("mcds: {level}: {message}");
        }
    }
}
