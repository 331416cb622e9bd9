//! Admission: which queued partition starts next. The Supervisor's one place that decides it
//! (no actor framework here): the order comes from the [`Scheduler`] (highest priority first,
//! FIFO within a level, retries in front), the fit from the ledger, and the head starts when a
//! synthesis worker is idle and the ledger grants its footprint. A head that does not fit waits:
//! a lower level never overtakes a higher one.
//!
//! CRITICAL work (WinningPoSt, due within one epoch) has a reserve: a pool of
//! `critical_workers` synthesis threads of its own (at the process's CPU priority while the
//! ordinary pool runs niced), as many ledger slots, and the bytes of the largest CRITICAL
//! partition seen so far, which no other level may take. So a CRITICAL job never waits for
//! another job's synthesis to end, only for the partitions already granted ahead of it on the
//! device path. A CRITICAL partition takes a critical worker when one is idle, else an
//! ordinary one.

use crate::engine::messages::PartRef;
use crate::ledger::{Footprint, Grant, Ledger, LedgerError, Reserve};
use crate::scheduler::{Cancelled, Failure, Finished, Priority, Scheduler, SchedulerError, Ticket};

/// Which synthesis pool a partition runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pool {
    /// The `synthesis_workers` threads.
    Ordinary,
    /// The `critical_workers` threads: CRITICAL partitions only.
    Critical,
}

/// What [`Admission::next`] decided.
#[derive(Debug)]
pub(super) enum Next {
    /// Start this partition under this grant in this pool (its worker is now counted busy).
    Start(PartRef, Grant, Pool),
    /// This partition can never be granted; its job must fail (the scheduler has abandoned it).
    Refused(PartRef, LedgerError),
    /// Nothing can start now (no idle worker, no partition, or the ledger says wait).
    Wait,
}

fn ticket(p: PartRef) -> Ticket {
    Ticket {
        job: p.job,
        index: p.index,
        attempt: p.attempt,
    }
}

fn part(t: Ticket) -> PartRef {
    PartRef {
        job: t.job,
        index: t.index,
        attempt: t.attempt,
    }
}

/// The scheduler of waiting partitions, and the idle synthesis workers.
#[derive(Debug)]
pub(super) struct Admission {
    scheduler: Scheduler,
    /// Idle workers of the ordinary pool.
    idle_ordinary: usize,
    /// Idle workers of the critical pool.
    idle_critical: usize,
    /// Workers (and slots) only CRITICAL partitions may take.
    critical_workers: usize,
    /// Bytes only CRITICAL partitions may take: the largest CRITICAL footprint seen.
    critical_bytes: u64,
}

impl Admission {
    /// No job yet, `workers` idle ordinary workers and `critical_workers` idle critical ones
    /// (with as many ledger slots kept for CRITICAL partitions), `max_attempts` attempts per
    /// partition.
    pub(super) fn new(workers: usize, critical_workers: usize, max_attempts: u32) -> Self {
        Admission {
            scheduler: Scheduler::new(max_attempts),
            idle_ordinary: workers,
            idle_critical: critical_workers,
            critical_workers,
            critical_bytes: 0,
        }
    }

    /// A CRITICAL job of per-partition footprint `bytes` arrived: from now on the reserve
    /// holds at least that much (while a reserve is kept at all).
    pub(super) fn note_critical(&mut self, bytes: u64) {
        if self.critical_workers > 0 {
            self.critical_bytes = self.critical_bytes.max(bytes);
        }
    }

    /// What a partition of level `priority` must leave free.
    fn reserve_for(&self, priority: Option<Priority>) -> Reserve {
        match priority {
            Some(Priority::Critical) => Reserve::NONE,
            _ => Reserve {
                slots: self.critical_workers,
                bytes: self.critical_bytes,
            },
        }
    }

    /// Queues partitions `0..n` of `job` at `priority`, by `arrival` within it when stated;
    /// returns how many wait ahead of them.
    pub(super) fn push_job(
        &mut self,
        job: u64,
        priority: Priority,
        n: usize,
        arrival: Option<u64>,
    ) -> Result<usize, SchedulerError> {
        match arrival {
            Some(a) => self.scheduler.submit_at(job, priority, n, a),
            None => self.scheduler.submit(job, priority, n),
        }
    }

    /// A started partition failed: the scheduler retries it (front of its level) or fails its
    /// job (its waiting partitions leave the queue).
    pub(super) fn failed(&mut self, p: PartRef, retryable: bool) -> Failure {
        self.scheduler
            .failed(ticket(p), retryable)
            .unwrap_or(Failure::Ignored)
    }

    /// A started partition produced its proof.
    pub(super) fn finished(&mut self, p: PartRef) -> Finished {
        self.scheduler
            .finished(ticket(p))
            .unwrap_or(Finished::Ignored)
    }

    /// Cancels `job`: waiting partitions leave, started ones are abandoned.
    pub(super) fn cancel(&mut self, job: u64) -> Cancelled {
        self.scheduler.cancel(job)
    }

    /// Forgets `job` once the Supervisor's own entry for it has ended.
    pub(super) fn forget(&mut self, job: u64) {
        self.scheduler.forget(job);
    }

    /// A synthesis worker of `pool` is idle again.
    pub(super) fn worker_free(&mut self, pool: Pool) {
        match pool {
            Pool::Ordinary => self.idle_ordinary += 1,
            Pool::Critical => self.idle_critical += 1,
        }
    }

    /// The pool a partition of level `priority` would start in now, if any worker it may take
    /// is idle.
    fn pool_for(&self, priority: Option<Priority>) -> Option<Pool> {
        let critical = priority == Some(Priority::Critical) && self.idle_critical > 0;
        if critical {
            Some(Pool::Critical)
        } else if self.idle_ordinary > 0 {
            Some(Pool::Ordinary)
        } else {
            None
        }
    }

    /// Partitions waiting.
    pub(super) fn waiting(&self) -> usize {
        self.scheduler.waiting()
    }

    /// Partitions waiting per level, lowest first.
    pub(super) fn waiting_by_level(&self) -> [usize; Priority::COUNT] {
        self.scheduler.waiting_by_level()
    }

    /// Decides on the head of the queue. `footprint(job)` is the job's per-partition footprint,
    /// `None` for a job that is gone (its partitions are dropped).
    pub(super) fn next(
        &mut self,
        ledger: &mut Ledger,
        footprint: impl Fn(u64) -> Option<Footprint>,
    ) -> Next {
        while self.idle_ordinary + self.idle_critical > 0 {
            let Some(head) = self.scheduler.peek() else {
                break;
            };
            let Some(fp) = footprint(head.job) else {
                self.scheduler.cancel(head.job);
                continue;
            };
            let priority = self.scheduler.priority_of(head.job);
            let Some(pool) = self.pool_for(priority) else {
                break;
            };
            return match ledger.try_grant_leaving(&fp, self.reserve_for(priority)) {
                Ok(Some(grant)) => {
                    self.scheduler.pop();
                    match pool {
                        Pool::Ordinary => self.idle_ordinary -= 1,
                        Pool::Critical => self.idle_critical -= 1,
                    }
                    Next::Start(part(head), grant, pool)
                }
                Ok(None) => Next::Wait,
                Err(e) => {
                    self.scheduler.pop();
                    self.failed(part(head), false);
                    Next::Refused(part(head), e)
                }
            };
        }
        Next::Wait
    }
}
