//! The `baton` command line: prove built-in circuits, make keys.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand, ValueEnum};

use baton::circuits::{KnownCircuit, MimcChain, Synthetic};
use baton::{Check, PreparedVerifyingKey, ProvingKey};

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
enum CircuitKind {
    /// PoRep-like synthetic R1CS (mostly 0/1 witness).
    Synthetic,
    /// MiMC-style hash chain (dense witness).
    Mimc,
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
    /// Prove built-in circuits, verify every proof, print stage timings.
    Prove {
        #[command(flatten)]
        circuit: CircuitArgs,
        /// Number of proofs (partitions), each with a different witness.
        #[arg(long, default_value_t = 4)]
        proofs: usize,
    },
    /// Make a random proving key for a built-in circuit.
    Setup {
        #[command(flatten)]
        circuit: CircuitArgs,
    },
}

enum AnyCircuit {
    Synthetic(Synthetic),
    Mimc(MimcChain),
}

fn circuit_for(args: &CircuitArgs, seed: u64) -> AnyCircuit {
    match args.circuit {
        CircuitKind::Synthetic => AnyCircuit::Synthetic(Synthetic::new(args.constraints, seed)),
        CircuitKind::Mimc => AnyCircuit::Mimc(MimcChain::with_constraints(args.constraints, seed)),
    }
}

fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("BATON_CACHE_DIR") {
        return d.into();
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("baton")
}

fn load_or_make_key<C: KnownCircuit>(
    circuit: &C,
    path: Option<PathBuf>,
) -> baton::Result<ProvingKey> {
    let path = path.unwrap_or_else(|| cache_dir().join(format!("{}.params", circuit.shape_name())));
    if path.exists() {
        let t = Instant::now();
        // Keys in the cache were written by this program; proofs are verified at the end anyway.
        let pk = ProvingKey::read_with(&path, Check::None)?;
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

fn prove_all<C: KnownCircuit>(
    make: impl Fn(u64) -> C,
    key: Option<PathBuf>,
    proofs: usize,
) -> baton::Result<bool> {
    let pk = load_or_make_key(&make(0), key)?;
    let pvk = PreparedVerifyingKey::new(&pk.vk);
    let mut rng = rand::rngs::OsRng;
    let start = Instant::now();
    let mut ok = true;
    println!(
        "{:>5} {:>10} {:>10} {:>10} {:>10} {:>10}  verified",
        "proof", "synth", "h", "g1 msm", "g2 msm", "total"
    );
    for i in 0..proofs {
        let circuit = make(i as u64 + 1);
        let inputs = circuit.public_inputs();
        let t = Instant::now();
        let (proof, st) = baton::prove_timed(&baton::CpuBackend, circuit, &pk, &mut rng)?;
        let total = t.elapsed();
        let verified = baton::verify(&pvk, &proof, &inputs).is_ok();
        ok &= verified;
        println!(
            "{:>5} {:>10.2?} {:>10.2?} {:>10.2?} {:>10.2?} {:>10.2?}  {}",
            i,
            st.synthesis,
            st.h,
            st.g1,
            st.g2,
            total,
            if verified { "yes" } else { "NO" }
        );
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{proofs} proofs in {secs:.2} s ({:.1} proofs/min), all verified: {ok}",
        proofs as f64 * 60.0 / secs
    );
    Ok(ok)
}

fn run(cli: Cli) -> baton::Result<bool> {
    match cli.command {
        Command::Prove { circuit, proofs } => {
            let c = circuit.constraints;
            match circuit_for(&circuit, 0) {
                AnyCircuit::Synthetic(_) => {
                    prove_all(|s| Synthetic::new(c, s), circuit.key, proofs)
                }
                AnyCircuit::Mimc(_) => {
                    prove_all(|s| MimcChain::with_constraints(c, s), circuit.key, proofs)
                }
            }
        }
        Command::Setup { circuit } => {
            match circuit_for(&circuit, 0) {
                AnyCircuit::Synthetic(c) => load_or_make_key(&c, circuit.key)?,
                AnyCircuit::Mimc(c) => load_or_make_key(&c, circuit.key)?,
            };
            Ok(true)
        }
    }
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("error: some proofs did not verify");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
