//! Engine configuration: `baton.toml` (or the file named by `BATON_CONFIG`) plus `BATON_*`
//! environment variables (`BATON_MEMORY_BUDGET=64GiB`), validated at start with clear errors.
//! Every key is documented in `baton.example.toml`.

use std::path::Path;

use crate::gpu::options::{flag, GpuOptions};
use crate::ledger::{effective_slots, Policy};

pub use crate::ledger::LOOKAHEAD_PER_DEVICE;

mod cidr;
pub mod cuzk;
mod error;
mod raw;
mod server;
pub use crate::units::parse_bytes;
pub use error::ConfigError;
pub use raw::parse_devices;
use raw::{config_var, count, device_list, gpu_options, invalid, Raw, RawDevices, RawIndex};
pub use server::{
    parse_duration_secs, Cidr, Listen, ServerConfig, ServerConfigError, DEFAULT_LISTEN,
};

impl From<ServerConfigError> for ConfigError {
    fn from(e: ServerConfigError) -> Self {
        ConfigError::Invalid {
            key: e.key,
            reason: e.reason,
        }
    }
}

/// Which backend computes H and the G1 MSMs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendChoice {
    /// CUDA when built with the `cuda` feature and a device is present, else the CPU.
    Auto,
    /// Always the CPU.
    Cpu,
    /// CUDA or fail at start.
    Cuda,
}

/// Where the B_G2 workers' G2 MSM runs (`bg2.device`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bg2Device {
    /// The GPU when the host has fewer threads than the CPU G2 MSM needs to keep up with the
    /// GPUs ([`CPU_BG2_THREADS_PER_GPU`] per device), else the CPU.
    Auto,
    /// blst on this machine's cores.
    Cpu,
    /// The GPU backends (with a device partition, inside the GPU stage's own call).
    Gpu,
}

/// Host threads the CPU G2 MSM needs per GPU to keep up with it. Measured (BENCHMARKS.md, "H200 —
/// GPU knob defaults"): the B_G2 MSM of a 2^24 PoRep-like partition took 5.81 s on the CPU with all
/// 32 threads of the 2-GPU host (186 thread-seconds) while one GPU's whole partition took 1.14 s,
/// so the CPU keeps up only with ~160 threads per GPU left to it; no host measured here comes
/// close.
pub const CPU_BG2_THREADS_PER_GPU: usize = 160;

/// The validated configuration.
#[derive(Clone, Debug)]
pub struct Config {
    /// Byte budget of the ledger; `None` means auto (available memory minus the margin).
    pub budget_bytes: Option<u64>,
    /// Kept free when the budget is auto.
    pub margin_bytes: u64,
    /// A stated budget that, with the proving keys in use, exceeds the host's available memory
    /// is only warned about (`memory.overcommit = true`) instead of refused.
    pub overcommit: bool,
    /// Ledger policy.
    pub policy: Policy,
    /// Slots (undelivered partitions at once); `None` = by policy (see `effective_slots`).
    pub slots: Option<usize>,
    /// Synthesis threads.
    pub synthesis_workers: usize,
    /// Synthesis threads (and ledger slots) kept for CRITICAL jobs on top of
    /// `synthesis_workers` (`synthesis.critical_workers`, default 1; 0: none kept), so that a
    /// WinningPoSt never waits for another job's synthesis to end.
    pub critical_workers: usize,
    /// The nice value the `synthesis_workers` threads run at (`synthesis.nice`, 0..=19,
    /// default 0: as the process): above 0 ordinary synthesis runs in a rayon pool of niced
    /// threads, the `critical_workers` at the process's own priority. Measured on H100/H200
    /// hosts, 10 cost the engine throughput and did not shorten a CRITICAL job under load
    /// (BENCHMARKS.md, "CRITICAL latency under load"), so it is off by default.
    pub synthesis_nice: u8,
    /// Pause ordinary synthesis while a CRITICAL partition synthesizes
    /// (`synthesis.yield_to_critical`, default on): the ordinary threads stop at their next
    /// allocation and go on when it ends, so that a WinningPoSt's synthesis has every core
    /// (`scheduler::yield_point`). Off: they share the cores.
    pub yield_to_critical: bool,
    /// Synthesize through recorded R1CS (`synthesis.compiled`, default on): the first
    /// synthesis of a key's circuit records it, later ones run witness-only (`compiled`).
    pub compiled: bool,
    /// Keep a witness that leaves synthesis for a device as bits (`synthesis.pack_witness`,
    /// default on): while it waits for the device it takes ~2 bits a value plus the values
    /// that are neither 0 nor 1, and the device stage expands it for its own run.
    pub pack_witness: bool,
    /// Devices to run a Gpu actor on (indices); empty (the default, `gpu.devices = "all"`):
    /// every GPU the driver sees, resolved when the engine starts ([`Config::resolved_devices`]).
    pub gpu_devices: Vec<usize>,
    /// Backend choice.
    pub backend: BackendChoice,
    /// The CUDA backend's knobs (`[gpu]` host_threads, msm_acc_minb, msm_prefetch, msm_mul,
    /// msm_window, msm_scatter, partition, ntt_block, ntt_radix, ntt_columns,
    /// ntt_regs).
    pub gpu: GpuOptions,
    /// B_G2 threads.
    pub bg2_workers: usize,
    /// Where the B_G2 workers compute the G2 MSM (see [`Config::bg2_on_gpu`]); on the GPU,
    /// worker i uses device i mod devices (the CPU when the backend is the CPU).
    pub bg2_device: Bg2Device,
    /// Address of the `/metrics` endpoint, if any.
    pub metrics_listen: Option<String>,
    /// tracing filter (e.g. "info", "baton=debug").
    pub log_level: String,
    /// Attempts per partition before its job fails (failures that can repeat only).
    pub retry_attempts: u32,
    /// The `[server]` section (`baton serve`).
    pub server: ServerConfig,
}

