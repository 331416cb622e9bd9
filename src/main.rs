//! The `baton` command line: prove built-in circuits through the engine, make keys.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use clap::{Args, Parser, Subcommand, ValueEnum};
use ff::Field;

use baton::circuits::{KnownCircuit, MimcChain, Synthetic};
use baton::config::cuzk::CuzkConfig;
use baton::config::{parse_bytes, BackendChoice, ConfigError};
use baton::{Check, Config, Engine, PreparedVerifyingKey, ProvingKey, Request};

/// The live progress line.
#[path = "cli/progress.rs"]
mod progress;
/// `baton serve` and its `--cuzk-config`.
#[path = "cli/serve.rs"]
mod serve_cli;

use progress::{gib, progress_line, show_progress};

/// The Filecoin subcommands (porep-c2, winning-post, window-post, snap-prove, fil-params, fil-gen-c1).
#[cfg(feature = "filecoin")]
#[path = "cli/filecoin.rs"]
mod filecoin_cli;

#[derive(Parser)]
#[command(
    name = "baton",
    version,
    about = "Groth16 proving engine for BLS12-381"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum Bg2Device {
    /// The GPU unless the host has threads enough for the CPU G2 MSM (the default).
    Auto,
    /// blst on this machine's cores.
    Cpu,
    /// The GPU backends (the CPU when the backend is the CPU).
    Gpu,
}

/// Command-line overrides of the configuration.
#[derive(Args)]
struct Overrides {
    /// Override memory.budget ("auto", "8GiB", ...).
    #[arg(long)]
    budget: Option<String>,
    /// Override synthesis.workers.
    #[arg(long)]
    workers: Option<usize>,
    /// Override gpu.backend (auto, cpu, cuda).
    #[arg(long)]
    backend: Option<String>,
    /// Override gpu.devices: one GPU actor per index, e.g. "0,1", or "all".
    #[arg(long)]
    devices: Option<String>,
    /// Override bg2.device: where the B_G2 MSM runs.
    #[arg(long, value_enum)]
    bg2_device: Option<Bg2Device>,
}

#[derive(Clone, Copy, ValueEnum)]
enum CircuitKind {
    /// PoRep-like synthetic R1CS (mostly 0/1 witness).
    Synthetic,
    /// MiMC-style hash chain (dense witness).
    Mimc,
}

impl CircuitKind {
    fn min_constraints(self) -> usize {
        match self {
            CircuitKind::Synthetic => Synthetic::new(0, 0).min_constraints(),
            CircuitKind::Mimc => MimcChain::MIN_CONSTRAINTS,
        }
    }

    fn name(self) -> &'static str {
        match self {
            CircuitKind::Synthetic => "synthetic",
            CircuitKind::Mimc => "mimc",
        }
    }
}

impl CircuitArgs {
    /// Refuses a size the circuit cannot have, before any key is made.
    fn check(&self) -> Result<(), String> {
        let min = self.circuit.min_constraints();
        if self.constraints < min {
            return Err(format!(
                "--constraints {}: the {} circuit needs at least {min} constraints",
                self.constraints,
                self.circuit.name()
            ));
        }
        Ok(())
    }
}

/// A count that must be at least 1 (`--proofs`, `--requests`).
fn at_least_one(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("expected a whole number ≥ 1, got {s:?}")),
    }
}

