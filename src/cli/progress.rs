//! The live progress line of the proving subcommands: how many partitions are in each state,
//! rewritten in place on a terminal; and `--status-port`, the status page of a local run.

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::{Duration, Instant};

use baton::engine::status::PartitionState;
use baton::ledger::Stage;
use baton::Engine;

/// Bytes in GiB.
pub fn gib(b: u64) -> f64 {
    b as f64 / (1u64 << 30) as f64
}

/// One status line: how many partitions are in each state.
pub fn progress_line(engine: &Engine, total: usize, started: Instant) -> Option<String> {
    let st = engine.status_blocking().ok()?;
    let mut counts = [0usize; PartitionState::COUNT];
    for j in &st.jobs {
        for p in &j.partitions {
            counts[p.index()] += 1;
        }
    }
    let c = |s: PartitionState| counts[s.index()];
    Some(format!(
        "[{:>6.1}s] queued {} | synth {} | wait gpu {} | gpu {} | b_g2 {} | done {}/{} | ledger {:.2}/{:.2} GiB",
        started.elapsed().as_secs_f64(),
        c(PartitionState::Queued),
        c(PartitionState::At(Stage::Synthesizing)),
        c(PartitionState::At(Stage::QueuedForGpu)),
        c(PartitionState::At(Stage::OnGpu)),
        c(PartitionState::At(Stage::Bg2)),
        c(PartitionState::Done),
        total,
        gib(st.ledger.charged_bytes),
        gib(st.ledger.budget_bytes),
    ))
}

/// Shows `line` until `done`: rewritten in place on a terminal (5 times a second), else
/// printed when it changes (once a second).
pub fn show_progress(done: impl Fn() -> bool, line: impl Fn() -> Option<String>) {
    let tty = std::io::stderr().is_terminal();
    let mut last = String::new();
    let every = Duration::from_millis(if tty { 200 } else { 1000 });
    let mut next = Instant::now() + every;
    while !done() {
        std::thread::sleep(Duration::from_millis(20));
        if Instant::now() < next {
            continue;
        }
        next += every;
        if let Some(line) = line() {
            if tty {
                eprint!("\r{line}\x1b[K");
            } else if line != last {
                eprintln!("{line}");
            }
            last = line;
        }
    }
    if tty {
        eprintln!();
    }
}

/// `--status-port PORT`: serves the status page of `engine` (its jobs of kind `kind`) on
/// 127.0.0.1:PORT while the run lasts, and says where; nothing without the flag.
pub fn serve_status(
    port: Option<u16>,
    engine: &Arc<Engine>,
    synthesis_workers: usize,
    kind: &str,
) -> Result<(), String> {
    let Some(port) = port else {
        return Ok(());
    };
    let addr = baton::server::web::status_page::serve_engine(
        port,
        engine.clone(),
        synthesis_workers,
        kind,
    )
    .map_err(|e| format!("--status-port {port}: {e}"))?;
    eprintln!("status: http://{addr}/");
    Ok(())
}
