//! `baton serve --cuzk-config`: a cuzk daemon config file (`cuzk.toml`, as Curio deploys it)
//! read as the lowest layer of baton's configuration, under baton.toml and `BATON_*`. Each cuzk
//! key with an equivalent maps onto a baton key or onto the environment variable the part of
//! baton that does the same work reads; the file is taken as cuzk takes it, so cuzk's defaults
//! stand in for the keys it leaves out. The other keys (cuzk's deprecated ones, ones cuzk does
//! not know either) are listed, never fatal: cuzk ignores keys it does not know.

use std::path::{Path, PathBuf};

use super::server::Listen;
use crate::units::parse_bytes;

/// Where a cuzk key's value goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A baton config key (`server.listen`).
    Key(&'static str),
    /// An environment variable, set at start unless the environment already has it.
    Env(&'static str),
}

/// A cuzk key with an equivalent in baton.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mapped {
    /// The cuzk key (`daemon.listen`).
    pub cuzk: &'static str,
    /// Where it goes.
    pub target: Target,
    /// The value as baton reads it; `None` when it asks for what baton does anyway (cuzk's
    /// `0 = auto` counts, an empty `status_listen`).
    pub value: Option<String>,
    /// The file leaves the key out: the value is cuzk's default.
    pub default: bool,
}

/// A cuzk config file, mapped.
#[derive(Clone, Debug)]
pub struct CuzkConfig {
    /// The file.
    pub path: PathBuf,
    /// Its keys with an equivalent (and cuzk's defaults for those it leaves out).
    pub mapped: Vec<Mapped>,
    /// Keys cuzk knows that baton has no equivalent for (its deprecated ones included), sorted.
    pub unmapped: Vec<String>,
    /// Keys cuzk does not know either, sorted.
    pub unknown: Vec<String>,
}

/// Why a cuzk config file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CuzkError {
    /// The file cannot be read or is not TOML.
    #[error("--cuzk-config {path}: {reason}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// A key has a value cuzk would not take either.
    #[error("--cuzk-config {path}: key `{key}`: {reason}")]
    Invalid {
        /// The file.
        path: String,
        /// The cuzk key.
        key: String,
        /// Why.
        reason: String,
    },
}

/// Every key cuzk reads (cuzk-core's config.rs), the deprecated ones included.
const CUZK_KEYS: [&str; 25] = [
    "daemon.listen",
    "daemon.status_listen",
    "srs.param_cache",
    "srs.preload",
    "memory.total_budget",
    "memory.safety_margin",
    "memory.eviction_min_idle",
    "memory.pinned_budget",
    "memory.working_memory_budget",
    "gpus.devices",
    "gpus.gpu_threads",
    "gpus.gpu_workers_per_device",
    "scheduler.max_batch_size",
    "scheduler.max_batch_wait_ms",
    "scheduler.sort_by_type",
    "synthesis.threads",
    "synthesis.partition_workers",
    "pipeline.enabled",
    "pipeline.synthesis_lookahead",
    "pipeline.synthesis_concurrency",
    "pipeline.max_parallel_synthesis",
    "pipeline.slot_size",
    "pipeline.max_gpu_queue_depth",
    "logging.level",
    "logging.format",
];

/// cuzk's defaults for the mapped keys whose default differs from baton's.
const CUZK_DEFAULTS: [(&str, &str); 3] = [
    ("daemon.listen", "unix:///run/curio/cuzk.sock"),
    ("srs.param_cache", "/data/zk/params"),
    ("memory.safety_margin", "5GiB"),
];

