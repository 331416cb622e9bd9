//! The `/status` document of `baton serve`'s HTTP port, shaped like cuzk's (`GET /status` on
//! its `status_listen`): the same top-level names and fields where baton has the data, `null`
//! where it has not, and baton's own figures under `ledger` and fields named `baton_*`. The
//! CLI's `--status-port` serves the same document without the daemon's parts (`counters`,
//! `baton_failures`); [`status_build`](super::status_build) builds both.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::engine::PartitionState;
use crate::ledger::Stage;
use crate::server::proto::ProofKind;
use crate::server::requests::kinds::kind_name;

/// The whole document.
#[derive(Debug, Serialize)]
pub struct StatusDoc {
    /// Seconds since the daemon started.
    pub uptime_secs: f64,
    /// The ledger's budget and what buffers and keys in use take from it.
    pub memory: Memory,
    /// Synthesis workers and partitions synthesizing now.
    pub synthesis: Synthesis,
    /// One entry per job not yet ended.
    pub pipelines: Vec<Pipeline>,
    /// One entry per GPU actor.
    pub gpu_workers: Vec<GpuWorker>,
    /// Proving keys held (`pce` stays empty: recordings are not listed).
    pub allocations: Allocations,
    /// Jobs ended and waiting (the daemon's; absent from the CLI's document).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counters: Option<Counters>,
    /// baton's ledger, in full.
    pub ledger: Ledger,
    /// The GPU actors' backends (`cuda:0,cuda:1`, `cpu`).
    pub baton_backend: String,
    /// Who serves the document: `daemon` (`baton serve`) or `cli` (`--status-port`).
    pub baton_source: &'static str,
    /// Partitions waiting for a grant, per priority (`low`, `normal`, `high`, `critical`).
    pub baton_queued_by_priority: BTreeMap<&'static str, usize>,
    /// Partition attempts since start by result (`ok`, `failed`, `retried`, `abandoned`), from
    /// `baton_proofs_total`.
    pub baton_proofs: BTreeMap<&'static str, u64>,
    /// The last jobs that failed for good, newest first (the daemon's; absent from the CLI's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baton_failures: Option<Vec<FailureEntry>>,
}

/// One job that failed, in `baton_failures`.
#[derive(Debug, Serialize)]
pub struct FailureEntry {
    /// The job id.
    pub job_id: String,
    /// cuzk's name of its kind.
    pub proof_kind: String,
    /// Why it failed.
    pub reason: String,
    /// Seconds since it failed.
    pub secs_ago: f64,
}

/// `memory`: bytes of the ledger's budget.
#[derive(Debug, Serialize)]
pub struct Memory {
    /// The budget.
    pub total_bytes: u64,
    /// Charged to buffers in flight plus set aside for keys in use.
    pub used_bytes: u64,
    /// What is left.
    pub available_bytes: u64,
}

/// `synthesis`.
#[derive(Debug, Serialize)]
pub struct Synthesis {
    /// Synthesis workers (`synthesis.workers`).
    pub max_concurrent: usize,
    /// Partitions synthesizing now.
    pub active: usize,
}

/// One job.
#[derive(Debug, Serialize)]
pub struct Pipeline {
    /// The job id (Curio's request id).
    pub job_id: String,
    /// cuzk's name of the kind: `porep-c2`, `snap-update`, `window-post`, `winning-post` (and
    /// `baton-synthetic`, `baton-mimc`).
    pub proof_kind: String,
    /// Seconds since the job was accepted.
    pub started_secs_ago: Option<f64>,
    /// Partitions of the job (0 while its key loads).
    pub total_partitions: usize,
    /// Partitions proved.
    pub partitions_done: usize,
    /// Each partition.
    pub partitions: Vec<Partition>,
    /// The engine's job id (null while its key loads).
    pub baton_engine_job: Option<u64>,
    /// Its priority: `low`, `normal`, `high` or `critical`.
    pub baton_priority: &'static str,
}

/// One partition.
#[derive(Debug, Serialize)]
pub struct Partition {
    /// Its index in the job.
    pub index: usize,
    /// cuzk's state: `pending`, `synthesizing`, `synth_done`, `gpu`, `done`, `failed`.
    pub state: &'static str,
    /// Its synthesis time in ms, once synthesized (null before).
    pub synth_ms: Option<u64>,
    /// Its GPU time in ms (from synthesized to handed to B_G2, the device queue included),
    /// once past the GPU (null before).
    pub gpu_ms: Option<u64>,
    /// baton's own state: `queued`, a ledger stage (`synthesizing`, `queued_gpu`, `on_gpu`,
    /// `bg2`, `dealloc`), `done` or `failed`.
    pub baton_state: &'static str,
}

