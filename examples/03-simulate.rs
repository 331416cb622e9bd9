//! The field's failure, reproduced and solved: the real supervisor, ledger and actors run with
//! fake stages that sleep the field's stage times and allocate the field's buffers, both scaled
//! down by stated factors. Buffers are real `Vec<Scalar>`s, written in full step by step through
//! the synthesis time, so RSS is real; they move through the engine and are dropped by its Dealloc
//! actor as in production. Proofs are not computed (the fake B_G2 returns generator points) and so
//! are not verified.
//!
//! Memory is scaled ÷ 2048 by default: on a 2-core machine, faulting in ÷ 1024 of the field's
//! bytes at ÷ 250 of its time keeps a core busy in the kernel and delays the engine's threads
//! (see the `idle ho` column); `--mem-scale 1024` shows it.
//!
//! Each (scenario, policy) runs in a child process (this binary again, `--one`), so its peak RSS
//! (VmHWM) is its own. The child runs with `MALLOC_MMAP_THRESHOLD_` set so every scaled buffer
//! is its own mapping and goes back to the OS when dropped, as multi-GiB buffers do in the field.
//!
//! `cargo run --release --example 03-simulate` (about 2 minutes; `-- --help` for every knob)

use std::collections::HashMap;
use std::process::Command;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use baton::config::{parse_bytes, BackendChoice};
use baton::groth16::cs::Density;
use baton::groth16::prover::{Abc, G1Sums, Witness};
use baton::ledger::{Footprint, Policy};
use baton::stages::pipeline::{Bg2Stage, GpuStage, PartitionCircuit, Stages, Synthesizer};
use baton::{Config, Engine, Proof, ProvingKey, Request, Scalar};
use blstrs::{G1Affine, G1Projective, G2Affine};
use clap::Parser;
use ff::Field;
use group::prime::PrimeCurveAffine;
use group::Group;
use rand::{Rng, SeedableRng};

const GIB: f64 = (1u64 << 30) as f64;
const MIB: f64 = (1u64 << 20) as f64;
/// Steps in which the fake synthesis fills its buffers.
const FILL_STEPS: usize = 16;
/// Never let one run hold more than this on the machine running the simulation.
const HARD_CAP_BYTES: u64 = 6 << 30;

