//! The CUDA backend against the CPU backend on the same machine: G1 MSMs (dense and PoRep-like),
//! NTTs, H, and a whole partition's GPU work per call (H, then one backend call per G1 MSM) and
//! as one device call (H + the four G1 MSMs, and with B_G2), and a/b/c from a recorded R1CS
//! (compiled synthesis). Every GPU result is checked (against
//! the CPU, the bases' construction, or the per-call path) before it is timed; prints a markdown
//! table of medians last. The `[gpu]` knobs come from baton.toml / `BATON_GPU_*` as in the engine.
//!
//! `cargo bench --features cuda --bench gpu`. Env (log2 sizes):
//! BATON_BENCH_MAX_LOG caps everything; BATON_BENCH_MSM="20,22,24,26",
//! BATON_BENCH_G2="20,22,24", BATON_BENCH_NTT="20,...,27", BATON_BENCH_PARTITION="24,26",
//! BATON_BENCH_SPARSE="20,22" (a/b/c from a recorded R1CS, compiled synthesis), BATON_BENCH_REPS=5,
//! BATON_BENCH_CPU_MAX_LOG=24 (CPU references above it are skipped; above 22 they run once),
//! BATON_BENCH_PART_BEFORE=0 (the partition's per-call and no-B_G2 rows left out; the checks
//! stay), BATON_BENCH_CAPPED="26" with BATON_BENCH_CAPS="0,32,24,16" (the partition under
//! `gpu.memory_limit`, GiB; benches/gpu/capped.rs). The G1 MSM rows run once per MSM variant (`BATON_MSM_VARIANTS`, default
//! `baton::gpu::options::MSM_VARIANTS`), each on its own backend; every other row runs on the
//! first variant's.

use std::time::{Duration, Instant};

#[path = "common/log.rs"]
mod bench_log;
#[path = "gpu/capped.rs"]
mod capped;
#[path = "gpu/msm.rs"]
mod msm;
#[path = "gpu/partition.rs"]
mod partition;
#[path = "gpu/sparse.rs"]
mod sparse;

use baton::gpu::options::NTT_COLUMNS_AUTO;
use baton::gpu::plan::ntt_auto_columns;
use baton::gpu::sample::{dense_scalars, porep_scalars, DistinctBases};
use baton::gpu::CudaBackend;
use baton::groth16::backend::{Backend, Bases, CpuBackend, Query};
use baton::groth16::domain::Domain;
use blstrs::{G2Affine, G2Projective};
use group::{Curve, Group};

fn env_u32(name: &str, default: u32) -> u32 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

fn env_logs(name: &str, default: &[u32]) -> Vec<u32> {
    let cap = env_u32("BATON_BENCH_MAX_LOG", 31);
    std::env::var(name)
        .ok()
        .map(|v| v.split(',').filter_map(|s| s.trim().parse().ok()).collect())
        .unwrap_or_else(|| default.to_vec())
        .into_iter()
        .filter(|&l| l <= cap)
        .collect()
}

