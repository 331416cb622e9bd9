//! The override flags `prove`, `serve` and the Filecoin commands share (`--budget`,
//! `--workers`, `--backend`, `--devices`, `--bg2-device`), applied over the configuration and
//! checked by its rules, each error named by its flag.

use clap::{Args, ValueEnum};

use baton::config::{parse_bytes, BackendChoice, ConfigError};
use baton::Config;

#[derive(Clone, Copy, ValueEnum)]
pub enum Bg2Device {
    /// The GPU unless the host has threads enough for the CPU G2 MSM (the default).
    Auto,
    /// blst on this machine's cores.
    Cpu,
    /// The GPU backends (the CPU when the backend is the CPU).
    Gpu,
}

/// Command-line overrides of the configuration.
#[derive(Args)]
pub struct Overrides {
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

/// The config key each override flag sets.
const FLAGS: [(&str, &str); 4] = [
    ("memory.budget", "--budget"),
    ("synthesis.workers", "--workers"),
    ("gpu.devices", "--devices"),
    ("gpu.backend", "--backend"),
];

pub fn config_with(o: Overrides) -> Result<Config, String> {
    overridden(Config::load().map_err(|e| e.to_string())?, o)
}

/// `cfg` with the override flags applied and checked.
pub fn overridden(mut cfg: Config, o: Overrides) -> Result<Config, String> {
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
