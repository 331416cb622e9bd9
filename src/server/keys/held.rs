//! The daemon's handle on its key store ([`Keys`]): the store itself (created by whoever starts
//! the daemon and shared with the Filecoin jobs it builds), the directory its built-in keys are
//! cached in, and the turn to make room for a job's key ([`Keys::room`]). It maps circuit ids to
//! where their keys come from and leases a job's built-in key.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crate::keys::store::{KeyLease, KeyLoadError, KeyStore, Source};
use crate::server::error::CallError;
use crate::server::requests::kinds::KeySource;

/// The daemon's keys.
pub struct Keys {
    store: Arc<KeyStore>,
    dir: PathBuf,
    /// Held while a job makes room for its key and is handed to the engine.
    room: tokio::sync::Mutex<()>,
    /// One turn per built-in circuit id: its jobs take their leases in the order they asked.
    gates: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl Keys {
    /// The daemon's handle on `store`, its built-in keys cached in `dir`.
    pub fn new(store: Arc<KeyStore>, dir: PathBuf) -> Arc<Self> {
        Arc::new(Keys {
            store,
            dir,
            room: tokio::sync::Mutex::new(()),
            gates: Mutex::new(HashMap::new()),
        })
    }

    /// The store.
    pub fn store(&self) -> &Arc<KeyStore> {
        &self.store
    }

    /// Waits for the turn to make room for a job's key and hand the job to the engine: one job
    /// at a time, so that two arriving together do not both evict for the same room.
    pub async fn room(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.room.lock().await
    }

    /// Where the key of circuit `id` (built-in or Filecoin) comes from, or why there is none.
    pub fn source(&self, id: &str) -> Result<Source, CallError> {
        #[cfg(feature = "filecoin")]
        if let Some(circuit) = super::filecoin::circuit_of(id) {
            return super::filecoin::source(circuit?);
        }
        let key = KeySource::from_circuit_id(id).map_err(CallError::from)?;
        Ok(super::builtin::source(&self.dir, &key))
    }

    /// About how many bytes circuit `id`'s key takes once read, when it is not resident (nor
    /// being loaded) and its file exists: the file's size, its points being stored
    /// uncompressed as they are held. `None` otherwise (a built-in key not made yet is a
    /// test circuit's, small).
    pub fn bytes_to_load(&self, id: &str) -> Option<u64> {
        if self.store.list().iter().any(|k| k.circuit_id == id) {
            return None;
        }
        let path = match self.source(id).ok()? {
            Source::File(path) => path,
            Source::Made(_) => {
                let key = KeySource::from_circuit_id(id).ok()?;
                super::builtin::cached_path(&self.dir, &key)
            }
        };
        std::fs::metadata(path).ok().map(|m| m.len())
    }

    /// The built-in key of one job, made or read on a blocking thread if it is not resident;
    /// the lease counts the job until dropped. Jobs of one key take it in the order they asked:
    /// the first makes it and goes on to the engine before the next is woken, so that jobs
    /// waiting for one key reach the engine in their order.
    pub async fn lease(&self, key: &KeySource) -> Result<KeyLease, KeyLoadError> {
        let (store, id) = (self.store.clone(), key.circuit_id());
        let gate = self.gate(&id);
        let turn = gate.lock().await;
        let source = super::builtin::source(&self.dir, key);
        let circuit = id.clone();
        let lease = tokio::task::spawn_blocking(move || store.lease(&circuit, source))
            .await
            .map_err(|e| KeyLoadError::Made {
                circuit_id: id.clone(),
                reason: format!("the loader stopped: {e}"),
            });
        drop(turn);
        self.forget_gate(&id, gate);
        lease?
    }

    fn gates(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<tokio::sync::Mutex<()>>>> {
        // A panic while holding this lock leaves a map of plain gates.
        self.gates.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The turn of circuit `id`'s jobs.
    fn gate(&self, id: &str) -> Arc<tokio::sync::Mutex<()>> {
        self.gates().entry(id.to_string()).or_default().clone()
    }

    /// Drops circuit `id`'s turn from the map when no other job holds or waits for it.
    fn forget_gate(&self, id: &str, gate: Arc<tokio::sync::Mutex<()>>) {
        let mut gates = self.gates();
        // The map's reference and `gate`: nobody else has it.
        if Arc::strong_count(&gate) == 2 {
            gates.remove(id);
        }
    }
}
