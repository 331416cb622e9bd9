//! `c2-32g` / `c2-64g` / `c2-shape`: a whole PoRep C2 at a sector size whose parameters cannot
//! be made here, through the engine, with a shape key (`filecoin::shape_key`: the real
//! circuit's query sizes and densities, random points; its proofs do not verify, so none is
//! checked) and C1 outputs generated per sector (`fil-gen-c1`'s generator). The key is pinned,
//! so the first proof records the partition circuit and every later partition runs
//! witness-only with its challenges in parallel. Reported: the warm-up (recording), one proof
//! alone (isolated), then `BATON_BENCH_PROOFS` proofs submitted at once (steady, per proof),
//! each phase's stage means, GPU busy (device seconds ÷ wall seconds per device), the ledger's
//! peak and the process's peak RSS; on stderr, the engine's warnings and a progress line every
//! 10 s (RSS, ledger, partitions waiting and on the device). The engine's config comes from the
//! usual `BATON_*` environment (`BATON_MEMORY_BUDGET`, `BATON_SYNTHESIS_WORKERS`, ...).

use std::time::{Duration, Instant};

use baton::filecoin::shape_key;
use baton::metrics::Step;
use baton::{Config, Engine, Request};

use super::synth::block_on;

/// Sums and counts of every step's seconds so far, to take differences per phase.
fn step_sums(engine: &Engine) -> Vec<(&'static str, f64, u64)> {
    Step::ALL
        .into_iter()
        .filter_map(|s| {
            let h = engine.metric_handles();
            let m = h
                .stage_seconds
                .get_metric_with_label_values(&[s.as_str()])
                .ok()?;
            Some((s.as_str(), m.get_sample_sum(), m.get_sample_count()))
        })
        .collect()
}

fn gpu_busy(engine: &Engine) -> f64 {
    let h = engine.metric_handles();
    let mut total = 0.0;
    for d in 0..engine.gpu_devices().len().max(1) {
        let label = engine
            .backend_name()
            .split(',')
            .nth(d)
            .unwrap_or("cpu")
            .to_string();
        let label = baton::stages::pipeline::device_label(&label, d);
        if let Ok(c) = h.gpu_busy_seconds.get_metric_with_label_values(&[&label]) {
            total += c.get();
        }
    }
    total
}

/// A `/proc/self/status` memory line (`VmRSS`, `VmHWM`) in GiB; 0 where it cannot be read.
fn status_gib(field: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / (1u64 << 20) as f64)
}

/// One phase: `requests` at once; wall seconds, stage means and GPU busy over it.
fn phase(engine: &Engine, name: &str, requests: Vec<Request>) -> Duration {
    let n = requests.len();
    let (before, busy_before) = (step_sums(engine), gpu_busy(engine));
    let t = Instant::now();
    let tickets: Vec<_> = requests.into_iter().map(|r| engine.submit(r)).collect();
    // Each proof's completion, waited for on its own thread.
    let mut done: Vec<f64> = std::thread::scope(|s| {
        let waits: Vec<_> = tickets
            .into_iter()
            .map(|ticket| {
                s.spawn(move || {
                    ticket
                        .blocking_outcome()
                        .expect("the proof's work completes");
                    t.elapsed().as_secs_f64()
                })
            })
            .collect();
        waits
            .into_iter()
            .map(|w| w.join().expect("a waiting thread"))
            .collect()
    });
    done.sort_by(f64::total_cmp);
    let wall = t.elapsed();
    let devices = engine.gpu_devices().len().max(1) as f64;
    let busy = (gpu_busy(engine) - busy_before) / wall.as_secs_f64() / devices;
    let means: Vec<String> = step_sums(engine)
        .iter()
        .zip(&before)
        .filter(|((_, _, c), (_, _, c0))| c > c0)
        .map(|((s, sum, c), (_, sum0, c0))| format!("{s} {:.2} s", (sum - sum0) / (c - c0) as f64))
        .collect();
    let ledger = engine
        .status_blocking()
        .map(|s| s.ledger.peak_charged_bytes)
        .unwrap_or(0);
    println!(
        "{name:>9}: {n} proof(s) in {:.1} s, {:.1} s a proof; GPU busy {:.0} %; ledger peak so far {:.1} GiB; peak RSS {:.1} GiB",
        wall.as_secs_f64(),
        wall.as_secs_f64() / n as f64,
        busy * 100.0,
        ledger as f64 / (1u64 << 30) as f64,
        status_gib("VmHWM")
    );
    println!("           stage means: {}", means.join(", "));
    // Partitions of proofs submitted together interleave, so the gaps between completions
    // are not a rate: wall ÷ proofs over several proofs is.
    let at: Vec<String> = done.iter().map(|d| format!("{d:.1}")).collect();
    println!("           completed at {} s", at.join(", "));
    wall
}

pub fn run(size: u64, size_name: &str, steady: usize) {
    // The engine's warnings (a refused route, a retry) in the bench's log.
    super::bench_log::init_from_env();
    let t = Instant::now();
    let key = shape_key(size).expect("the shape key");
    let pk = key.unverifiable_key();
    println!(
        "{} ({size_name}): {} — built in {:.1} s, {:.2} GiB",
        key.circuit(),
        key.label(),
        t.elapsed().as_secs_f64(),
        pk.heap_bytes() as f64 / (1u64 << 30) as f64
    );
    let cfg = Config::load().expect("the engine's config (BATON_* environment)");
    let engine = Engine::start(cfg).expect("engine");
    println!("engine: {}", engine.backend_name());
    block_on(engine.pin_key(pk.clone())).expect("the key pinned");
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| progress(&engine, t, &done));
        // Stops the progress lines however the phases end (a panic included).
        let _stop = Stop(&done);
        phases(&engine, &key, steady);
    });
    engine.shutdown_blocking();
}

struct Stop<'a>(&'a std::sync::atomic::AtomicBool);

impl Drop for Stop<'_> {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

fn phases(engine: &Engine, key: &baton::filecoin::ShapeKey, steady: usize) {
    let request = |sector: u64| {
        key.unverifiable_request(sector)
            .expect("a generated C1's partitions")
    };
    phase(engine, "warm-up", vec![request(1)]);
    phase(engine, "isolated", vec![request(2)]);
    let many = (0..steady as u64).map(|i| request(10 + i)).collect();
    phase(engine, "steady", many);
    println!("NOT verifiable: {}", key.label());
}

/// A line every 10 s on stderr (RSS, the ledger, partitions waiting and on the device) until
/// `done`, so that a run the host kills leaves where its memory stood.
fn progress(engine: &Engine, t: Instant, done: &std::sync::atomic::AtomicBool) {
    let mut next = Instant::now();
    while !done.load(std::sync::atomic::Ordering::Relaxed) {
        if Instant::now() >= next {
            next += Duration::from_secs(10);
            if let Ok(st) = engine.status_blocking() {
                eprintln!(
                    "progress {:>6.1} s: RSS {:.1} GiB, ledger {:.1} GiB charged, {} partitions waiting, {} on a device",
                    t.elapsed().as_secs_f64(),
                    status_gib("VmRSS"),
                    st.ledger.charged_bytes as f64 / (1u64 << 30) as f64,
                    st.queued,
                    st.on_gpu.len()
                );
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}
