//! The daemon's handle on its key store ([`Keys`]): the store itself (created by whoever starts
//! the daemon and shared with the Filecoin jobs it builds), the directory its built-in keys are
//! cached in, and the turn to make room for a job's key ([`Keys::room`]). It maps circuit ids to
//! where their keys come from and leases a job's built-in key.

use std::path::PathBuf;
use std::sync::Arc;

use crate::keys::store::{KeyLease, KeyLoadError, KeyStore, Source};
use crate::server::error::CallError;
use crate::server::requests::kinds::KeySource;

/// The daemon's keys.
pub struct Keys {
    store: Arc<KeyStore>,
    dir: PathBuf,
    /// Held while a job makes room for its key and is handed to the engine.
    room: tokio::sync::Mutex<()>,
}

impl Keys {
    /// The daemon's handle on `store`, its built-in keys cached in `dir`.
    pub fn new(store: Arc<KeyStore>, dir: PathBuf) -> Arc<Self> {
        Arc::new(Keys {
            store,
            dir,
            room: tokio::sync::Mutex::new(()),
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

    /// The built-in key of one job, made or read on a blocking thread if it is not resident;
    /// the lease counts the job until dropped.
    pub async fn lease(&self, key: &KeySource) -> Result<KeyLease, KeyLoadError> {
        let (store, id) = (self.store.clone(), key.circuit_id());
        let source = super::builtin::source(&self.dir, key);
        let id2 = id.clone();
        tokio::task::spawn_blocking(move || store.lease(&id2, source))
            .await
            .map_err(|e| KeyLoadError::Made {
                circuit_id: id,
                reason: format!("the loader stopped: {e}"),
            })?
    }
}
