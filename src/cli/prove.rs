//! `baton prove` and `baton setup`: built-in circuits through the engine with a live progress
//! line, every proof verified, and their keys made once and cached.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use clap::ValueEnum;
use ff::Field;

use super::overrides::{config_with, Overrides};
use super::progress::{gib, progress_line, serve_status, show_progress};
use baton::circuits::{KnownCircuit, MimcChain, Synthetic};
use baton::{Check, Config, Engine, PreparedVerifyingKey, ProvingKey, Request};

#[derive(Clone, Copy, ValueEnum)]
pub enum CircuitKind {
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
pub fn at_least_one(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("expected a whole number ≥ 1, got {s:?}")),
    }
}

#[derive(clap::Args)]
pub struct CircuitArgs {
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
    /// `--status-port`.
    status_port: Option<u16>,
    /// The jobs' kind on the status page.
    kind: &'static str,
}

fn prove_all<C: KnownCircuit + Sync>(
    make: impl Fn(u64) -> C,
    key: Option<PathBuf>,
    o: ProveOpts,
) -> Result<bool, String> {
    let pk = Arc::new(load_or_make_key(&make(0), key).map_err(|e| e.to_string())?);
    let pvk = PreparedVerifyingKey::new(&pk.vk);
    let workers = o.cfg.synthesis_workers;
    let engine = Arc::new(Engine::start(o.cfg).map_err(|e| e.to_string())?);
    eprintln!("engine: backend {}", engine.backend_name());
    serve_status(o.status_port, &engine, workers, o.kind)?;
    let circuits: Vec<C> = (0..o.proofs).map(|i| make(i as u64 + 1)).collect();
    let per = o.proofs.div_ceil(o.requests.max(1)).max(1);
    let started = Instant::now();
    let results = std::thread::scope(|s| {
        let handles: Vec<_> = circuits
            .chunks(per)
            .map(|chunk| {
                let (engine, pk, chunk) = (&*engine, pk.clone(), chunk.to_vec());
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

/// `baton prove`: the circuits through the engine, every proof verified.
pub fn run(
    circuit: CircuitArgs,
    proofs: usize,
    requests: usize,
    status_port: Option<u16>,
    overrides: Overrides,
) -> Result<bool, String> {
    circuit.check()?;
    let cfg = config_with(overrides)?;
    let o = ProveOpts {
        proofs,
        requests,
        cfg,
        status_port,
        kind: match circuit.circuit {
            CircuitKind::Synthetic => "baton-synthetic",
            CircuitKind::Mimc => "baton-mimc",
        },
    };
    let c = circuit.constraints;
    match circuit.circuit {
        CircuitKind::Synthetic => prove_all(|s| Synthetic::new(c, s), circuit.key, o),
        CircuitKind::Mimc => prove_all(|s| MimcChain::with_constraints(c, s), circuit.key, o),
    }
}

/// `baton setup`: the key made (or found in the cache).
pub fn setup(circuit: CircuitArgs) -> Result<bool, String> {
    circuit.check()?;
    let c = circuit.constraints;
    let r = match circuit.circuit {
        CircuitKind::Synthetic => load_or_make_key(&Synthetic::new(c, 0), circuit.key).map(|_| ()),
        CircuitKind::Mimc => {
            load_or_make_key(&MimcChain::with_constraints(c, 0), circuit.key).map(|_| ())
        }
    };
    r.map(|_| true).map_err(|e| e.to_string())
}
