//! Partition rows under `gpu.memory_limit` (issue 38): the same PoRep-like partition (H, the
//! four G1 MSMs and B_G2) on a backend of its own per limit, as the engine's GPU stage runs it:
//! one device call where its own buffers fit (the key's sets that do not fit beside them
//! streamed from the host), else the per-call path (H in three or two buffers, MSMs over
//! bases resident or streamed from the host, B_G2 on the device). Every run is checked against
//! the uncapped one; the pool's peak must stay under the limit. Sizes from
//! BATON_BENCH_CAPPED (none by default), limits in GiB from BATON_BENCH_CAPS ("0,32,24,16";
//! 0: none), a, b, c from BATON_BENCH_CAPPED_ABC ("host,device": uploaded by the call, and
//! evaluated on the device from the circuit's recording as the engine does for PoRep).

use std::time::Instant;

use baton::circuits::Synthetic;
use baton::compiled::{self, Recording};
use baton::gpu::options::GpuOptions;
use baton::gpu::sample::{g2_points, shaped_key, DistinctBases};
use baton::gpu::CudaBackend;
use baton::groth16::prover::{self, Abc, G1Sums, Witness};
use baton::stages::partition::{AbcInput, PartitionProver, PartitionTimes};
use baton::ProvingKey;
use blstrs::G2Projective;

use super::partition::copy;
use super::{env_logs, median_ms, ms};

/// Where a run's a, b, c come from: the host (synthesis output, uploaded by the call), or the
/// device (evaluated there from the circuit's recording inside the run's clock, as the engine
/// does for a recorded circuit such as PoRep: `device_abc` in its partition times).
#[derive(Clone, Copy, PartialEq)]
enum From {
    Host,
    Device,
}

/// One run: wall ms, path, sums, phase times (None on the per-call path).
type Run = (f64, String, G1Sums, G2Projective, Option<PartitionTimes>);

/// One partition as the GPU stage runs it under `gpu`'s limit, a, b, c from `from`; `Err`
/// (the reason) where the device refuses device a/b/c for memory, as the engine's GPU stage
/// sees it before it retries the partition with host a/b/c.
fn run(
    gpu: &CudaBackend,
    abc: &mut Abc,
    (rec, pk, w): (&Recording, &ProvingKey, &Witness),
    from: From,
) -> Result<Run, String> {
    let clock = Instant::now();
    let (r, device_abc) = match from {
        From::Host => {
            let mut input = std::mem::take(abc);
            let r = gpu.prove_partition(pk, AbcInput::Host(&mut input), w, true, &mut |t| *abc = t);
            if r.is_err() {
                *abc = input;
            }
            (r, None)
        }
        From::Device => {
            let d = match gpu.evaluate_abc(rec, &w.inputs, w.aux_scalars()) {
                Ok(d) => d,
                Err(e) if e.is_out_of_memory() => return Err(format!("device a/b/c: {e}")),
                Err(e) => panic!("device a/b/c: {e}"),
            };
            let evaluated = clock.elapsed();
            let r = gpu.prove_partition(pk, AbcInput::Device(Box::new(d)), w, true, &mut |_| {});
            (r, Some(evaluated))
        }
    };
    match r {
        Ok(mut s) => {
            let b_g2 = s.b_g2.expect("B_G2 on the device");
            if let Some(t) = device_abc {
                s.times.device_abc = t;
            }
            let path = match s.streamed_sets {
                0 => "device".to_string(),
                5 => "device, all sets streamed".to_string(),
                1 => "device, 1 set streamed".to_string(),
                k => format!("device, {k} sets streamed"),
            };
            Ok((ms(clock.elapsed()), path, s.g1, b_g2, Some(s.times)))
        }
        Err(e) if e.is_out_of_memory() && from == From::Device => {
            Err(format!("partition from device a/b/c: {e}"))
        }
        Err(baton::Error::Device(e)) if e.is_out_of_memory() && from == From::Host => {
            let refused = ms(clock.elapsed());
            // The per-call path computes H in a's buffer: it gets a copy, made off the clock.
            let mut spare = copy(abc);
            let clock = Instant::now();
            // As the GPU stage does on this path (once per key; the warm-up pays it).
            gpu.prepare_streaming(pk);
            let h = prover::compute_h(gpu, &mut spare).expect("H");
            let g1 = prover::g1_msms(gpu, pk, w, &h).expect("G1 MSMs");
            let b_g2 = prover::b_g2_msm(gpu, pk, w).expect("B_G2");
            let t = refused + ms(clock.elapsed());
            Ok((t, "per-call".into(), g1, b_g2, None))
        }
        Err(e) => panic!("capped partition: {e}"),
    }
}

/// Median ms of each phase over `runs` (device a/b/c, prepare, a/b/c upload, witness's
/// MSMs done at, H, all MSMs), or "-" on the per-call path.
fn phases(runs: &[Option<PartitionTimes>]) -> String {
    let all: Vec<PartitionTimes> = runs.iter().flatten().copied().collect();
    if all.is_empty() {
        return "-".into();
    }
    let m = |f: fn(&PartitionTimes) -> std::time::Duration| {
        median_ms(all.iter().map(|t| ms(f(t))).collect())
    };
    format!(
        "{:.0} / {:.0} / {:.0} / {:.0} / {:.0} / {:.0}",
        m(|t| t.device_abc),
        m(|t| t.prepare),
        m(|t| t.abc_upload),
        m(|t| t.upload),
        m(|t| t.h),
        m(|t| t.msms),
    )
}

