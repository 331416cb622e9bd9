//! The Supervisor actor: owns the ledger and the job table, grants synthesis work against the
//! budget, retries failed partitions a bounded number of times, and answers each request.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use actix::{Actor, Context, Handler, Recipient};
use tokio::sync::oneshot;

use super::mailbox::{post_to, took};
use crate::key::ProvingKey;
use crate::ledger::{Footprint, GrantId, Ledger, LedgerError, Stage};
use crate::messages::*;
use crate::metrics::{ActorKind, Metrics, ProofResult};
use crate::pipeline::PartitionCircuit;
use crate::proof::Proof;
use crate::status::{EngineError, EngineStatus, JobStatus, PartitionState};

/// What the supervisor is started with.
pub struct SupervisorParts {
    /// The ledger (budget, slots, policy).
    pub ledger: Ledger,
    /// Synthesis workers (concurrent synthesize calls).
    pub synthesis_workers: usize,
    /// Attempts per partition for retryable failures.
    pub retry_attempts: u32,
    /// Metrics.
    pub metrics: Metrics,
    /// Set each proving key in use aside from the budget (the budget was sized from available
    /// memory, so keys loaded later must come out of it).
    pub reserve_keys: bool,
}

struct Job {
    pk: Arc<ProvingKey>,
    circuits: Vec<Arc<dyn PartitionCircuit>>,
    footprint: Footprint,
    proofs: Vec<Option<Proof>>,
    states: Vec<PartitionState>,
    attempts: Vec<u32>,
    in_flight: usize,
    reply: Option<oneshot::Sender<Result<Vec<Proof>, EngineError>>>,
    failed: bool,
    /// Set with `failed`: tells the stages to skip this job's partitions still in flight.
    abandoned: Abandoned,
    span: tracing::Span,
}

/// The supervisor.
pub struct Supervisor {
    ledger: Ledger,
    jobs: HashMap<u64, Job>,
    queue: VecDeque<PartRef>,
    grants: HashMap<GrantId, PartRef>,
    idle_workers: usize,
    retry_attempts: u32,
    next_job: u64,
    synthesis: Option<Recipient<Synthesize>>,
    metrics: Metrics,
    closing: Vec<oneshot::Sender<()>>,
    refuse_new: bool,
    /// Partitions synthesized and not yet accepted by a GPU actor, now and at most.
    alive_now: usize,
    alive_peak: usize,
    reserve_keys: bool,
    /// Keys set aside in the ledger: key id → (bytes, jobs using it).
    keys: HashMap<u64, (u64, usize)>,
}

impl Actor for Supervisor {
    type Context = Context<Self>;
}

impl Supervisor {
    /// A supervisor with no workers attached yet (see [`Supervisor::attach`]).
    pub fn new(parts: SupervisorParts) -> Self {
        parts
            .metrics
            .budget_bytes
            .set(parts.ledger.budget_bytes() as i64);
        Supervisor {
            ledger: parts.ledger,
            jobs: HashMap::new(),
            queue: VecDeque::new(),
            grants: HashMap::new(),
            idle_workers: parts.synthesis_workers,
            retry_attempts: parts.retry_attempts,
            next_job: 1,
            synthesis: None,
            metrics: parts.metrics,
            closing: Vec::new(),
            refuse_new: false,
            alive_now: 0,
            alive_peak: 0,
            reserve_keys: parts.reserve_keys,
            keys: HashMap::new(),
        }
    }

    /// Connects the synthesis pool (created after the supervisor, since it needs its address).
    pub fn attach(&mut self, synthesis: Recipient<Synthesize>) {
        self.synthesis = Some(synthesis);
    }

