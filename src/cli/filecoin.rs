//! The Filecoin subcommands (feature `filecoin`): `porep-c2`, `winning-post`, `window-post`,
//! `snap-prove` prove through the engine and write the output only once filecoin-proofs'
//! verifier accepted it (exit 0 exactly then); `fil-params` makes test parameters offline
//! (or, `--shape-only`, a shape key in memory: `fil_shape.rs`);
//! `fil-gen-c1` makes a C1 output of any sector size without sealing one.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Args, Subcommand, ValueEnum};

use baton::engine::status::PartitionState;
use baton::filecoin::{
    generate_c1, parse_c1, parse_sector_size, post_proof_for, prover_id_from_miner, CircuitId,
    CircuitKind, Filecoin, GenC1, Job, ParamCache, RegisteredPoStProof, RegisteredUpdateProof,
};
use baton::ledger::Stage;
use baton::Engine;

use super::overrides::{config_with, Overrides};
use super::progress::{serve_status, show_progress};

/// Where the output goes and the engine's overrides.
#[derive(Args)]
pub struct Output {
    /// Output file: the proof bytes filecoin-proofs returns (192 per partition), written only
    /// once they verify.
    #[arg(long)]
    out: PathBuf,
    /// Serve the status page (`/`, `/status`, `/metrics`) on 127.0.0.1:PORT while proving
    /// (0: a free port; the address is printed).
    #[arg(long, value_name = "PORT")]
    status_port: Option<u16>,
    #[command(flatten)]
    overrides: Overrides,
}

/// Which circuit's parameters `fil-params` makes.
#[derive(Clone, Copy, ValueEnum)]
pub enum KindArg {
    /// PoRep (C2).
    Porep,
    /// WindowPoSt.
    WindowPost,
    /// WinningPoSt.
    WinningPost,
    /// SnapDeals.
    Snap,
    /// All four.
    All,
}

/// The Filecoin subcommands.
#[derive(Subcommand)]
pub enum Command {
    /// PoRep C2: prove a C1 output (bare JSON, or Curio's {"SectorNum","Phase1Out","SectorSize"}
    /// envelope) with the parameters of FIL_PROOFS_PARAMETER_CACHE.
    PorepC2 {
        /// The C1 output file.
        #[arg(long)]
        c1: PathBuf,
        /// The miner id (the N of f0N); the prover id is derived from it as Lotus does.
        #[arg(long)]
        miner_id: u64,
        /// The sector number (required for a bare C1; must match the envelope's).
        #[arg(long)]
        sector_id: Option<u64>,
        #[command(flatten)]
        output: Output,
    },
    /// WinningPoSt from one vanilla proof file (bincode, as filecoin-ffi produces it).
    WinningPost {
        #[command(flatten)]
        post: PostArgs,
        #[command(flatten)]
        output: Output,
    },
    /// WindowPoSt from vanilla proof files, all partitions or one (--partition).
    WindowPost {
        #[command(flatten)]
        post: PostArgs,
        /// Prove only the partition these sectors form (cuzk's WINDOW_POST_PARTITION).
        #[arg(long)]
        partition: Option<usize>,
        #[command(flatten)]
        output: Output,
    },
    /// SnapDeals from the partition vanilla proof files, in partition order.
    SnapProve {
        /// Sector size (2KiB, 8MiB, 512MiB, 32GiB, 64GiB).
        #[arg(long)]
        sector_size: String,
        /// Partition vanilla proofs (bincode), one file per partition.
        #[arg(long, num_args = 1.., required = true)]
        vanilla: Vec<PathBuf>,
        /// The old replica commitment (hex, 32 bytes).
        #[arg(long)]
        comm_r_old: String,
        /// The new replica commitment (hex).
        #[arg(long)]
        comm_r_new: String,
        /// The new data commitment (hex).
        #[arg(long)]
        comm_d_new: String,
        #[command(flatten)]
        output: Output,
    },
    /// Make random test parameters offline with baton's setup, under the names filecoin-proofs
    /// looks for (never for the chain: the toxic waste is known to this process).
    FilParams {
        /// Sector size (2KiB, 8MiB, 512MiB, 32GiB, 64GiB).
        #[arg(long)]
        sector_size: String,
        /// Which circuit.
        #[arg(long, value_enum, default_value = "all")]
        kind: KindArg,
        /// The parameter cache (default: FIL_PROOFS_PARAMETER_CACHE, else filecoin-proofs'
        /// default directory).
        #[arg(long)]
        dir: Option<PathBuf>,
        #[command(flatten)]
        shape: crate::fil_shape::ShapeArgs,
    },
    /// Make a C1 output (PoRep commit 1) of an all-zero sector without sealing it, in seconds
    /// for any size: the vanilla proofs a real sector would give for the seed's challenges
    /// (filecoin-proofs' vanilla verifier accepts them, and so does `verify_seal` their C2).
    FilGenC1 {
        /// Sector size (2KiB, 8MiB, 512MiB, 32GiB, 64GiB).
        #[arg(long)]
        sector_size: String,
        /// The miner id (the N of f0N); the prover id is derived from it as Lotus does.
        #[arg(long)]
        miner_id: u64,
        /// The sector number.
        #[arg(long)]
        sector_id: u64,
        /// The interactive seed (hex, 32 bytes; default: derived from miner and sector).
        #[arg(long)]
        seed: Option<String>,
        /// The ticket (hex, 32 bytes; default: derived from miner and sector).
        #[arg(long)]
        ticket: Option<String>,
        /// Output file: the C1 output JSON.
        #[arg(long)]
        out: PathBuf,
        /// Write Curio's envelope {"SectorNum","Phase1Out","SectorSize"} instead of bare JSON.
        #[arg(long)]
        envelope: bool,
    },
}