#[derive(clap::Args)]
struct CircuitArgs {
    /// Which built-in circuit.
    #[arg(long, value_enum, default_value = "synthetic")]
    circuit: CircuitKind,
    /// Constraints per circuit (a power of two fills the domain).
    #[arg(long, default_value_t = 1 << 16)]
    constraints: usize,
    /// Proving key file (bellperson .params); made and cached when absent.
    #[arg(long)]
    key: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Command {
    /// Prove built-in circuits through the engine, verify every proof, print a summary.
    Prove {
        #[command(flatten)]
        circuit: CircuitArgs,
        /// Proofs (partitions) in total, each with a different witness.
        #[arg(long, default_value_t = 4, value_parser = at_least_one)]
        proofs: usize,
        /// Split the proofs into this many requests submitted together.
        #[arg(long, default_value_t = 1, value_parser = at_least_one)]
        requests: usize,
        #[command(flatten)]
        overrides: Overrides,
    },
    /// Make (or find in the cache) a random proving key for a built-in circuit.
    Setup {
        #[command(flatten)]
        circuit: CircuitArgs,
    },
    /// Run the proving daemon: gRPC cuzk.v1.ProvingEngine (proto/cuzk/v1/proving.proto).
    Serve(serve_cli::ServeArgs),
    #[cfg(feature = "filecoin")]
    #[command(flatten)]
    Filecoin(filecoin_cli::Command),
}

/// Where the CLI keeps the keys it makes: [`baton::cache_dir`], else the temp dir.
fn cache_dir() -> PathBuf {
    baton::cache_dir().unwrap_or_else(|| std::env::temp_dir().join("baton"))
}

fn load_or_make_key<C: KnownCircuit>(
    circuit: &C,
    path: Option<PathBuf>,
) -> baton::Result<ProvingKey> {
    // A key the user names is checked in full; cached keys were written by this program (and
    // every proof is verified at the end anyway).
    let check = if path.is_some() {
        Check::Full
    } else {
        Check::None
    };
    let path = path.unwrap_or_else(|| cache_dir().join(format!("{}.params", circuit.shape_name())));
    if path.exists() {
        let t = Instant::now();
        let pk = ProvingKey::read_with(&path, check)?;
        eprintln!("key: loaded {} in {:.2?}", path.display(), t.elapsed());
        return Ok(pk);
    }
    let t = Instant::now();
    eprintln!("key: none at {}, making a random one ...", path.display());
    let pk = baton::generate_random_parameters(circuit.clone(), &mut rand::rngs::OsRng)?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    pk.write_file(&path)?;
    eprintln!("key: made and saved in {:.2?}", t.elapsed());
    Ok(pk)
}

fn peak_rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
}

struct ProveOpts {
    proofs: usize,
    requests: usize,
    cfg: Config,
}

fn prove_all<C: KnownCircuit + Sync>(
    make: impl Fn(u64) -> C,
    key: Option<PathBuf>,
    o: ProveOpts,
) -> Result<bool, String> {
    let pk = Arc::new(load_or_make_key(&make(0), key).map_err(|e| e.to_string())?);
    let pvk = PreparedVerifyingKey::new(&pk.vk);
    let engine = Engine::start(o.cfg).map_err(|e| e.to_string())?;
    eprintln!("engine: backend {}", engine.backend_name());
    let circuits: Vec<C> = (0..o.proofs).map(|i| make(i as u64 + 1)).collect();
    let per = o.proofs.div_ceil(o.requests.max(1)).max(1);
    let started = Instant::now();
    let results = std::thread::scope(|s| {
        let handles: Vec<_> = circuits
            .chunks(per)
            .map(|chunk| {
                let (engine, pk, chunk) = (&engine, pk.clone(), chunk.to_vec());
                s.spawn(move || engine.prove_blocking(Request::new(pk, chunk)))
            })
            .collect();
        show_progress(
            || handles.iter().all(|h| h.is_finished()),
            || progress_line(&engine, o.proofs, started),
        );
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or(Err(baton::EngineError::Stopped)))
            .collect::<Vec<_>>()
    });
    let secs = started.elapsed().as_secs_f64();
    let mut verified = 0usize;
    let mut failures = Vec::new();
    for (chunk, r) in circuits.chunks(per).zip(results) {
        match r {
            Ok(proofs) => {
                for (p, c) in proofs.iter().zip(chunk) {
                    if checks_out(&pvk, p, &c.public_inputs()) {
                        verified += 1;
                    }
                }
            }
            Err(e) => failures.push(e.to_string()),
        }
    }
    let status = engine.status_blocking().map_err(|e| e.to_string())?;
    println!("stage means (s): {}", stage_means(&engine));
    println!(
        "proofs verified: {verified}/{}  |  {:.1} proofs/min  |  wall {secs:.2} s",
        o.proofs,
        verified as f64 * 60.0 / secs
    );
    println!(
        "peak RSS: {:.2} GiB  |  peak ledger: {:.3} GiB of {:.3} GiB budget",
        gib(peak_rss_bytes().unwrap_or(0)),
        gib(status.ledger.peak_charged_bytes),
        gib(status.ledger.budget_bytes)
    );
    engine.shutdown_blocking();
    if let Some(first) = failures.first() {
        // Say what happened: a refused or failed request is not a proof that did not verify.
        for f in &failures[1..] {
            eprintln!("request failed: {f}");
        }
        let requests = o.proofs.div_ceil(per);
        return Err(format!(
            "{} of {requests} request(s) failed: {first}",
            failures.len()
        ));
    }
    Ok(verified == o.proofs)
}

/// The proof verifies against its public inputs and not against a changed first input (so a
/// verifier that accepts anything would not count it).
fn checks_out(pvk: &PreparedVerifyingKey, proof: &baton::Proof, inputs: &[baton::Scalar]) -> bool {
    let mut wrong = inputs.to_vec();
    if let Some(first) = wrong.first_mut() {
        *first += baton::Scalar::ONE;
    }
    baton::verify(pvk, proof, inputs).is_ok()
        && (wrong.is_empty() || baton::verify(pvk, proof, &wrong).is_err())
}