    /// Starts as many queued partitions as workers, slots and budget allow.
    fn pump(&mut self) {
        while self.idle_workers > 0 {
            let Some(part) = self.queue.front().copied() else {
                break;
            };
            let Some(job) = self.jobs.get_mut(&part.job) else {
                self.queue.pop_front();
                continue;
            };
            if job.failed {
                self.queue.pop_front();
                continue;
            }
            let grant = match self.ledger.try_grant(&job.footprint) {
                Ok(Some(g)) => g,
                Ok(None) => break,
                Err(e) => {
                    self.queue.pop_front();
                    self.fail_job(part.job, EngineError::Rejected(e.to_string()));
                    continue;
                }
            };
            self.queue.pop_front();
            job.in_flight += 1;
            self.idle_workers -= 1;
            self.grants.insert(grant.id(), part);
            let (circuit, pk) = (job.circuits[part.index].clone(), job.pk.clone());
            let abandoned = job.abandoned.clone();
            let span = tracing::info_span!(parent: &job.span, "partition", index = part.index, attempt = part.attempt);
            self.set_state(part, PartitionState::At(Stage::Synthesizing));
            if let Some(s) = &self.synthesis {
                post_to(
                    &self.metrics,
                    ActorKind::Synthesis,
                    s,
                    Synthesize {
                        part,
                        circuit,
                        pk,
                        grant,
                        abandoned,
                        span,
                    },
                );
            }
        }
        self.metrics.grants_waiting.set(self.queue.len() as i64);
        self.metrics.observe_ledger(&self.ledger.snapshot());
        self.metrics.synthesized_alive.set(self.alive_now as i64);
    }

    fn set_state(&mut self, part: PartRef, state: PartitionState) {
        if let Some(s) = self
            .jobs
            .get_mut(&part.job)
            .and_then(|j| j.states.get_mut(part.index))
        {
            *s = state;
        }
    }

    fn ledger_op(&mut self, what: &str, r: Result<impl Sized, LedgerError>) {
        if let Err(e) = r {
            // A ledger refusal here is a bookkeeping bug; keep going and make it visible.
            tracing::error!(error = %e, "ledger refused {what}");
        }
    }

    fn fail_job(&mut self, job_id: u64, err: EngineError) {
        let Some(job) = self.jobs.get_mut(&job_id) else {
            return;
        };
        if job.failed {
            return;
        }
        job.failed = true;
        job.abandoned.set();
        tracing::warn!(job = job_id, error = %err, "job failed");
        // One per partition that failed for good (its siblings are abandoned, not counted).
        self.metrics.proof(ProofResult::Failed);
        if let Some(reply) = job.reply.take() {
            let _ = reply.send(Err(err));
        }
        self.queue.retain(|p| p.job != job_id);
        self.finish_if_done(job_id);
    }

    fn finish_if_done(&mut self, job_id: u64) {
        let done = match self.jobs.get(&job_id) {
            Some(j) => j.in_flight == 0 && (j.failed || j.proofs.iter().all(Option::is_some)),
            None => false,
        };
        if done {
            if let Some(job) = self.jobs.remove(&job_id) {
                self.unuse_key(job.pk.id());
            }
        }
        self.maybe_close();
    }

    /// Counts one more job on `pk`, setting its bytes aside the first time (auto budgets only).
    fn use_key(&mut self, pk: &ProvingKey) {
        if !self.reserve_keys {
            return;
        }
        let entry = self.keys.entry(pk.id()).or_insert((0, 0));
        if entry.1 == 0 {
            entry.0 = pk.heap_bytes();
            self.ledger.reserve_resident(entry.0);
        }
        entry.1 += 1;
    }

    /// One job fewer on key `id`; its bytes come back to the budget with the last one.
    fn unuse_key(&mut self, id: u64) {
        if let Some(entry) = self.keys.get_mut(&id) {
            entry.1 = entry.1.saturating_sub(1);
            if entry.1 == 0 {
                self.ledger.release_resident(entry.0);
                self.keys.remove(&id);
            }
        }
    }

