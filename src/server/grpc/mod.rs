//! What speaks gRPC: the client gate in front of every call (`access`: client address ranges,
//! bearer token, request size) and the `cuzk.v1.ProvingEngine` service (`service`), which turns
//! each call into a daemon operation and its [`CallError`](super::CallError) into a status.

pub mod access;
pub mod service;
