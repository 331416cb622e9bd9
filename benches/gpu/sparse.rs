//! Compiled-circuit rows of the GPU bench (issue 14): a/b/c from a recorded R1CS on the device
//! against the host's sparse evaluation, and a partition's whole synthesis on the compiled GPU
//! path (witness-only on the host, a/b/c on the device) against full synthesis on the host.
//! The device's a/b/c are checked equal to the host's before anything is timed.

use std::time::Instant;

use baton::circuits::{LongRows, Synthetic};
use baton::compiled::{self, WitnessCs};
use baton::gpu::CudaBackend;
use baton::groth16::cs::ProvingAssignment;

use super::{env_logs, median_ms, ms, Table};

pub fn bench_sparse(gpu: &CudaBackend, t: &mut Table, reps: usize) {
    for log in env_logs("BATON_BENCH_SPARSE", &[20, 22]) {
        let n = 1usize << log;
        let clock = Instant::now();
        let (rec, _, _) = compiled::record(Synthetic::new(n, 0)).expect("record");
        let t_rec = clock.elapsed();
        let shape = rec.shape();
        let cs = WitnessCs::synthesize(Synthetic::new(n, 1), shape).expect("witness");
        let host = rec.evaluate(&cs.inputs, &cs.aux).expect("host a/b/c");
        let dev = gpu
            .evaluate_abc(&rec, &cs.inputs, &cs.aux)
            .expect("device a/b/c");
        let back = gpu.download_abc(&dev).expect("download");
        let rows = host.a.len();
        assert!(
            back.a[..rows] == host.a[..]
                && back.b[..rows] == host.b[..]
                && back.c[..rows] == host.c[..],
            "2^{log}: device a/b/c differ from the host's"
        );
        drop((dev, back));
        let mut device = Vec::with_capacity(reps);
        let mut witness = Vec::with_capacity(reps);
        for seed in 0..reps {
            let c = Synthetic::new(n, 10 + seed as u64);
            let clock = Instant::now();
            let cs = WitnessCs::synthesize(c, shape).expect("witness");
            witness.push(ms(clock.elapsed()));
            let clock = Instant::now();
            let d = gpu
                .evaluate_abc(&rec, &cs.inputs, &cs.aux)
                .expect("device a/b/c");
            device.push(ms(clock.elapsed()));
            drop(d);
        }
        // Full synthesis is the reference of the synthesis row: always measured (once above
        // 2^22), whatever the CPU cap of the MSM rows.
        let runs = if log > 22 { 1 } else { reps.min(3) };
        let (mut eval, mut full) = (Vec::new(), Vec::new());
        for seed in 0..runs {
            let clock = Instant::now();
            std::hint::black_box(rec.evaluate(&cs.inputs, &cs.aux).expect("host a/b/c"));
            eval.push(ms(clock.elapsed()));
            let clock = Instant::now();
            let d = shape.domain_size();
            let c = Synthetic::new(n, 20 + seed as u64);
            let p = ProvingAssignment::synthesize_sized(c, d, shape.inputs, shape.aux);
            std::hint::black_box(p.expect("full synthesis"));
            full.push(ms(clock.elapsed()));
        }
        let (dev_ms, wit_ms) = (median_ms(device), median_ms(witness));
        let cpu = |v: Vec<f64>| (!v.is_empty()).then(|| (median_ms(v), runs));
        let note = format!(
            "{} terms; recorded in {:.2} s, {:.0} MiB resident",
            rec.terms(),
            t_rec.as_secs_f64(),
            rec.heap_bytes() as f64 / (1u64 << 20) as f64
        );
        t.row(
            "sparse a/b/c + check (CPU: host rayon)",
            log,
            dev_ms,
            cpu(eval),
            &note,
        );
        t.row(
            "synthesis: witness-only + device a/b/c (CPU: full)",
            log,
            wit_ms + dev_ms,
            cpu(full),
            &format!("witness-only {wit_ms:.1} ms"),
        );
        long_rows(gpu, t, reps, log);
    }
}

/// The device's a/b/c of a recording with a bit-heavy circuit's row lengths (one row in 1,000
/// of 9-929 terms, the others 1-3: [`LongRows`]) with long rows summed by a warp (the default
/// `gpu.spmv_long_row`) against each row by its thread (0), in the same run; checked against
/// the host first.
fn long_rows(gpu: &CudaBackend, t: &mut Table, reps: usize, log: u32) {
    let rows = 1usize << log;
    let (rec, _, _) = compiled::record(LongRows::new(rows, 1000, 0)).expect("record");
    let cs = WitnessCs::synthesize(LongRows::new(rows, 1000, 1), rec.shape()).expect("witness");
    let host = rec.evaluate(&cs.inputs, &cs.aux).expect("host a/b/c");
    let default = baton::gpu::options::DEFAULT_SPMV_LONG_ROW;
    let mut times = Vec::new();
    for long_row in [default, 0] {
        gpu.set_spmv_long_row(long_row).expect("threshold");
        let back = gpu
            .download_abc(&gpu.evaluate_abc(&rec, &cs.inputs, &cs.aux).expect("a/b/c"))
            .expect("download");
        let n = host.a.len();
        assert!(
            back.a[..n] == host.a[..] && back.b[..n] == host.b[..] && back.c[..n] == host.c[..],
            "long rows 2^{log}, threshold {long_row}: device a/b/c differ from the host's"
        );
        let mut v = Vec::with_capacity(reps);
        for _ in 0..reps {
            let clock = Instant::now();
            drop(gpu.evaluate_abc(&rec, &cs.inputs, &cs.aux).expect("a/b/c"));
            v.push(ms(clock.elapsed()));
        }
        times.push(median_ms(v));
    }
    gpu.set_spmv_long_row(default).expect("threshold");
    t.row(
        "sparse a/b/c, long rows by a warp (ref: by their thread)",
        log,
        times[0],
        Some((times[1], reps)),
        &format!("{} terms, 1 row in 1000 of 9-929", rec.terms()),
    );
}
