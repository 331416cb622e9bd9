//! Partition rows of the GPU bench: the per-call path (compute_h, then one backend call per
//! G1 MSM) and the device-resident partition (one `prove_partition` call), without and with
//! B_G2, on the same synthesized PoRep-like witness and key. The device results are checked
//! against the per-call GPU path at every size (last, computing H in place: no copy of a, b, c
//! at 2^27) and against the CPU where it runs.

use std::time::Instant;

use baton::circuits::Synthetic;
use baton::gpu::sample::{g2_points, shaped_key, DistinctBases};
use baton::gpu::CudaBackend;
use baton::groth16::backend::{Backend, CpuBackend};
use baton::groth16::cs::ProvingAssignment;
use baton::groth16::prover::{self, Abc, G1Sums, Witness};
use baton::stages::partition::{AbcInput, PartitionProver, PartitionSums};
use baton::ProvingKey;
use blstrs::G2Projective;

use super::{cpu_runs, env_logs, median_ms, ms, Table};

pub fn witness(log: u32) -> (Abc, Witness) {
    let clock = Instant::now();
    let cs = ProvingAssignment::synthesize(Synthetic::new(1 << log, 7)).expect("synthesize");
    eprintln!("synthesis 2^{log}: {:.1} s", clock.elapsed().as_secs_f64());
    cs.into_parts()
}

pub fn copy(abc: &Abc) -> Abc {
    Abc {
        a: abc.a.clone(),
        b: abc.b.clone(),
        c: abc.c.clone(),
    }
}

/// The per-call path, computing H in `abc`: (H ms, all ms, G1 sums).
fn per_call(b: &dyn Backend, mut abc: Abc, pk: &ProvingKey, w: &Witness) -> (f64, f64, G1Sums) {
    let clock = Instant::now();
    let h = prover::compute_h(b, &mut abc).expect("H");
    let th = ms(clock.elapsed());
    let sums = prover::g1_msms(b, pk, w, &h).expect("G1 MSMs");
    (th, ms(clock.elapsed()), sums)
}

/// One device partition from host `abc`: (wall ms, sums). The device hands a, b, c back
/// unchanged once uploaded, and they go back into `abc` for the next run (no copy per run:
/// at 2^27 a copy is 12 GiB of the host's memory).
fn device(
    gpu: &CudaBackend,
    abc: &mut Abc,
    pk: &ProvingKey,
    w: &Witness,
    g2: bool,
) -> (f64, PartitionSums) {
    let mut input = std::mem::take(abc);
    let clock = Instant::now();
    let r = gpu.prove_partition(pk, AbcInput::Host(&mut input), w, g2, &mut |t| *abc = t);
    let t = ms(clock.elapsed());
    match r {
        Ok(s) => (t, s),
        Err(e) => {
            // a, b, c back where the caller's registrations expect them before unwinding
            // (unless `abc_done` already put them there).
            if !(input.a.is_empty() && input.b.is_empty() && input.c.is_empty()) {
                *abc = input;
            }
            panic!("device partition: {e}")
        }
    }
}

fn same(x: &G1Sums, y: &G1Sums) -> bool {
    x.h == y.h && x.l == y.l && x.a == y.a && x.b_g1 == y.b_g1
}

/// Median wall time and the phases of the median run.
fn timed(
    reps: usize,
    mut f: impl FnMut() -> (f64, PartitionSums),
) -> (f64, PartitionSums, Vec<f64>) {
    let mut runs: Vec<(f64, PartitionSums)> = (0..reps).map(|_| f()).collect();
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let all: Vec<f64> = runs.iter().map(|r| r.0).collect();
    let (t, s) = runs.swap_remove(runs.len() / 2);
    (t, s, all)
}

fn phases(s: &PartitionSums) -> String {
    let t = &s.times;
    format!(
        "prepare {:.0} ms, uploads done at {:.0} ms (a/b/c {:.0}), H {:.0} ms, MSMs {:.0} ms, host work {:.0} ms, peak device {:.1} GiB",
        ms(t.prepare),
        ms(t.upload),
        ms(t.abc_upload),
        ms(t.h),
        ms(t.msms),
        ms(t.host),
        s.peak_device_bytes as f64 / (1u64 << 30) as f64
    )
}