impl Default for Config {
    fn default() -> Self {
        let cores = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2);
        Config {
            budget_bytes: None,
            margin_bytes: 1 << 30,
            overcommit: false,
            policy: Policy::Ledger,
            slots: None,
            synthesis_workers: cores.clamp(1, 16),
            critical_workers: 1,
            synthesis_nice: 0,
            yield_to_critical: true,
            compiled: true,
            pack_witness: true,
            gpu_devices: Vec::new(),
            backend: BackendChoice::Auto,
            gpu: GpuOptions::default(),
            bg2_workers: 1,
            bg2_device: Bg2Device::Auto,
            metrics_listen: None,
            log_level: "info".into(),
            retry_attempts: 3,
            server: ServerConfig::default(),
        }
    }
}

impl Config {
    /// Reads `baton.toml` (or `$BATON_CONFIG`) if present, then `BATON_*` variables.
    pub fn load() -> Result<Self, ConfigError> {
        let path = std::env::var("BATON_CONFIG").unwrap_or_else(|_| "baton.toml".into());
        Self::load_from(Path::new(&path), std::env::vars())
    }

    /// [`Config::load`] between two layers of keys and values (`("server.listen", "...")`):
    /// baton.toml and `BATON_*` override `base` (what `--cuzk-config` maps), `top` (command-line
    /// flags) overrides them all.
    pub fn load_layered(
        base: &[(String, String)],
        top: &[(String, String)],
    ) -> Result<Self, ConfigError> {
        let path = std::env::var("BATON_CONFIG").unwrap_or_else(|_| "baton.toml".into());
        Self::load_from_layered(Path::new(&path), std::env::vars(), base, top)
    }

