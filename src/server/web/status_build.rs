//! Builds the `/status` document ([`status_json`](super::status_json)): from the engine alone
//! ([`of_engine`], the CLI's `--status-port`), or from the daemon ([`snapshot`]: its job ids,
//! accept times, keys, counters and recent failures on top).

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::status_json::{
    cuzk_kind, states, Allocations, Counters, FailureEntry, GpuWorker, Ledger, Memory, Partition,
    Pipeline, SrsEntry, StatusDoc, Synthesis,
};
use crate::engine::{Engine, EngineError, EngineStatus, JobStatus, PartitionState};
use crate::ledger::{BufferClass, Stage};
use crate::metrics::ProofResult;
use crate::scheduler::Priority;
use crate::server::jobs::daemon::{now_ms, Daemon};

/// One job's pipeline entry from its partitions' states.
fn pipeline(
    job_id: String,
    proof_kind: String,
    started_secs_ago: Option<f64>,
    priority: Priority,
    engine_job: Option<u64>,
    job: Option<&JobStatus>,
) -> Pipeline {
    let parts = job.map_or(&[][..], |j| &j.partitions[..]);
    let times = job.map_or(&[][..], |j| &j.times[..]);
    // A step's time once it has ended (zero before).
    let ms = |d: Duration| (!d.is_zero()).then_some(d.as_millis() as u64);
    let partitions: Vec<Partition> = parts
        .iter()
        .enumerate()
        .map(|(index, p)| {
            let (state, baton_state) = states(*p);
            let t = times.get(index).copied().unwrap_or_default();
            Partition {
                index,
                state,
                synth_ms: ms(t.synthesis),
                gpu_ms: ms(t.gpu),
                baton_state,
            }
        })
        .collect();
    Pipeline {
        job_id,
        proof_kind,
        started_secs_ago,
        total_partitions: partitions.len(),
        partitions_done: partitions.iter().filter(|p| p.state == "done").count(),
        partitions,
        baton_engine_job: engine_job,
        baton_priority: priority.as_str(),
    }
}

/// The document from the engine alone: one pipeline per engine job, named `job-{id}`, of kind
/// `kind`, started `started` (the CLI's run); no counters, keys or failures. `uptime_secs`
/// is how long the engine has run; `synthesis_workers` the configured worker count.
pub fn of_engine(
    engine: &Engine,
    st: &EngineStatus,
    synthesis_workers: usize,
    uptime_secs: f64,
    kind: &str,
    started: Instant,
) -> StatusDoc {
    let name = |id: u64| Some(format!("job-{id}"));
    let mut doc = base(engine, st, synthesis_workers, uptime_secs, &name);
    let ago = started.elapsed().as_secs_f64();
    doc.pipelines = st
        .jobs
        .iter()
        .map(|j| {
            let id = format!("job-{}", j.id);
            pipeline(id, kind.into(), Some(ago), j.priority, Some(j.id), Some(j))
        })
        .collect();
    doc
}

/// What the engine alone knows: memory, synthesis, GPU workers (their current job named by
/// `name`), the ledger, the queue per priority and the partition outcomes. Pipelines and keys
/// are left empty, counters and failures out.
fn base(
    engine: &Engine,
    st: &EngineStatus,
    synthesis_workers: usize,
    uptime_secs: f64,
    name: &dyn Fn(u64) -> Option<String>,
) -> StatusDoc {
    let metrics = engine.metric_handles();
    let backend = engine.backend_name().to_string();
    let devices = engine.gpu_devices();
    let gpu_workers = backend
        .split(',')
        .enumerate()
        .map(|(i, dev)| {
            let label = crate::stages::pipeline::device_label(dev, i);
            let on = st.on_gpu.iter().find(|(d, ..)| *d == label);
            let job = on.map(|x| x.1);
            let busy = metrics
                .gpu_busy_seconds
                .get_metric_with_label_values(&[&label]);
            GpuWorker {
                worker_id: i,
                gpu_ordinal: devices.get(i).copied().unwrap_or(i),
                state: if job.is_some() { "proving" } else { "idle" },
                current_job: job.and_then(name),
                current_partition: on.map(|x| x.2),
                busy_secs: Some(busy.map_or(0.0, |c| c.get())),
                baton_device: label,
            }
        })
        .collect();
    let l = &st.ledger;
    let used_bytes = l.charged_bytes.saturating_add(l.resident_bytes);
    let synthesizing = PartitionState::At(Stage::Synthesizing);
    let by_stage = Stage::ALL
        .into_iter()
        .map(|s| {
            let bytes = BufferClass::ALL.into_iter().map(|c| l.bytes(c, s)).sum();
            (s.as_str(), bytes)
        })
        .collect();
    let queued = Priority::ALL
        .into_iter()
        .map(|p| (p.as_str(), st.queued_by_priority[p as usize]))
        .collect();
    let proofs = ProofResult::ALL
        .into_iter()
        .map(|r| {
            let c = metrics
                .proofs_total
                .get_metric_with_label_values(&[r.as_str()]);
            (r.as_str(), c.map_or(0, |c| c.get()))
        })
        .collect();
    StatusDoc {
        uptime_secs,
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
        pipelines: Vec::new(),
        gpu_workers,
        allocations: Allocations {
            srs: Vec::new(),
            pce: Vec::new(),
        },
        counters: None,
        ledger: Ledger {
            budget_bytes: l.budget_bytes,
            charged_bytes: l.charged_bytes,
            peak_charged_bytes: l.peak_charged_bytes,
            resident_bytes: l.resident_bytes,
            slots: l.slots,
            free_slots: l.free_slots,
            queued_partitions: st.queued,
            synthesized_waiting: st.synthesized_alive,
            baton_bytes_by_stage: by_stage,
        },
        baton_backend: backend,
        baton_source: "cli",
        baton_queued_by_priority: queued,
        baton_proofs: proofs,
        baton_failures: None,
    }
}