    fn maybe_close(&mut self) {
        if self.refuse_new && self.jobs.is_empty() && self.ledger.outstanding_grants() == 0 {
            for tx in self.closing.drain(..) {
                let _ = tx.send(());
            }
        }
    }
}

impl Handler<Submit> for Supervisor {
    type Result = ();

    fn handle(&mut self, msg: Submit, _: &mut Context<Self>) {
        took(&self.metrics, ActorKind::Supervisor);
        let Submit { request, reply } = msg;
        if self.refuse_new {
            let _ = reply.send(Err(EngineError::ShuttingDown));
            return;
        }
        if request.circuits.is_empty() {
            let _ = reply.send(Err(EngineError::Rejected(
                "the request has no circuits".into(),
            )));
            return;
        }
        let footprint = request.footprint();
        // The key counts against the budget while a job uses it (auto budgets).
        self.use_key(&request.pk);
        if let Err(e) = self.ledger.admit(&footprint) {
            self.unuse_key(request.pk.id());
            let _ = reply.send(Err(EngineError::Rejected(e.to_string())));
            return;
        }
        let id = self.next_job;
        self.next_job += 1;
        let n = request.circuits.len();
        tracing::info!(
            job = id,
            partitions = n,
            footprint_bytes = footprint.total_bytes(),
            "job admitted"
        );
        for index in 0..n {
            self.queue.push_back(PartRef {
                job: id,
                index,
                attempt: 1,
            });
        }
        self.jobs.insert(
            id,
            Job {
                pk: request.pk,
                circuits: request.circuits,
                footprint,
                proofs: vec![None; n],
                states: vec![PartitionState::Queued; n],
                attempts: vec![1; n],
                in_flight: 0,
                reply: Some(reply),
                failed: false,
                abandoned: Abandoned::default(),
                span: tracing::info_span!(parent: None, "job", id, partitions = n),
            },
        );
        self.pump();
    }
}

impl Handler<Synthesized> for Supervisor {
    type Result = ();

    fn handle(&mut self, msg: Synthesized, _: &mut Context<Self>) {
        took(&self.metrics, ActorKind::Supervisor);
        self.idle_workers += 1;
        self.alive_now += 1;
        self.alive_peak = self.alive_peak.max(self.alive_now);
        let r = self.ledger.synthesized(msg.grant);
        self.ledger_op("synthesized", r);
        self.set_state(msg.part, PartitionState::At(Stage::QueuedForGpu));
        self.pump();
    }
}

impl Handler<Delivered> for Supervisor {
    type Result = ();

    fn handle(&mut self, msg: Delivered, _: &mut Context<Self>) {
        took(&self.metrics, ActorKind::Supervisor);
        self.alive_now = self.alive_now.saturating_sub(1);
        let r = self.ledger.delivered(msg.grant);
        self.ledger_op("delivered", r);
        self.set_state(msg.part, PartitionState::At(Stage::OnGpu));
        self.pump();
    }
}

impl Handler<HandedOff> for Supervisor {
    type Result = ();

    fn handle(&mut self, msg: HandedOff, _: &mut Context<Self>) {
        took(&self.metrics, ActorKind::Supervisor);
        let r = self.ledger.advance(msg.grant, msg.stage);
        self.ledger_op("advance", r);
        if msg.stage == Stage::Bg2 {
            self.set_state(msg.part, PartitionState::At(Stage::Bg2));
        }
        self.metrics.observe_ledger(&self.ledger.snapshot());
    }
}

impl Handler<Freed> for Supervisor {
    type Result = ();

    fn handle(&mut self, msg: Freed, _: &mut Context<Self>) {
        took(&self.metrics, ActorKind::Supervisor);
        for (class, bytes) in msg.frees {
            match self.ledger.freed(msg.grant, class, bytes) {
                Ok(true) => {
                    // The grant ended: its partition no longer holds memory.
                    if let Some(part) = self.grants.remove(&msg.grant) {
                        if let Some(job) = self.jobs.get_mut(&part.job) {
                            job.in_flight = job.in_flight.saturating_sub(1);
                        }
                        self.finish_if_done(part.job);
                    }
                }
                Ok(false) => {}
                Err(e) => tracing::error!(error = %e, "ledger refused a free"),
            }
        }
        self.pump();
        self.maybe_close();
    }
}