    /// Reads `path` (optional) and the given environment.
    pub fn load_from(
        path: &Path,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Self, ConfigError> {
        Self::load_from_layered(path, env, &[], &[])
    }

    /// [`Config::load_from`] between two layers (see [`Config::load_layered`]).
    pub fn load_from_layered(
        path: &Path,
        env: impl IntoIterator<Item = (String, String)>,
        base: &[(String, String)],
        top: &[(String, String)],
    ) -> Result<Self, ConfigError> {
        let mut b = config::Config::builder();
        for (key, value) in base {
            b = b.set_default(key.as_str(), value.as_str())?;
        }
        for (key, value) in top {
            b = b.set_override(key.as_str(), value.as_str())?;
        }
        if path.exists() {
            b = b.add_source(config::File::from(path).format(config::FileFormat::Toml));
        }
        // Only BATON_<SECTION>_<KEY> for this file's sections: other BATON_* variables (the CLI's
        // BATON_LOG filter, BATON_CACHE_DIR, bench knobs) are not configuration keys.
        let map: config::Map<String, String> = env
            .into_iter()
            .filter_map(|(k, v)| config_var(&k).map(|k| (k, v)))
            .collect();
        b = b.add_source(
            config::Environment::with_prefix("BATON")
                .prefix_separator("_")
                .separator("__")
                .source(Some(map)),
        );
        let raw: Raw = b.build()?.try_deserialize()?;
        Self::from_raw(raw)
    }

    /// Parses a TOML document (no environment).
    pub fn from_toml(text: &str) -> Result<Self, ConfigError> {
        let raw: Raw = config::Config::builder()
            .add_source(config::File::from_str(text, config::FileFormat::Toml))
            .build()?
            .try_deserialize()?;
        Self::from_raw(raw)
    }

    fn from_raw(raw: Raw) -> Result<Self, ConfigError> {
        let mut c = Config::default();
        let mem = raw.memory.unwrap_or_default();
        if let Some(b) = mem.budget {
            c.budget_bytes = if b.trim().eq_ignore_ascii_case("auto") {
                None
            } else {
                match parse_bytes(&b) {
                    Some(0) | None => {
                        return Err(invalid(
                            "memory.budget",
                            format!("expected \"auto\" or a size like \"64GiB\", got {b:?}"),
                        ))
                    }
                    Some(v) => Some(v),
                }
            };
        }
        if let Some(m) = mem.margin {
            c.margin_bytes = parse_bytes(&m)
                .ok_or_else(|| invalid("memory.margin", format!("expected a size, got {m:?}")))?;
        }
        if let Some(o) = mem.overcommit {
            c.overcommit = match o.trim() {
                "true" => true,
                "false" => false,
                other => {
                    return Err(invalid(
                        "memory.overcommit",
                        format!("expected true or false, got {other:?}"),
                    ))
                }
            };
        }
        if let Some(p) = mem.policy {
            c.policy = p
                .parse()
                .map_err(|e| invalid("memory.policy", format!("{e}")))?;
        }
        if let Some(s) = mem.slots {
            c.slots = if s.trim().eq_ignore_ascii_case("auto") {
                None
            } else {
                Some(count("memory.slots", &s, 1)?)
            };
        }
        let synthesis = raw.synthesis.unwrap_or_default();
        if let Some(w) = synthesis.workers {
            c.synthesis_workers = count("synthesis.workers", &w, 1)?;
        }
        if let Some(w) = synthesis.critical_workers {
            c.critical_workers = count("synthesis.critical_workers", &w, 0)?;
        }
        if let Some(n) = synthesis.nice {
            c.synthesis_nice = match n.trim().parse::<u8>() {
                Ok(v) if v <= 19 => v,
                _ => {
                    return Err(invalid(
                        "synthesis.nice",
                        format!("{n:?} is not a nice value from 0 to 19"),
                    ))
                }
            };
        }
        if let Some(v) = synthesis.yield_to_critical {
            c.yield_to_critical =
                flag(&v).map_err(|e| invalid("synthesis.yield_to_critical", e))?;
        }
        if let Some(v) = synthesis.compiled {
            c.compiled = flag(&v).map_err(|e| invalid("synthesis.compiled", e))?;
        }
        if let Some(v) = synthesis.pack_witness {
            c.pack_witness = flag(&v).map_err(|e| invalid("synthesis.pack_witness", e))?;
        }
        let bg2 = raw.bg2.unwrap_or_default();
        if let Some(w) = bg2.workers {
            c.bg2_workers = count("bg2.workers", &w, 1)?;
        }
        if let Some(d) = bg2.device {
            c.bg2_device = match d.trim() {
                "auto" => Bg2Device::Auto,
                "cpu" => Bg2Device::Cpu,
                "gpu" => Bg2Device::Gpu,
                other => {
                    return Err(invalid(
                        "bg2.device",
                        format!("expected auto, cpu or gpu, got {other:?}"),
                    ))
                }
            };
        }
        let gpu = raw.gpu.unwrap_or_default();
        c.gpu = gpu_options(&gpu)?;
        if let Some(d) = gpu.devices {
            c.gpu_devices = match d {
                RawDevices::List(v) if v.is_empty() => Vec::new(),
                RawDevices::List(v) => device_list(v.into_iter().map(|i| match i {
                    RawIndex::Number(n) => n.to_string(),
                    RawIndex::Text(t) => t,
                }))?,
                RawDevices::Text(t) => parse_devices(&t)?,
            };
        }
        if let Some(b) = gpu.backend {
            c.backend = match b.trim() {
                "auto" => BackendChoice::Auto,
                "cpu" => BackendChoice::Cpu,
                "cuda" => BackendChoice::Cuda,
                other => {
                    return Err(invalid(
                        "gpu.backend",
                        format!("expected auto, cpu or cuda, got {other:?}"),
                    ))
                }
            };
        }
        if let Some(l) = raw.metrics.and_then(|m| m.listen) {
            if l.parse::<std::net::SocketAddr>().is_err() {
                return Err(invalid(
                    "metrics.listen",
                    format!("expected host:port like 127.0.0.1:9100, got {l:?}"),
                ));
            }
            c.metrics_listen = Some(l);
        }
        if let Some(l) = raw.log.and_then(|l| l.level) {
            c.log_level = l;
        }
        if let Some(a) = raw.retry.and_then(|r| r.attempts) {
            c.retry_attempts = count("retry.attempts", &a, 1)? as u32;
        }
        c.server = ServerConfig::from_raw(raw.server.unwrap_or_default(), parse_bytes)?;
        c.validate()?;
        Ok(c)
    }

    /// Checks values that would leave the engine unable to make progress (a zero-sized pool
    /// starts no thread and its mailbox is never read).
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.synthesis_workers == 0 {
            return Err(invalid("synthesis.workers", "must be at least 1"));
        }
        if self.bg2_workers == 0 {
            return Err(invalid("bg2.workers", "must be at least 1"));
        }
        for (i, d) in self.gpu_devices.iter().enumerate() {
            if self.gpu_devices[..i].contains(d) {
                return Err(invalid(
                    "gpu.devices",
                    format!("device {d} is listed twice (one GPU actor per device)"),
                ));
            }
        }
        if self.slots == Some(0) {
            return Err(invalid("memory.slots", "must be at least 1"));
        }
        if self.budget_bytes == Some(0) {
            return Err(invalid("memory.budget", "must be more than 0 bytes"));
        }
        if self.retry_attempts == 0 {
            return Err(invalid("retry.attempts", "must be at least 1"));
        }
        if let Some((key, reason)) = self.gpu.problem() {
            return Err(invalid(key, reason));
        }
        Ok(())
    }

