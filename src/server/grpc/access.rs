//! Who may call and how much they may send, checked before any handler runs: the client's
//! address against `server.allow_clients`, the bearer token (`authorization: Bearer <token>`),
//! UNAUTHENTICATED otherwise, and the size of the request message, read from its 5-byte gRPC
//! frame header so that an oversized message is refused with RESOURCE_EXHAUSTED after its first
//! bytes, never buffered. Every refusal is counted (`baton_server_refusals_total`) and logged
//! with the client's address.

use std::collections::VecDeque;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes};
use http::{Request, Response};
use http_body::Frame;
use http_body_util::BodyExt;
use tonic::body::Body;
use tonic::transport::server::{TcpConnectInfo, TlsConnectInfo, UdsConnectInfo};
use tonic::Status;

use crate::config::{Cidr, ServerConfig};
use crate::metrics::{Endpoint, Metrics, Refusal};

/// Where a call came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    /// A TCP client at this address.
    Ip(IpAddr),
    /// A client of the Unix socket: this machine.
    Unix,
    /// The transport did not say (never admitted as local).
    Unknown,
}

impl Peer {
    /// The peer of a gRPC call, from the connection info tonic puts in its extensions.
    pub fn of<B>(req: &Request<B>) -> Self {
        let ext = req.extensions();
        let tcp = ext.get::<TcpConnectInfo>().and_then(|i| i.remote_addr());
        let tls = || {
            ext.get::<TlsConnectInfo<TcpConnectInfo>>()
                .and_then(|i| i.get_ref().remote_addr())
        };
        match tcp.or_else(tls) {
            Some(a) => Peer::Ip(a.ip().to_canonical()),
            None if ext.get::<UdsConnectInfo>().is_some() => Peer::Unix,
            None => Peer::Unknown,
        }
    }

    /// On this machine: a loopback address or the Unix socket.
    pub fn is_local(&self) -> bool {
        match self {
            Peer::Ip(ip) => ip.is_loopback(),
            Peer::Unix => true,
            Peer::Unknown => false,
        }
    }
}

impl std::fmt::Display for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Peer::Ip(ip) => write!(f, "{ip}"),
            Peer::Unix => f.write_str("the unix socket"),
            Peer::Unknown => f.write_str("an unknown address"),
        }
    }
}

/// Who may call: the bearer token, the client ranges admitted without it, and where refusals
/// are counted. Shared by the gRPC service and the HTTP port.
#[derive(Clone)]
pub struct Gate {
    token: Option<Arc<str>>,
    allow: Arc<[Cidr]>,
    metrics: Option<Metrics>,
}

/// Compares without stopping at the first difference.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl Gate {
    /// Calls need `token` when it is set, except from `allow_clients`; refusals are counted in
    /// `metrics` when given.
    pub fn new(token: Option<String>, allow_clients: Vec<Cidr>, metrics: Option<Metrics>) -> Self {
        Gate {
            token: token.map(Arc::from),
            allow: allow_clients.into(),
            metrics,
        }
    }

    /// The gate of the `[server]` section.
    pub fn of_config(s: &ServerConfig, metrics: Option<Metrics>) -> Self {
        Self::new(s.token.clone(), s.allow_clients.clone(), metrics)
    }

    /// Decides for a call from `peer` carrying the `authorization` value given. A client in
    /// `allow_clients` passes; otherwise, with a token set, the call needs it; without one, a
    /// client outside the ranges passes only from this machine (or when there are no ranges:
    /// a loopback listener, or TLS alone). On the HTTP port this machine always passes.
    pub fn admit(
        &self,
        endpoint: Endpoint,
        peer: Peer,
        authorization: Option<&str>,
    ) -> Result<(), Refusal> {
        if endpoint == Endpoint::Http && peer.is_local() {
            return Ok(());
        }
        if let Peer::Ip(ip) = peer {
            if self.allow.iter().any(|c| c.contains(ip)) {
                return Ok(());
            }
        }
        let Some(token) = &self.token else {
            return match self.allow.is_empty() || peer.is_local() {
                true => Ok(()),
                false => Err(Refusal::NotAllowed),
            };
        };
        match authorization.and_then(|v| v.strip_prefix("Bearer ")) {
            None => Err(Refusal::NoToken),
            Some(t) if same(t.trim().as_bytes(), token.as_bytes()) => Ok(()),
            Some(_) => Err(Refusal::WrongToken),
        }
    }

    /// What to tell a client refused for `why`: what would admit it.
    pub fn explain(&self, why: Refusal, peer: Peer) -> String {
        let ranges = || {
            let list: Vec<String> = self.allow.iter().map(|c| c.to_string()).collect();
            list.join(", ")
        };
        let or_range = match self.allow.is_empty() {
            true => String::new(),
            false => format!(
                ", or call from an address in server.allow_clients ({})",
                ranges()
            ),
        };
        match why {
            Refusal::NoToken => format!(
                "this daemon needs a bearer token: send \"authorization: Bearer <token>\"{or_range} (the call came from {peer})"
            ),
            Refusal::WrongToken => format!(
                "the bearer token is wrong: send the daemon's server.token{or_range} (the call came from {peer})"
            ),
            Refusal::NotAllowed => format!(
                "{peer} is not in server.allow_clients ({}): add a range that holds it, or set server.token and send \"authorization: Bearer <token>\"",
                ranges()
            ),
            Refusal::TooLarge => "the request message is larger than server.max_request_bytes".into(),
        }
    }

    /// Counts and logs a refusal of a call from `peer`.
    pub fn count(&self, endpoint: Endpoint, why: Refusal, peer: Peer, path: &str) {
        if let Some(m) = &self.metrics {
            m.refused(endpoint, why);
        }
        tracing::warn!(
            %peer,
            endpoint = endpoint.as_str(),
            reason = why.as_str(),
            path,
            "refused a call"
        );
    }

    /// [`Gate::admit`], counting, logging and explaining a refusal.
    pub fn check(
        &self,
        endpoint: Endpoint,
        peer: Peer,
        authorization: Option<&str>,
        path: &str,
    ) -> Result<(), String> {
        self.admit(endpoint, peer, authorization).map_err(|why| {
            self.count(endpoint, why, peer, path);
            self.explain(why, peer)
        })
    }
}

