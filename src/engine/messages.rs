//! Every message between the engine's actors, with sender → receiver and the reply. Large
//! buffers change owner only by moving inside these messages.

use std::any::Any;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use actix::Message;
use tokio::sync::oneshot;

use crate::engine::request::Request;
use crate::engine::status::{CancelOutcome, EngineError, EngineStatus, JobReport};
use crate::groth16::key::ProvingKey;
use crate::groth16::proof::Proof;
use crate::groth16::prover::{Abc, G1Sums, Witness};
use crate::ledger::{BufferClass, Footprint, Grant, GrantId, LostGrant, Stage};
use crate::metrics::ActorKind;
use crate::scheduler::Priority;
use crate::stages::pipeline::PartitionCircuit;

/// Identifies one partition of one job, and which attempt at it this is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PartRef {
    /// The job.
    pub job: u64,
    /// Index of the partition inside its request.
    pub index: usize,
    /// 1 for the first try.
    pub attempt: u32,
}

/// Set by the supervisor when a job fails for good; the stages check it before their work so
/// that the job's partitions still in flight are skipped rather than computed for nothing.
#[derive(Clone, Debug, Default)]
pub struct Abandoned(Arc<AtomicBool>);

impl Abandoned {
    /// Marks the job abandoned.
    pub fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether the job was abandoned.
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Engine → Supervisor: a new request. Reply through `reply`: the proofs in order, or why not.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Submit {
    /// The job id the engine gave it (unique per engine).
    pub id: u64,
    /// The request.
    pub request: Request,
    /// Where the outcome goes.
    pub reply: oneshot::Sender<Result<JobReport, EngineError>>,
}

/// The key a [`CheckRoom`] asks about.
pub enum RoomKey {
    /// A loaded key: counted as a job's key is.
    Loaded(Arc<ProvingKey>),
    /// A key about to be loaded, of about `bytes` in memory: it would be one more resident key.
    Unloaded {
        /// Its estimated bytes in memory.
        bytes: u64,
    },
}

/// Engine → Supervisor: would a job of `pk` (with its `footprint` when stated) be admitted
/// now, beside the keys in use and the jobs in flight? A dry run of [`Submit`]'s checks that
/// counts nothing. Reply: `Ok`, or the refusal it would get ([`EngineError::NoRoom`] when keys
/// in use stand in the way).
#[derive(Message)]
#[rtype(result = "()")]
pub struct CheckRoom {
    /// The request's key, or the bytes of one not loaded yet.
    pub key: RoomKey,
    /// The request's stated footprint, if any.
    pub footprint: Option<Footprint>,
    /// Where the answer goes.
    pub reply: oneshot::Sender<Result<(), EngineError>>,
}

/// Engine → Supervisor: cancel job `job` (waiting partitions leave the queue, started ones are
/// abandoned and their buffers freed through Dealloc). Reply: what was found.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Cancel {
    /// The job.
    pub job: u64,
    /// Where the answer goes.
    pub reply: oneshot::Sender<CancelOutcome>,
}

/// Engine → Supervisor: keep `pk` resident (PreloadSRS) until [`UnpinKey`]: it counts as one
/// more use of the key in the ledger. Reply: the bytes set aside from the budget now (0 when
/// already held, or when the budget is stated), or why the key does not fit.
#[derive(Message)]
#[rtype(result = "()")]
pub struct PinKey {
    /// The key.
    pub pk: Arc<ProvingKey>,
    /// Where the answer goes.
    pub reply: oneshot::Sender<Result<u64, EngineError>>,
}

/// Engine → Supervisor: stop keeping key `key_id` resident (EvictSRS). Reply: the bytes given
/// back to the budget now (0 when it was not pinned, or jobs still use it).
#[derive(Message)]
#[rtype(result = "()")]
pub struct UnpinKey {
    /// [`ProvingKey::id`] of the key.
    pub key_id: u64,
    /// Where the answer goes.
    pub reply: oneshot::Sender<u64>,
}

/// Supervisor → Synthesis: synthesize this partition under `grant`.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Synthesize {
    /// Which partition.
    pub part: PartRef,
    /// The circuit (shared with the job table, for retries).
    pub circuit: Arc<dyn PartitionCircuit>,
    /// The key.
    pub pk: Arc<ProvingKey>,
    /// The job's abandonment flag.
    pub abandoned: Abandoned,
    /// The job's level: the device queue takes the most urgent partition first.
    pub priority: Priority,
    /// The partition's tracing span (a child of its job's span).
    pub span: tracing::Span,
    /// The ledger grant; travels with the buffers.
    pub grant: Grant,
}

/// Supervisor → Gpu: a job was admitted (or its key pinned); make its key ready on the device
/// ([`crate::stages::pipeline::GpuStage::warm`]) while its partitions synthesize. One to each device: a
/// device that already holds the key finds nothing to do.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Warm {
    /// The key.
    pub pk: Arc<ProvingKey>,
}

