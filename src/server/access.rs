//! Who may call and how much they may send, checked before any handler runs: the bearer token
//! (`authorization: Bearer <token>`, UNAUTHENTICATED otherwise) and the size of the request
//! message, read from its 5-byte gRPC frame header so that an oversized message is refused with
//! RESOURCE_EXHAUSTED after its first bytes, never buffered.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes};
use http::{Request, Response};
use http_body::Frame;
use http_body_util::BodyExt;
use tonic::body::Body;
use tonic::Status;

/// The checks, as a tower layer for `tonic::transport::Server::layer`.
#[derive(Clone)]
pub struct AccessLayer {
    token: Option<Arc<str>>,
    max_request_bytes: u64,
}

impl AccessLayer {
    /// Calls need `token` when it is set; messages may be at most `max_request_bytes`.
    pub fn new(token: Option<String>, max_request_bytes: u64) -> Self {
        AccessLayer {
            token: token.map(Arc::from),
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

/// Compares without stopping at the first difference.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl AccessLayer {
    fn authorize(&self, req: &Request<Body>) -> Result<(), Status> {
        let Some(token) = &self.token else {
            return Ok(());
        };
        let given = req
            .headers()
            .get(http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        match given {
            None => Err(Status::unauthenticated(
                "this daemon needs a bearer token: send the metadata \"authorization: Bearer <token>\"",
            )),
            Some(t) if same(t.trim().as_bytes(), token.as_bytes()) => Ok(()),
            Some(_) => Err(Status::unauthenticated("the bearer token is wrong")),
        }
    }
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
            if let Err(status) = rules.authorize(&req) {
                return Ok(status.into_http());
            }
            let (parts, body) = req.into_parts();
            let (len, body) = match peek_length(body).await {
                Ok(x) => x,
                Err(status) => return Ok(status.into_http()),
            };
            if let Some(len) = len.filter(|l| *l > rules.max_request_bytes) {
                let path = parts.uri.path().to_string();
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
