//! Admission: which queued partition starts next. The Supervisor's one place that decides it
//! (no actor framework here): partitions wait in arrival order, retries go first, and the head
//! starts when a synthesis worker is idle and the ledger grants its footprint.

use std::collections::VecDeque;

use crate::ledger::{Footprint, Grant, Ledger, LedgerError};
use crate::messages::PartRef;

/// What [`Admission::next`] decided.
#[derive(Debug)]
pub(super) enum Next {
    /// Start this partition under this grant (a worker is now counted busy).
    Start(PartRef, Grant),
    /// This partition can never be granted; its job must fail.
    Refused(PartRef, LedgerError),
    /// Nothing can start now (no idle worker, no partition, or the ledger says wait).
    Wait,
}

/// The queue of partitions waiting for a grant, and the idle synthesis workers.
#[derive(Debug)]
pub(super) struct Admission {
    queue: VecDeque<PartRef>,
    idle_workers: usize,
}

impl Admission {
    /// An empty queue with `workers` idle workers.
    pub(super) fn new(workers: usize) -> Self {
        Admission {
            queue: VecDeque::new(),
            idle_workers: workers,
        }
    }

    /// Queues the first attempt at partitions `0..n` of `job`, behind everything waiting.
    pub(super) fn push_job(&mut self, job: u64, n: usize) {
        self.queue.extend((0..n).map(|index| PartRef {
            job,
            index,
            attempt: 1,
        }));
    }

    /// Queues a new attempt ahead of everything waiting.
    pub(super) fn push_retry(&mut self, part: PartRef) {
        self.queue.push_front(part);
    }

    /// Drops every waiting partition of `job`.
    pub(super) fn forget_job(&mut self, job: u64) {
        self.queue.retain(|p| p.job != job);
    }

    /// A synthesis worker is idle again.
    pub(super) fn worker_free(&mut self) {
        self.idle_workers += 1;
    }

    /// Partitions waiting.
    pub(super) fn waiting(&self) -> usize {
        self.queue.len()
    }

    /// Decides on the head of the queue. `footprint(job)` is the job's per-partition footprint,
    /// `None` for a job that is gone or failed (its partitions are dropped).
    pub(super) fn next(
        &mut self,
        ledger: &mut Ledger,
        footprint: impl Fn(u64) -> Option<Footprint>,
    ) -> Next {
        while self.idle_workers > 0 {
            let Some(part) = self.queue.front().copied() else {
                break;
            };
            let Some(fp) = footprint(part.job) else {
                self.queue.pop_front();
                continue;
            };
            return match ledger.try_grant(&fp) {
                Ok(Some(grant)) => {
                    self.queue.pop_front();
                    self.idle_workers -= 1;
                    Next::Start(part, grant)
                }
                Ok(None) => Next::Wait,
                Err(e) => {
                    self.queue.pop_front();
                    Next::Refused(part, e)
                }
            };
        }
        Next::Wait
    }
}
