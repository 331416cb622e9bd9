//! The admission scheduler: which waiting partition goes next, cancellation, retries (no actor
//! framework here, like the ledger).
//!
//! Jobs arrive with a [`Priority`] and a partition count. Their partitions wait in one FIFO queue
//! per level; [`Scheduler::peek`] names the front of the highest non-empty level, and the caller
//! [`Scheduler::pop`]s it once the ledger has granted it (so whenever a slot and bytes free up,
//! the highest waiting level goes first, and nothing already granted is ever taken back). A
//! started partition is *running* until the caller reports it [`finished`](Scheduler::finished)
//! or [`failed`](Scheduler::failed).
//!
//! Rules:
//! - a retryable failure puts the partition back at the front of its level, up to
//!   `max_attempts` attempts in all; any other failure fails the job;
//! - a failed or cancelled job is *abandoned*: its waiting partitions leave the queues at once,
//!   its running ones are never retried and their results are ignored; the job is forgotten when
//!   the last of them reports;
//! - [`Scheduler::cancel`] says whether anything of the job had started (`was_running`).

mod priority;
pub mod yield_point;

use std::collections::{HashMap, VecDeque};

pub use priority::{Priority, UnknownPriority};

/// One attempt at one partition of one job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ticket {
    /// The job.
    pub job: u64,
    /// The partition's index in its job.
    pub index: usize,
    /// 1 for the first attempt.
    pub attempt: u32,
}

/// Why the scheduler refused a call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchedulerError {
    /// A job with this id is still known.
    #[error("job {0} is already scheduled")]
    Duplicate(u64),
    /// A job needs at least one partition.
    #[error("job {0} has no partitions")]
    Empty(u64),
    /// The ticket is not running (never popped, already reported, or from another attempt).
    #[error("job {job} partition {index} attempt {attempt} is not running")]
    NotRunning {
        /// The job.
        job: u64,
        /// The partition.
        index: usize,
        /// The attempt.
        attempt: u32,
    },
}

/// What [`Scheduler::finished`] meant for the job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finished {
    /// Other partitions are still to come.
    Pending,
    /// That was the job's last partition: the job is done and forgotten.
    JobDone,
    /// The job had been abandoned; the result is to be dropped.
    Ignored,
}

/// What [`Scheduler::failed`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The partition waits again, at the front of its level, as this ticket.
    Retry(Ticket),
    /// The job has failed: its waiting partitions left the queues, `running` are still out.
    JobFailed {
        /// Attempts made at the partition that failed.
        attempts: u32,
        /// The job's partitions still running (abandoned; they report later).
        running: usize,
    },
    /// The job had already been abandoned; nothing more to do.
    Ignored,
}

/// What [`Scheduler::cancel`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cancelled {
    /// No such job (never scheduled, or already over).
    Unknown,
    /// The job was abandoned before: nothing changed.
    AlreadyAbandoned,
    /// The job is abandoned. `was_running`: some partition of it had started; `running`: how
    /// many are still out (they report later, and are not retried).
    Done {
        /// Whether any partition had been popped.
        was_running: bool,
        /// Partitions still running.
        running: usize,
    },
}

#[derive(Debug)]
struct Job {
    priority: Priority,
    /// Where it stands in its level: jobs wait in arrival order, whatever order they reached
    /// the scheduler in.
    arrival: u64,
    partitions: usize,
    attempts: Vec<u32>,
    /// Partitions finished with a result.
    done: usize,
    /// Partitions popped and not yet reported, by index (their attempt).
    running: HashMap<usize, u32>,
    /// Whether any partition was ever popped.
    started: bool,
    abandoned: bool,
}

/// Priority queues of partitions and the state of every job not yet over.
#[derive(Debug)]
pub struct Scheduler {
    levels: [VecDeque<Ticket>; Priority::COUNT],
    jobs: HashMap<u64, Job>,
    max_attempts: u32,
}

impl Scheduler {
    /// An empty scheduler allowing `max_attempts` (at least 1) attempts per partition.
    pub fn new(max_attempts: u32) -> Self {
        Scheduler {
            levels: Default::default(),
            jobs: HashMap::new(),
            max_attempts: max_attempts.max(1),
        }
    }

    /// Queues the `partitions` partitions of job `job` at `priority`, behind every job of its
    /// level. Returns how many partitions wait ahead of its first one (at its level or above).
    pub fn submit(
        &mut self,
        job: u64,
        priority: Priority,
        partitions: usize,
    ) -> Result<usize, SchedulerError> {
        self.submit_at(job, priority, partitions, u64::MAX)
    }

    /// [`submit`](Self::submit) for a job that arrived at `arrival` (any increasing count):
    /// it waits behind the jobs of its level that arrived before it and ahead of those that
    /// arrived after it, so a caller that prepares jobs concurrently (keys loading, inputs
    /// checked) still has them admitted in the order it accepted them.
    pub fn submit_at(
        &mut self,
        job: u64,
        priority: Priority,
        partitions: usize,
        arrival: u64,
    ) -> Result<usize, SchedulerError> {
        if self.jobs.contains_key(&job) {
            return Err(SchedulerError::Duplicate(job));
        }
        if partitions == 0 {
            return Err(SchedulerError::Empty(job));
        }
        let jobs = &self.jobs;
        let level = &mut self.levels[priority as usize];
        let at = level
            .iter()
            .position(|t| jobs.get(&t.job).is_some_and(|j| j.arrival > arrival))
            .unwrap_or(level.len());
        let above: usize = self.levels[priority as usize + 1..]
            .iter()
            .map(VecDeque::len)
            .sum();
        let level = &mut self.levels[priority as usize];
        for index in (0..partitions).rev() {
            level.insert(
                at,
                Ticket {
                    job,
                    index,
                    attempt: 1,
                },
            );
        }
        self.jobs.insert(
            job,
            Job {
                priority,
                arrival,
                partitions,
                attempts: vec![1; partitions],
                done: 0,
                running: HashMap::new(),
                started: false,
                abandoned: false,
            },
        );
        Ok(above + at)
    }

