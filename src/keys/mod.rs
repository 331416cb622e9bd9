//! Proving keys by file: the process-wide store every job shares (`store`: preload, list,
//! evict), checking a key file once and then trusting it by identity or content (`trust`), and
//! where baton keeps its own files for a key, outside the parameter directory (`files`).

pub mod files;
pub mod store;
pub mod trust;
