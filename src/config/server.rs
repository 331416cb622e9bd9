//! The `[server]` section: what `baton serve` listens on, where its journal lives, who may call
//! it (a token, TLS, client address ranges), how large a request may be, and how long finished
//! proofs are kept.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;

use serde::Deserialize;

pub use super::cidr::Cidr;

/// A `[server]` key with a value that cannot be used (config.rs turns it into its
/// `ConfigError::Invalid`; this file imports nothing from its parent, so no import circle).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("config key `{key}`: {reason}")]
pub struct ServerConfigError {
    /// The dotted key.
    pub key: &'static str,
    /// Why.
    pub reason: String,
}

fn invalid(key: &'static str, reason: impl Into<String>) -> ServerConfigError {
    ServerConfigError {
        key,
        reason: reason.into(),
    }
}

/// cuzk's port, on loopback.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:9820";

/// Where the daemon listens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Listen {
    /// A TCP address.
    Tcp(SocketAddr),
    /// A Unix socket path (`unix:///run/baton.sock`).
    Unix(PathBuf),
}

impl Listen {
    /// Parses `HOST:PORT` (an IP address or `localhost`) or `unix:///path.sock`.
    pub fn parse(s: &str) -> Result<Self, ServerConfigError> {
        let s = s.trim();
        if let Some(path) = s
            .strip_prefix("unix://")
            .or_else(|| s.strip_prefix("unix:"))
        {
            if !path.starts_with('/') {
                return Err(invalid(
                    "server.listen",
                    format!("a unix socket needs an absolute path, like unix:///run/baton.sock; got {s:?}"),
                ));
            }
            return Ok(Listen::Unix(PathBuf::from(path)));
        }
        if let Some(port) = s.strip_prefix("localhost:") {
            if let Ok(port) = port.parse::<u16>() {
                return Ok(Listen::Tcp(SocketAddr::new(
                    IpAddr::V4(Ipv4Addr::LOCALHOST),
                    port,
                )));
            }
        }
        s.parse().map(Listen::Tcp).map_err(|_| {
            invalid(
                "server.listen",
                format!("expected HOST:PORT (like 127.0.0.1:9820) or unix:///path.sock, got {s:?}"),
            )
        })
    }

    /// Whether only this machine can reach it (a loopback address or a Unix socket).
    pub fn is_local(&self) -> bool {
        match self {
            Listen::Tcp(a) => a.ip().is_loopback(),
            Listen::Unix(_) => true,
        }
    }
}

impl std::fmt::Display for Listen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Listen::Tcp(a) => write!(f, "{a}"),
            Listen::Unix(p) => write!(f, "unix://{}", p.display()),
        }
    }
}

/// The validated `[server]` section.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Where the gRPC service listens.
    pub listen: Listen,
    /// The journal and the daemon's key cache live here.
    pub state_dir: PathBuf,
    /// Largest request message accepted; larger ones get RESOURCE_EXHAUSTED unread.
    pub max_request_bytes: u64,
    /// Bearer token every call must carry (`authorization: Bearer <token>`); required for a
    /// listen address other machines can reach.
    pub token: Option<String>,
    /// PEM certificate chain and key for TLS (both or neither).
    pub tls: Option<(PathBuf, PathBuf)>,
    /// Clients whose address lies in one of these ranges are admitted without a token (Curio
    /// dials without one).
    pub allow_clients: Vec<Cidr>,
    /// How long finished jobs (and their proofs) stay in the journal.
    pub retention_secs: u64,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            listen: Listen::Tcp(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 9820)),
            state_dir: default_state_dir(),
            // What Curio's client allows itself to send (a 32 GiB C1 output is ~50 MB).
            max_request_bytes: 256 << 20,
            token: None,
            tls: None,
            allow_clients: Vec::new(),
            retention_secs: 7 * 24 * 3600,
        }
    }
}

/// `$XDG_STATE_HOME/baton`, else `~/.local/state/baton`, else `./baton-state`.
fn default_state_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("XDG_STATE_HOME") {
        return PathBuf::from(d).join("baton");
    }
    match std::env::var_os("HOME") {
        Some(h) => PathBuf::from(h).join(".local/state/baton"),
        None => PathBuf::from("baton-state"),
    }
}

