//! WinningPoSt latency under load: how long a CRITICAL job takes on an idle engine, and while
//! PoRep C2-like jobs (NORMAL, many partitions) keep every synthesis worker and the device busy,
//! in three settings: the defaults (a synthesis worker kept for CRITICAL jobs,
//! `synthesis.critical_workers = 1`, and ordinary synthesis paused while a CRITICAL partition
//! synthesizes, `synthesis.yield_to_critical = true`), the worker without the pause, and the
//! pause without the worker. The target (issue 36): under load, the CRITICAL job is answered
//! within one partition's device time plus its own idle proving time. A second table splits
//! the CRITICAL job's latency into its queue wait, synthesis, GPU and the rest, idle and busy,
//! to say which step the load stretches.
//!
//! The circuits are the built-in PoRep-like `Synthetic` ones under keys of their exact shape
//! with tiled points (`baton::testing::tiled_key`): the work is a real proof's, the proofs do not
//! verify (the engine's tests check correctness). Sizes and counts from the environment:
//! `CRIT_BUSY_LOG` (busy partitions, default 16), `CRIT_LOG` (the CRITICAL circuit, default 12),
//! `CRIT_PARTS` (partitions per busy job, 10), `CRIT_JOBS` (busy jobs, 2), `CRIT_RUNS` (5),
//! `CRIT_WORKERS` (synthesis workers, default all CPUs), `CRIT_BUDGET` ("16GiB"),
//! `CRIT_HOST_THREADS` (`gpu.host_threads`: the device's host copies on that many threads of
//! its own; default rayon's global pool), `CRIT_SETTINGS` (which settings: "1on,1off,0on").
//!
//! A third table says where the host's CPU time went while each CRITICAL job ran: every
//! thread's run time and run-queue wait (`/proc/self/task/*/schedstat`), grouped by thread
//! name (the actors' threads are named: `baton-worker-*` ordinary synthesis, `baton-crit-*`
//! CRITICAL synthesis, `baton-synthesis-*` the ordinary pool's rayon threads, `baton-gpu*`,
//! `baton-cuda*-host*`, `baton-bg2-*`, `baton-dealloc`; `rayon-global-*` rayon's global pool).
//!
//! `cargo bench --bench critical` (the CPU backend here; with `--features cuda` on a GPU host
//! the engine picks CUDA).

#[path = "common/mod.rs"]
mod common;
mod sched;

use std::sync::Arc;
use std::time::{Duration, Instant};

use baton::circuits::Synthetic;
use baton::config::{parse_bytes, Bg2Device};
use baton::engine::JobReport;
use baton::scheduler::Priority;
use baton::{Config, Engine, ProvingKey, Request};
use common::{env_list, median};

fn env_one(name: &str, default: u32) -> u32 {
    env_list(name, &[default])[0]
}

struct Sizes {
    busy_log: u32,
    log: u32,
    parts: usize,
    jobs: usize,
    runs: usize,
}

fn engine(critical_workers: usize, yields: bool) -> Engine {
    let workers = std::env::var("CRIT_WORKERS")
        .ok()
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
    let budget = std::env::var("CRIT_BUDGET").unwrap_or_else(|_| "16GiB".into());
    let mut cfg = Config {
        budget_bytes: parse_bytes(&budget),
        synthesis_workers: workers,
        critical_workers,
        yield_to_critical: yields,
        bg2_device: Bg2Device::Auto,
        ..Config::default()
    };
    // The GPU actor's host copies on threads of the device's own instead of rayon's global
    // pool, where CRITICAL synthesis's parallel parts run too.
    cfg.gpu.host_threads = std::env::var("CRIT_HOST_THREADS")
        .ok()
        .and_then(|n| n.parse().ok())
        .filter(|n| *n > 0);
    Engine::start(cfg).unwrap_or_else(|e| panic!("engine: {e}"))
}

/// One CRITICAL job's latency, its engine report, and the host's CPU time while it ran.
type Run = (Duration, JobReport, sched::Groups);

fn critical(pk: &Arc<ProvingKey>, log: u32, seed: u64) -> Request {
    Request::new(pk.clone(), vec![Synthetic::new(1 << log, seed)]).with_priority(Priority::Critical)
}

