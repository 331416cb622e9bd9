//! Engine configuration: `baton.toml` (or the file named by `BATON_CONFIG`) plus `BATON_*`
//! environment variables (`BATON_MEMORY_BUDGET=64GiB`), validated at start with clear errors.
//! Every key is documented in `baton.example.toml`.

use std::path::Path;

use serde::Deserialize;

use crate::gpu::options::{flag, GpuOptions};
use crate::ledger::{effective_slots, Policy};

pub use crate::ledger::LOOKAHEAD_PER_DEVICE;

mod server;
pub use server::{parse_duration_secs, Listen, ServerConfig, ServerConfigError, DEFAULT_LISTEN};

/// A configuration problem, named by its key.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A key has a value that cannot be used.
    #[error("config key `{key}`: {reason}")]
    Invalid {
        /// The dotted key.
        key: &'static str,
        /// Why.
        reason: String,
    },
    /// The file or the environment could not be read or parsed.
    #[error("config: {0}")]
    Source(#[from] config::ConfigError),
}

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

/// Host threads the CPU G2 MSM needs per GPU to keep up with it. Measured (BENCHMARKS.md):
/// the B_G2 MSM of a 2^24 PoRep-like partition took 5.81 s on the CPU with all 32 threads of
/// the 2-GPU host (186 thread-seconds) while one GPU's whole partition took 1.14 s, so the CPU
/// keeps up only with ~160 threads per GPU left to it; no host measured here comes close.
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
    /// Synthesize through recorded R1CS (`synthesis.compiled`, default on): the first
    /// synthesis of a key's circuit records it, later ones run witness-only (`compiled`).
    pub compiled: bool,
    /// Devices to run a Gpu actor on (indices).
    pub gpu_devices: Vec<usize>,
    /// Backend choice.
    pub backend: BackendChoice,
    /// The CUDA backend's knobs (`[gpu]` host_threads, msm_acc_minb, msm_prefetch, msm_mul,
    /// msm_window, msm_scatter, partition, ntt_block).
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
            compiled: true,
            gpu_devices: vec![0],
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

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    memory: Option<RawMemory>,
    synthesis: Option<RawWorkers>,
    gpu: Option<RawGpu>,
    bg2: Option<RawBg2>,
    metrics: Option<RawMetrics>,
    log: Option<RawLog>,
    retry: Option<RawRetry>,
    server: Option<server::RawServer>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMemory {
    budget: Option<String>,
    margin: Option<String>,
    overcommit: Option<String>,
    policy: Option<String>,
    slots: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWorkers {
    workers: Option<String>,
    compiled: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBg2 {
    workers: Option<String>,
    device: Option<String>,
}

/// `gpu.devices`: a TOML array (`[0, 1]`) or a string (`"0,1"`, as the environment gives it).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum RawDevices {
    List(Vec<RawIndex>),
    Text(String),
}

/// One entry of a `gpu.devices` array.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum RawIndex {
    Number(i64),
    Text(String),
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGpu {
    devices: Option<RawDevices>,
    backend: Option<String>,
    host_threads: Option<String>,
    msm_acc_minb: Option<String>,
    msm_prefetch: Option<String>,
    msm_mul: Option<String>,
    msm_window: Option<String>,
    msm_scatter: Option<String>,
    partition: Option<String>,
    ntt_block: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMetrics {
    listen: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLog {
    level: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRetry {
    attempts: Option<String>,
}

/// Parses "1024", "512MiB", "64GiB", "1.5GB", "2TiB".
pub fn parse_bytes(s: &str) -> Option<u64> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let num: f64 = num.parse().ok()?;
    let mult: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "m" | "mb" => 1e6,
        "g" | "gb" => 1e9,
        "t" | "tb" => 1e12,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        "tib" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    let v = num * mult;
    (v.is_finite() && v >= 0.0 && v < u64::MAX as f64).then_some(v as u64)
}

fn invalid(key: &'static str, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        key,
        reason: reason.into(),
    }
}

fn count(key: &'static str, v: &str, min: usize) -> Result<usize, ConfigError> {
    match v.trim().parse::<usize>() {
        Ok(n) if n >= min => Ok(n),
        _ => Err(invalid(
            key,
            format!("expected a whole number ≥ {min}, got {v:?}"),
        )),
    }
}

const SECTIONS: [&str; 8] = [
    "MEMORY",
    "SYNTHESIS",
    "GPU",
    "BG2",
    "METRICS",
    "LOG",
    "RETRY",
    "SERVER",
];

/// The config crate's name for `BATON_<SECTION>_<KEY>` (`BATON_<SECTION>__<KEY>`: the section
/// ends at the first underscore after it, so keys may have underscores, `BATON_GPU_HOST_THREADS`
/// is `gpu.host_threads`), or `None` for a variable that is no configuration key.
fn config_var(name: &str) -> Option<String> {
    let rest = name.strip_prefix("BATON_")?;
    SECTIONS.iter().find_map(|s| {
        let key = rest.strip_prefix(s)?.strip_prefix('_')?;
        (!key.is_empty()).then(|| format!("BATON_{s}__{key}"))
    })
}

/// `gpu.devices` from a string: `"0,1"` or `"[0, 1]"` (as the environment and the CLI give it).
pub fn parse_devices(s: &str) -> Result<Vec<usize>, ConfigError> {
    device_list(
        s.trim_matches(|ch: char| ch == '[' || ch == ']' || ch.is_whitespace())
            .split(',')
            .map(str::to_string),
    )
}

/// `gpu.devices` from its entries: each a whole number, at least one.
fn device_list(items: impl Iterator<Item = String>) -> Result<Vec<usize>, ConfigError> {
    let list = items
        .filter(|s| !s.trim().is_empty())
        .map(|s| count("gpu.devices", &s, 0))
        .collect::<Result<Vec<usize>, _>>()?;
    if list.is_empty() {
        return Err(invalid("gpu.devices", "needs at least one device index"));
    }
    Ok(list)
}

/// The `[gpu]` knobs from their raw values (unset keys keep the defaults).
fn gpu_options(raw: &RawGpu) -> Result<GpuOptions, ConfigError> {
    let mut o = GpuOptions::default();
    let keys: [(&'static str, &'static str, &Option<String>); 8] = [
        ("host_threads", "gpu.host_threads", &raw.host_threads),
        ("msm_acc_minb", "gpu.msm_acc_minb", &raw.msm_acc_minb),
        ("msm_prefetch", "gpu.msm_prefetch", &raw.msm_prefetch),
        ("msm_mul", "gpu.msm_mul", &raw.msm_mul),
        ("msm_window", "gpu.msm_window", &raw.msm_window),
        ("msm_scatter", "gpu.msm_scatter", &raw.msm_scatter),
        ("partition", "gpu.partition", &raw.partition),
        ("ntt_block", "gpu.ntt_block", &raw.ntt_block),
    ];
    for (key, name, value) in keys {
        if let Some(v) = value {
            o.set(key, v).map_err(|reason| invalid(name, reason))?;
        }
    }
    Ok(o)
}

impl Config {
    /// Reads `baton.toml` (or `$BATON_CONFIG`) if present, then `BATON_*` variables.
    pub fn load() -> Result<Self, ConfigError> {
        let path = std::env::var("BATON_CONFIG").unwrap_or_else(|_| "baton.toml".into());
        Self::load_from(Path::new(&path), std::env::vars())
    }

    /// Reads `path` (optional) and the given environment.
    pub fn load_from(
        path: &Path,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Self, ConfigError> {
        let mut b = config::Config::builder();
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
        if let Some(v) = synthesis.compiled {
            c.compiled = flag(&v).map_err(|e| invalid("synthesis.compiled", e))?;
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
        if self.gpu_devices.is_empty() {
            return Err(invalid("gpu.devices", "needs at least one device index"));
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
    /// [`ledger::effective_slots`](crate::ledger::effective_slots)).
    pub fn effective_slots(&self) -> usize {
        effective_slots(
            self.slots,
            self.policy,
            self.synthesis_workers,
            self.gpu_devices.len(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sizes() {
        assert_eq!(parse_bytes("64GiB"), Some(64 << 30));
        assert_eq!(parse_bytes("512 MiB"), Some(512 << 20));
        assert_eq!(parse_bytes("1000"), Some(1000));
        assert_eq!(parse_bytes("1.5GB"), Some(1_500_000_000));
        assert_eq!(parse_bytes("lots"), None);
        assert_eq!(parse_devices("0,1").ok(), Some(vec![0, 1]));
        assert_eq!(parse_devices(" [2, 3] ").ok(), Some(vec![2, 3]));
        assert!(parse_devices("").is_err());
        let err = parse_devices("0,x").expect_err("not an index");
        assert!(err.to_string().contains("gpu.devices"), "{err}");
    }

    #[test]
    fn the_example_file_is_a_valid_config() {
        let c = Config::from_toml(include_str!("../baton.example.toml")).expect("example parses");
        c.validate().expect("example validates");
        assert_eq!(
            c.bg2_device,
            Bg2Device::Auto,
            "the example lets the engine pick"
        );
        assert_eq!(c.gpu_devices, vec![0]);
    }

    #[test]
    fn toml_and_env_are_read_and_validated() {
        let c = Config::from_toml("[memory]\nbudget = \"2GiB\"\npolicy = \"hold_until_delivered\"\n[synthesis]\nworkers = 3\n")
            .expect("valid");
        assert_eq!(c.budget_bytes, Some(2 << 30));
        assert_eq!(c.policy, Policy::HoldUntilDelivered);
        assert_eq!(c.synthesis_workers, 3);
        assert_eq!(c.effective_slots(), 3);
        let c = Config {
            policy: Policy::Ledger,
            synthesis_workers: 10,
            gpu_devices: vec![0, 1],
            ..c
        };
        assert_eq!(c.effective_slots(), 14, "workers + 2 per device");

        let env = vec![
            ("BATON_BG2_WORKERS".to_string(), "2".to_string()),
            ("BATON_GPU_BACKEND".to_string(), "cpu".to_string()),
            ("BATON_BG2_DEVICE".to_string(), "gpu".to_string()),
            ("BATON_GPU_DEVICES".to_string(), "1,0".to_string()),
            ("BATON_LOG".to_string(), "info".to_string()),
            ("BATON_BENCH_RUNS".to_string(), "5".to_string()),
            ("BATON_CACHE_DIR".to_string(), "/tmp/x".to_string()),
        ];
        let c = Config::load_from(Path::new("/nonexistent/baton.toml"), env).expect("env");
        assert_eq!(c.bg2_workers, 2);
        assert_eq!(c.backend, BackendChoice::Cpu);
        assert_eq!(c.bg2_device, Bg2Device::Gpu);
        assert_eq!(c.gpu_devices, vec![1, 0]);
        let auto = Config::default();
        assert_eq!(auto.bg2_device, Bg2Device::Auto, "auto by default");
        assert!(
            auto.bg2_on_gpu(32),
            "32 threads cannot keep up with one GPU"
        );
        assert!(
            !auto.bg2_on_gpu(CPU_BG2_THREADS_PER_GPU),
            "enough threads for one GPU"
        );
        let two = Config {
            gpu_devices: vec![0, 1],
            ..Config::default()
        };
        assert!(
            two.bg2_on_gpu(CPU_BG2_THREADS_PER_GPU),
            "two GPUs need twice the threads"
        );
        let cpu = Config {
            bg2_device: Bg2Device::Cpu,
            ..Config::default()
        };
        assert!(!cpu.bg2_on_gpu(1));
        let err = Config::from_toml("[bg2]\ndevice = \"tpu\"\n").expect_err("bad device");
        assert!(err.to_string().contains("bg2.device"), "{err}");

        let c = Config::from_toml("[gpu]\ndevices = [0, 1]\n").expect("TOML array");
        assert_eq!(c.gpu_devices, vec![0, 1]);
        let c = Config::from_toml("[gpu]\ndevices = \"2,3\"\n").expect("string list");
        assert_eq!(c.gpu_devices, vec![2, 3]);
        let err = Config::from_toml("[gpu]\ndevices = [0, \"x\"]\n").expect_err("bad index");
        assert!(err.to_string().contains("gpu.devices"), "{err}");
        let c = Config::from_toml("[synthesis]\ncompiled = false\n").expect("compiled");
        assert!(!c.compiled && Config::default().compiled);
        let err = Config::from_toml("[synthesis]\ncompiled = 2\n").expect_err("bool");
        assert!(err.to_string().contains("synthesis.compiled"), "{err}");
        let c = Config::from_toml("[memory]\novercommit = true\n").expect("overcommit");
        assert!(c.overcommit && !Config::default().overcommit);
        let err = Config::from_toml("[memory]\novercommit = \"maybe\"\n").expect_err("bool");
        assert!(err.to_string().contains("memory.overcommit"), "{err}");
        let env = vec![
            ("BATON_GPU_HOST_THREADS".to_string(), "6".to_string()),
            ("BATON_GPU_MSM_ACC_MINB".to_string(), "5".to_string()),
            ("BATON_GPU_MSM_PREFETCH".to_string(), "true".to_string()),
            ("BATON_GPU_PARTITION".to_string(), "calls".to_string()),
            ("BATON_GPU_MSM_MUL".to_string(), "inline".to_string()),
            ("BATON_GPU_MSM_WINDOW".to_string(), "nontrivial".to_string()),
            ("BATON_GPU_MSM_SCATTER".to_string(), "keys".to_string()),
            ("BATON_BENCH_MSM".to_string(), "20".to_string()),
            ("BATON_MSM_ACC_MINB".to_string(), "1".to_string()),
        ];
        let c = Config::load_from(Path::new("/nonexistent/baton.toml"), env).expect("gpu env");
        assert_eq!(c.gpu.host_threads, Some(6));
        assert_eq!(
            c.gpu.msm_acc_minb, 5,
            "BATON_GPU_* wins; BATON_MSM_* is no key"
        );
        assert!(c.gpu.msm_prefetch && !c.gpu.device_partition);
        assert_eq!(
            c.gpu.msm_label(),
            "msm_mul=inline,msm_window=nontrivial,msm_scatter=keys,msm_acc_minb=5,msm_prefetch=true"
        );
        assert_eq!(Config::default().gpu, GpuOptions::default());
        let c =
            Config::from_toml("[gpu]\nhost_threads = \"auto\"\nmsm_acc_minb = 2\n").expect("gpu");
        assert_eq!((c.gpu.host_threads, c.gpu.msm_acc_minb), (None, 2));
        for bad in [
            "[gpu]\nmsm_acc_minb = 9\n",
            "[gpu]\nmsm_acc_minb = 0\n",
            "[gpu]\nhost_threads = 0\n",
            "[gpu]\nmsm_prefetch = \"maybe\"\n",
            "[gpu]\npartition = \"cloud\"\n",
            "[gpu]\nmsm_mul = \"asm\"\n",
            "[gpu]\nmsm_window = \"bits\"\n",
            "[gpu]\nmsm_scatter = \"sort\"\n",
        ] {
            let err = Config::from_toml(bad).expect_err(bad);
            assert!(err.to_string().contains("gpu."), "{bad}: {err}");
        }
        let err = Config::from_toml("[memory]\nbudget = \"lots\"\n").expect_err("bad budget");
        assert!(err.to_string().contains("memory.budget"), "{err}");
        let err = Config::from_toml("[synthesis]\nworkers = 0\n").expect_err("zero workers");
        assert!(err.to_string().contains("synthesis.workers"), "{err}");
        assert!(
            Config::from_toml("[memory]\nbugdet = \"1GiB\"\n").is_err(),
            "unknown keys are refused"
        );
        let empty = Config {
            gpu_devices: vec![],
            ..Config::default()
        };
        let err = empty.validate().expect_err("no devices");
        assert!(err.to_string().contains("gpu.devices"), "{err}");
        let twice = Config {
            gpu_devices: vec![0, 1, 0],
            ..Config::default()
        };
        let err = twice.validate().expect_err("duplicate device");
        assert!(
            err.to_string().contains("device 0 is listed twice"),
            "{err}"
        );
    }
}
