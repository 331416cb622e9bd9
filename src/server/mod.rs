//! x
/// Generated gRPC code.
pub mod proto;