/// The daemon's document now; `synthesis_workers` is the configured worker count.
pub async fn snapshot(d: &Daemon, synthesis_workers: usize) -> Result<StatusDoc, EngineError> {
    let st = d.engine.status().await?;
    let mut live = d.live_jobs();
    // Oldest first, as accepted.
    live.sort_by(|a, b| (a.accepted_ms, &a.id).cmp(&(b.accepted_ms, &b.id)));
    let name = |e: u64| {
        live.iter()
            .find(|j| j.engine_job == e)
            .map(|j| j.id.clone())
    };
    let uptime = d.started.elapsed().as_secs_f64();
    let mut doc = base(&d.engine, &st, synthesis_workers, uptime, &name);
    let engine_job = |id: u64| st.jobs.iter().find(|j| j.id == id);
    let now = now_ms();
    let secs_since = |ms: u64| now.saturating_sub(ms) as f64 / 1000.0;
    doc.pipelines = live
        .iter()
        .map(|j| {
            let job = (j.engine_job != 0)
                .then(|| engine_job(j.engine_job))
                .flatten();
            let engine = (j.engine_job != 0).then_some(j.engine_job);
            let (id, kind) = (j.id.clone(), cuzk_kind(j.kind));
            let ago = Some(secs_since(j.accepted_ms));
            pipeline(id, kind, ago, j.priority, engine, job)
        })
        .collect();
    let queue_depth = doc
        .pipelines
        .iter()
        .filter(|p| p.partitions.iter().all(|x| x.state == "pending"))
        .count();
    doc.allocations.srs = srs(d);
    doc.counters = Some(Counters {
        total_completed: d.completed.load(Ordering::Relaxed),
        total_failed: d.failed.load(Ordering::Relaxed),
        completed_by_kind: BTreeMap::new(),
        failed_by_kind: BTreeMap::new(),
        queue_depth,
    });
    let failures = d.failures.recent().into_iter().map(|f| FailureEntry {
        job_id: f.id,
        proof_kind: cuzk_kind(f.kind),
        reason: f.error,
        secs_ago: secs_since(f.at_ms),
    });
    doc.baton_failures = Some(failures.collect());
    doc.baton_source = "daemon";
    Ok(doc)
}

/// Every key of the daemon's store, built-in and Filecoin alike.
fn srs(d: &Daemon) -> Vec<SrsEntry> {
    d.keys
        .store()
        .list()
        .into_iter()
        .map(|k| {
            let device = k.key_id.map_or(0, |id| d.engine.device_key_bytes(id));
            SrsEntry {
                baton_tier: match k.key_id {
                    Some(_) if device > 0 => "hot",
                    Some(_) => "warm",
                    None => "cold",
                },
                circuit_id: k.circuit_id,
                bytes: k.bytes,
                last_used_secs_ago: Some(k.last_used.elapsed().as_secs_f64()),
                evictable: k.users == 0,
                baton_users: k.users as u32,
                baton_device_bytes: device,
            }
        })
        .collect()
}