/// Latencies of `runs` CRITICAL jobs on `engine`, each sent once the busy jobs have a
/// partition on the device (`busy`: how many NORMAL jobs to keep in flight; 0 = idle).
fn latencies(
    engine: &Engine,
    s: &Sizes,
    busy: usize,
    busy_pk: &Arc<ProvingKey>,
    pk: &Arc<ProvingKey>,
) -> Vec<Run> {
    let mut out = Vec::new();
    for run in 0..s.runs as u64 {
        let tickets: Vec<_> = (0..busy as u64)
            .map(|j| {
                let circuits = (0..s.parts as u64)
                    .map(|p| Synthetic::new(1 << s.busy_log, 1000 * run + 100 * j + p))
                    .collect();
                engine.submit(Request::new(busy_pk.clone(), circuits))
            })
            .collect();
        if busy > 0 {
            // Wait until the device has a busy partition and the workers are all taken.
            let until = Instant::now() + Duration::from_secs(600);
            loop {
                let st = engine.status_blocking().expect("engine up");
                if !st.on_gpu.is_empty() && st.queued > 0 {
                    break;
                }
                // Busy jobs so small that they finish between two looks never show the engine
                // busy: say so now rather than after the 600 s wait.
                assert!(
                    !st.jobs.is_empty(),
                    "the busy jobs finished before the device was seen busy with partitions \
                     queued behind it: raise CRIT_BUSY_LOG or CRIT_PARTS"
                );
                assert!(
                    Instant::now() < until,
                    "the busy jobs never reached the device"
                );
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        let cpu = sched::snapshot();
        let t = Instant::now();
        let report = engine
            .submit(critical(pk, s.log, run))
            .blocking_outcome()
            .expect("CRITICAL job proved");
        out.push((
            t.elapsed(),
            report,
            sched::between(&cpu, &sched::snapshot()),
        ));
        for t in tickets {
            let rt = tokio::runtime::Builder::new_current_thread()
                .build()
                .expect("runtime");
            let _ = rt.block_on(engine.cancel(t.id));
            let _ = t.blocking_outcome();
        }
    }
    out
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let s = Sizes {
        busy_log: env_one("CRIT_BUSY_LOG", 16),
        log: env_one("CRIT_LOG", 12),
        parts: env_one("CRIT_PARTS", 10) as usize,
        jobs: env_one("CRIT_JOBS", 2) as usize,
        runs: env_one("CRIT_RUNS", 5).max(1) as usize,
    };
    // Named, so that the CPU table tells rayon's global pool from the main thread.
    let _ = rayon::ThreadPoolBuilder::new()
        .thread_name(|i| format!("rayon-global-{i}"))
        .build_global();
    let t = Instant::now();
    let busy_pk =
        Arc::new(baton::testing::tiled_key(&Synthetic::new(1 << s.busy_log, 0)).expect("key"));
    let pk = Arc::new(baton::testing::tiled_key(&Synthetic::new(1 << s.log, 0)).expect("key"));
    eprintln!("tiled keys ready in {:.1?}", t.elapsed());
    let host = std::env::var("CRIT_HOST_THREADS").unwrap_or_else(|_| "the global pool".into());
    println!("GPU actor's host copies (gpu.host_threads): {host}");
    let mut rows = Vec::new();
    let mut parts = Vec::new();
    let mut cpu = Vec::new();
    for (reserve, yields) in settings() {
        let e = engine(reserve, yields);
        let pause = if yields { "on" } else { "off" };
        // Warm: keys resident, kernels compiled, one partition of each shape timed on its own.
        let one = e
            .submit(Request::new(
                busy_pk.clone(),
                vec![Synthetic::new(1 << s.busy_log, 7)],
            ))
            .blocking_outcome()
            .expect("busy partition");
        e.prove_blocking(critical(&pk, s.log, 99)).expect("warm-up");
        let idle = latencies(&e, &s, 0, &busy_pk, &pk);
        let busy = latencies(&e, &s, s.jobs, &busy_pk, &pk);
        let worst = busy.iter().map(|(d, ..)| *d).max().expect("runs > 0");
        for (what, runs) in [("idle", &idle), ("busy", &busy)] {
            let window = median(runs.iter().map(|(d, ..)| *d).collect());
            let groups: Vec<_> = runs.iter().map(|(.., g)| g.clone()).collect();
            cpu.push((reserve, pause, what, window, sched::mean(&groups)));
        }
        parts.push((reserve, pause, "idle", split(&idle)));
        parts.push((reserve, pause, "busy", split(&busy)));
        rows.push((
            reserve,
            pause,
            e.backend_name().to_string(),
            one,
            median(idle.iter().map(|(d, ..)| *d).collect()),
            median(busy.iter().map(|(d, ..)| *d).collect()),
            worst,
        ));
        e.shutdown_blocking();
    }
    println!(
        "\nCRITICAL 2^{} while {} jobs x {} partitions of 2^{} run ({} runs each)",
        s.log, s.jobs, s.parts, s.busy_log, s.runs
    );
    println!("| critical_workers | yield_to_critical | backend | partition device ms | partition synthesis ms | idle ms | busy median ms | busy max ms | bound ms | max within bound |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (reserve, pause, backend, one, idle, busy, worst) in rows {
        let bound = one.gpu + idle;
        println!(
            "| {reserve} | {pause} | {backend} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {} |",
            ms(one.gpu),
            ms(one.synthesis),
            ms(idle),
            ms(busy),
            ms(worst),
            ms(bound),
            if worst <= bound { "yes" } else { "no" }
        );
    }
    println!("\nWhere the CRITICAL job's time went (medians of each step over the runs)");
    println!("| critical_workers | yield_to_critical | engine | total ms | queue wait ms | synthesis ms | GPU ms | rest: device queue, B_G2, messages (ms) |");
    println!("|---|---|---|---|---|---|---|---|");
    for (reserve, pause, what, [total, queue, synthesis, gpu, rest]) in parts {
        println!(
            "| {reserve} | {pause} | {what} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |",
            ms(total),
            ms(queue),
            ms(synthesis),
            ms(gpu),
            ms(rest)
        );
    }
    println!("\nWhere the host's CPU time went while the CRITICAL job ran (means a run; groups of 1 ms or more)");
    println!("| critical_workers | yield_to_critical | engine | job ms (median) | threads of | ran | CPU ms | run-queue wait ms | minor faults | sleeps |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (reserve, pause, what, window, groups) in cpu {
        if groups.is_empty() {
            println!(
                "| {reserve} | {pause} | {what} | {:.1} | (no /proc schedstat) | | | | | |",
                ms(window)
            );
        }
        for (name, u) in groups {
            if u.run_ms >= 1.0 || u.wait_ms >= 1.0 {
                println!(
                    "| {reserve} | {pause} | {what} | {:.1} | {name} | {} | {:.1} | {:.1} | {:.0} | {:.0} |",
                    ms(window),
                    u.threads,
                    u.run_ms,
                    u.wait_ms,
                    u.minor_faults,
                    u.sleeps
                );
            }
        }
    }
}

/// The settings to run, from `CRIT_SETTINGS` ("1on,1off,0on" by default: critical_workers then
/// yield_to_critical on or off); an entry that does not parse is skipped with a warning.
fn settings() -> Vec<(usize, bool)> {
    let spec = std::env::var("CRIT_SETTINGS").unwrap_or_else(|_| "1on,1off,0on".into());
    let parsed: Vec<_> = spec
        .split(',')
        .filter_map(|one| {
            let one = one.trim();
            let parsed = one
                .strip_suffix("on")
                .map(|n| (n, true))
                .or_else(|| one.strip_suffix("off").map(|n| (n, false)))
                .and_then(|(n, on)| Some((n.parse::<usize>().ok()?, on)));
            if parsed.is_none() {
                eprintln!("CRIT_SETTINGS: skipped {one:?} (want e.g. 1on or 0off)");
            }
            parsed
        })
        .collect();
    if parsed.is_empty() {
        eprintln!("CRIT_SETTINGS={spec:?} names no setting; running the defaults (1on)");
        return vec![(1, true)];
    }
    parsed
}

/// Medians over the runs of the whole latency and its steps: the queue wait, synthesis, the
/// GPU (taken by a GPU actor to handed to B_G2) and the rest (the wait for a GPU actor, B_G2,
/// the messages between the actors).
fn split(runs: &[Run]) -> [Duration; 5] {
    let step = |f: &dyn Fn(&Run) -> Duration| median(runs.iter().map(f).collect());
    [
        step(&|(d, ..)| *d),
        step(&|(_, r, _)| r.queue_wait),
        step(&|(_, r, _)| r.synthesis),
        step(&|(_, r, _)| r.gpu),
        step(&|(d, r, _)| d.saturating_sub(r.queue_wait + r.synthesis + r.gpu)),
    ]
}
