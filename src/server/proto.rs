//! The code generated from `proto/cuzk/v1/proving.proto` (messages, server and client).

#![allow(missing_docs, clippy::all, clippy::pedantic)]

tonic::include_proto!("cuzk.v1");