/// Field times and sizes, scaled down; two scenarios as the field reported them.
#[derive(Parser, Clone, Debug)]
#[command(about = "Simulates the field's pile-up under each ledger policy")]
struct Args {
    /// Wall time = field time ÷ this.
    #[arg(long, default_value_t = 250.0)]
    time_scale: f64,
    /// Allocated bytes = field bytes ÷ this.
    #[arg(long, default_value_t = 2048.0)]
    mem_scale: f64,
    /// Field minutes simulated per run.
    #[arg(long, default_value_t = 60.0)]
    minutes: f64,
    /// Field minutes left out of the throughput window at the start.
    #[arg(long, default_value_t = 10.0)]
    warmup_minutes: f64,
    /// Requests the orchestrator keeps submitted at once.
    #[arg(long, default_value_t = 12)]
    backlog: usize,
    /// Partitions per proof (circuits per request).
    #[arg(long, default_value_t = 10)]
    partitions: usize,
    /// Synthesis time varies uniformly by ± this fraction (GPU and B_G2 times are fixed).
    #[arg(long, default_value_t = 0.1)]
    jitter: f64,
    /// Share of the GPU time spent on H; a/b/c are freed after it.
    #[arg(long, default_value_t = 0.3)]
    h_share: f64,
    /// The field host's RAM.
    #[arg(long, default_value = "755GiB")]
    host_ram: String,
    /// Field memory outside partition buffers (SRS, OS), not simulated: the buffers run out of
    /// memory at host_ram − resident.
    #[arg(long, default_value = "80GiB")]
    resident: String,
    /// Ledger budget (field bytes).
    #[arg(long, default_value = "640GiB")]
    budget: String,
    /// Slots for the `ledger` policy (default: Config::effective_slots, workers + 2 per GPU).
    #[arg(long)]
    slots: Option<usize>,
    /// Scenarios to run: 1 (as first reported), 2 (as measured on the 96-core host), 3 and 4
    /// (scenario 2 with compiled synthesis, a/b/c on the GPU or on the CPU).
    #[arg(long, value_delimiter = ',', default_value = "1,2")]
    scenarios: Vec<u32>,
    /// Policies to run.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "ledger,hold_until_delivered,release_on_synthesized"
    )]
    policies: Vec<Policy>,
    /// Scenario 1: synthesis workers.
    #[arg(long, default_value_t = 12)]
    s1_workers: usize,
    /// Scenario 1: seconds of synthesis per partition.
    #[arg(long, default_value_t = 5.0)]
    s1_synth_secs: f64,
    /// Scenario 1: GPU seconds per partition.
    #[arg(long, default_value_t = 3.5)]
    s1_gpu_secs: f64,
    /// Scenario 1: B_G2 seconds per partition.
    #[arg(long, default_value_t = 1.7)]
    s1_bg2_secs: f64,
    /// Scenario 1: a/b/c bytes per partition.
    #[arg(long, default_value = "12GiB")]
    s1_abc: String,
    /// Scenario 1: aux bytes per partition.
    #[arg(long, default_value = "4GiB")]
    s1_aux: String,
    /// Scenario 2: synthesis workers, one run per value.
    #[arg(long, value_delimiter = ',', default_value = "10,16")]
    s2_workers: Vec<usize>,
    /// Scenario 2: seconds of synthesis per partition.
    #[arg(long, default_value_t = 40.0)]
    s2_synth_secs: f64,
    /// Scenario 2: GPU seconds per partition.
    #[arg(long, default_value_t = 3.7)]
    s2_gpu_secs: f64,
    /// Scenario 2: B_G2 seconds per partition (not measured; scenario 1's).
    #[arg(long, default_value_t = 1.7)]
    s2_bg2_secs: f64,
    /// Scenario 2: bytes per partition, split a/b/c : aux as in scenario 1 (3 : 1).
    #[arg(long, default_value = "13.6GiB")]
    s2_partition: String,
    /// Scenarios 3 and 4 (scenario 2 with compiled synthesis): the measured synthesis speed-up when
    /// a/b/c are evaluated on the device, so the host runs the witness code only (full synthesis ÷
    /// witness-only synthesis on the real 2 KiB PoRep circuit: docs/bench-log/2026-12-01.md, "The
    /// real 2 KiB PoRep circuit through the compiled path").
    #[arg(long, default_value_t = 2.4)]
    compiled_gpu_speedup: f64,
    /// Scenario 3: GPU seconds added per partition for a/b/c on the device (not measured yet).
    #[arg(long, default_value_t = 0.0)]
    compiled_gpu_extra_secs: f64,
    /// Scenario 4: the measured speed-up of compiled synthesis with a/b/c on the CPU (the
    /// evaluation beside the witness, 2 KiB PoRep on 2 cores).
    #[arg(long, default_value_t = 2.1)]
    compiled_cpu_speedup: f64,
    /// Internal: run one scenario index and policy in this process and print its numbers.
    #[arg(long, hide = true)]
    one: Option<String>,
}

/// One scenario in field units.
#[derive(Clone, Debug)]
struct Scenario {
    label: String,
    workers: usize,
    synth_secs: f64,
    gpu_secs: f64,
    bg2_secs: f64,
    abc_bytes: f64,
    aux_bytes: f64,
}

/// A size from the command line (checked in `main` before use).
fn bytes(s: &str) -> f64 {
    parse_bytes(s).unwrap_or_default() as f64
}