/// Where the rows' a, b, c come from: BATON_BENCH_CAPPED_ABC, "host", "device" or both
/// ("host,device", the default).
fn sources() -> Vec<From> {
    let v = std::env::var("BATON_BENCH_CAPPED_ABC").unwrap_or_else(|_| "host,device".into());
    v.split(',')
        .filter_map(|s| match s.trim() {
            "host" => Some(From::Host),
            "device" => Some(From::Device),
            _ => None,
        })
        .collect()
}

fn caps() -> Vec<u64> {
    std::env::var("BATON_BENCH_CAPS")
        .unwrap_or_else(|_| "0,32,24,16".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect()
}

pub fn bench_capped(opts: &GpuOptions, bases: &DistinctBases, reps: usize) {
    let logs = env_logs("BATON_BENCH_CAPPED", &[]);
    if logs.is_empty() {
        return;
    }
    let g2pool = g2_points(1024, 77);
    let mut lines = Vec::new();
    for log in logs {
        let clock = Instant::now();
        // The recording, host a, b, c and the witness of one circuit: the device rows
        // evaluate a, b, c from the recording, the host rows take these.
        let (rec, mut abc, w) = compiled::record(Synthetic::new(1 << log, 7)).expect("record");
        eprintln!("recorded 2^{log}: {:.1} s", clock.elapsed().as_secs_f64());
        let pk = shaped_key(1 << log, &w, &bases.points, &g2pool);
        // Every row's sums equal the first row's; each source's rows are timed against that
        // source's first (uncapped) row.
        let mut first: Option<(G1Sums, G2Projective)> = None;
        for from in sources() {
            let mut reference: Option<f64> = None;
            for cap in caps() {
                let limit = (cap > 0).then_some(cap << 30);
                let o = GpuOptions {
                    memory_limit: limit,
                    ..opts.clone()
                };
                let gpu = CudaBackend::with_options(0, &o).expect("backend");
                let one = (&rec, &pk, &w);
                let limit_name = limit.map_or("none".into(), |_| format!("{cap} GiB"));
                let refused = |why: String| {
                    format!("| 2^{log} | {limit_name} | device | refused, the engine retries with host a/b/c: {why} |")
                };
                // Warm-up: whatever fits made resident, kernels loaded.
                let (_, path, g1, g2, _) = match run(&gpu, &mut abc, one, from) {
                    Ok(r) => r,
                    Err(why) => {
                        eprintln!("{}", refused(why.clone()));
                        lines.push(refused(why));
                        continue;
                    }
                };
                gpu.reset_peak_device_bytes().expect("reset peak");
                let up0 = gpu.uploaded_bytes();
                let runs: Result<Vec<Run>, String> =
                    (0..reps).map(|_| run(&gpu, &mut abc, one, from)).collect();
                let runs = match runs {
                    Ok(r) => r,
                    Err(why) => {
                        lines.push(refused(why));
                        continue;
                    }
                };
                let times: Vec<f64> = runs.iter().map(|r| r.0).collect();
                let spans: Vec<Option<PartitionTimes>> = runs.iter().map(|r| r.4).collect();
                // Host-to-device bytes a partition moved, its rate over the partition's wall
                // time, and how long those bytes take at PCIe 4.0 x16's ~25 GB/s (a 24 GiB
                // card's link).
                let moved = (gpu.uploaded_bytes() - up0) as f64 / reps as f64;
                let peak = gpu.peak_device_bytes().unwrap_or(0);
                let t = median_ms(times.clone());
                let fallbacks = gpu.fallbacks();
                match &first {
                    Some((ug1, ug2)) => {
                        let same = g1.h == ug1.h
                            && g1.l == ug1.l
                            && g1.a == ug1.a
                            && g1.b_g1 == ug1.b_g1
                            && g2 == *ug2;
                        assert!(
                            same,
                            "2^{log} under {cap} GiB: sums differ from the first row"
                        );
                    }
                    None => first = Some((g1, g2)),
                }
                let ratio = match reference {
                    Some(u) => format!("{:.2}x", t / u),
                    None => {
                        reference = Some(t);
                        "1.00x (reference)".into()
                    }
                };
                if let Some(l) = limit {
                    assert!(peak <= l, "2^{log}: peak {peak} above the limit {l}");
                }
                let line = format!(
                    "| 2^{log} | {limit_name} | {} | {path} | {t:.1} ms | {:.0?} | {ratio} | {} | {:.1} GiB | {:.1} GiB, {:.1} GB/s, {:.0} ms at 25 GB/s | {fallbacks} |",
                    match from {
                        From::Host => "host",
                        From::Device => "device",
                    },
                    times,
                    phases(&spans),
                    peak as f64 / (1u64 << 30) as f64,
                    moved / (1u64 << 30) as f64,
                    moved / 1e9 / (t / 1e3),
                    moved / 25e9 * 1e3,
                );
                eprintln!("{line}");
                lines.push(line);
            }
        }
    }
    println!("\n## Partition under gpu.memory_limit (H + 4 G1 MSMs + B_G2), medians of {reps}\n");
    println!("Phases (ms, medians): device a/b/c / prepare / a/b/c upload / witness's MSMs done at / H / MSMs. Reference: the first row of each size and a/b/c source.\n");
    println!("| size | limit | a/b/c | path | median | runs ms | x reference | phases | pool peak | uploaded a partition | CPU fallbacks |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for l in lines {
        println!("{l}");
    }
}
