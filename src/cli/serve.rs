//! `baton serve`: the daemon's flags, `--cuzk-config` (a cuzk config file as the lowest layer of
//! the configuration), and the runtime it runs on.

use std::path::PathBuf;

use baton::config::cuzk::CuzkConfig;
use baton::config::ConfigError;
use baton::Config;

use super::overrides::{overridden, Overrides};

/// The flags of `baton serve`.
#[derive(clap::Args)]
#[command(
    after_help = "Precedence, lowest first: --cuzk-config, baton.toml (or $BATON_CONFIG), \
BATON_* variables, these flags. `baton serve --cuzk-config /data/zk/cuzk.toml` runs where cuzk \
ran; README.md, \"Switching from cuzk\", has the key mapping."
)]
pub struct ServeArgs {
    /// Override server.listen: HOST:PORT or unix:///path.sock.
    #[arg(long)]
    listen: Option<String>,
    /// Override server.state_dir: where the journal and built-in keys live.
    #[arg(long)]
    state_dir: Option<PathBuf>,
    /// Read a cuzk daemon config (e.g. /data/zk/cuzk.toml) and map its keys onto baton's (keys
    /// with no equivalent are listed in one warning); baton.toml, BATON_* and these flags win.
    #[arg(long, value_name = "PATH")]
    cuzk_config: Option<PathBuf>,
    #[command(flatten)]
    overrides: Overrides,
}

impl ServeArgs {
    /// Reads `--cuzk-config` and sets the environment variables it maps to (the parameter
    /// cache, rayon's threads) where unset. Call before any other thread starts.
    pub fn read_cuzk(&self) -> Result<Option<CuzkConfig>, String> {
        let Some(path) = &self.cuzk_config else {
            return Ok(None);
        };
        let c = CuzkConfig::read(path).map_err(|e| e.to_string())?;
        c.apply_env();
        Ok(Some(c))
    }
}

/// A configuration error, naming the flag or the cuzk key that set the value where one did.
fn explain(e: ConfigError, args: &ServeArgs, cuzk: Option<&CuzkConfig>) -> String {
    let ConfigError::Invalid { key, .. } = &e else {
        return e.to_string();
    };
    let flag = match *key {
        "server.listen" if args.listen.is_some() => Some("--listen"),
        "server.state_dir" if args.state_dir.is_some() => Some("--state-dir"),
        _ => None,
    };
    match (flag, cuzk.and_then(|c| Some((c.origin(key)?, c)))) {
        (Some(flag), _) => format!("{flag}: {e}"),
        (None, Some((from, c))) => format!(
            "{e} ({key} is cuzk's {from} from {}, unless baton.toml or BATON_* set it)",
            c.path.display()
        ),
        (None, None) => e.to_string(),
    }
}

/// Runs the daemon until it has drained.
pub fn run(args: ServeArgs, cuzk: Option<CuzkConfig>) -> Result<bool, String> {
    let base = match &cuzk {
        Some(c) => {
            tracing::info!("{}", c.mapped_line());
            if let Some(line) = c.unmapped_line() {
                tracing::warn!("{line}");
            }
            c.layer()
        }
        None => Vec::new(),
    };
    // The flags go on top of every layer, so a file's listen address they replace is never
    // checked on its own.
    let mut top = Vec::new();
    if let Some(l) = &args.listen {
        top.push(("server.listen".to_string(), l.clone()));
    }
    if let Some(d) = &args.state_dir {
        top.push(("server.state_dir".to_string(), d.display().to_string()));
    }
    let cfg = Config::load_layered(&base, &top).map_err(|e| explain(e, &args, cuzk.as_ref()))?;
    let cfg = overridden(cfg, args.overrides)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("baton-serve")
        .build()
        .map_err(|e| e.to_string())?;
    runtime
        .block_on(baton::server::serve(cfg))
        .map(|()| true)
        .map_err(|e| e.to_string())
}