/// The section as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawServer {
    listen: Option<String>,
    state_dir: Option<String>,
    max_request_bytes: Option<String>,
    token: Option<String>,
    tls_cert: Option<String>,
    tls_key: Option<String>,
    allow_clients: Option<RawList>,
    retention: Option<String>,
}

/// A list key: a TOML array, or a comma-separated string (as the environment gives it).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum RawList {
    List(Vec<String>),
    Text(String),
}

impl RawList {
    fn items(self) -> Vec<String> {
        match self {
            RawList::List(v) => v,
            RawList::Text(t) => t.split(',').map(str::to_string).collect(),
        }
        .into_iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
    }
}

/// Parses `"90s"`, `"30m"`, `"12h"`, `"7d"` or a number of seconds.
pub fn parse_duration_secs(s: &str) -> Option<u64> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: u64 = num.parse().ok()?;
    let mult = match unit.trim() {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return None,
    };
    n.checked_mul(mult)
}

impl ServerConfig {
    /// Validates the section as written; `size` parses byte sizes ("256MiB"), as config.rs does
    /// for every size key.
    pub(super) fn from_raw(
        raw: RawServer,
        size: impl Fn(&str) -> Option<u64>,
    ) -> Result<Self, ServerConfigError> {
        let mut c = ServerConfig::default();
        if let Some(l) = raw.listen {
            c.listen = Listen::parse(&l)?;
        }
        if let Some(d) = raw.state_dir {
            if d.trim().is_empty() {
                return Err(invalid("server.state_dir", "must not be empty"));
            }
            c.state_dir = PathBuf::from(d);
        }
        if let Some(m) = raw.max_request_bytes {
            c.max_request_bytes = match size(&m) {
                Some(v) if v >= 1024 => v,
                _ => {
                    return Err(invalid(
                        "server.max_request_bytes",
                        format!("expected a size of at least 1 KiB, like \"256MiB\", got {m:?}"),
                    ))
                }
            };
        }
        c.token = raw.token.filter(|t| !t.is_empty());
        c.tls = match (raw.tls_cert, raw.tls_key) {
            (Some(cert), Some(key)) => Some((cert.into(), key.into())),
            (None, None) => None,
            _ => {
                return Err(invalid(
                    "server.tls_cert",
                    "TLS needs both server.tls_cert and server.tls_key",
                ))
            }
        };
        if let Some(list) = raw.allow_clients {
            c.allow_clients = list
                .items()
                .iter()
                .map(|s| Cidr::parse(s).map_err(|reason| invalid("server.allow_clients", reason)))
                .collect::<Result<_, _>>()?;
        }
        if let Some(r) = raw.retention {
            c.retention_secs = parse_duration_secs(&r).ok_or_else(|| {
                invalid(
                    "server.retention",
                    format!("expected a duration like \"7d\", \"12h\" or \"3600s\", got {r:?}"),
                )
            })?;
        }
        c.validate()?;
        Ok(c)
    }

    /// Refuses a listen address other machines can reach unless something guards it: a token,
    /// TLS or a list of client ranges. TLS alone encrypts but admits every client that reaches
    /// the port (the operator chose it; `serve` warns).
    pub fn validate(&self) -> Result<(), ServerConfigError> {
        if !self.listen.is_local()
            && self.token.is_none()
            && self.tls.is_none()
            && self.allow_clients.is_empty()
        {
            return Err(invalid(
                "server.listen",
                format!(
                    "{} can be reached from other machines: set server.token (calls then need a bearer token), server.tls_cert and server.tls_key (TLS), or server.allow_clients (client address ranges admitted without a token, e.g. [\"10.0.0.0/8\"]), or listen on loopback",
                    self.listen
                ),
            ));
        }
        Ok(())
    }

