//! What the engine reports: why a request failed or the engine could not start
//! ([`EngineError`]), and a snapshot of its jobs and ledger ([`EngineStatus`]).

use std::time::Duration;

use std::sync::Arc;

use crate::config::ConfigError;
use crate::groth16::proof::Proof;
use crate::ledger::{LedgerError, LedgerSnapshot, Stage};
use crate::scheduler::{Priority, SchedulerError};

/// Why the engine refused or failed a request, or could not start.
#[derive(Debug, Clone, thiserror::Error)]
pub enum EngineError {
    /// The request cannot be run at all (too large for the budget, empty, ...).
    #[error("request rejected: {0}")]
    Rejected(Rejection),
    /// The request does not fit now beside the proving keys in use (set aside from an auto
    /// budget, or held beside a stated one in the host's memory): `short_bytes` of them would
    /// have to go first. An embedder can unpin idle keys and submit again.
    #[error("request rejected: {cause} ({short_bytes} bytes short beside the proving keys in use; pinned keys no job uses hold {idle_bytes})")]
    NoRoom {
        /// Bytes of keys in use that stand in the way.
        short_bytes: u64,
        /// Bytes the ledger counts for pinned keys no job uses (the request's own key aside).
        idle_bytes: u64,
        /// The ledger's refusal.
        cause: LedgerError,
    },
    /// A partition failed for good.
    #[error("job {job}: partition {index} failed in the {actor} actor after {attempts} attempt(s): {cause}")]
    PartitionFailed {
        /// Job id.
        job: u64,
        /// Partition index in the request.
        index: usize,
        /// Attempts made.
        attempts: u32,
        /// Actor kind where the last attempt failed.
        actor: &'static str,
        /// The last cause.
        cause: String,
    },
    /// The job was cancelled ([`Engine::cancel`](crate::Engine::cancel)).
    #[error("job {job} was cancelled")]
    Cancelled {
        /// Job id.
        job: u64,
    },
    /// The engine no longer takes requests.
    #[error("the engine is shutting down")]
    ShuttingDown,
    /// The actor system is gone.
    #[error("the engine has stopped")]
    Stopped,
    /// Start-up failed (shared, so that the error stays cheap to clone).
    #[error("engine start failed: {0}")]
    Start(Arc<StartError>),
}

/// Why a request cannot run at all.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Rejection {
    /// It has no circuits.
    #[error("the request has no circuits")]
    Empty,
    /// The ledger can never grant it (larger than the budget or the host's memory, ...).
    #[error(transparent)]
    Ledger(LedgerError),
    /// The scheduler refused it.
    #[error(transparent)]
    Scheduler(SchedulerError),
}

/// Why the engine could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The configuration breaks a rule.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The budget cannot be planned or the ledger built (a budget beyond the host's memory, no
    /// slots, ...).
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// The metrics registry refused a metric.
    #[error("metrics: {0}")]
    Metrics(#[from] prometheus::Error),
    /// `metrics.listen` could not be bound.
    #[error("metrics.listen {addr}: {source}")]
    MetricsListen {
        /// The address.
        addr: String,
        /// Why.
        source: std::io::Error,
    },
    /// A configured device could not be opened.
    #[error("device {device}: {source}")]
    Device {
        /// Its index (`gpu.devices`).
        device: usize,
        /// Why.
        source: crate::gpu::GpuError,
    },
    /// The actor system's thread could not be started.
    #[error("the actor system's thread: {0}")]
    Thread(std::io::Error),
    /// The actor system ended before handing back its supervisor.
    #[error("the actor system did not start")]
    NoActorSystem,
    /// The task starting the engine stopped (a panic) before it answered.
    #[error("the start task stopped: {0}")]
    Interrupted(String),
}

impl<E: Into<StartError>> From<E> for EngineError {
    fn from(e: E) -> Self {
        EngineError::Start(Arc::new(e.into()))
    }
}

/// Where one partition is: waiting for a grant, at one of the ledger's stages, or ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartitionState {
    /// Waiting for a grant.
    Queued,
    /// Its buffers sit at this ledger stage (synthesizing, queued for a GPU, on a GPU, B_G2).
    At(Stage),
    /// Proof made.
    Done,
    /// Given up.
    Failed,
}

impl PartitionState {
    /// How many states there are: queued, one per ledger stage, done, failed.
    pub const COUNT: usize = Stage::COUNT + 3;

    /// A dense index in `0..COUNT`, in pipeline order (for counting partitions per state).
    pub const fn index(self) -> usize {
        match self {
            Self::Queued => 0,
            Self::At(stage) => 1 + stage as usize,
            Self::Done => Stage::COUNT + 1,
            Self::Failed => Stage::COUNT + 2,
        }
    }
}

/// One job in [`EngineStatus`].
#[derive(Clone, Debug)]
pub struct JobStatus {
    /// Job id.
    pub id: u64,
    /// Each partition's state.
    pub partitions: Vec<PartitionState>,
    /// Whether the job has failed or was cancelled (its remaining buffers are being settled).
    pub failed: bool,
    /// The ledger bytes each of its partitions is charged on the host.
    pub footprint_bytes: u64,
    /// Its admission level.
    pub priority: Priority,
    /// Each partition's synthesis and GPU time (zero until that step has ended).
    pub times: Vec<PartitionTimes>,
}

/// Where one partition's time went: synthesis (grant to synthesized) and the GPU (synthesized
/// to handed to B_G2, the device queue included), each of its last attempt.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PartitionTimes {
    /// Synthesis.
    pub synthesis: Duration,
    /// The GPU.
    pub gpu: Duration,
}

/// What a finished job hands back: its proofs and where its time went.
#[derive(Clone, Debug)]
pub struct JobReport {
    /// The proofs, in request order.
    pub proofs: Vec<Proof>,
    /// From submission to its first partition's grant.
    pub queue_wait: Duration,
    /// Synthesis, summed over partitions (grant to synthesized).
    pub synthesis: Duration,
    /// H and G1 MSMs, summed over partitions (taken by a GPU actor to handed to B_G2).
    pub gpu: Duration,
}

/// What [`Engine::cancel`](crate::Engine::cancel) found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CancelOutcome {
    /// No such job in flight (never submitted, or already answered).
    NotFound,
    /// Cancelled; `was_running` when some partition had been granted (those are abandoned:
    /// the next stage each reaches frees its buffers through Dealloc).
    Cancelled {
        /// Whether any partition had started.
        was_running: bool,
    },
}

/// A snapshot of the engine.
#[derive(Clone, Debug)]
pub struct EngineStatus {
    /// Jobs in flight.
    pub jobs: Vec<JobStatus>,
    /// Partitions waiting for a grant.
    pub queued: usize,
    /// Partitions waiting per priority level, lowest first.
    pub queued_by_priority: [usize; Priority::COUNT],
    /// The ledger by class and stage.
    pub ledger: LedgerSnapshot,
    /// Each partition on a GPU actor now: the device label, the job id and the partition.
    pub on_gpu: Vec<(String, u64, usize)>,
    /// Partitions synthesized and not yet taken by a GPU actor.
    pub synthesized_alive: usize,
    /// The most of those at once since start.
    pub synthesized_alive_peak: usize,
    /// Partitions synthesized since start, by route, in the order of
    /// [`Route::ALL`](crate::compiled::Route::ALL): witness-only against a recording in memory,
    /// witness-only against one just read from its file, recorded, full synthesis.
    pub synthesis_routes: [u64; 4],
}
