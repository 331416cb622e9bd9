//! Starting the actors: Dealloc, BG2, one Gpu actor per device (each its own thread and
//! mailbox) and the synthesis pools (the
//! ordinary one, its threads niced by `synthesis.nice`, and the one kept for CRITICAL
//! partitions at the process's priority), each `SyncArbiter` built from its stage factory, all
//! under one Supervisor.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use actix::{Actor, Addr, AsyncContext, SyncArbiter};

use super::{
    Bg2Actor, DeallocActor, GpuActor, GpuQueue, Links, Supervisor, SupervisorParts, SynthesisActor,
};
use crate::config::Config;
use crate::metrics::Metrics;
use crate::scheduler::yield_point::{self, Gate};
use crate::stages::pipeline::Stages;

/// Starts every actor for `cfg` with `stages`; returns the Supervisor's address. Call from
/// inside the actix System that will run them.
pub(crate) fn spawn_actors(
    cfg: &Config,
    stages: Stages,
    parts: SupervisorParts,
    metrics: Metrics,
) -> Addr<Supervisor> {
    let workers = cfg.synthesis_workers;
    let critical_workers = cfg.critical_workers;
    let nice = cfg.synthesis_nice;
    // Threads inherit their creator's nice value: start rayon's global pool from this thread
    // now, so that no niced synthesis worker is the one that starts it.
    let _ = rayon::current_num_threads();
    let devices = cfg.gpu_devices.len();
    let gate = cfg
        .yield_to_critical
        .then(|| Gate::with_metric(metrics.synthesis_parked_seconds.clone()));
    let bg2_workers = cfg.bg2_workers;
    Supervisor::create(move |ctx| {
        let sup_addr = ctx.address();
        let (m, s) = (metrics.clone(), sup_addr.clone());
        let dealloc = SyncArbiter::start(1, move || {
            name_this_thread("baton-dealloc");
            DeallocActor {
                supervisor: s.clone(),
                metrics: m.clone(),
                delay: std::time::Duration::ZERO,
            }
        });
        let links = Links {
            supervisor: sup_addr,
            dealloc,
            metrics,
        };
        let (l, f) = (links.clone(), stages.bg2.clone());
        let bg2_counter = Arc::new(AtomicUsize::new(0));
        let bg2 = SyncArbiter::start(bg2_workers, move || {
            let i = thread_index(&bg2_counter) % bg2_workers;
            name_this_thread(&format!("baton-bg2-{i}"));
            Bg2Actor {
                stage: f(i),
                links: l.clone(),
            }
        });
        let queue = Arc::new(GpuQueue::default());
        // One single-thread arbiter per device, its index fixed in its factory (which also
        // rebuilds a restarted actor). Synthesized partitions wait in the shared `queue`; every
        // device is told of each one, and whichever is idle first takes the most urgent.
        let gpus: Vec<Addr<GpuActor>> = (0..devices)
            .map(|i| {
                let (l, f, q, bg2) = (
                    links.clone(),
                    stages.gpu.clone(),
                    queue.clone(),
                    bg2.clone(),
                );
                SyncArbiter::start(1, move || {
                    name_this_thread(&format!("baton-gpu{i}"));
                    let stage = f(i);
                    // One label per device even when several run the same backend ("cpu:1").
                    let device = crate::stages::pipeline::device_label(&stage.name(), i);
                    GpuActor {
                        stage,
                        device,
                        bg2: bg2.clone(),
                        links: l.clone(),
                        queue: q.clone(),
                        expanded: None,
                    }
                })
            })
            .collect();
        let gpu: Arc<[Addr<GpuActor>]> = gpus.into();
        let warm: Vec<_> = gpu.iter().map(|g| g.clone().recipient()).collect();
        // Worker i of the ordinary pool builds stage i, of the critical pool stage workers + i.
        let pool = |size: usize,
                    first: usize,
                    threads: Option<Arc<rayon::ThreadPool>>,
                    label: &'static str| {
            let (f, gpu, links, queue, gate) = (
                stages.synthesis.clone(),
                gpu.clone(),
                links.clone(),
                queue.clone(),
                gate.clone(),
            );
            let counter = Arc::new(AtomicUsize::new(0));
            SyncArbiter::start(size, move || {
                let i = thread_index(&counter) % size;
                name_this_thread(&format!("{label}{i}"));
                SynthesisActor {
                    stage: f(first + i),
                    gpu: gpu.clone(),
                    links: links.clone(),
                    queue: queue.clone(),
                    threads: threads.clone(),
                    gate: gate.clone(),
                }
            })
        };
        let ordinary = ordinary_threads(workers, nice, gate.clone());
        let synthesis = pool(workers, 0, ordinary, "baton-worker-").recipient();
        let critical = (critical_workers > 0)
            .then(|| pool(critical_workers, workers, None, "baton-crit-").recipient());
        let mut sup = Supervisor::new(parts);
        sup.attach(synthesis, critical, warm);
        sup
    })
}