    /// Whether every client that reaches a listen address other machines can reach is
    /// admitted: TLS is set but neither a token nor client ranges.
    pub fn admits_anyone_remote(&self) -> bool {
        !self.listen.is_local() && self.token.is_none() && self.allow_clients.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_forms_and_the_token_rule() {
        assert_eq!(
            Listen::parse("unix:///run/b.sock").ok(),
            Some(Listen::Unix("/run/b.sock".into()))
        );
        assert!(Listen::parse("unix://relative.sock").is_err());
        assert!(Listen::parse("localhost:9820").is_ok_and(|l| l.is_local()));
        assert!(Listen::parse("[::1]:1").is_ok_and(|l| l.is_local()));
        assert!(Listen::parse("0.0.0.0:9820").is_ok_and(|l| !l.is_local()));
        let err = Listen::parse("nowhere").expect_err("not an address");
        assert!(err.to_string().contains("server.listen"), "{err}");
        let open = RawServer {
            listen: Some("0.0.0.0:9820".into()),
            ..RawServer::default()
        };
        let err = ServerConfig::from_raw(open, crate::config::parse_bytes).expect_err("no token");
        for key in ["server.token", "server.tls_cert", "server.allow_clients"] {
            assert!(err.to_string().contains(key), "{err}");
        }
        let open = RawServer {
            listen: Some("0.0.0.0:9820".into()),
            token: Some("s3cret".into()),
            retention: Some("2h".into()),
            ..RawServer::default()
        };
        let c = ServerConfig::from_raw(open, crate::config::parse_bytes).expect("token given");
        assert_eq!(c.retention_secs, 7200);
        assert_eq!(parse_duration_secs("7d"), Some(604_800));
        assert_eq!(parse_duration_secs("soon"), None);
        let half_tls = RawServer {
            tls_cert: Some("c.pem".into()),
            ..RawServer::default()
        };
        assert!(ServerConfig::from_raw(half_tls, crate::config::parse_bytes).is_err());
        let tiny = RawServer {
            max_request_bytes: Some("10".into()),
            ..RawServer::default()
        };
        assert!(ServerConfig::from_raw(tiny, crate::config::parse_bytes).is_err());

        let env = [
            (
                "BATON_SERVER_ALLOW_CLIENTS",
                "10.0.0.0/8, 192.168.1.7/32,::1/128",
            ),
            ("BATON_SERVER_STATE_DIR", "/tmp/baton-state"),
            ("BATON_SERVER_LISTEN", "0.0.0.0:1"),
            ("BATON_SERVER_TOKEN", "t"),
            ("BATON_SERVER_MAX_REQUEST_BYTES", "1MiB"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()));
        let c = crate::Config::load_from(std::path::Path::new("/nonexistent.toml"), env)
            .expect("env config");
        assert_eq!(c.server.state_dir, PathBuf::from("/tmp/baton-state"));
        assert_eq!(c.server.token.as_deref(), Some("t"));
        assert_eq!(c.server.max_request_bytes, 1 << 20);
        assert!(!c.server.listen.is_local());
        let ranges: Vec<String> = c
            .server
            .allow_clients
            .iter()
            .map(|r| r.to_string())
            .collect();
        assert_eq!(ranges, ["10.0.0.0/8", "192.168.1.7/32", "::1/128"]);
    }

    #[test]
    fn client_ranges_or_tls_open_a_reachable_listener() {
        let open = |extra: &str| {
            crate::Config::from_toml(&format!("[server]\nlisten = \"0.0.0.0:9820\"\n{extra}"))
                .map(|c| c.server)
        };
        let c = open("allow_clients = [\"10.0.0.0/8\"]").expect("a client range is enough");
        assert!(!c.admits_anyone_remote());
        assert!(c.allow_clients[0].contains("10.1.2.3".parse().expect("ip")));
        let c = open("tls_cert = \"c.pem\"\ntls_key = \"k.pem\"").expect("TLS is accepted");
        assert!(c.admits_anyone_remote(), "TLS alone authenticates nobody");
        let err =
            open("allow_clients = [\"10.0.0.0/8\", \"10.0.0.300/32\"]").expect_err("a bad range");
        let text = err.to_string();
        assert!(
            text.contains("server.allow_clients") && text.contains("10.0.0.300/32"),
            "{text}"
        );
        let empty = open("allow_clients = []").expect_err("an empty list guards nothing");
        assert!(
            empty.to_string().contains("server.allow_clients"),
            "{empty}"
        );
    }
}
