//! Partition rows under `gpu.memory_limit` (issue 38): the same PoRep-like partition (H, the
//! four G1 MSMs and B_G2) on a backend of its own per limit, as the engine's GPU stage runs it:
//! one device call where its own buffers fit (the key's sets that do not fit beside them
//! streamed from the host), else the per-call path (H in three or two buffers, MSMs over
//! bases resident or streamed from the host, B_G2 on the device). Every run is checked against
//! the uncapped one; the pool's peak must stay under the limit. Sizes from
//! BATON_BENCH_CAPPED (none by default), limits in GiB from BATON_BENCH_CAPS ("0,32,24,16";
//! 0: none).

use std::time::Instant;

use baton::gpu::options::GpuOptions;
use baton::gpu::sample::{g2_points, shaped_key, DistinctBases};
use baton::gpu::CudaBackend;
use baton::groth16::prover::{self, Abc, G1Sums, Witness};
use baton::stages::partition::{AbcInput, PartitionProver};
use baton::ProvingKey;
use blstrs::G2Projective;

use super::partition::{copy, witness};
use super::{env_logs, median_ms, ms};

/// One partition as the GPU stage runs it under `gpu`'s limit: (ms, path, sums).
fn run(
    gpu: &CudaBackend,
    abc: &mut Abc,
    pk: &ProvingKey,
    w: &Witness,
) -> (f64, &'static str, G1Sums, G2Projective) {
    let clock = Instant::now();
    let mut input = std::mem::take(abc);
    let r = gpu.prove_partition(pk, AbcInput::Host(&mut input), w, true, &mut |t| *abc = t);
    match r {
        Ok(s) => {
            let b_g2 = s.b_g2.expect("B_G2 on the device");
            let path = match s.streamed_sets {
                0 => "device",
                1 => "device, 1 set streamed",
                2 => "device, 2 sets streamed",
                3 => "device, 3 sets streamed",
                4 => "device, 4 sets streamed",
                _ => "device, all sets streamed",
            };
            (ms(clock.elapsed()), path, s.g1, b_g2)
        }
        Err(baton::Error::Device(e)) if e.is_out_of_memory() => {
            let refused = ms(clock.elapsed());
            *abc = input;
            // The per-call path computes H in a's buffer: it gets a copy, made off the clock.
            let mut spare = copy(abc);
            let clock = Instant::now();
            // As the GPU stage does on this path (once per key; the warm-up pays it).
            gpu.prepare_streaming(pk);
            let h = prover::compute_h(gpu, &mut spare).expect("H");
            let g1 = prover::g1_msms(gpu, pk, w, &h).expect("G1 MSMs");
            let b_g2 = prover::b_g2_msm(gpu, pk, w).expect("B_G2");
            (refused + ms(clock.elapsed()), "per-call", g1, b_g2)
        }
        Err(e) => panic!("capped partition: {e}"),
    }
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
        let (mut abc, w) = witness(log);
        let pk = shaped_key(1 << log, &w, &bases.points, &g2pool);
        let mut uncapped: Option<(f64, G1Sums, G2Projective)> = None;
        for cap in caps() {
            let limit = (cap > 0).then_some(cap << 30);
            let o = GpuOptions {
                memory_limit: limit,
                ..opts.clone()
            };
            let gpu = CudaBackend::with_options(0, &o).expect("backend");
            // Warm-up: whatever fits made resident, kernels loaded.
            let (_, path, g1, g2) = run(&gpu, &mut abc, &pk, &w);
            gpu.reset_peak_device_bytes().expect("reset peak");
            let up0 = gpu.uploaded_bytes();
            let times: Vec<f64> = (0..reps).map(|_| run(&gpu, &mut abc, &pk, &w).0).collect();
            // Host-to-device bytes a partition moved, its rate over the partition's wall time,
            // and how long those bytes take at PCIe 4.0 x16's ~25 GB/s (a 24 GiB card's link).
            let moved = (gpu.uploaded_bytes() - up0) as f64 / reps as f64;
            let peak = gpu.peak_device_bytes().unwrap_or(0);
            let t = median_ms(times.clone());
            let fallbacks = gpu.fallbacks();
            let ratio = match &uncapped {
                Some((u, ug1, ug2)) => {
                    let same = g1.h == ug1.h
                        && g1.l == ug1.l
                        && g1.a == ug1.a
                        && g1.b_g1 == ug1.b_g1
                        && g2 == *ug2;
                    assert!(same, "2^{log} under {cap} GiB: sums differ from uncapped");
                    format!("{:.2}x", t / u)
                }
                None => {
                    uncapped = Some((t, g1, g2));
                    "1.00x (reference)".into()
                }
            };
            if let Some(l) = limit {
                assert!(peak <= l, "2^{log}: peak {peak} above the limit {l}");
            }
            let line = format!(
                "| 2^{log} | {} | {path} | {t:.1} ms | {:.0?} | {ratio} | {:.1} GiB | {:.1} GiB, {:.1} GB/s, {:.0} ms at 25 GB/s | {fallbacks} |",
                limit.map_or("none".into(), |_| format!("{cap} GiB")),
                times,
                peak as f64 / (1u64 << 30) as f64,
                moved / (1u64 << 30) as f64,
                moved / 1e9 / (t / 1e3),
                moved / 25e9 * 1e3,
            );
            eprintln!("{line}");
            lines.push(line);
        }
    }
    println!("\n## Partition under gpu.memory_limit (H + 4 G1 MSMs + B_G2), medians of {reps}\n");
    println!("| size | limit | path | median | runs ms | x uncapped | pool peak | uploaded a partition | CPU fallbacks |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for l in lines {
        println!("{l}");
    }
}