fn scenarios(a: &Args) -> Result<Vec<Scenario>, String> {
    let mut out = Vec::new();
    for s in &a.scenarios {
        match s {
            1 => out.push(Scenario {
                label: "1 first report".into(),
                workers: a.s1_workers,
                synth_secs: a.s1_synth_secs,
                gpu_secs: a.s1_gpu_secs,
                bg2_secs: a.s1_bg2_secs,
                abc_bytes: bytes(&a.s1_abc),
                aux_bytes: bytes(&a.s1_aux),
            }),
            2 => out.extend(a.s2_workers.iter().map(|&w| Scenario {
                label: format!("2 96-core, {w} w"),
                workers: w,
                synth_secs: a.s2_synth_secs,
                gpu_secs: a.s2_gpu_secs,
                bg2_secs: a.s2_bg2_secs,
                abc_bytes: bytes(&a.s2_partition) * 0.75,
                aux_bytes: bytes(&a.s2_partition) * 0.25,
            })),
            3 => out.extend(a.s2_workers.iter().map(|&w| Scenario {
                label: format!("3 = 2 compiled, a/b/c on GPU, {w} w"),
                workers: w,
                synth_secs: a.s2_synth_secs / a.compiled_gpu_speedup,
                gpu_secs: a.s2_gpu_secs + a.compiled_gpu_extra_secs,
                bg2_secs: a.s2_bg2_secs,
                // The host holds the witness only; a/b/c live on the device.
                abc_bytes: 0.0,
                aux_bytes: bytes(&a.s2_partition) * 0.25,
            })),
            4 => out.extend(a.s2_workers.iter().map(|&w| Scenario {
                label: format!("4 = 2 compiled, a/b/c on CPU, {w} w"),
                workers: w,
                synth_secs: a.s2_synth_secs / a.compiled_cpu_speedup,
                gpu_secs: a.s2_gpu_secs,
                bg2_secs: a.s2_bg2_secs,
                abc_bytes: bytes(&a.s2_partition) * 0.75,
                aux_bytes: bytes(&a.s2_partition) * 0.25,
            })),
            other => return Err(format!("no scenario {other}; there are 1 to 4")),
        }
    }
    Ok(out)
}

/// Counters the fakes keep (wall time).
#[derive(Default)]
struct Sim {
    gpu_busy_ns: AtomicU64,
    gpu_parts: AtomicU64,
    parts_done: AtomicU64,
    synth_late_ns: AtomicU64,
    alive: AtomicI64,
    alive_peak: AtomicI64,
    /// GPU idle time while the next partition was already synthesized (hand-off latency).
    gap_waiting_ns: AtomicU64,
    /// GPU idle time while the next partition was still synthesizing (starved).
    gap_starved_ns: AtomicU64,
}