thread_local! {
    static WORKER_INDEX: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// The ordinary synthesis pool's threads: niced to `nice` when above 0, pausing for CRITICAL
/// synthesis at `gate` when set; `None` when neither (synthesis then runs on its worker's
/// thread and the global pool), or when the pool cannot be built (logged). One thread per CPU
/// and at least one per worker, so that no worker's synthesis waits for a thread.
fn ordinary_threads(
    workers: usize,
    nice: u8,
    gate: Option<Arc<Gate>>,
) -> Option<Arc<rayon::ThreadPool>> {
    if nice == 0 && gate.is_none() {
        return None;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let built = rayon::ThreadPoolBuilder::new()
        .num_threads(cores.max(workers))
        .thread_name(|i| format!("baton-synthesis-{i}"))
        .start_handler(move |_| {
            lower_thread_priority(nice);
            yield_point::mark_ordinary(gate.clone());
        })
        .build();
    match built {
        Ok(pool) => Some(Arc::new(pool)),
        Err(e) => {
            tracing::warn!(error = %e, "no ordinary synthesis pool; synthesis runs unniced on the global pool and does not pause for CRITICAL");
            None
        }
    }
}

/// Lowers this thread's CPU priority to nice value `nice` (never raises it; called once per
/// thread, from the niced pool's start handler). 0: nothing. A refusal is logged, not fatal.
fn lower_thread_priority(nice: u8) {
    if nice == 0 {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        // SAFETY: gettid has no preconditions. On Linux, PRIO_PROCESS with a thread id reads
        // and sets that thread's nice value only; errno is cleared first since -1 is a valid
        // getpriority result.
        let (now, set) = unsafe {
            let tid = libc::gettid() as libc::id_t;
            *libc::__errno_location() = 0;
            let now = libc::getpriority(libc::PRIO_PROCESS, tid);
            let target = now.max(i32::from(nice));
            let set = if target > now {
                libc::setpriority(libc::PRIO_PROCESS, tid, target)
            } else {
                0
            };
            (now, set)
        };
        if set != 0 {
            let err = std::io::Error::last_os_error();
            tracing::warn!(nice, from = now, error = %err, "could not lower a synthesis worker's CPU priority");
        }
    }
}

/// Names the calling thread (Linux keeps the first 15 bytes), so that `top -H`, a profiler
/// and the CRITICAL bench's per-thread table tell the actors' threads apart: SyncArbiter
/// threads are otherwise named after whichever thread started them. Elsewhere a no-op.
fn name_this_thread(name: &str) {
    #[cfg(target_os = "linux")]
    {
        let mut bytes = [0u8; 16];
        let n = name.len().min(15);
        bytes[..n].copy_from_slice(&name.as_bytes()[..n]);
        // SAFETY: PR_SET_NAME reads a NUL-terminated string of at most 16 bytes from the
        // pointer; `bytes` is 16 bytes with at least its last one 0. It renames only the
        // calling thread.
        let rc =
            unsafe { libc::prctl(libc::PR_SET_NAME, bytes.as_ptr() as libc::c_ulong, 0, 0, 0) };
        if rc != 0 {
            tracing::debug!(name, "could not name an actor thread");
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = name;
}

/// This thread's index within its pool: taken from `counter` on first use, kept across restarts.
fn thread_index(counter: &AtomicUsize) -> usize {
    WORKER_INDEX.with(|c| {
        c.get().unwrap_or_else(|| {
            let i = counter.fetch_add(1, Ordering::Relaxed);
            c.set(Some(i));
            i
        })
    })
}