/// One GPU actor.
#[derive(Debug, Serialize)]
pub struct GpuWorker {
    /// Its index among the GPU actors.
    pub worker_id: usize,
    /// Its device (`gpu.devices`).
    pub gpu_ordinal: usize,
    /// `idle` or `proving`.
    pub state: &'static str,
    /// The job it proves a partition of.
    pub current_job: Option<String>,
    /// The index of the partition it proves (null when idle).
    pub current_partition: Option<usize>,
    /// Seconds it has been busy since start (`baton_gpu_busy_seconds_total`, counted as each
    /// partition or warm-up ends).
    pub busy_secs: Option<f64>,
    /// Its device label (`cuda:0`, `cpu:0`), as in the metrics.
    pub baton_device: String,
}

/// `allocations`.
#[derive(Debug, Serialize)]
pub struct Allocations {
    /// Proving keys loaded.
    pub srs: Vec<SrsEntry>,
    /// Always empty.
    pub pce: Vec<SrsEntry>,
}

/// One proving key.
#[derive(Debug, Serialize)]
pub struct SrsEntry {
    /// cuzk's circuit id (`porep-32g`, `baton-synthetic-1024`).
    pub circuit_id: String,
    /// Bytes in host memory.
    pub bytes: u64,
    /// Seconds since a job last took or left it (or PreloadSRS took it).
    pub last_used_secs_ago: Option<f64>,
    /// No job uses it: EvictSRS would release it.
    pub evictable: bool,
    /// Jobs using it.
    pub baton_users: u32,
    /// `hot` (bases on a GPU), `warm` (host memory) or `cold` (loading).
    pub baton_tier: &'static str,
    /// Bytes its bases take on the devices (0 unless `hot`).
    pub baton_device_bytes: u64,
}

/// `counters`.
#[derive(Debug, Serialize)]
pub struct Counters {
    /// Jobs completed since start.
    pub total_completed: u64,
    /// Jobs failed since start.
    pub total_failed: u64,
    /// Not counted per kind (empty).
    pub completed_by_kind: BTreeMap<String, u64>,
    /// Not counted per kind (empty).
    pub failed_by_kind: BTreeMap<String, u64>,
    /// Jobs accepted whose partitions have not started.
    pub queue_depth: usize,
}

/// `ledger`: baton's byte budget.
#[derive(Debug, Serialize)]
pub struct Ledger {
    /// The budget.
    pub budget_bytes: u64,
    /// Charged to buffers now.
    pub charged_bytes: u64,
    /// The most ever charged at once.
    pub peak_charged_bytes: u64,
    /// Set aside for keys in use.
    pub resident_bytes: u64,
    /// Slots (undelivered partitions at once).
    pub slots: usize,
    /// Slots free.
    pub free_slots: usize,
    /// Partitions waiting for a grant.
    pub queued_partitions: usize,
    /// Partitions synthesized and not yet taken by a GPU actor.
    pub synthesized_waiting: usize,
    /// Charged bytes per ledger stage (`synthesizing`, `queued_gpu`, `on_gpu`, `bg2`,
    /// `dealloc`).
    pub baton_bytes_by_stage: BTreeMap<&'static str, u64>,
}

/// cuzk's name of a wire kind.
pub fn cuzk_kind(kind: i32) -> String {
    match ProofKind::try_from(kind) {
        Ok(ProofKind::PorepSealCommit) => "porep-c2".into(),
        Ok(ProofKind::SnapDealsUpdate) => "snap-update".into(),
        Ok(ProofKind::WindowPostPartition) => "window-post".into(),
        Ok(ProofKind::WinningPost) => "winning-post".into(),
        Ok(ProofKind::BatonSynthetic) => "baton-synthetic".into(),
        Ok(ProofKind::BatonMimc) => "baton-mimc".into(),
        _ => kind_name(kind),
    }
}

/// cuzk's and baton's names of a partition state.
pub fn states(p: PartitionState) -> (&'static str, &'static str) {
    match p {
        PartitionState::Queued => ("pending", "queued"),
        PartitionState::At(s) => (
            match s {
                Stage::Synthesizing => "synthesizing",
                Stage::QueuedForGpu => "synth_done",
                Stage::OnGpu | Stage::Bg2 => "gpu",
                Stage::Dealloc => "done",
            },
            s.as_str(),
        ),
        PartitionState::Done => ("done", "done"),
        PartitionState::Failed => ("failed", "failed"),
    }
}