/// A scalar as text (cuzk writes sizes as strings and counts as integers; both are taken).
fn text(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.trim().to_string()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A whole number ≥ 0.
fn count(v: &toml::Value) -> Result<u64, String> {
    text(v)
        .and_then(|t| t.parse::<u64>().ok())
        .ok_or_else(|| format!("expected a whole number, got {v}"))
}

/// Where cuzk key `key` goes and its value there; `Ok(None)` when baton has no equivalent.
fn map(key: &str, v: &toml::Value) -> Result<Option<(Target, Option<String>)>, String> {
    let string = || text(v).ok_or_else(|| format!("expected a string, got {v}"));
    let size = || {
        let t = string()?;
        parse_bytes(&t)
            .map(|b| b.to_string())
            .ok_or_else(|| format!("expected a size like \"5GiB\" or a byte count, got {t:?}"))
    };
    let threads = |to: Target| count(v).map(|n| (to, (n > 0).then(|| n.to_string())));
    Ok(Some(match key {
        "daemon.listen" => {
            let l = string()?;
            Listen::parse(&l).map_err(|e| e.reason)?;
            (Target::Key("server.listen"), Some(l))
        }
        "daemon.status_listen" => {
            let l = string()?;
            if !l.is_empty() && l.parse::<std::net::SocketAddr>().is_err() {
                return Err(format!("expected IP:PORT like 0.0.0.0:9821, got {l:?}"));
            }
            (
                Target::Key("metrics.listen"),
                Some(l).filter(|l| !l.is_empty()),
            )
        }
        "srs.param_cache" => (Target::Env("FIL_PROOFS_PARAMETER_CACHE"), Some(string()?)),
        "memory.total_budget" => match string()?.as_str() {
            "auto" => (Target::Key("memory.budget"), Some("auto".into())),
            _ => (Target::Key("memory.budget"), Some(size()?)),
        },
        "memory.safety_margin" => (Target::Key("memory.margin"), Some(size()?)),
        "gpus.devices" => {
            let list = v
                .as_array()
                .ok_or_else(|| format!("expected a list, got {v}"))?;
            let ids = list.iter().map(count).collect::<Result<Vec<u64>, _>>()?;
            let ids: Vec<String> = ids.iter().map(u64::to_string).collect();
            let all = ids.is_empty().then(|| "all".to_string());
            (Target::Key("gpu.devices"), all.or(Some(ids.join(","))))
        }
        "synthesis.threads" => threads(Target::Env("RAYON_NUM_THREADS"))?,
        "pipeline.max_parallel_synthesis" => threads(Target::Key("synthesis.workers"))?,
        "logging.level" => (Target::Key("log.level"), Some(string()?)),
        _ => return Ok(None),
    }))
}

/// Every `section.key` of `table` with its value, sub-tables flattened.
fn flatten(prefix: &str, table: &toml::Table, out: &mut Vec<(String, toml::Value)>) {
    for (k, v) in table {
        let key = match prefix {
            "" => k.clone(),
            p => format!("{p}.{k}"),
        };
        match v {
            toml::Value::Table(t) => flatten(&key, t, out),
            _ => out.push((key, v.clone())),
        }
    }
}

impl CuzkConfig {
    /// Reads and maps the file at `path`.
    pub fn read(path: &Path) -> Result<Self, CuzkError> {
        let text = std::fs::read_to_string(path).map_err(|e| CuzkError::Read {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        Self::parse(path, &text)
    }

    /// Maps `text`, the contents of the file at `path`.
    pub fn parse(path: &Path, text: &str) -> Result<Self, CuzkError> {
        let shown = path.display().to_string();
        let table: toml::Table = toml::from_str(text).map_err(|e| CuzkError::Read {
            path: shown.clone(),
            reason: e.to_string(),
        })?;
        let mut keys = Vec::new();
        flatten("", &table, &mut keys);
        for (key, value) in CUZK_DEFAULTS {
            if !keys.iter().any(|(k, _)| k == key) {
                keys.push((format!("default:{key}"), toml::Value::String(value.into())));
            }
        }
        let mut c = CuzkConfig {
            path: path.to_path_buf(),
            mapped: Vec::new(),
            unmapped: Vec::new(),
            unknown: Vec::new(),
        };
        for (key, value) in keys {
            let (name, default) = match key.strip_prefix("default:") {
                Some(k) => (k.to_string(), true),
                None => (key, false),
            };
            let invalid = |reason| CuzkError::Invalid {
                path: shown.clone(),
                key: name.clone(),
                reason,
            };
            match (
                map(&name, &value).map_err(invalid)?,
                CUZK_KEYS.iter().find(|k| **k == name),
            ) {
                (Some((target, value)), Some(cuzk)) => c.mapped.push(Mapped {
                    cuzk,
                    target,
                    value,
                    default,
                }),
                (None, Some(_)) => c.unmapped.push(name),
                _ => c.unknown.push(name),
            }
        }
        c.unmapped.sort();
        c.unknown.sort();
        Ok(c)
    }

    /// The baton keys and values, the base layer of
    /// [`Config::load_layered`](super::Config::load_layered).
    pub fn layer(&self) -> Vec<(String, String)> {
        self.mapped
            .iter()
            .filter_map(|m| match (m.target, &m.value) {
                (Target::Key(k), Some(v)) => Some((k.to_string(), v.clone())),
                _ => None,
            })
            .collect()
    }

    /// The environment variables to set, and their values.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        self.mapped
            .iter()
            .filter_map(|m| match (m.target, &m.value) {
                (Target::Env(k), Some(v)) => Some((k, v.clone())),
                _ => None,
            })
            .collect()
    }

    /// Sets [`CuzkConfig::env`]'s variables that the environment does not have yet; returns
    /// those set. Call before any other thread starts (no thread may read the environment
    /// meanwhile).
    pub fn apply_env(&self) -> Vec<(&'static str, String)> {
        let unset: Vec<_> = self
            .env()
            .into_iter()
            .filter(|(k, _)| std::env::var_os(k).is_none())
            .collect();
        for (k, v) in &unset {
            std::env::set_var(k, v);
        }
        unset
    }

    /// `logging.level`, for the log filter.
    pub fn log_level(&self) -> Option<&str> {
        self.mapped
            .iter()
            .find(|m| m.target == Target::Key("log.level"))
            .and_then(|m| m.value.as_deref())
    }

    /// The cuzk key that set baton key `key`, if any.
    pub fn origin(&self, key: &str) -> Option<&'static str> {
        self.mapped
            .iter()
            .find(|m| matches!(m.target, Target::Key(k) if k == key) && m.value.is_some())
            .map(|m| m.cuzk)
    }

    /// One line naming every key left unused, or `None` when all were mapped.
    pub fn unmapped_line(&self) -> Option<String> {
        if self.unmapped.is_empty() && self.unknown.is_empty() {
            return None;
        }
        let mut line = format!(
            "--cuzk-config {}: ignored, no equivalent in baton: {}",
            self.path.display(),
            self.unmapped.join(", ")
        );
        if !self.unknown.is_empty() {
            line += &format!("; unknown to cuzk too: {}", self.unknown.join(", "));
        }
        Some(line)
    }

    /// One line saying where each mapped key went.
    pub fn mapped_line(&self) -> String {
        let each: Vec<String> = self
            .mapped
            .iter()
            .map(|m| {
                let to = match m.target {
                    Target::Key(k) => k.to_string(),
                    Target::Env(v) => format!("${v}"),
                };
                let from = match m.default {
                    true => format!("{} (cuzk's default)", m.cuzk),
                    false => m.cuzk.to_string(),
                };
                match &m.value {
                    Some(v) => format!("{from} → {to} = {v}"),
                    None => format!("{from} → {to}: nothing to set"),
                }
            })
            .collect();
        format!("--cuzk-config {}: {}", self.path.display(), each.join(", "))
    }
}

#[cfg(test)]
mod tests;
