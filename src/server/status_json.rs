//! The `/status` document of `baton serve`'s HTTP port, shaped like cuzk's (`GET /status` on
//! its `status_listen`): the same top-level names and fields where baton has the data, `null`
//! where it has not, and baton's own figures under `ledger` and fields named `baton_*`.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use serde::Serialize;

use super::daemon::Daemon;
use super::kinds::kind_name;
use super::proto::ProofKind;
use crate::engine::{EngineError, PartitionState};
use crate::ledger::Stage;

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
    /// Jobs ended and waiting.
    pub counters: Counters,
    /// baton's ledger, in full.
    pub ledger: Ledger,
    /// The GPU actors' backends (`cuda:0,cuda:1`, `cpu`).
    pub baton_backend: String,
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
    /// Not known to the status (null).
    pub started_secs_ago: Option<f64>,
    /// Partitions of the job (0 while its key loads).
    pub total_partitions: usize,
    /// Partitions proved.
    pub partitions_done: usize,
    /// Each partition.
    pub partitions: Vec<Partition>,
    /// The engine's job id (null while its key loads).
    pub baton_engine_job: Option<u64>,
}

/// One partition.
#[derive(Debug, Serialize)]
pub struct Partition {
    /// Its index in the job.
    pub index: usize,
    /// cuzk's state: `pending`, `synthesizing`, `synth_done`, `gpu`, `done`, `failed`.
    pub state: &'static str,
    /// Not kept per partition (null).
    pub synth_ms: Option<u64>,
    /// Not kept per partition (null).
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
    /// Not known to the status (null).
    pub current_partition: Option<usize>,
    /// Not known to the status (null).
    pub busy_secs: Option<f64>,
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
    /// Not kept (null).
    pub last_used_secs_ago: Option<f64>,
    /// No job uses it: EvictSRS would release it.
    pub evictable: bool,
    /// Jobs using it.
    pub baton_users: u32,
    /// `hot` (bases on a GPU), `warm` (host memory) or `cold` (loading).
    pub baton_tier: &'static str,
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
}

/// cuzk's name of a wire kind.
fn cuzk_kind(kind: i32) -> String {
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
fn states(p: PartitionState) -> (&'static str, &'static str) {
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

/// The document now; `synthesis_workers` is the configured worker count.
pub async fn snapshot(d: &Daemon, synthesis_workers: usize) -> Result<StatusDoc, EngineError> {
    let st = d.engine.status().await?;
    let mut live = d.live_jobs();
    live.sort_by(|a, b| a.id.cmp(&b.id));
    let engine_job = |id: u64| st.jobs.iter().find(|j| j.id == id);
    let pipelines: Vec<Pipeline> = live
        .iter()
        .map(|j| {
            let parts = (j.engine_job != 0)
                .then(|| engine_job(j.engine_job))
                .flatten()
                .map_or(&[][..], |e| &e.partitions[..]);
            let partitions: Vec<Partition> = parts
                .iter()
                .enumerate()
                .map(|(index, p)| {
                    let (state, baton_state) = states(*p);
                    Partition {
                        index,
                        state,
                        synth_ms: None,
                        gpu_ms: None,
                        baton_state,
                    }
                })
                .collect();
            Pipeline {
                job_id: j.id.clone(),
                proof_kind: cuzk_kind(j.kind),
                started_secs_ago: None,
                total_partitions: partitions.len(),
                partitions_done: partitions.iter().filter(|p| p.state == "done").count(),
                partitions,
                baton_engine_job: (j.engine_job != 0).then_some(j.engine_job),
            }
        })
        .collect();
    let queue_depth = pipelines
        .iter()
        .filter(|p| p.partitions.iter().all(|x| x.state == "pending"))
        .count();
    let backend = d.engine.backend_name().to_string();
    let devices = d.engine.gpu_devices();
    let gpu_workers = backend
        .split(',')
        .enumerate()
        .map(|(i, name)| {
            let label = crate::stages::pipeline::device_label(name, i);
            let job = st.on_gpu.iter().find(|(dev, _)| *dev == label).map(|x| x.1);
            GpuWorker {
                worker_id: i,
                gpu_ordinal: devices.get(i).copied().unwrap_or(i),
                state: if job.is_some() { "proving" } else { "idle" },
                current_job: job
                    .and_then(|e| live.iter().find(|j| j.engine_job == e))
                    .map(|j| j.id.clone()),
                current_partition: None,
                busy_secs: None,
            }
        })
        .collect();
    let l = &st.ledger;
    let used_bytes = l.charged_bytes.saturating_add(l.resident_bytes);
    let synthesizing = PartitionState::At(Stage::Synthesizing);
    Ok(StatusDoc {
        uptime_secs: d.started.elapsed().as_secs_f64(),
        memory: Memory {
            total_bytes: l.budget_bytes,
            used_bytes,
            available_bytes: l.budget_bytes.saturating_sub(used_bytes),
        },
        synthesis: Synthesis {
            max_concurrent: synthesis_workers,
            active: st
                .jobs
                .iter()
                .flat_map(|j| &j.partitions)
                .filter(|p| **p == synthesizing)
                .count(),
        },
        pipelines,
        gpu_workers,
        allocations: Allocations {
            srs: srs(d),
            pce: Vec::new(),
        },
        counters: Counters {
            total_completed: d.completed.load(Ordering::Relaxed),
            total_failed: d.failed.load(Ordering::Relaxed),
            completed_by_kind: BTreeMap::new(),
            failed_by_kind: BTreeMap::new(),
            queue_depth,
        },
        ledger: Ledger {
            budget_bytes: l.budget_bytes,
            charged_bytes: l.charged_bytes,
            peak_charged_bytes: l.peak_charged_bytes,
            resident_bytes: l.resident_bytes,
            slots: l.slots,
            free_slots: l.free_slots,
            queued_partitions: st.queued,
            synthesized_waiting: st.synthesized_alive,
        },
        baton_backend: backend,
    })
}

/// The keys of the built-in circuits and (feature `filecoin`) the Filecoin ones.
fn srs(d: &Daemon) -> Vec<SrsEntry> {
    #[allow(unused_mut)]
    let mut out: Vec<SrsEntry> = d
        .keys
        .list()
        .into_iter()
        .map(|k| SrsEntry {
            baton_tier: match &k.key {
                Some(key) if d.engine.device_key_bytes(key.id()) > 0 => "hot",
                Some(_) => "warm",
                None => "cold",
            },
            circuit_id: k.id,
            bytes: k.bytes,
            last_used_secs_ago: None,
            evictable: k.users == 0,
            baton_users: k.users as u32,
        })
        .collect();
    #[cfg(feature = "filecoin")]
    out.extend(super::fil_keys::list(d).into_iter().map(|s| SrsEntry {
        baton_tier: match s.tier() {
            super::proto::srs_status::Tier::Hot => "hot",
            super::proto::srs_status::Tier::Warm => "warm",
            _ => "cold",
        },
        circuit_id: s.circuit_id,
        bytes: s.size_bytes,
        last_used_secs_ago: None,
        evictable: s.ref_count == 0,
        baton_users: s.ref_count,
    }));
    out
}
