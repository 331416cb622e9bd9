//! The raw shape of `baton.toml` and the `BATON_*` environment, as serde reads it (every value
//! a string until [`super::Config`] validates it), and the small parsers the validation uses.

use serde::Deserialize;

use super::error::ConfigError;
use crate::gpu::options::GpuOptions;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Raw {
    pub(super) memory: Option<RawMemory>,
    pub(super) synthesis: Option<RawWorkers>,
    pub(super) gpu: Option<RawGpu>,
    pub(super) bg2: Option<RawBg2>,
    pub(super) metrics: Option<RawMetrics>,
    pub(super) log: Option<RawLog>,
    pub(super) retry: Option<RawRetry>,
    pub(super) server: Option<super::server::RawServer>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawMemory {
    pub(super) budget: Option<String>,
    pub(super) margin: Option<String>,
    pub(super) overcommit: Option<String>,
    pub(super) policy: Option<String>,
    pub(super) slots: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawWorkers {
    pub(super) workers: Option<String>,
    pub(super) compiled: Option<String>,
    pub(super) pack_witness: Option<String>,
    pub(super) critical_workers: Option<String>,
    pub(super) nice: Option<String>,
    pub(super) yield_to_critical: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawBg2 {
    pub(super) workers: Option<String>,
    pub(super) device: Option<String>,
}

/// `gpu.devices`: a TOML array (`[0, 1]`) or a string (`"0,1"`, as the environment gives it).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum RawDevices {
    List(Vec<RawIndex>),
    Text(String),
}

/// One entry of a `gpu.devices` array.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum RawIndex {
    Number(i64),
    Text(String),
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawGpu {
    pub(super) devices: Option<RawDevices>,
    pub(super) backend: Option<String>,
    pub(super) host_threads: Option<String>,
    pub(super) msm_acc_minb: Option<String>,
    pub(super) msm_prefetch: Option<String>,
    pub(super) msm_mul: Option<String>,
    pub(super) msm_window: Option<String>,
    pub(super) msm_window_large: Option<String>,
    pub(super) msm_scatter: Option<String>,
    pub(super) msm_pieces: Option<String>,
    pub(super) msm_piece_buckets: Option<String>,
    pub(super) msm_first_piece: Option<String>,
    pub(super) h_stream: Option<String>,
    pub(super) warm_keys: Option<String>,
    pub(super) memory_pool: Option<String>,
    pub(super) msm_ones: Option<String>,
    pub(super) field_sqr: Option<String>,
    pub(super) field_lazy: Option<String>,
    pub(super) field_karatsuba: Option<String>,
    pub(super) msm_scatter_order: Option<String>,
    pub(super) msm_scatter_digits: Option<String>,
    pub(super) msm_scatter_parts: Option<String>,
    pub(super) partition: Option<String>,
    pub(super) ntt_block: Option<String>,
    pub(super) ntt_radix: Option<String>,
    pub(super) ntt_columns: Option<String>,
    pub(super) ntt_regs: Option<String>,
    pub(super) ntt_twiddles: Option<String>,
    pub(super) capped_cut: Option<String>,
    pub(super) capped_recording: Option<String>,
    pub(super) capped_h_beside: Option<String>,
    pub(super) msm_affine_rounds: Option<String>,
    pub(super) msm_affine_per: Option<String>,
    pub(super) msm_affine_split: Option<String>,
    pub(super) memory_limit: Option<String>,
    /// `[gpu.experimental]`: the settled experiments' knobs ([`EXPERIMENTAL`]).
    pub(super) experimental: Option<Box<RawGpu>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawMetrics {
    pub(super) listen: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLog {
    pub(super) level: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRetry {
    pub(super) attempts: Option<String>,
}

pub(super) fn invalid(key: &'static str, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        key,
        reason: reason.into(),
    }
}

pub(super) fn count(key: &'static str, v: &str, min: usize) -> Result<usize, ConfigError> {
    match v.trim().parse::<usize>() {
        Ok(n) if n >= min => Ok(n),
        _ => Err(invalid(
            key,
            format!("expected a whole number ≥ {min}, got {v:?}"),
        )),
    }
}

pub(super) const SECTIONS: [&str; 8] = [
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
pub(super) fn config_var(name: &str) -> Option<String> {
    let rest = name.strip_prefix("BATON_")?;
    SECTIONS.iter().find_map(|s| {
        let key = rest.strip_prefix(s)?.strip_prefix('_')?;
        (!key.is_empty()).then(|| format!("BATON_{s}__{key}"))
    })
}

/// `gpu.devices` from a string: `"0,1"` or `"[0, 1]"` (as the environment and the CLI give it),
/// or `"all"` / `"[]"` for every visible GPU (an empty list).
pub fn parse_devices(s: &str) -> Result<Vec<usize>, ConfigError> {
    if matches!(s.trim(), "all" | "[]") {
        return Ok(Vec::new());
    }
    device_list(
        s.trim_matches(|ch: char| ch == '[' || ch == ']' || ch.is_whitespace())
            .split(',')
            .map(str::to_string),
    )
}

/// `gpu.devices` from its entries: each a whole number, at least one.
pub(super) fn device_list(items: impl Iterator<Item = String>) -> Result<Vec<usize>, ConfigError> {
    let list = items
        .filter(|s| !s.trim().is_empty())
        .map(|s| count("gpu.devices", &s, 0))
        .collect::<Result<Vec<usize>, _>>()?;
    if list.is_empty() {
        return Err(invalid("gpu.devices", "needs at least one device index"));
    }
    Ok(list)
}

/// The knobs kept under `[gpu.experimental]`: each was an experiment, measured on the H200, whose
/// default is the measured best (BENCHMARKS.md, "H200 — GPU knob defaults"; one line each in
/// `baton.example.toml`). They are still read under `[gpu]` (and from `BATON_GPU_<KEY>`, which
/// the device runner sets).
pub const EXPERIMENTAL: [&str; 28] = [
    "msm_acc_minb",
    "msm_prefetch",
    "msm_mul",
    "msm_window",
    "msm_window_large",
    "msm_scatter",
    "msm_scatter_order",
    "msm_scatter_digits",
    "msm_scatter_parts",
    "msm_pieces",
    "msm_piece_buckets",
    "msm_first_piece",
    "memory_pool",
    "msm_ones",
    "field_sqr",
    "field_lazy",
    "field_karatsuba",
    "h_stream",
    "ntt_block",
    "ntt_radix",
    "ntt_columns",
    "ntt_regs",
    "capped_cut",
    "capped_recording",
    "capped_h_beside",
    "msm_affine_rounds",
    "msm_affine_per",
    "msm_affine_split",
];

/// Every knob of a `[gpu]` table: its key, its names under `[gpu]` and `[gpu.experimental]`,
/// and its value.
type Knob<'a> = (&'static str, &'static str, &'static str, &'a Option<String>);

/// A knob's entry: its key, `gpu.` and `gpu.experimental.` before it, and its raw value.
macro_rules! knob {
    ($raw:ident, $k:ident) => {
        (
            stringify!($k),
            concat!("gpu.", stringify!($k)),
            concat!("gpu.experimental.", stringify!($k)),
            &$raw.$k,
        )
    };
}

fn knobs(raw: &RawGpu) -> [Knob<'_>; 33] {
    [
        knob!(raw, host_threads),
        knob!(raw, msm_acc_minb),
        knob!(raw, msm_prefetch),
        knob!(raw, msm_mul),
        knob!(raw, msm_window),
        knob!(raw, msm_window_large),
        knob!(raw, msm_scatter),
        knob!(raw, msm_scatter_order),
        knob!(raw, msm_scatter_digits),
        knob!(raw, msm_scatter_parts),
        knob!(raw, msm_pieces),
        knob!(raw, msm_piece_buckets),
        knob!(raw, msm_first_piece),
        knob!(raw, memory_pool),
        knob!(raw, msm_ones),
        knob!(raw, field_sqr),
        knob!(raw, field_lazy),
        knob!(raw, field_karatsuba),
        knob!(raw, partition),
        knob!(raw, h_stream),
        knob!(raw, warm_keys),
        knob!(raw, ntt_block),
        knob!(raw, ntt_radix),
        knob!(raw, ntt_columns),
        knob!(raw, ntt_regs),
        knob!(raw, ntt_twiddles),
        knob!(raw, capped_cut),
        knob!(raw, capped_recording),
        knob!(raw, capped_h_beside),
        knob!(raw, msm_affine_rounds),
        knob!(raw, msm_affine_per),
        knob!(raw, msm_affine_split),
        knob!(raw, memory_limit),
    ]
}

/// The `[gpu]` knobs from their raw values (unset keys keep the defaults), the experiments'
/// from `[gpu.experimental]` or, as before, from `[gpu]` itself; a knob set in both is refused,
/// and so is anything under `[gpu.experimental]` that is no experiment's knob.
pub(super) fn gpu_options(raw: &RawGpu) -> Result<GpuOptions, ConfigError> {
    let mut o = GpuOptions::default();
    let empty = RawGpu::default();
    let exp = raw.experimental.as_deref().unwrap_or(&empty);
    let not_knobs = [
        ("gpu.experimental.devices", exp.devices.is_some()),
        ("gpu.experimental.backend", exp.backend.is_some()),
        ("gpu.experimental.experimental", exp.experimental.is_some()),
    ];
    if let Some((name, _)) = not_knobs.iter().find(|(_, set)| *set) {
        return Err(invalid(
            name,
            "not an experiment's knob: set it under [gpu]",
        ));
    }
    for ((key, name, exp_name, value), (.., experimental)) in knobs(raw).into_iter().zip(knobs(exp))
    {
        let (name, value) = match (value, experimental) {
            (Some(_), Some(_)) => {
                return Err(invalid(
                    name,
                    format!("set both here and as {exp_name}: keep one"),
                ))
            }
            (None, Some(_)) if !EXPERIMENTAL.contains(&key) => {
                return Err(invalid(
                    exp_name,
                    "not an experiment's knob: set it under [gpu]",
                ))
            }
            (None, Some(v)) => (exp_name, v),
            (Some(v), None) => (name, v),
            (None, None) => continue,
        };
        o.set(key, value).map_err(|reason| invalid(name, reason))?;
    }
    Ok(o)
}