pub fn bench_partition(gpu: &CudaBackend, bases: &DistinctBases, t: &mut Table, reps: usize) {
    let g2pool = g2_points(1024, 77);
    for log in env_logs("BATON_BENCH_PARTITION", &[24, 26]) {
        let (mut abc, w) = witness(log);
        let pk = shaped_key(1 << log, &w, &bases.points, &g2pool);
        let reps = reps.max(1);
        // Warm-up: bases resident, kernels loaded.
        let (_, dsum) = device(gpu, &mut abc, &pk, &w, true);
        let (mut h_ms, mut all_ms) = (Vec::new(), Vec::new());
        // The per-call path is the "before" column: three runs, one at 2^26 and above (each
        // takes seconds there); none with BATON_BENCH_PART_BEFORE=0 (the check at the end
        // still compares the device against it).
        let before = std::env::var("BATON_BENCH_PART_BEFORE").map_or(true, |v| v.trim() != "0");
        let call_runs = match (before, log >= 26) {
            (false, _) => 0,
            (true, true) => 1,
            (true, false) => reps.min(3),
        };
        for _ in 0..call_runs {
            let (h, all, _) = per_call(gpu, copy(&abc), &pk, &w);
            h_ms.push(h);
            all_ms.push(all);
        }
        let without = before.then(|| timed(reps, || device(gpu, &mut abc, &pk, &w, false)));
        let (d2, s2, runs2) = timed(reps, || device(gpu, &mut abc, &pk, &w, true));
        let runs1 = without.as_ref().map(|x| x.2.clone());
        eprintln!("device partition 2^{log} runs: {runs1:.0?} / with B_G2 {runs2:.0?}");
        // The same partition from a, b, c already on the device (as evaluated there from a
        // recorded R1CS): no upload beside the MSMs. And the uploads of a, b, c alone, timed
        // to the last chunk queued (at most two 64 MiB chunks still in flight).
        let mut up_ms = Vec::new();
        let (dd, sd, _) = timed(reps, || {
            let clock = Instant::now();
            let d = gpu.upload_abc(&abc).expect("upload a/b/c");
            up_ms.push(ms(clock.elapsed()));
            let clock = Instant::now();
            let s = gpu
                .prove_partition(&pk, AbcInput::Device(Box::new(d)), &w, true, &mut |_| {})
                .expect("partition from device a/b/c");
            (ms(clock.elapsed()), s)
        });
        assert!(
            same(&sd.g1, &dsum.g1) && sd.b_g2 == dsum.b_g2,
            "2^{log}: the partition from device a/b/c differs"
        );
        // The same from a, b, c and the witness page-locked in place (`register_host`, as a
        // caller that reuses its buffers would): their uploads skip the staging copies.
        // Registering and unregistering are timed apart.
        let clock = Instant::now();
        // SAFETY: `abc` and `w` outlive the registrations (dropped below), and no vector grows
        // meanwhile (`device` moves a, b, c out and back, not their memory).
        let regs = unsafe { [&abc.a, &abc.b, &abc.c, &w.aux].map(|v| gpu.register_host(v)) };
        let reg_ms = ms(clock.elapsed());
        // Small vectors may share pages with each other (the heap below glibc's mmap
        // threshold): then a registration is refused and the row left out.
        let registered = match regs.iter().all(|r| r.is_ok()) {
            true => {
                let reg_gib = regs.iter().flatten().map(|r| r.bytes()).sum::<usize>() as f64
                    / (1u64 << 30) as f64;
                let (dr, sr, _) = timed(reps, || device(gpu, &mut abc, &pk, &w, true));
                let clock = Instant::now();
                drop(regs);
                let unreg_ms = ms(clock.elapsed());
                assert!(
                    same(&sr.g1, &dsum.g1) && sr.b_g2 == dsum.b_g2,
                    "2^{log}: the partition from registered host memory differs"
                );
                Some((dr, sr, reg_gib, reg_ms, unreg_ms))
            }
            false => {
                let why: Vec<String> = regs
                    .iter()
                    .filter_map(|r| r.as_ref().err().map(|e| e.to_string()))
                    .collect();
                eprintln!("2^{log}: host memory not registered ({why:?}); row left out");
                // The ones that did register are unlocked before a, b, c can be freed.
                drop(regs);
                None
            }
        };
        let (cpu_h, cpu_all, note) = if cpu_runs(log, reps) > 0 {
            let (h, all, csum) = per_call(&CpuBackend, copy(&abc), &pk, &w);
            assert!(
                same(&dsum.g1, &csum),
                "partition 2^{log}: device sums differ from the CPU"
            );
            let c2 = prover::b_g2_msm(&CpuBackend, &pk, &w).expect("CPU G2");
            assert_eq!(
                dsum.b_g2,
                Some(c2),
                "2^{log}: device B_G2 differs from the CPU"
            );
            (
                Some((h, 1)),
                Some((all, 1)),
                "checked vs CPU and the per-call path",
            )
        } else {
            (None, None, "checked vs the per-call GPU path (CPU skipped)")
        };
        // Last, computing H in a, b, c themselves (no copy): the per-call GPU path.
        let (_, _, gsum) = per_call(gpu, abc, &pk, &w);
        assert!(
            same(&dsum.g1, &gsum),
            "2^{log}: device partition differs from the per-call path"
        );
        let g2_calls: G2Projective = prover::b_g2_msm(gpu, &pk, &w).expect("G2 per call");
        assert_eq!(
            dsum.b_g2,
            Some(g2_calls),
            "2^{log}: device B_G2 differs from the per-call path"
        );
        if before {
            t.row(
                "compute_h (PoRep-like witness), per call",
                log,
                median_ms(h_ms),
                cpu_h,
                note,
            );
            t.row(
                "partition per call: compute_h + 4 G1 MSMs",
                log,
                median_ms(all_ms),
                cpu_all,
                note,
            );
        }
        if let Some((d1, s1, _)) = &without {
            t.row(
                "device partition: H + 4 G1 MSMs",
                log,
                *d1,
                None,
                &phases(s1),
            );
        }
        t.row(
            "device partition: H + 4 G1 MSMs + B_G2",
            log,
            d2,
            None,
            &phases(&s2),
        );
        t.row(
            "device partition from device a/b/c (+ B_G2)",
            log,
            dd,
            None,
            &phases(&sd),
        );
        if let Some((dr, sr, reg_gib, reg_ms, unreg_ms)) = registered {
            t.row(
                "device partition from registered host a/b/c and witness (+ B_G2)",
                log,
                dr,
                None,
                &format!(
                    "{}; registering {reg_gib:.1} GiB {reg_ms:.0} ms, unregistering {unreg_ms:.0} ms (once, not per run)",
                    phases(&sr)
                ),
            );
        }
        t.row(
            "a/b/c upload alone (pinned staging)",
            log,
            median_ms(up_ms),
            None,
            "3 × 2^log Fr from pageable host memory",
        );
        gpu.clear_resident().expect("clear");
    }
}