fn median_ms(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Runs `f` `reps` times after one warm-up, returning wall milliseconds.
fn time_reps<T>(reps: usize, mut f: impl FnMut() -> T) -> (T, Vec<f64>) {
    let first = f();
    let mut out = Vec::with_capacity(reps);
    for _ in 0..reps {
        let t = Instant::now();
        std::hint::black_box(f());
        out.push(ms(t.elapsed()));
    }
    (first, out)
}

struct Table {
    rows: Vec<[String; 6]>,
}

impl Table {
    fn row(&mut self, what: &str, log: u32, gpu: f64, cpu: Option<(f64, usize)>, note: &str) {
        let (cpu_s, ratio) = match cpu {
            Some((c, runs)) => (
                format!("{c:.1} ms{}", if runs == 1 { " (1 run)" } else { "" }),
                format!("{:.1}×", c / gpu),
            ),
            None => ("skipped".into(), "–".into()),
        };
        let r = [
            what.into(),
            format!("2^{log}"),
            format!("{gpu:.2} ms"),
            cpu_s,
            ratio,
            note.into(),
        ];
        eprintln!("| {} |", r.join(" | "));
        self.rows.push(r);
    }
}

/// CPU timing policy: several runs up to 2^22, one run up to the CPU cap, none above.
fn cpu_runs(log: u32, reps: usize) -> usize {
    let cap = env_u32("BATON_BENCH_CPU_MAX_LOG", 24);
    match log {
        l if l > cap => 0,
        l if l > 22 => 1,
        _ => reps.min(3),
    }
}

/// G2 MSMs (the optional `bg2.device = "gpu"` path): PoRep-like scalars at every size, dense at
/// the smallest. Bases tile 1024 random points (repeats do not change the work); every GPU result
/// is compared with the CPU's where the CPU runs.
fn bench_msm_g2(gpu: &CudaBackend, t: &mut Table, reps: usize) {
    let logs = env_logs("BATON_BENCH_G2", &[20, 22, 24]);
    let Some(&most) = logs.iter().max() else {
        return;
    };
    let mut rng = rand::rngs::OsRng;
    let pool: Vec<G2Affine> = (0..1024)
        .map(|_| G2Projective::random(&mut rng).to_affine())
        .collect();
    let all: Vec<G2Affine> = (0..1usize << most)
        .map(|i| pool[(i * 7919) % pool.len()])
        .collect();
    for log in logs {
        let n = 1usize << log;
        let b = Bases {
            key_id: 0xb2b2_0000 + log as u64,
            query: Query::BG2,
            offset: 0,
            points: &all[..n],
        };
        let mut kinds = vec![("PoRep-like", porep_scalars(n, 3000 + log as u64))];
        if log <= 20 {
            kinds.push(("dense", dense_scalars(n, 4000 + log as u64)));
        }
        for (kind, scalars) in kinds {
            let (got, times) =
                time_reps(reps, || gpu.msm_g2(b, &scalars, None).expect("GPU G2 MSM"));
            let runs = cpu_runs(log, reps);
            let what = format!("G2 MSM 2^{log} {kind}: GPU vs CPU");
            let cpu = cpu_reference(runs, &got, &what, || {
                CpuBackend.msm_g2(b, &scalars, None).expect("CPU G2 MSM")
            });
            let note = if runs > 0 {
                "bases resident, equal to CPU"
            } else {
                "bases resident, unchecked (CPU skipped)"
            };
            t.row(&format!("G2 MSM {kind}"), log, median_ms(times), cpu, note);
        }
    }
    gpu.clear_resident().expect("clear");
}

/// `runs` timed CPU runs of `f` (none when 0), each result asserted equal to `want`: the median
/// in milliseconds and the run count.
fn cpu_reference<T: PartialEq + std::fmt::Debug>(
    runs: usize,
    want: &T,
    what: &str,
    f: impl Fn() -> T,
) -> Option<(f64, usize)> {
    (runs > 0).then(|| {
        let times = (0..runs)
            .map(|_| {
                let c = Instant::now();
                let r = f();
                let dt = ms(c.elapsed());
                assert_eq!(&r, want, "{what}: results differ");
                dt
            })
            .collect();
        (median_ms(times), runs)
    })
}

fn single<T>(f: impl FnOnce() -> T) -> f64 {
    let c = Instant::now();
    std::hint::black_box(f());
    ms(c.elapsed())
}

/// NTT rows: checked against the CPU, then timed, for every block size of
/// `BATON_BENCH_NTT_BLOCKS` (log2 of the elements per `ntt_pass` block, default "10,9,8,7")
/// under every radix of `BATON_BENCH_NTT_RADIX` (default "2,4") and every column count of
/// `BATON_BENCH_NTT_COLS` (default: the configured one, "auto" unless set; numbers there are
/// added beside it); the first row of each size is the
/// configured `gpu.ntt_block`, `gpu.ntt_radix` and `gpu.ntt_columns`.
fn bench_ntt(gpu: &CudaBackend, t: &mut Table, reps: usize, configured: (u32, u32, u32)) {
    let mut blocks = vec![configured.0];
    for b in env_logs("BATON_BENCH_NTT_BLOCKS", &[10, 9, 8, 7]) {
        if !blocks.contains(&b) {
            blocks.push(b);
        }
    }
    let mut radixes = vec![configured.1];
    for r in env_logs("BATON_BENCH_NTT_RADIX", &[2, 4]) {
        if !radixes.contains(&r) {
            radixes.push(r);
        }
    }
    let mut columns = vec![configured.2];
    for c in env_logs("BATON_BENCH_NTT_COLS", &[]) {
        if !columns.contains(&c) {
            columns.push(c);
        }
    }
    let mut choices: Vec<(u32, u32, u32)> = Vec::new();
    for &c in &columns {
        for &r in &radixes {
            choices.extend(blocks.iter().map(|&b| (b, r, c)));
        }
    }
    for log in env_logs("BATON_BENCH_NTT", &[20, 21, 22, 23, 24, 25, 26, 27]) {
        let n = 1usize << log;
        let d = Domain::for_size(n).expect("domain");
        let v = dense_scalars(n, 3000 + log as u64);
        let runs = cpu_runs(log, reps).max(1);
        let mut c = v.clone();
        let first = single(|| d.ntt(&mut c).expect("CPU NTT"));
        let mut cpu_times = vec![first];
        for _ in 1..runs {
            let mut again = v.clone();
            cpu_times.push(single(|| d.ntt(&mut again).expect("CPU NTT")));
        }
        for &(block, radix, cols) in &choices {
            gpu.set_ntt_block(block).expect("NTT block");
            gpu.set_ntt_radix(radix).expect("NTT radix");
            gpu.set_ntt_columns(cols).expect("NTT columns");
            let cols_label = if cols == NTT_COLUMNS_AUTO {
                format!("auto ({})", ntt_auto_columns(log, block))
            } else {
                cols.to_string()
            };
            let mut g = v.clone();
            gpu.ntt(&mut g).expect("GPU NTT");
            assert!(
                g == c,
                "NTT 2^{log} block 2^{block} radix {radix} columns {cols_label}: GPU differs from the CPU"
            );
            let gt = gpu.ntt_timing(log, reps).expect("GPU NTT timing");
            let mark = if (block, radix, cols) == configured {
                " (configured)"
            } else {
                ""
            };
            let note = format!(
                "GPU: CUDA events, data resident; block 2^{block}, radix {radix}, \
                 columns {cols_label}{mark}"
            );
            t.row(
                "NTT",
                log,
                median_ms(gt),
                Some((median_ms(cpu_times.clone()), runs)),
                &note,
            );
        }
    }
    gpu.set_ntt_block(configured.0).expect("NTT block");
    gpu.set_ntt_radix(configured.1).expect("NTT radix");
    gpu.set_ntt_columns(configured.2).expect("NTT columns");
}

fn main() {
    // SAFETY: only probes whether libcuda can be opened.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        eprintln!("no CUDA driver: nothing to benchmark");
        return;
    }
    // The backend's debug lines (the memory policy, streamed MSMs) where BATON_LOG asks.
    bench_log::init_from_env();
    // The `[gpu]` knobs come from baton.toml / BATON_GPU_* as in the engine.
    let opts = match baton::Config::load() {
        Ok(c) => c.gpu,
        Err(e) => {
            eprintln!("configuration: {e}");
            return;
        }
    };
    // One backend per MSM variant (the first, the default, also runs every other row).
    let mut variants = msm::open_variants(&opts);
    if variants.is_empty() {
        eprintln!("no CUDA backend");
        return;
    }
    let reps = env_u32("BATON_BENCH_REPS", 5).max(1) as usize;
    let threads = rayon::current_num_threads();
    let mut t = Table { rows: Vec::new() };
    let clock = Instant::now();
    let msm_logs = env_logs("BATON_BENCH_MSM", &[20, 22, 24, 26]);
    let part_logs = env_logs("BATON_BENCH_PARTITION", &[24, 26]);
    // A partition's key tiles the bases, so 2^26 of them serve 2^27 (12 GiB less of the host's
    // memory, which the 2^27 partition's key needs).
    let most = msm_logs
        .iter()
        .copied()
        .chain(part_logs.iter().map(|&l| l.min(26)))
        .chain(
            env_logs("BATON_BENCH_CAPPED", &[])
                .iter()
                .map(|&l| l.min(26)),
        )
        .max()
        .unwrap_or(10);
    let bases = DistinctBases::new(1 << most, 42);
    eprintln!("bases 2^{most}: {:.1} s", clock.elapsed().as_secs_f64());
    msm::bench_msm(&mut variants, &bases, &mut t, reps);
    // Printed now, so that it is in the log even if a later row runs out of time.
    msm::print_variants(&variants, reps);
    let others = variants.split_off(1);
    drop(others.into_iter().map(|v| v.gpu).collect::<Vec<_>>());
    let gpu = &variants[0].gpu;
    bench_msm_g2(gpu, &mut t, reps);
    bench_ntt(
        gpu,
        &mut t,
        reps,
        (opts.ntt_block, opts.ntt_radix, opts.ntt_columns),
    );
    partition::bench_partition(gpu, &bases, &mut t, reps);
    sparse::bench_sparse(gpu, &mut t, reps);
    capped::bench_capped(&opts, &bases, reps);
    println!(
        "\n## baton GPU bench: {} ({}), CPU reference on {threads} threads, {reps} GPU runs after a warm-up, medians\n",
        gpu.device_name(),
        gpu.arch()
    );
    println!("Bases: n distinct points A[i mod 1024] + B[i/1024] (checked through A and B); CPU: median of up to 3 runs to 2^22, one run above, skipped above BATON_BENCH_CPU_MAX_LOG. Wall times include host↔device copies of scalars and results; bases stay resident.\n");
    println!("| what | size | GPU | CPU | CPU/GPU | notes |");
    println!("|---|---|---|---|---|---|");
    for r in &t.rows {
        println!("| {} |", r.join(" | "));
    }
    println!(
        "\nfallbacks to CPU: {}; total bench time {:.0} s",
        gpu.fallbacks(),
        clock.elapsed().as_secs_f64()
    );
}