/// Nanoseconds since the first call, for stamps that travel inside a buffer.
fn now_ns() -> u64 {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// Scaled stage times (wall seconds) and buffer lengths (scalars, density variables).
#[derive(Clone, Copy)]
struct Shape {
    synth_secs: f64,
    jitter: f64,
    gpu_secs: f64,
    h_share: f64,
    bg2_secs: f64,
    abc_len: usize,
    aux_len: usize,
    inputs_len: usize,
}

impl Shape {
    /// The ledger footprint: exactly the bytes the fake synthesis allocates.
    fn footprint(&self) -> Footprint {
        let density = |vars: usize| vars.div_ceil(64) as u64 * 8;
        Footprint::new(
            3 * self.abc_len as u64 * 32,
            self.aux_len as u64 * 32,
            self.inputs_len as u64 * 32,
            2 * density(self.aux_len) + density(self.inputs_len),
        )
    }
}

fn sleep_until(deadline: Instant) {
    std::thread::sleep(deadline.saturating_duration_since(Instant::now()));
}

fn density(vars: usize) -> Density {
    let mut d = Density::default();
    (0..vars).for_each(|_| d.push());
    d
}

/// Allocates and writes the partition's buffers step by step through the synthesis time.
struct FakeSynthesis {
    sim: Arc<Sim>,
    shape: Shape,
    rng: rand_chacha::ChaCha8Rng,
}

impl Synthesizer for FakeSynthesis {
    fn synthesize(
        &mut self,
        _: &dyn PartitionCircuit,
        _: &ProvingKey,
    ) -> baton::Result<(Abc, Witness)> {
        let s = self.shape;
        let start = Instant::now();
        let spread = if s.jitter > 0.0 {
            self.rng.gen_range(-s.jitter..=s.jitter)
        } else {
            0.0
        };
        let total = Duration::from_secs_f64(s.synth_secs * (1.0 + spread));
        // The buffers grow through the synthesis time, as a real synthesis fills them, so that
        // page faults are spread out rather than a burst at each grant.
        let mut abc = Abc {
            a: Vec::with_capacity(s.abc_len),
            b: Vec::with_capacity(s.abc_len),
            c: Vec::with_capacity(s.abc_len),
        };
        let mut witness = Witness {
            inputs: vec![Scalar::ONE; s.inputs_len],
            aux: Vec::with_capacity(s.aux_len),
            packed: None,
            a_aux_density: density(s.aux_len),
            b_input_density: density(s.inputs_len),
            b_aux_density: density(s.aux_len),
        };
        for step in 1..=FILL_STEPS {
            for (v, len) in [
                (&mut abc.a, s.abc_len),
                (&mut abc.b, s.abc_len),
                (&mut abc.c, s.abc_len),
                (&mut witness.aux, s.aux_len),
            ] {
                v.resize(len * step / FILL_STEPS, Scalar::ZERO);
            }
            let due = start + total * step as u32 / FILL_STEPS as u32;
            let late = Instant::now().saturating_duration_since(due);
            if step == FILL_STEPS {
                self.sim
                    .synth_late_ns
                    .fetch_add(late.as_nanos() as u64, Relaxed);
            }
            sleep_until(due);
        }
        let alive = self.sim.alive.fetch_add(1, Relaxed) + 1;
        self.sim.alive_peak.fetch_max(alive, Relaxed);
        // When this partition became ready, read by the fake GPU (b survives compute_h).
        abc.b[0] = Scalar::from(now_ns());
        Ok((abc, witness))
    }
}

/// Sleeps the GPU time: H's share in `compute_h` (returning a's buffer as H, as the real stage
/// does), the rest in `g1_msms` (returning identities).
struct FakeGpu {
    sim: Arc<Sim>,
    shape: Shape,
    started: Option<Instant>,
    /// When the last partition ended.
    last_end_ns: Option<u64>,
}

impl GpuStage for FakeGpu {
    fn name(&self) -> String {
        "fake-gpu".into()
    }

    fn compute_h(&mut self, _: &ProvingKey, abc: &mut Abc) -> baton::Result<Vec<Scalar>> {
        let (start, start_ns) = (Instant::now(), now_ns());
        self.started = Some(start);
        let stamp = abc.b.first().map_or([0; 32], |b| b.to_bytes_le());
        let ready_ns = u64::from_le_bytes(stamp[..8].try_into().unwrap_or([0; 8]));
        if let Some(end_ns) = self.last_end_ns.take() {
            let sim = &self.sim;
            sim.gap_starved_ns
                .fetch_add(ready_ns.saturating_sub(end_ns), Relaxed);
            let waiting = start_ns.saturating_sub(ready_ns.max(end_ns));
            sim.gap_waiting_ns.fetch_add(waiting, Relaxed);
        }
        self.sim.alive.fetch_sub(1, Relaxed);
        sleep_until(start + Duration::from_secs_f64(self.shape.gpu_secs * self.shape.h_share));
        Ok(std::mem::take(&mut abc.a))
    }

    fn g1_msms(&mut self, _: &ProvingKey, _: &Witness, _: &[Scalar]) -> baton::Result<G1Sums> {
        let start = self.started.take().unwrap_or_else(Instant::now);
        sleep_until(start + Duration::from_secs_f64(self.shape.gpu_secs));
        self.sim
            .gpu_busy_ns
            .fetch_add(start.elapsed().as_nanos() as u64, Relaxed);
        self.sim.gpu_parts.fetch_add(1, Relaxed);
        self.last_end_ns = Some(now_ns());
        let zero = G1Projective::identity();
        Ok(G1Sums {
            h: zero,
            l: zero,
            a: zero,
            b_g1: zero,
        })
    }
}

/// Sleeps the B_G2 time and returns a dummy proof of generator points.
struct FakeBg2 {
    sim: Arc<Sim>,
    shape: Shape,
}

impl Bg2Stage for FakeBg2 {
    fn finish(&mut self, _: &ProvingKey, _: &Witness, _: &G1Sums) -> baton::Result<Proof> {
        std::thread::sleep(Duration::from_secs_f64(self.shape.bg2_secs));
        self.sim.parts_done.fetch_add(1, Relaxed);
        Ok(Proof {
            a: G1Affine::generator(),
            b: G2Affine::generator(),
            c: G1Affine::generator(),
        })
    }
}

/// A partition whose circuit the fake synthesis never looks at.
#[derive(Clone, Copy)]
struct Unsynthesized;

impl PartitionCircuit for Unsynthesized {
    fn synthesize(&self, _: &ProvingKey) -> baton::Result<(Abc, Witness)> {
        Err(baton::Error::Backend {
            backend: "simulation",
            reason: "circuits are not synthesized".into(),
        })
    }
}

/// A field of /proc/self/status in bytes.
fn proc_status_bytes(key: &str) -> u64 {
    let text = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    text.lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |kib| kib * 1024)
}