/// The inputs every PoSt command takes.
#[derive(Args)]
pub struct PostArgs {
    /// Sector size (2KiB, 8MiB, 512MiB, 32GiB, 64GiB).
    #[arg(long)]
    sector_size: String,
    /// The challenge randomness (hex, 32 bytes).
    #[arg(long)]
    randomness: String,
    /// The miner id.
    #[arg(long)]
    miner_id: u64,
    /// Vanilla proof files, one per sector.
    #[arg(long, num_args = 1.., required = true)]
    vanilla: Vec<PathBuf>,
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn hex32(what: &str, s: &str) -> Result<[u8; 32], String> {
    let bytes = hex::decode(s.trim().trim_start_matches("0x"))
        .map_err(|e| format!("--{what}: not hex: {e}"))?;
    bytes
        .try_into()
        .map_err(|b: Vec<u8>| format!("--{what}: expected 32 bytes, got {}", b.len()))
}

fn read_all(paths: &[PathBuf]) -> Result<Vec<Vec<u8>>, String> {
    paths.iter().map(|p| read(p)).collect()
}

/// A PoSt command's inputs, read and parsed.
struct PostInputs {
    proof: RegisteredPoStProof,
    randomness: [u8; 32],
    prover_id: [u8; 32],
    vanilla: Vec<Vec<u8>>,
}

impl PostArgs {
    fn inputs(&self, kind: CircuitKind) -> Result<PostInputs, String> {
        let size = parse_sector_size(&self.sector_size).map_err(|e| e.to_string())?;
        let proof = post_proof_for(kind, size)
            .ok_or_else(|| format!("no {kind:?} proof for sector size {size}"))?;
        Ok(PostInputs {
            proof,
            randomness: hex32("randomness", &self.randomness)?,
            prover_id: prover_id_from_miner(self.miner_id),
            vanilla: read_all(&self.vanilla)?,
        })
    }
}

/// Runs a Filecoin subcommand; `Ok(true)` only when the proof written verified.
pub fn run(cmd: Command) -> Result<bool, String> {
    // The command's own key store: one key per run.
    let fil = Filecoin::from_env();
    let e = |e: baton::filecoin::FilecoinError| e.to_string();
    match cmd {
        Command::PorepC2 {
            c1,
            miner_id,
            sector_id,
            output,
        } => {
            let input = parse_c1(&read(&c1)?).map_err(e)?;
            let sector = input.sector_id(sector_id).map_err(e)?;
            let job = fil
                .porep_c2(&input.output, prover_id_from_miner(miner_id), sector)
                .map_err(e)?;
            prove(job, &format!("sector {sector}"), output)
        }
        Command::WinningPost { post, output } => {
            let p = post.inputs(CircuitKind::WinningPost)?;
            let job = fil
                .winning_post(p.proof, &p.randomness, p.prover_id, &p.vanilla)
                .map_err(e)?;
            prove(job, "winning", output)
        }
        Command::WindowPost {
            post,
            partition,
            output,
        } => {
            let p = post.inputs(CircuitKind::WindowPost)?;
            let job = fil
                .window_post(p.proof, &p.randomness, p.prover_id, &p.vanilla, partition)
                .map_err(e)?;
            prove(job, "window", output)
        }
        Command::SnapProve {
            sector_size,
            vanilla,
            comm_r_old,
            comm_r_new,
            comm_d_new,
            output,
        } => {
            let size = parse_sector_size(&sector_size).map_err(e)?;
            let proof: RegisteredUpdateProof = baton::filecoin::update_proof_for(size)
                .ok_or_else(|| format!("no update proof for sector size {size}"))?;
            let vanilla = read_all(&vanilla)?;
            let job = fil
                .snap_deals(
                    proof,
                    &vanilla,
                    hex32("comm-r-old", &comm_r_old)?,
                    hex32("comm-r-new", &comm_r_new)?,
                    hex32("comm-d-new", &comm_d_new)?,
                )
                .map_err(e)?;
            prove(job, "update", output)
        }
        Command::FilParams {
            sector_size,
            kind,
            dir,
            shape,
        } => {
            let sector_size = parse_sector_size(&sector_size).map_err(e)?;
            let cache = dir.map(ParamCache::at).unwrap_or_else(ParamCache::from_env);
            if let Some(done) = shape.run(sector_size, &cache) {
                return done;
            }
            let kinds: Vec<CircuitKind> = match kind {
                KindArg::Porep => vec![CircuitKind::Porep],
                KindArg::WindowPost => vec![CircuitKind::WindowPost],
                KindArg::WinningPost => vec![CircuitKind::WinningPost],
                KindArg::Snap => vec![CircuitKind::SnapDeals],
                KindArg::All => CircuitKind::ALL.to_vec(),
            };
            for kind in kinds {
                let circuit = CircuitId { kind, sector_size };
                eprintln!(
                    "{circuit}: making parameters in {} ...",
                    cache.dir().display()
                );
                let g = baton::filecoin::generate_params(circuit, &cache, &mut rand::rngs::OsRng)
                    .map_err(e)?;
                let what = if g.made {
                    format!("made in {:.1} s", g.seconds)
                } else {
                    "already there".into()
                };
                eprintln!("{circuit}: {what}: {}", g.files.params.display());
            }
            Ok(true)
        }
        Command::FilGenC1 {
            sector_size,
            miner_id,
            sector_id,
            seed,
            ticket,
            out,
            envelope,
        } => gen_c1(
            &sector_size,
            miner_id,
            sector_id,
            seed,
            ticket,
            &out,
            envelope,
        ),
    }
}

/// `fil-gen-c1`: generates, writes (atomically) and summarizes a C1 output.
fn gen_c1(
    sector_size: &str,
    miner_id: u64,
    sector_id: u64,
    seed: Option<String>,
    ticket: Option<String>,
    out: &Path,
    envelope: bool,
) -> Result<bool, String> {
    let e = |e: baton::filecoin::FilecoinError| e.to_string();
    let size = parse_sector_size(sector_size).map_err(e)?;
    let mut spec = GenC1::new(size, miner_id, sector_id).map_err(e)?;
    if let Some(s) = seed {
        spec.seed = hex32("seed", &s)?;
    }
    if let Some(t) = ticket {
        spec.ticket = hex32("ticket", &t)?;
    }
    let started = Instant::now();
    let c1 = generate_c1(&spec).map_err(e)?;
    let json = serde_json::to_vec(&c1).map_err(|e| format!("serializing the C1 output: {e}"))?;
    let bytes = if envelope {
        baton::filecoin::envelope(&json, sector_id, size)
    } else {
        json
    };
    let tmp = out.with_extension("tmp");
    std::fs::write(&tmp, &bytes)
        .and_then(|_| std::fs::rename(&tmp, out))
        .map_err(|e| format!("{}: {e}", out.display()))?;
    eprintln!(
        "{:?} miner {miner_id} sector {sector_id}: comm_r {} comm_d {} seed {} ticket {}",
        spec.proof,
        hex::encode(c1.comm_r),
        hex::encode(c1.comm_d),
        hex::encode(spec.seed),
        hex::encode(spec.ticket),
    );
    eprintln!(
        "C1 output ({} bytes{}) generated in {:.2} s and written to {}",
        bytes.len(),
        if envelope { ", Curio envelope" } else { "" },
        started.elapsed().as_secs_f64(),
        out.display()
    );
    Ok(true)
}

/// Proves `job` with live per-partition progress on a terminal, writes the verified output.
fn prove(job: Job, what: &str, output: Output) -> Result<bool, String> {
    let cfg = config_with(output.overrides)?;
    let workers = cfg.synthesis_workers;
    let engine = std::sync::Arc::new(Engine::start(cfg).map_err(|e| e.to_string())?);
    let kind = job.finisher.kind().name();
    serve_status(output.status_port, &engine, workers, kind)?;
    let label = format!("{kind} {what}");
    let partitions = job.finisher.partitions();
    eprintln!(
        "{label}: {partitions} partition(s) of {} on {}",
        job.finisher.circuit(),
        engine.backend_name()
    );
    let started = Instant::now();
    let result = std::thread::scope(|s| {
        let h = s.spawn(|| engine.prove_blocking(job.request));
        show_progress(
            || h.is_finished(),
            || partition_line(&engine, &label, started),
        );
        h.join().unwrap_or(Err(baton::EngineError::Stopped))
    });
    engine.shutdown_blocking();
    let proofs = result.map_err(|e| e.to_string())?;
    let bytes = job.finisher.finish(&proofs).map_err(|e| e.to_string())?;
    let tmp = output.out.with_extension("tmp");
    std::fs::write(&tmp, &bytes)
        .and_then(|_| std::fs::rename(&tmp, &output.out))
        .map_err(|e| format!("{}: {e}", output.out.display()))?;
    eprintln!(
        "{label}: {} bytes verified by filecoin-proofs and written to {} in {:.1} s",
        bytes.len(),
        output.out.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(true)
}

/// Each partition's state, one letter each: q queued, s synthesizing, w waiting for a GPU,
/// g on a GPU, b B_G2, d done, x failed.
fn partition_line(engine: &Engine, label: &str, started: Instant) -> Option<String> {
    let st = engine.status_blocking().ok()?;
    let states: Vec<PartitionState> = st
        .jobs
        .iter()
        .flat_map(|j| j.partitions.iter().copied())
        .collect();
    let letters: String = states
        .iter()
        .map(|p| match p {
            PartitionState::Queued => 'q',
            PartitionState::At(Stage::Synthesizing) => 's',
            PartitionState::At(Stage::QueuedForGpu) => 'w',
            PartitionState::At(Stage::OnGpu) => 'g',
            PartitionState::At(Stage::Bg2) => 'b',
            PartitionState::At(Stage::Dealloc) | PartitionState::Done => 'd',
            PartitionState::Failed => 'x',
        })
        .collect();
    let done = letters.chars().filter(|c| *c == 'd').count();
    Some(format!(
        "[{:>6.1}s] {label}: partitions [{letters}] done {done}/{}",
        started.elapsed().as_secs_f64(),
        states.len()
    ))
}
