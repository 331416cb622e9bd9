//! The job table and each job's life. `daemon` holds the [`Daemon`](daemon::Daemon) and its
//! table (accepting, waiting, cancelling, ending a job: journal first), `runner` a job's run on
//! the engine and the resume after a restart, `live` what is told about jobs (outcomes, live
//! views, recent failures), `journal` the redb file that survives restarts, and `job_error` why
//! an accepted job failed ([`JobError`](job_error::JobError)).

pub mod daemon;
pub mod job_error;
pub mod journal;
pub mod live;
pub mod runner;