impl Handler<PartitionDone> for Supervisor {
    type Result = ();

    fn handle(&mut self, msg: PartitionDone, _: &mut Context<Self>) {
        took(&self.metrics, ActorKind::Supervisor);
        let part = msg.part;
        if let Some(job) = self.jobs.get_mut(&part.job) {
            if !job.failed {
                job.proofs[part.index] = Some(msg.proof);
                job.states[part.index] = PartitionState::Done;
                self.metrics.proof(ProofResult::Ok);
                if job.proofs.iter().all(Option::is_some) {
                    // Answer now; the entry stays until Dealloc has settled every charge.
                    if let Some(reply) = job.reply.take() {
                        let _ = reply.send(Ok(job.proofs.iter().flatten().copied().collect()));
                    }
                }
            }
        }
        // Every charge may already be settled (a stated footprint with no witness bytes).
        self.finish_if_done(part.job);
    }
}

impl Handler<Failed> for Supervisor {
    type Result = ();

    fn handle(&mut self, msg: Failed, _: &mut Context<Self>) {
        took(&self.metrics, ActorKind::Supervisor);
        let part = msg.part;
        if msg.actor == ActorKind::Synthesis {
            self.idle_workers += 1;
        }
        let r = self.ledger.cancel(msg.grant);
        self.ledger_op("cancel", r);
        let max = self.retry_attempts;
        let retry = match self.jobs.get_mut(&part.job) {
            Some(job) if !job.failed && msg.retryable && job.attempts[part.index] < max => {
                job.attempts[part.index] += 1;
                job.states[part.index] = PartitionState::Queued;
                Some(PartRef {
                    attempt: job.attempts[part.index],
                    ..part
                })
            }
            _ => None,
        };
        match retry {
            Some(next) => {
                tracing::warn!(job = part.job, partition = part.index, attempt = next.attempt, cause = %msg.cause, "retrying partition");
                self.metrics.proof(ProofResult::Retried);
                self.queue.push_front(next);
            }
            None => {
                let attempts = self
                    .jobs
                    .get(&part.job)
                    .map_or(part.attempt, |j| j.attempts[part.index]);
                self.set_state(part, PartitionState::Failed);
                let err = EngineError::PartitionFailed {
                    job: part.job,
                    index: part.index,
                    attempts,
                    actor: msg.actor.as_str(),
                    cause: msg.cause,
                };
                self.fail_job(part.job, err);
            }
        }
        self.pump();
    }
}

impl Handler<Status> for Supervisor {
    type Result = ();

    fn handle(&mut self, msg: Status, _: &mut Context<Self>) {
        took(&self.metrics, ActorKind::Supervisor);
        let mut jobs: Vec<JobStatus> = self
            .jobs
            .iter()
            .map(|(id, j)| JobStatus {
                id: *id,
                partitions: j.states.clone(),
                failed: j.failed,
            })
            .collect();
        jobs.sort_by_key(|j| j.id);
        let _ = msg.reply.send(EngineStatus {
            jobs,
            queued: self.queue.len(),
            ledger: self.ledger.snapshot(),
            synthesized_alive: self.alive_now,
            synthesized_alive_peak: self.alive_peak,
        });
    }
}

impl Handler<Shutdown> for Supervisor {
    type Result = ();

    fn handle(&mut self, msg: Shutdown, _: &mut Context<Self>) {
        took(&self.metrics, ActorKind::Supervisor);
        self.refuse_new = true;
        self.closing.push(msg.reply);
        self.maybe_close();
    }
}