    /// The partition that should start next: the front of the highest non-empty level.
    pub fn peek(&self) -> Option<Ticket> {
        self.levels.iter().rev().find_map(|l| l.front().copied())
    }

    /// Takes the partition [`peek`](Self::peek) names; it is running from now on.
    pub fn pop(&mut self) -> Option<Ticket> {
        let level = self.levels.iter_mut().rev().find(|l| !l.is_empty())?;
        let t = level.pop_front()?;
        if let Some(job) = self.jobs.get_mut(&t.job) {
            job.running.insert(t.index, t.attempt);
            job.started = true;
        }
        Some(t)
    }

    fn take_running(&mut self, t: Ticket) -> Result<&mut Job, SchedulerError> {
        let not_running = SchedulerError::NotRunning {
            job: t.job,
            index: t.index,
            attempt: t.attempt,
        };
        let job = self.jobs.get_mut(&t.job).ok_or(not_running.clone())?;
        if job.running.get(&t.index) != Some(&t.attempt) {
            return Err(not_running);
        }
        job.running.remove(&t.index);
        Ok(job)
    }

    /// The running partition `t` produced its result.
    pub fn finished(&mut self, t: Ticket) -> Result<Finished, SchedulerError> {
        let job = self.take_running(t)?;
        if job.abandoned {
            self.forget_if_settled(t.job);
            return Ok(Finished::Ignored);
        }
        job.done += 1;
        if job.done == job.partitions {
            self.jobs.remove(&t.job);
            return Ok(Finished::JobDone);
        }
        Ok(Finished::Pending)
    }

    /// The running partition `t` failed; `retryable` when another attempt could pass.
    pub fn failed(&mut self, t: Ticket, retryable: bool) -> Result<Failure, SchedulerError> {
        let max = self.max_attempts;
        let job = self.take_running(t)?;
        if job.abandoned {
            self.forget_if_settled(t.job);
            return Ok(Failure::Ignored);
        }
        let attempts = job.attempts[t.index];
        if retryable && attempts < max {
            job.attempts[t.index] = attempts + 1;
            let next = Ticket {
                attempt: attempts + 1,
                ..t
            };
            self.levels[job.priority as usize].push_front(next);
            return Ok(Failure::Retry(next));
        }
        let running = self.abandon(t.job);
        Ok(Failure::JobFailed { attempts, running })
    }

    /// Cancels job `job`: its waiting partitions leave the queues, its running ones are
    /// abandoned.
    pub fn cancel(&mut self, job: u64) -> Cancelled {
        let Some(j) = self.jobs.get(&job) else {
            return Cancelled::Unknown;
        };
        if j.abandoned {
            return Cancelled::AlreadyAbandoned;
        }
        let was_running = j.started;
        let running = self.abandon(job);
        Cancelled::Done {
            was_running,
            running,
        }
    }

    /// Forgets `job` entirely (its waiting partitions leave, running ones are no longer
    /// expected to report): for a caller whose own record of the job has ended.
    pub fn forget(&mut self, job: u64) {
        if let Some(j) = self.jobs.remove(&job) {
            self.levels[j.priority as usize].retain(|t| t.job != job);
        }
    }

    /// Marks `job` abandoned, drops its waiting partitions, forgets it if nothing runs; returns
    /// its running count.
    fn abandon(&mut self, job: u64) -> usize {
        let Some(j) = self.jobs.get_mut(&job) else {
            return 0;
        };
        j.abandoned = true;
        let level = j.priority as usize;
        self.levels[level].retain(|t| t.job != job);
        let running = j.running.len();
        self.forget_if_settled(job);
        running
    }

    fn forget_if_settled(&mut self, job: u64) {
        if self
            .jobs
            .get(&job)
            .is_some_and(|j| j.abandoned && j.running.is_empty())
        {
            self.jobs.remove(&job);
        }
    }

    /// Partitions waiting per level, lowest level first.
    pub fn waiting_by_level(&self) -> [usize; Priority::COUNT] {
        std::array::from_fn(|i| self.levels[i].len())
    }

    /// Partitions waiting in all levels.
    pub fn waiting(&self) -> usize {
        self.levels.iter().map(VecDeque::len).sum()
    }

    /// Partitions of `job` running now (0 for an unknown job).
    pub fn running(&self, job: u64) -> usize {
        self.jobs.get(&job).map_or(0, |j| j.running.len())
    }

    /// Whether `job` is known and not abandoned.
    pub fn is_active(&self, job: u64) -> bool {
        self.jobs.get(&job).is_some_and(|j| !j.abandoned)
    }

    /// The level `job` was submitted at, while it is known.
    pub fn priority_of(&self, job: u64) -> Option<Priority> {
        self.jobs.get(&job).map(|j| j.priority)
    }

    /// Jobs not yet over (abandoned ones with partitions still running included).
    pub fn jobs(&self) -> usize {
        self.jobs.len()
    }
}