/// Runs one scenario under one policy in this process and prints `RESULT key=value ...`.
fn run_one(a: &Args, sc: &Scenario, policy: Policy) -> Result<(), Box<dyn std::error::Error>> {
    let (ts, ms) = (a.time_scale, a.mem_scale);
    let shape = Shape {
        synth_secs: sc.synth_secs / ts,
        jitter: a.jitter,
        gpu_secs: sc.gpu_secs / ts,
        h_share: a.h_share,
        bg2_secs: sc.bg2_secs / ts,
        abc_len: ((sc.abc_bytes / ms / 96.0) as usize).max(1),
        aux_len: ((sc.aux_bytes / ms / 32.0) as usize).max(1),
        inputs_len: 4,
    };
    let footprint = shape.footprint();
    let pk = Arc::new(baton::generate_random_parameters(
        baton::circuits::Synthetic::new(1 << 6, 0),
        &mut rand::rngs::OsRng,
    )?);
    let cfg = Config {
        budget_bytes: Some((bytes(&a.budget) / ms) as u64),
        policy,
        slots: if policy == Policy::Ledger {
            a.slots
        } else {
            None
        },
        synthesis_workers: sc.workers,
        gpu_devices: vec![0],
        backend: BackendChoice::Cpu,
        bg2_workers: 1,
        metrics_listen: None,
        ..Config::default()
    };
    let slots = cfg.effective_slots();
    let sim = Arc::new(Sim::default());
    let (s1, s2, s3) = (sim.clone(), sim.clone(), sim.clone());
    let stages = Stages {
        recordings: Default::default(),
        abc_on_device: false,
        pack_witness: false,
        synthesis: Arc::new(move |i| {
            let rng = rand_chacha::ChaCha8Rng::seed_from_u64(i as u64);
            Box::new(FakeSynthesis {
                sim: s1.clone(),
                shape,
                rng,
            })
        }),
        gpu: Arc::new(move |_| {
            Box::new(FakeGpu {
                sim: s2.clone(),
                shape,
                started: None,
                last_end_ns: None,
            })
        }),
        bg2: Arc::new(move |_| {
            Box::new(FakeBg2 {
                sim: s3.clone(),
                shape,
            })
        }),
    };
    let engine = Engine::start_with(cfg, stages)?;
    let baseline = proc_status_bytes("VmRSS:");
    let oom_bytes = ((bytes(&a.host_ram) - bytes(&a.resident)) / ms) as u64;
    let (warmup, end) = (
        Duration::from_secs_f64(a.warmup_minutes * 60.0 / ts),
        Duration::from_secs_f64(a.minutes * 60.0 / ts),
    );
    let t0 = Instant::now();
    let proofs = AtomicU64::new(0);
    let error = Mutex::new(String::from("-"));
    std::thread::scope(|s| -> Result<(), Box<dyn std::error::Error>> {
        for _ in 0..a.backlog {
            s.spawn(|| {
                while t0.elapsed() < end {
                    let req = Request::new(pk.clone(), vec![Unsynthesized; a.partitions])
                        .with_footprint(footprint);
                    match engine.prove_blocking(req) {
                        Ok(_) => {
                            proofs.fetch_add(1, Relaxed);
                        }
                        Err(e) => {
                            *error.lock().unwrap_or_else(|p| p.into_inner()) =
                                e.to_string().replace(' ', "_");
                            break;
                        }
                    }
                }
            });
        }
        let snap = |t: Duration| {
            [
                t.as_secs_f64(),
                sim.gpu_busy_ns.load(Relaxed) as f64 / 1e9,
                sim.gpu_parts.load(Relaxed) as f64,
                sim.parts_done.load(Relaxed) as f64,
                sim.gap_waiting_ns.load(Relaxed) as f64 / 1e9,
                sim.gap_starved_ns.load(Relaxed) as f64 / 1e9,
            ]
        };
        let mut from = snap(Duration::ZERO);
        let mut oom = None;
        loop {
            std::thread::sleep(Duration::from_millis(2));
            let now = t0.elapsed();
            let rss = proc_status_bytes("VmRSS:");
            if rss.saturating_sub(baseline) > oom_bytes || rss > HARD_CAP_BYTES {
                oom = Some(now);
                break;
            }
            if from[0] == 0.0 && now >= warmup {
                from = snap(now);
            }
            if now >= end {
                break;
            }
        }
        let to = snap(t0.elapsed());
        let st = engine.status_blocking();
        let (ledger_peak, alive_peak) = st.as_ref().map_or((0, 0), |st| {
            (st.ledger.peak_charged_bytes, st.synthesized_alive_peak)
        });
        let (secs, busy, gparts, done) = (
            to[0] - from[0],
            to[1] - from[1],
            to[2] - from[2],
            to[3] - from[3],
        );
        let late = sim.synth_late_ns.load(Relaxed) as f64 / 1e9;
        let synths = (sim.gpu_parts.load(Relaxed) as i64 + sim.alive.load(Relaxed)).max(1) as f64;
        println!(
            "RESULT slots={slots} pph={} gpu_busy={} gpu_s_per_part={} ledger_peak={} budget={} \
             hwm={} baseline={} alive_engine={alive_peak} alive_fakes={} proofs={} oom_at={} \
             oom_rss={} late_frac={} window={} err={} idle_handoff={} idle_starved={}",
            done / a.partitions as f64 / (secs * ts) * 3600.0,
            busy / secs,
            if gparts > 0.0 {
                busy / gparts * ts
            } else {
                0.0
            },
            ledger_peak as f64 * ms,
            bytes(&a.budget),
            proc_status_bytes("VmHWM:"),
            baseline,
            sim.alive_peak.load(Relaxed),
            proofs.load(Relaxed),
            oom.map_or("-".into(), |t| format!("{}", t.as_secs_f64() * ts)),
            proc_status_bytes("VmRSS:").saturating_sub(baseline) as f64 * ms,
            late / synths / shape.synth_secs,
            if oom.is_some() && from[0] == 0.0 {
                "to_oom"
            } else {
                "steady"
            },
            error.lock().unwrap_or_else(|p| p.into_inner()),
            (to[4] - from[4]) / secs,
            (to[5] - from[5]) / secs,
        );
        // The clients are still blocked in prove_blocking; the numbers are out, so stop here.
        use std::io::Write;
        let _ = std::io::stdout().flush();
        std::process::exit(0)
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    for s in [
        &args.host_ram,
        &args.resident,
        &args.budget,
        &args.s1_abc,
        &args.s1_aux,
        &args.s2_partition,
    ] {
        if parse_bytes(s).is_none() {
            return Err(format!("not a size: {s:?} (try 640GiB)").into());
        }
    }
    let list = scenarios(&args)?;
    if let Some(one) = &args.one {
        let (i, p) = one.split_once(':').ok_or("--one takes INDEX:POLICY")?;
        let sc = list
            .get(i.parse::<usize>()?)
            .ok_or("no such scenario index")?;
        return run_one(&args, sc, p.parse()?);
    }
    let limit = (bytes(&args.host_ram) - bytes(&args.resident)) / args.mem_scale;
    if limit > HARD_CAP_BYTES as f64 {
        return Err(format!(
            "host_ram − resident ÷ mem_scale = {:.1} GiB here; keep it under 6 GiB",
            limit / GIB
        )
        .into());
    }
    println!(
        "Scales: time ÷ {} (field seconds → wall), memory ÷ {} (field bytes → allocated). \
         {} field minutes per run, first {} left out; {} requests of {} partitions kept in flight.",
        args.time_scale,
        args.mem_scale,
        args.minutes,
        args.warmup_minutes,
        args.backlog,
        args.partitions
    );
    println!(
        "Host {} GiB, of which {} GiB resident outside the buffers: out of memory when buffers' RSS \
         passes {:.0} GiB. Ledger budget {:.0} GiB. Synthesis time ±{:.0} %, H = {:.0} % of GPU time.",
        bytes(&args.host_ram) / GIB, bytes(&args.resident) / GIB, limit * args.mem_scale / GIB,
        bytes(&args.budget) / GIB, args.jitter * 100.0, args.h_share * 100.0
    );
    println!("Stages are fakes (sleep + allocate); proofs are dummies and are not verified.\n");
    let exe = std::env::current_exe()?;
    let mut rows = Vec::new();
    for (i, sc) in list.iter().enumerate() {
        for p in &args.policies {
            eprintln!("running scenario {} under {p} ...", sc.label);
            let out = Command::new(&exe)
                .args(std::env::args_os().skip(1))
                .arg("--one")
                .arg(format!("{i}:{p}"))
                .env("MALLOC_MMAP_THRESHOLD_", "65536")
                .output()?;
            let text = String::from_utf8_lossy(&out.stdout);
            let line = text.lines().find_map(|l| l.strip_prefix("RESULT "));
            let Some(line) = line else {
                eprintln!(
                    "child failed: {}\n{}",
                    out.status,
                    String::from_utf8_lossy(&out.stderr)
                );
                continue;
            };
            let kv: HashMap<String, String> = line
                .split_whitespace()
                .filter_map(|f| f.split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            rows.push((sc.clone(), *p, kv));
        }
    }
    let f = |kv: &HashMap<String, String>, k: &str| {
        kv.get(k).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0)
    };
    for sc in &list {
        let per_proof = args.partitions as f64;
        println!(
            "Scenario {}: {} workers × {} s synthesis, GPU {} s, B_G2 {} s, {:.1} + {:.1} GiB per partition \
             → bounds: GPU {:.1} proofs/h, synthesis {:.1} proofs/h",
            sc.label, sc.workers, sc.synth_secs, sc.gpu_secs, sc.bg2_secs, sc.abc_bytes / GIB, sc.aux_bytes / GIB,
            3600.0 / (sc.gpu_secs * per_proof), 3600.0 * sc.workers as f64 / (sc.synth_secs * per_proof),
        );
    }
    println!(
        "\n{:<18} {:<22} {:>5} {:>8} {:>6} {:>11} {:>7} {:>13} {:>9} {:>10} {:>6}  note",
        "scenario",
        "policy",
        "slots",
        "proofs/h",
        "GPU",
        "idle ho/st",
        "GPU s/p",
        "ledger peak",
        "RSS MiB",
        "RSS field",
        "alive",
    );
    for (sc, p, kv) in &rows {
        let oom = kv.get("oom_at").filter(|v| *v != "-");
        let mut note = match oom {
            Some(t) => format!(
                "OOM at {:.0} GiB after {:.0} field s",
                f(kv, "oom_rss") / GIB,
                t.parse::<f64>().unwrap_or(0.0)
            ),
            None => format!("{} proofs answered", f(kv, "proofs")),
        };
        if kv.get("window").is_some_and(|w| w == "to_oom") {
            note.push_str(" (rates until OOM)");
        }
        if f(kv, "late_frac") > 0.01 {
            note.push_str(&format!(
                "; synthesis {:.0} % late (CPU)",
                f(kv, "late_frac") * 100.0
            ));
        }
        if kv.get("err").is_some_and(|e| e != "-") {
            note.push_str(&format!("; error {}", kv["err"]));
        }
        let rss_field = (f(kv, "hwm") - f(kv, "baseline")) * args.mem_scale;
        println!(
            "{:<18} {:<22} {:>5} {:>8.1} {:>5.1}% {:>4.1}%/{:>4.1}% {:>7.2} {:>5.0}/{:<3.0}GiB {:>9.0} {:>6.0}GiB {:>3}/{:<2}  {}",
            sc.label, p.as_str(), kv.get("slots").map_or("?", |s| s.as_str()), f(kv, "pph"),
            f(kv, "gpu_busy") * 100.0, f(kv, "idle_handoff") * 100.0, f(kv, "idle_starved") * 100.0,
            f(kv, "gpu_s_per_part"), f(kv, "ledger_peak") / GIB,
            f(kv, "budget") / GIB, f(kv, "hwm") / MIB, rss_field / GIB,
            kv.get("alive_engine").map_or("?", |s| s.as_str()),
            kv.get("alive_fakes").map_or("?", |s| s.as_str()), note
        );
    }
    println!(
        "\nproofs/h and GPU busy are measured in the steady window, in field time; GPU s/p is the \
         fakes' measured GPU time per partition (field s). idle ho/st: GPU idle between partitions \
         while another partition was already synthesized (hand-off latency) / while none was \
         (starved). RSS MiB is the run's VmHWM as measured; \
         RSS field is (VmHWM − RSS at engine start) × {}. alive = most synthesized partitions waiting \
         for the GPU at once (engine status / fakes' own count).",
        args.mem_scale
    );
    Ok(())
}
