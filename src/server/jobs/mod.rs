//! The job table and each job's life. `daemon` holds the [`Daemon`](daemon::Daemon) and its
//! table (accepting, waiting, cancelling, ending a job: journal first), `runner` a job's run on
//! the engine and the resume after a restart, `live` what is told about jobs (outcomes, live
//! views, recent failures) and `journal` the redb file that survives restarts.

pub mod daemon;
pub mod journal;
pub mod live;
pub mod runner;
