//! [`Store::pipeline`](mcds_core::Store::pipeline) on the text protocol: a batch cut into segments
//! where a key comes again after an op that may finish late, each
//! segment's units planned per server, sent by the engine in one round
//! trip, decoded, and then one pipelined round of `add`s for the counters
//! and logs it creates.

use mcds_core::{Error, Op, Reply, Result};
use mcds_net::incarnation::Incarnation;

use crate::engine::Session;
use crate::plan::{Outcome, Unit, extend_gets};
use crate::store::TextStore;
use crate::wire::{self, Expect, Line, Resp};

impl TextStore {
    /// [`Store::pipeline`](mcds_core::Store::pipeline): cut into segments where a key comes again
    /// after an op that may be finished late (and behind a proxy, wherever
    /// a key comes again: a proxy may send two commands on one key over
    /// different server connections), so ops on one key apply in order.
    pub(crate) fn run_pipeline(&self, ops: &[Op<'_>]) -> Vec<Result<Reply>> {
        let late = |op: &Op<'_>| {
            self.config.behind_proxy
                || matches!(
                    op,
                    Op::Append { .. }
                        | Op::Prepend { .. }
                        | Op::AppendOrAdd { .. }
                        | Op::IncrOrInit { .. }
                )
        };
        let mut out = Vec::with_capacity(ops.len());
        for segment in mcds_net::batch::segments(ops, late) {
            out.extend(self.run_segment(&ops[segment]));
        }
        out
    }