/// The checks, as a tower layer for `tonic::transport::Server::layer`.
#[derive(Clone)]
pub struct AccessLayer {
    gate: Gate,
    max_request_bytes: u64,
}

impl AccessLayer {
    /// Calls must pass `gate`; messages may be at most `max_request_bytes`.
    pub fn new(gate: Gate, max_request_bytes: u64) -> Self {
        AccessLayer {
            gate,
            max_request_bytes,
        }
    }
}

impl<S> tower::Layer<S> for AccessLayer {
    type Service = Access<S>;

    fn layer(&self, inner: S) -> Access<S> {
        Access {
            inner,
            rules: self.clone(),
        }
    }
}

/// The service [`AccessLayer`] wraps around the gRPC routes.
#[derive(Clone)]
pub struct Access<S> {
    inner: S,
    rules: AccessLayer,
}

/// A body that replays the frames already read, then the rest.
struct Replay {
    head: VecDeque<Bytes>,
    rest: Body,
}

impl http_body::Body for Replay {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Status>>> {
        if let Some(b) = self.head.pop_front() {
            return Poll::Ready(Some(Ok(Frame::data(b))));
        }
        Pin::new(&mut self.rest).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.head.is_empty() && self.rest.is_end_stream()
    }
}

/// Reads the first message's frame header; returns the declared length (if the body has one)
/// and a body that still yields every byte.
async fn peek_length(mut body: Body) -> Result<(Option<u64>, Body), Status> {
    let mut head = VecDeque::new();
    let mut have = 0usize;
    while have < 5 {
        match body.frame().await {
            Some(Ok(frame)) => match frame.into_data() {
                Ok(data) => {
                    have += data.len();
                    head.push_back(data);
                }
                // Trailers before 5 bytes: an empty or truncated message; the decoder says so.
                Err(_) => break,
            },
            Some(Err(e)) => return Err(e),
            None => break,
        }
    }
    let mut header = head.iter().flat_map(|b| b.chunk().iter().copied()).take(5);
    let len = match (header.next(), header.collect::<Vec<u8>>()) {
        (Some(_flag), rest) if rest.len() == 4 => {
            Some(u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]) as u64)
        }
        _ => None,
    };
    Ok((len, Body::new(Replay { head, rest: body })))
}

