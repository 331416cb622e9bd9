//! Starting the actors: Dealloc, BG2, one Gpu thread per device and the synthesis pool, each
//! `SyncArbiter` built from its stage factory, all under one Supervisor.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use actix::{Actor, Addr, AsyncContext, SyncArbiter};

use super::{
    Bg2Actor, DeallocActor, GpuActor, GpuQueue, Links, Supervisor, SupervisorParts, SynthesisActor,
};
use crate::config::Config;
use crate::metrics::Metrics;
use crate::pipeline::Stages;

/// Starts every actor for `cfg` with `stages`; returns the Supervisor's address. Call from
/// inside the actix System that will run them.
pub(crate) fn spawn_actors(
    cfg: &Config,
    stages: Stages,
    parts: SupervisorParts,
    metrics: Metrics,
) -> Addr<Supervisor> {
    let workers = cfg.synthesis_workers + cfg.critical_workers;
    let devices = cfg.gpu_devices.len();
    let bg2_workers = cfg.bg2_workers;
    Supervisor::create(move |ctx| {
        let sup_addr = ctx.address();
        let (m, s) = (metrics.clone(), sup_addr.clone());
        let dealloc = SyncArbiter::start(1, move || DeallocActor {
            supervisor: s.clone(),
            metrics: m.clone(),
            delay: std::time::Duration::ZERO,
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
            Bg2Actor {
                stage: f(i),
                links: l.clone(),
            }
        });
        let (l, f) = (links.clone(), stages.gpu.clone());
        let gpu_counter = Arc::new(AtomicUsize::new(0));
        let queue = Arc::new(GpuQueue::default());
        let q = queue.clone();
        // One thread per device, all sharing one mailbox (an idle device takes the next
        // partition). The factory runs on the actor's own thread, so a restarted actor finds its
        // device index in a thread-local.
        let gpu = SyncArbiter::start(devices, move || {
            let i = thread_index(&gpu_counter) % devices;
            let stage = f(i);
            // One label per device even when several run the same backend (e.g. "cpu:1").
            let name = stage.name();
            let device = crate::pipeline::device_label(&name, i);
            GpuActor {
                stage,
                device,
                bg2: bg2.clone(),
                links: l.clone(),
                queue: q.clone(),
            }
        });
        let warm = gpu.clone().recipient();
        let f = stages.synthesis.clone();
        let syn_counter = Arc::new(AtomicUsize::new(0));
        let synthesis = SyncArbiter::start(workers, move || {
            let i = thread_index(&syn_counter) % workers;
            SynthesisActor {
                stage: f(i),
                gpu: gpu.clone(),
                links: links.clone(),
                queue: queue.clone(),
            }
        });
        let mut sup = Supervisor::new(parts);
        sup.attach(synthesis.recipient(), warm, devices);
        sup
    })
}

thread_local! {
    static WORKER_INDEX: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
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