    /// One segment: every server's share planned for the incarnation of its
    /// session, sent, decoded; then one pipelined round of `add`s for the
    /// `incr_or_init`/`append_or_add` ops whose key was missing, and the
    /// loops for what is left.
    pub(crate) fn run_segment(&self, ops: &[Op<'_>]) -> Vec<Result<Reply>> {
        let n = self.servers.len();
        let mut results: Vec<Option<Result<Reply>>> = (0..ops.len()).map(|_| None).collect();
        let owner: Vec<usize> = ops.iter().map(|op| self.server_for(op.key())).collect();
        let mut sessions: Vec<Option<Session<'_>>> = (0..n).map(|_| None).collect();
        let mut incs: Vec<Option<Incarnation>> = vec![None; n];
        let mut open_errors: Vec<Option<Error>> = (0..n).map(|_| None).collect();
        for &server in &owner {
            if sessions[server].is_none() && open_errors[server].is_none() {
                match self.open(server) {
                    Ok(session) => {
                        incs[server] = session
                            .conn
                            .as_ref()
                            .and_then(|c| self.servers[server].effective(c));
                        sessions[server] = Some(session);
                    }
                    Err(e) => open_errors[server] = Some(e),
                }
            }
        }
        // Plan each server's share, coalescing runs of gets.
        let mut units: Vec<Vec<Unit>> = (0..n).map(|_| Vec::new()).collect();
        for (index, op) in ops.iter().enumerate() {
            let server = owner[index];
            if let Some(e) = &open_errors[server] {
                results[index] = Some(Err(e.duplicate()));
                continue;
            }
            let inc = incs[server].as_ref();
            if let Op::Get(key) = op
                && let Some(last) = units[server].last_mut()
                && extend_gets(last, ops, key, index)
            {
                continue;
            }
            match self.plan(op, index, inc) {
                Ok(unit) => units[server].push(unit),
                Err(e) => results[index] = Some(Err(e)),
            }
        }
        let replies = self.run_units(&mut sessions, &units);
        drop(sessions);
        let mut again = Vec::new();
        for (server, server_units) in units.iter().enumerate() {
            for (unit, result) in server_units.iter().zip(&replies[server]) {
                let result = match result {
                    Some(r) => r,
                    None => {
                        for &i in &unit.ops {
                            results[i] = Some(Err(Error::Internal(
                                "a pipelined unit got no result".into(),
                            )));
                        }
                        continue;
                    }
                };
                match result {
                    Err(e) => {
                        for &i in &unit.ops {
                            results[i] = Some(Err(e.duplicate()));
                        }
                    }
                    Ok(resps) if unit.ops.len() > 1 || matches!(ops[unit.ops[0]], Op::Get(_)) => {
                        // A (coalesced) retrieval: every VALUE must be for
                        // a key asked for.
                        if let Some(Resp::Values(values)) = resps.first()
                            && let Some(stray) = values.iter().find(|v| {
                                !unit.ops.iter().any(|&i| ops[i].key().as_bytes() == v.key)
                            })
                        {
                            let e = self.unexpected(
                                server,
                                "get",
                                &format!(
                                    "VALUE for a key not asked for, {}",
                                    wire::show(&stray.key)
                                ),
                            );
                            for &i in &unit.ops {
                                results[i] = Some(Err(e.duplicate()));
                            }
                            continue;
                        }
                        for &i in &unit.ops {
                            // Each get decodes the values of its own key.
                            let own: Vec<Resp> = resps
                                .iter()
                                .map(|r| match r {
                                    Resp::Values(values) => Resp::Values(
                                        values
                                            .iter()
                                            .filter(|v| v.key == ops[i].key().as_bytes())
                                            .cloned()
                                            .collect(),
                                    ),
                                    other => other.clone(),
                                })
                                .collect();
                            let outcome = self.decode(&ops[i], own, incs[server].as_ref(), server);
                            results[i] = Some(match outcome {
                                Outcome::Done(r) => r,
                                Outcome::Again => self.finish(&ops[i]),
                            });
                        }
                    }
                    Ok(resps) => {
                        let i = unit.ops[0];
                        match self.decode(&ops[i], resps.clone(), incs[server].as_ref(), server) {
                            Outcome::Done(r) => results[i] = Some(r),
                            Outcome::Again => again.push(i),
                        }
                    }
                }
            }
        }
        self.finish_batch(ops, &owner, &again, &mut results);
        results
            .into_iter()
            .map(|r| {
                r.unwrap_or_else(|| Err(Error::Internal("an op of a batch got no result".into())))
            })
            .collect()
    }

    /// The ops of a batch that answered [`Outcome::Again`]: the
    /// `incr_or_init`/`append_or_add` ones get their `add` in one more
    /// pipelined round (one round trip for all, not one per key); whatever
    /// is left runs its loop.
    pub(crate) fn finish_batch(
        &self,
        ops: &[Op<'_>],
        owner: &[usize],
        again: &[usize],
        results: &mut [Option<Result<Reply>>],
    ) {
        let n = self.servers.len();
        let adds: Vec<usize> = again
            .iter()
            .copied()
            .filter(|&i| matches!(ops[i], Op::IncrOrInit { .. } | Op::AppendOrAdd { .. }))
            .collect();
        let mut leftover: Vec<usize> = again
            .iter()
            .copied()
            .filter(|i| !adds.contains(i))
            .collect();
        if !adds.is_empty() {
            let mut sessions: Vec<Option<Session<'_>>> = (0..n).map(|_| None).collect();
            let mut units: Vec<Vec<Unit>> = (0..n).map(|_| Vec::new()).collect();
            for &i in &adds {
                let server = owner[i];
                if sessions[server].is_none() {
                    match self.open(server) {
                        Ok(s) => sessions[server] = Some(s),
                        Err(e) => {
                            results[i] = Some(Err(e));
                            continue;
                        }
                    }
                }
                let inc = sessions[server]
                    .as_ref()
                    .and_then(|s| s.conn.as_ref())
                    .and_then(|c| self.servers[server].effective(c));
                let (key, value, ttl) = match ops[i] {
                    Op::IncrOrInit {
                        key, initial, ttl, ..
                    } => (key, initial.to_string().into_bytes(), ttl),
                    Op::AppendOrAdd { key, value, ttl } => (key, value.to_vec(), ttl),
                    _ => continue,
                };
                let mut wire = Vec::new();
                wire::storage(
                    &mut wire,
                    "add",
                    key,
                    Self::exptime(inc.as_ref(), ttl),
                    &value,
                    None,
                );
                units[server].push(Unit {
                    ops: vec![i],
                    key: key.display(),
                    side_effect: true,
                    wire,
                    expects: vec![Expect::Line],
                });
            }
            let replies = self.run_units(&mut sessions, &units);
            drop(sessions);
            for (server, server_units) in units.iter().enumerate() {
                for (unit, result) in server_units.iter().zip(&replies[server]) {
                    let i = unit.ops[0];
                    let key = ops[i].key();
                    results[i] = Some(match result {
                        Some(Ok(resps)) => match resps.first() {
                            Some(Resp::Line(Line::Stored)) => Ok(match ops[i] {
                                Op::IncrOrInit { initial, .. } => Reply::Value(initial),
                                _ => Reply::Done,
                            }),
                            Some(Resp::Line(Line::NotStored)) => {
                                // Created meanwhile: the loop, in order.
                                leftover.push(i);
                                continue;
                            }
                            Some(Resp::Line(line)) if line.is_error() => {
                                Err(self.line_error(server, key, true, line.clone()))
                            }
                            other => Err(self.unexpected(server, "add", &format!("{other:?}"))),
                        },
                        Some(Err(e)) => Err(e.duplicate()),
                        None => Err(Error::Internal("a pipelined add got no result".into())),
                    });
                }
            }
        }
        leftover.sort_unstable();
        for i in leftover {
            results[i] = Some(match ops[i] {
                // Its add lost a race: the key exists, incr/append again.
                Op::IncrOrInit {
                    key,
                    delta,
                    initial,
                    ttl,
                } if adds.contains(&i) => match self.incr_once(key, delta) {
                    Ok(Some(v)) => Ok(Reply::Value(v)),
                    Ok(None) => self
                        .incr_or_init_after_miss(key, delta, initial, ttl)
                        .map(Reply::Value),
                    Err(e) => Err(e),
                },
                _ => self.finish(&ops[i]),
            });
        }
    }
}
