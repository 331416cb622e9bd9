//! The `baton` command line: parses the arguments and hands each subcommand to its module in
//! `src/cli/` (prove and setup, serve, the Filecoin commands).

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use baton::config::cuzk::CuzkConfig;

/// The configuration override flags.
#[path = "cli/overrides.rs"]
mod overrides;
/// The live progress line.
#[path = "cli/progress.rs"]
mod progress;
/// `baton prove` and `baton setup`.
#[path = "cli/prove.rs"]
mod prove;
/// `baton serve` and its `--cuzk-config`.
#[path = "cli/serve.rs"]
mod serve_cli;

use overrides::Overrides;
use prove::{at_least_one, CircuitArgs};

/// `baton fil-params --shape-only`.
#[cfg(feature = "filecoin")]
#[path = "cli/fil_shape.rs"]
mod fil_shape;
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
        /// Serve the status page (`/`, `/status`, `/metrics`) on 127.0.0.1:PORT while proving
        /// (0: a free port; the address is printed).
        #[arg(long, value_name = "PORT")]
        status_port: Option<u16>,
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

fn run(cli: Cli, cuzk: Option<CuzkConfig>) -> Result<bool, String> {
    match cli.command {
        Command::Prove {
            circuit,
            proofs,
            requests,
            status_port,
            overrides,
        } => prove::run(circuit, proofs, requests, status_port, overrides),
        Command::Serve(args) => serve_cli::run(args, cuzk),
        Command::Setup { circuit } => prove::setup(circuit),
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