fn stage_means(engine: &Engine) -> String {
    engine
        .stage_means()
        .iter()
        .map(|(s, v)| format!("{s} {v:.3}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The config key each override flag sets.
const FLAGS: [(&str, &str); 4] = [
    ("memory.budget", "--budget"),
    ("synthesis.workers", "--workers"),
    ("gpu.devices", "--devices"),
    ("gpu.backend", "--backend"),
];

fn config_with(o: Overrides) -> Result<Config, String> {
    overridden(Config::load().map_err(|e| e.to_string())?, o)
}

/// `cfg` with the override flags applied and checked.
fn overridden(mut cfg: Config, o: Overrides) -> Result<Config, String> {
    if let Some(b) = o.budget {
        cfg.budget_bytes = if b == "auto" {
            None
        } else {
            Some(
                parse_bytes(&b)
                    .ok_or_else(|| format!("--budget: expected \"auto\" or a size, got {b:?}"))?,
            )
        };
    }
    if let Some(w) = o.workers {
        cfg.synthesis_workers = w;
    }
    if let Some(d) = o.devices {
        cfg.gpu_devices =
            baton::config::parse_devices(&d).map_err(|e| format!("--devices: {e}"))?;
    }
    if let Some(d) = o.bg2_device {
        cfg.bg2_device = match d {
            Bg2Device::Auto => baton::config::Bg2Device::Auto,
            Bg2Device::Cpu => baton::config::Bg2Device::Cpu,
            Bg2Device::Gpu => baton::config::Bg2Device::Gpu,
        };
    }
    if let Some(b) = o.backend {
        cfg.backend = match b.as_str() {
            "auto" => BackendChoice::Auto,
            "cpu" => BackendChoice::Cpu,
            "cuda" => BackendChoice::Cuda,
            _ => return Err(format!("--backend: expected auto, cpu or cuda, got {b:?}")),
        };
    }
    // The overrides obey the rules the config file does, named by their flag.
    cfg.validate().map_err(|e| match &e {
        ConfigError::Invalid { key, .. } => match FLAGS.iter().find(|(k, _)| k == key) {
            Some((_, flag)) => format!("{flag}: {e}"),
            None => e.to_string(),
        },
        _ => e.to_string(),
    })?;
    Ok(cfg)
}

fn run(cli: Cli, cuzk: Option<CuzkConfig>) -> Result<bool, String> {
    match cli.command {
        Command::Prove {
            circuit,
            proofs,
            requests,
            overrides,
        } => {
            circuit.check()?;
            let cfg = config_with(overrides)?;
            let o = ProveOpts {
                proofs,
                requests,
                cfg,
            };
            let c = circuit.constraints;
            match circuit.circuit {
                CircuitKind::Synthetic => prove_all(|s| Synthetic::new(c, s), circuit.key, o),
                CircuitKind::Mimc => {
                    prove_all(|s| MimcChain::with_constraints(c, s), circuit.key, o)
                }
            }
        }
        Command::Serve(args) => serve_cli::run(args, cuzk),
        Command::Setup { circuit } => {
            circuit.check()?;
            let c = circuit.constraints;
            let r = match circuit.circuit {
                CircuitKind::Synthetic => {
                    load_or_make_key(&Synthetic::new(c, 0), circuit.key).map(|_| ())
                }
                CircuitKind::Mimc => {
                    load_or_make_key(&MimcChain::with_constraints(c, 0), circuit.key).map(|_| ())
                }
            };
            r.map(|_| true).map_err(|e| e.to_string())
        }
        #[cfg(feature = "filecoin")]
        Command::Filecoin(c) => filecoin_cli::run(c),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Before the log filter (its logging.level is one) and any other thread (its variables).
    let cuzk = match &cli.command {
        Command::Serve(args) => match args.read_cuzk() {
            Ok(c) => c,
            Err(e) => return fail(&e),
        },
        _ => None,
    };
    let filter = std::env::var("BATON_LOG")
        .ok()
        .or_else(|| cuzk.as_ref()?.log_level().map(str::to_string))
        .unwrap_or_else(|| "warn".into());
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    match run(cli, cuzk) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => fail("some proofs did not verify"),
        Err(e) => fail(&e),
    }
}

fn fail(e: &str) -> ExitCode {
    eprintln!("error: {e}");
    ExitCode::FAILURE
}
