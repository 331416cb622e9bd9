//! What the daemon tells about its jobs: how one ended ([`Outcome`]), a live one as the status
//! sees it ([`LiveView`]), and the last failures with their reason ([`Failures`]).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use tokio::sync::watch;

use super::journal::{JobRecord, Timings};
use crate::scheduler::Priority;

/// How a job ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Proved.
    Completed {
        /// The proof bytes.
        proof: Vec<u8>,
        /// Phase timings.
        timings: Timings,
    },
    /// Failed for good.
    Failed {
        /// Why.
        error: String,
        /// Phase timings.
        timings: Timings,
    },
    /// Cancelled by a client.
    Cancelled,
}

impl Outcome {
    /// A failure for `error`: its Display text is what the client, the journal and `/status`
    /// are told.
    pub fn failed(error: &super::job_error::JobError, timings: Timings) -> Self {
        Outcome::Failed {
            error: error.to_string(),
            timings,
        }
    }
}

/// A job in [`Daemon::live_jobs`](super::daemon::Daemon::live_jobs).
#[derive(Clone, Debug)]
pub struct LiveView {
    /// Job id.
    pub id: String,
    /// The client's request id (shared by every job sent under it).
    pub request_id: String,
    /// The wire proof kind.
    pub kind: i32,
    /// The engine's job id (0 while its key loads).
    pub engine_job: u64,
    /// When it was accepted (milliseconds since the Unix epoch; kept across restarts).
    pub accepted_ms: u64,
    /// Its admission level.
    pub priority: Priority,
}

/// A job not yet ended.
pub(super) struct Live {
    /// Its journal record.
    pub(super) record: JobRecord,
    /// Its waiters' channel.
    pub(super) done: watch::Sender<Option<Outcome>>,
    /// The engine's id for it once submitted there (0 before).
    pub(super) engine_job: Arc<AtomicU64>,
    /// Set once it is ending (only the first ender writes the journal).
    pub(super) ending: bool,
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// How many failures [`Failures`] keeps.
pub const RECENT_FAILURES: usize = 32;

/// One job that failed for good.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// Job id.
    pub id: String,
    /// The wire proof kind.
    pub kind: i32,
    /// Why (the error AwaitProof answered with).
    pub error: String,
    /// When it failed (milliseconds since the Unix epoch).
    pub at_ms: u64,
}

/// The last [`RECENT_FAILURES`] failed jobs, newest last; forgotten at a restart.
#[derive(Debug, Default)]
pub struct Failures(Mutex<VecDeque<Failure>>);

impl Failures {
    /// Records a failure, forgetting the oldest beyond [`RECENT_FAILURES`].
    pub fn push(&self, f: Failure) {
        // A poisoned ring still holds whole entries (each update is one push or pop).
        let mut ring = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if ring.len() == RECENT_FAILURES {
            ring.pop_front();
        }
        ring.push_back(f);
    }

    /// The failures kept, newest first.
    pub fn recent(&self) -> Vec<Failure> {
        let ring = self.0.lock().unwrap_or_else(|p| p.into_inner());
        ring.iter().rev().cloned().collect()
    }
}

/// The live job (not ending) whose request had digest `digest`.
pub(super) fn live_with(table: &HashMap<String, Live>, digest: &str) -> Option<String> {
    table
        .iter()
        .find(|(_, l)| !l.ending && l.record.digest == digest)
        .map(|(id, _)| id.clone())
}

impl Live {
    /// A job just accepted (or resumed).
    pub(super) fn new(record: JobRecord) -> Self {
        Live {
            record,
            done: watch::channel(None).0,
            engine_job: Arc::new(AtomicU64::new(0)),
            ending: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_keeps_the_newest_first_and_forgets_the_oldest() {
        let ring = Failures::default();
        for i in 0..RECENT_FAILURES + 3 {
            ring.push(Failure {
                id: format!("j{i}"),
                kind: 0,
                error: "boom".into(),
                at_ms: i as u64,
            });
        }
        let kept = ring.recent();
        assert_eq!(kept.len(), RECENT_FAILURES);
        assert_eq!(kept[0].id, format!("j{}", RECENT_FAILURES + 2));
        assert_eq!(kept[RECENT_FAILURES - 1].id, "j3");
    }
}
