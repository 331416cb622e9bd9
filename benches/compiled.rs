//! Full synthesis vs witness-only synthesis + sparse evaluation, on the synthetic PoRep-like
//! circuit (its rows built outside `enforce`'s closures) and the MiMC chain (built inside):
//! per size the median of each step, the speed-up, and the recording's size and the time to
//! make, write and read it. Every compiled result is checked equal to full synthesis.
//!
//! `cargo bench --bench compiled` (env: BATON_BENCH_SIZES="16,18,20", BATON_BENCH_RUNS=5,
//! BATON_BENCH_CIRCUITS="synthetic,mimc").

use std::time::{Duration, Instant};

use baton::circuits::{MimcChain, Synthetic};
use baton::compiled::{self, KeyTag, Recording, WitnessCs};
use baton::groth16::cs::ProvingAssignment;
use baton::Scalar;
use bellperson::Circuit;

mod common;
use common::{env_list, median};

fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let t = Instant::now();
    let out = f();
    (out, t.elapsed())
}

fn secs(d: Duration) -> String {
    format!("{:.3} s", d.as_secs_f64())
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
}

/// Medians of one circuit and size.
struct Row {
    circuit: &'static str,
    log: u32,
    full: Duration,
    witness: Duration,
    eval: Duration,
    reused: Duration,
    streamed: Duration,
    record: Duration,
    write: Duration,
    read: Duration,
    heap_bytes: u64,
    file_bytes: u64,
    terms: usize,
    table: usize,
}

fn measure<C: Circuit<Scalar>>(
    circuit: &'static str,
    log: u32,
    runs: usize,
    make: impl Fn(u64) -> C,
) -> Row {
    let ((rec, _, _), record) = timed(|| compiled::record(make(0)).expect("record"));
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-recordings");
    std::fs::create_dir_all(&dir).expect("recording dir");
    let path = dir.join(format!("{circuit}-{log}.r1cs"));
    let tag = KeyTag([7; 32]);
    let (_, write) = timed(|| rec.write_file(&path, tag).expect("write"));
    let ((back, _), read) = timed(|| Recording::read_file(&path).expect("read"));
    assert!(back == rec, "the file reads back as written");
    let file_bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let shape = rec.shape();
    let d = shape.domain_size();
    let (mut full, mut witness, mut eval, mut refill) = (vec![], vec![], vec![], vec![]);
    let mut streamed = vec![];
    for run in 0..runs + 1 {
        let seed = 100 + run as u64;
        let (want, t_full) = timed(|| {
            ProvingAssignment::synthesize_sized(make(seed), d, shape.inputs, shape.aux)
                .expect("full synthesis")
        });
        let (cs, t_witness) = timed(|| WitnessCs::synthesize(make(seed), shape).expect("witness"));
        let (abc, t_eval) = timed(|| rec.evaluate(&cs.inputs, &cs.aux).expect("evaluate"));
        // The same evaluation into buffers already faulted in: what page faults cost.
        let mut reused = abc;
        let (_, t_reuse) = timed(|| {
            rec.evaluate_into(&cs.inputs, &cs.aux, &mut reused)
                .expect("evaluate")
        });
        let abc = reused;
        let ((sabc, sw), t_stream) =
            timed(|| compiled::synthesize(make(seed), &rec).expect("streamed"));
        assert!(
            sabc.a == want.a && sabc.b == want.b && sabc.c == want.c && sw.aux == want.aux,
            "{circuit} 2^{log}: streamed a/b/c or witness differ from full synthesis"
        );
        assert!(
            abc.a == want.a && abc.b == want.b && abc.c == want.c && cs.aux == want.aux,
            "{circuit} 2^{log}: compiled a/b/c or witness differ from full synthesis"
        );
        if run > 0 {
            full.push(t_full);
            witness.push(t_witness);
            eval.push(t_eval);
            refill.push(t_reuse);
            streamed.push(t_stream);
        }
    }
    Row {
        circuit,
        log,
        full: median(full),
        witness: median(witness),
        eval: median(eval),
        reused: median(refill),
        streamed: median(streamed),
        record,
        write,
        read,
        heap_bytes: rec.heap_bytes() as u64,
        file_bytes,
        terms: rec.terms(),
        table: rec.coeffs().len(),
    }
}

fn main() {
    let sizes = env_list("BATON_BENCH_SIZES", &[16, 18, 20]);
    let runs = env_list("BATON_BENCH_RUNS", &[5])[0].max(1) as usize;
    let circuits = std::env::var("BATON_BENCH_CIRCUITS").unwrap_or("synthetic,mimc".into());
    let threads = rayon::current_num_threads();
    let mut rows = Vec::new();
    for log in sizes {
        let n = 1usize << log;
        if circuits.contains("synthetic") {
            rows.push(measure("synthetic", log, runs, |s| Synthetic::new(n, s)));
        }
        if circuits.contains("mimc") {
            rows.push(measure("mimc", log, runs, |s| {
                MimcChain::with_constraints(n - 1, s)
            }));
        }
        for r in rows.iter().filter(|r| r.log == log) {
            eprintln!(
                "{} 2^{log}: full {:.3?}, witness {:.3?} + eval {:.3?} (faulted {:.3?}), streamed {:.3?}",
                r.circuit, r.full, r.witness, r.eval, r.reused, r.streamed
            );
        }
    }
    println!("\n{threads} threads, median of {runs} (full synthesis runs on one thread)\n");
    println!("| circuit | constraints | full synthesis | witness-only | sparse a/b/c + check | one after the other | a/b/c into faulted buffers | compiled (evaluation beside the witness) | speed-up |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for r in &rows {
        println!(
            "| {} | 2^{} | {} | {} | {} | {} | {} | {} | {:.2}x |",
            r.circuit,
            r.log,
            secs(r.full),
            secs(r.witness),
            secs(r.eval),
            secs(r.witness + r.eval),
            secs(r.reused),
            secs(r.streamed),
            r.full.as_secs_f64() / r.streamed.as_secs_f64()
        );
    }
    println!("\n| circuit | constraints | terms | table | in memory | file | bytes/term | record (incl. first a/b/c) | write | read |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for r in &rows {
        println!(
            "| {} | 2^{} | {} | {} | {} | {} | {:.2} | {} | {} | {} |",
            r.circuit,
            r.log,
            r.terms,
            r.table,
            mib(r.heap_bytes),
            mib(r.file_bytes),
            r.file_bytes as f64 / r.terms as f64,
            secs(r.record),
            secs(r.write),
            secs(r.read)
        );
    }
}