    /// The devices to run a GPU actor on when the driver sees `visible` GPUs: `gpu.devices` as
    /// listed, or for an empty list every visible GPU (device 0, the CPU's one actor, when none
    /// is visible or the backend is the CPU).
    pub fn resolved_devices(&self, visible: usize) -> Vec<usize> {
        match (self.gpu_devices.is_empty(), self.backend, visible) {
            (false, _, _) => self.gpu_devices.clone(),
            (true, BackendChoice::Cpu, _) | (true, _, 0) => vec![0],
            (true, _, n) => (0..n).collect(),
        }
    }

    /// Whether the B_G2 MSM runs on the GPUs: `bg2.device`, with `auto` resolved for a host of
    /// `threads` hardware threads (GPU below [`CPU_BG2_THREADS_PER_GPU`] per device).
    pub fn bg2_on_gpu(&self, threads: usize) -> bool {
        match self.bg2_device {
            Bg2Device::Cpu => false,
            Bg2Device::Gpu => true,
            Bg2Device::Auto => threads < CPU_BG2_THREADS_PER_GPU * self.gpu_devices.len().max(1),
        }
    }

    /// The slot count for this configuration: explicit, or by policy (decided by
    /// [`ledger::effective_slots`](crate::ledger::effective_slots)), plus the slots kept for
    /// CRITICAL jobs (`critical_workers`).
    pub fn effective_slots(&self) -> usize {
        effective_slots(
            self.slots,
            self.policy,
            self.synthesis_workers,
            self.gpu_devices.len(),
        ) + self.critical_workers
    }
}

#[cfg(test)]
mod tests;