impl<S> tower::Service<Request<Body>> for Access<S>
where
    S: tower::Service<Request<Body>, Response = Response<Body>> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response<Body>;
    type Error = S::Error;
    type Future =
        Pin<Box<dyn std::future::Future<Output = Result<Response<Body>, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<Body>) -> Self::Future {
        // The clone that was polled ready serves this call.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let rules = self.rules.clone();
        Box::pin(async move {
            let peer = Peer::of(&req);
            let auth = req
                .headers()
                .get(http::header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok());
            let path = req.uri().path().to_string();
            if let Err(why) = rules.gate.check(Endpoint::Grpc, peer, auth, &path) {
                return Ok(Status::unauthenticated(why).into_http());
            }
            let (parts, body) = req.into_parts();
            let (len, body) = match peek_length(body).await {
                Ok(x) => x,
                Err(status) => return Ok(status.into_http()),
            };
            if let Some(len) = len.filter(|l| *l > rules.max_request_bytes) {
                rules
                    .gate
                    .count(Endpoint::Grpc, Refusal::TooLarge, peer, &path);
                return Ok(Status::resource_exhausted(format!(
                    "{path}: the request message is {len} bytes, more than server.max_request_bytes = {}",
                    rules.max_request_bytes
                ))
                .into_http());
            }
            inner.call(Request::from_parts(parts, body)).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> Peer {
        Peer::Ip(s.parse().expect("an address"))
    }

    fn ranges(list: &[&str]) -> Vec<Cidr> {
        list.iter()
            .map(|r| Cidr::parse(r).expect("a range"))
            .collect()
    }

    #[test]
    fn ranges_admit_without_a_token_and_the_token_admits_the_rest() {
        use Endpoint::{Grpc, Http};
        let m = Metrics::new().expect("metrics");
        let g = Gate::new(
            Some("s3cret".into()),
            ranges(&["10.0.0.0/8"]),
            Some(m.clone()),
        );
        assert_eq!(g.admit(Grpc, ip("10.9.8.7"), None), Ok(()));
        assert_eq!(g.admit(Grpc, ip("::ffff:10.9.8.7"), None), Ok(()));
        assert_eq!(
            g.admit(Grpc, ip("192.168.0.2"), None),
            Err(Refusal::NoToken)
        );
        assert_eq!(
            g.admit(Grpc, ip("192.168.0.2"), Some("Bearer nope")),
            Err(Refusal::WrongToken)
        );
        assert_eq!(
            g.admit(Grpc, ip("192.168.0.2"), Some("Bearer s3cret")),
            Ok(())
        );
        // With a token set, this machine needs it on gRPC as before, not on the HTTP port.
        assert_eq!(g.admit(Grpc, ip("127.0.0.1"), None), Err(Refusal::NoToken));
        assert_eq!(g.admit(Grpc, Peer::Unix, None), Err(Refusal::NoToken));
        assert_eq!(g.admit(Http, ip("127.0.0.1"), None), Ok(()));
        assert_eq!(
            g.admit(Http, ip("192.168.0.2"), None),
            Err(Refusal::NoToken)
        );
        let why = g
            .check(
                Grpc,
                ip("192.168.0.2"),
                None,
                "/cuzk.v1.ProvingEngine/Prove",
            )
            .expect_err("refused");
        for needle in [
            "bearer token",
            "server.allow_clients",
            "10.0.0.0/8",
            "192.168.0.2",
        ] {
            assert!(why.contains(needle), "{needle}: {why}");
        }
        assert!(m
            .render()
            .contains(r#"baton_server_refusals_total{endpoint="grpc",reason="no_token"} 1"#));

        // No token: the ranges and this machine only.
        let g = Gate::new(None, ranges(&["10.0.0.0/8", "::1/128"]), None);
        assert_eq!(g.admit(Grpc, ip("10.0.0.1"), None), Ok(()));
        assert_eq!(g.admit(Grpc, ip("127.0.0.1"), None), Ok(()));
        assert_eq!(g.admit(Grpc, Peer::Unix, None), Ok(()));
        assert_eq!(
            g.admit(Grpc, ip("11.0.0.1"), None),
            Err(Refusal::NotAllowed)
        );
        assert_eq!(
            g.admit(Grpc, ip("11.0.0.1"), Some("Bearer x")),
            Err(Refusal::NotAllowed)
        );
        assert_eq!(g.admit(Grpc, Peer::Unknown, None), Err(Refusal::NotAllowed));
        let why = g.explain(Refusal::NotAllowed, ip("11.0.0.1"));
        for needle in [
            "11.0.0.1",
            "server.allow_clients",
            "10.0.0.0/8, ::1/128",
            "server.token",
        ] {
            assert!(why.contains(needle), "{needle}: {why}");
        }

        // Neither (a loopback listener, or TLS alone): everyone who reaches the port.
        let g = Gate::new(None, Vec::new(), None);
        assert_eq!(g.admit(Grpc, ip("11.0.0.1"), None), Ok(()));
        assert_eq!(g.admit(Http, ip("11.0.0.1"), None), Ok(()));
    }
}
