//! Compiled-circuit rows of the GPU bench (issue 14): a/b/c from a recorded R1CS on the device
//! against the host's sparse evaluation, and a partition's whole synthesis on the compiled GPU
//! path (witness-only on the host, a/b/c on the device) against full synthesis on the host.
//! The device's a/b/c are checked equal to the host's before anything is timed.

use std::time::Instant;

use baton::circuits::Synthetic;
use baton::compiled::{self, WitnessCs};
use baton::gpu::CudaBackend;
use baton::groth16::cs::ProvingAssignment;
use baton::groth16::msm::Scalars;
use baton::groth16::packed::PackedScalars;

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
        let packed = PackedScalars::pack(&cs.aux);
        for aux in [Scalars::Plain(&cs.aux), Scalars::Packed(&packed)] {
            let dev = gpu
                .evaluate_abc(&rec, &cs.inputs, aux)
                .expect("device a/b/c");
            let back = gpu.download_abc(&dev).expect("download");
            let rows = host.a.len();
            assert!(
                back.a[..rows] == host.a[..]
                    && back.b[..rows] == host.b[..]
                    && back.c[..rows] == host.c[..],
                "2^{log}: device a/b/c ({aux:?}) differ from the host's",
                aux = matches!(aux, Scalars::Packed(_))
            );
        }
        drop(packed);
        let mut device = Vec::with_capacity(reps);
        let mut from_packed = Vec::with_capacity(reps);
        let mut witness = Vec::with_capacity(reps);
        for seed in 0..reps {
            let c = Synthetic::new(n, 10 + seed as u64);
            let clock = Instant::now();
            let cs = WitnessCs::synthesize(c, shape).expect("witness");
            witness.push(ms(clock.elapsed()));
            let clock = Instant::now();
            let d = gpu
                .evaluate_abc(&rec, &cs.inputs, Scalars::Plain(&cs.aux))
                .expect("device a/b/c");
            device.push(ms(clock.elapsed()));
            drop(d);
            let packed = PackedScalars::pack(&cs.aux);
            let clock = Instant::now();
            let d = gpu
                .evaluate_abc(&rec, &cs.inputs, Scalars::Packed(&packed))
                .expect("device a/b/c from packed");
            from_packed.push(ms(clock.elapsed()));
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
        let packed_ms = median_ms(from_packed);
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
            "sparse a/b/c + check, witness packed (CPU: host rayon)",
            log,
            packed_ms,
            None,
            &format!(
                "bits and dense values up, expanded on the device; plain {:.2}x",
                dev_ms / packed_ms.max(1e-9)
            ),
        );
        t.row(
            "synthesis: witness-only + device a/b/c (CPU: full)",
            log,
            wit_ms + dev_ms,
            cpu(full),
            &format!("witness-only {wit_ms:.1} ms"),
        );
    }
}