/// Synthesis → Gpu: a synthesized partition waits in the device queue
/// ([`GpuQueue`](crate::engine::actors::GpuQueue)); posted to every device, whose actor then
/// takes the most urgent partition waiting there (not necessarily the one whose worker posted
/// it), or nothing when the other devices took them all.
#[derive(Message)]
#[rtype(result = "()")]
pub struct TakeNext;

/// Synthesis → Gpu (through the device queue): a synthesized partition; a/b/c and the witness
/// move in.
pub struct Prove {
    /// Which partition.
    pub part: PartRef,
    /// The key.
    pub pk: Arc<ProvingKey>,
    /// The `abc` buffers.
    pub abc: Abc,
    /// The `aux`, `inputs` and `density` buffers.
    pub witness: Witness,
    /// When synthesis ended (queue time in front of the GPU is measured from here).
    pub synthesized_at: Instant,
    /// The job's abandonment flag.
    pub abandoned: Abandoned,
    /// The job's level.
    pub priority: Priority,
    /// The partition's tracing span (a child of its job's span).
    pub span: tracing::Span,
    /// The ledger grant (last, so that a lost message drops its buffers before the grant).
    pub grant: Grant,
}

/// Gpu → BG2: the G1 sums; the witness moves in.
#[derive(Message)]
#[rtype(result = "()")]
pub struct FinishProof {
    /// Which partition.
    pub part: PartRef,
    /// The key.
    pub pk: Arc<ProvingKey>,
    /// H, L, A and B_G1 sums.
    pub g1: G1Sums,
    /// The B_G2 MSM when the GPU stage computed it (a device partition with B_G2 on the GPU);
    /// BG2 then only assembles.
    pub b_g2: Option<blstrs::G2Projective>,
    /// The witness buffers.
    pub witness: Witness,
    /// The job's abandonment flag.
    pub abandoned: Abandoned,
    /// The partition's tracing span (a child of its job's span).
    pub span: tracing::Span,
    /// The ledger grant (last, so that a lost message drops its buffers before the grant).
    pub grant: Grant,
}

/// Synthesis, Gpu or BG2 → Dealloc: drop `buffers`, then report freed the bytes `grant` (the
/// part of the grant that travels with them) stands for.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Release {
    /// The buffers themselves (any owned value; empty for buffers an unwinding panic dropped).
    pub buffers: Box<dyn Any + Send>,
    /// The grant, or the part of it split off for these buffers.
    pub grant: Grant,
}

/// Synthesis → Supervisor: synthesis of `part` ended; the worker is free.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Synthesized {
    /// Which partition.
    pub part: PartRef,
    /// Its grant.
    pub grant: GrantId,
}

/// Gpu → Supervisor: the GPU actor accepted the partition (its handler started).
#[derive(Message)]
#[rtype(result = "()")]
pub struct Delivered {
    /// Which partition.
    pub part: PartRef,
    /// Its grant.
    pub grant: GrantId,
    /// The GPU actor's device label (as in `baton_gpu_busy_seconds_total{device}`).
    pub device: String,
}

/// Gpu → Supervisor: the partition's remaining buffers moved to `stage`.
#[derive(Message)]
#[rtype(result = "()")]
pub struct HandedOff {
    /// Which partition.
    pub part: PartRef,
    /// Its grant.
    pub grant: GrantId,
    /// Where its buffers are now.
    pub stage: Stage,
}

/// Dealloc → Supervisor: these bytes are really gone.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Freed {
    /// The grant.
    pub grant: GrantId,
    /// Bytes per class.
    pub frees: Vec<(BufferClass, u64)>,
}

/// Any thread → Supervisor: a grant (or a part of one) was dropped unsettled, with the buffers
/// it stood for: a message was lost or an actor died.
#[derive(Message)]
#[rtype(result = "()")]
pub struct GrantDropped {
    /// What it stood for.
    pub lost: LostGrant,
}

/// BG2 → Supervisor: the partition's proof.
#[derive(Message)]
#[rtype(result = "()")]
pub struct PartitionDone {
    /// Which partition.
    pub part: PartRef,
    /// The proof.
    pub proof: Proof,
}

/// Synthesis, Gpu or BG2 → Supervisor: the partition failed there. Its buffers, if any, were sent
/// to Dealloc before this message.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Failed {
    /// Which partition.
    pub part: PartRef,
    /// Its grant.
    pub grant: GrantId,
    /// Which actor kind failed.
    pub actor: ActorKind,
    /// What happened.
    pub cause: String,
    /// Whether a new attempt could succeed (a panic or device error; not an unsatisfied circuit).
    pub retryable: bool,
}

/// Engine → Supervisor: report the state of every job and the ledger.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Status {
    /// Where the report goes.
    pub reply: oneshot::Sender<EngineStatus>,
}

/// Engine → Supervisor: refuse new requests, reply once every job in flight has ended.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Shutdown {
    /// Signalled when idle.
    pub reply: oneshot::Sender<()>,
}
