//! PreloadSRS, EvictSRS and GetStatus for the Filecoin circuits (feature `filecoin`; ids as
//! cuzk names them: `porep-32g`, `wpost-2k`, `winning-512m`, `snap-64g`). The keys live in the
//! Filecoin module's process-wide [`KeyStore`], read from filecoin-proofs' parameter cache and
//! shared by every job of the circuit; a key's users are the jobs holding it. Preloading also
//! pins the key in the engine, so its bytes count as resident in the ledger until evicted.

use std::sync::Arc;

use crate::engine::Engine;
use crate::filecoin::{CircuitId, Filecoin};
use crate::keys::store::{Evicted, KeyStore, Loaded};
use crate::server::error::CallError;
use crate::server::proto::{srs_status, EvictSrsResponse, PreloadSrsResponse, SrsStatus};

/// `None` when `id` does not look like a Filecoin circuit id; else the circuit, or why the id
/// is not one.
pub fn circuit_of(id: &str) -> Option<Result<CircuitId, CallError>> {
    let prefix = id.split_once('-')?.0;
    if !["porep", "wpost", "winning", "snap"].contains(&prefix) {
        return None;
    }
    Some(
        id.parse::<CircuitId>()
            .map_err(|e| CallError::Invalid(format!("unknown circuit id {id:?}: {e}"))),
    )
}

/// Loads the key of `circuit` (once per process) and pins it in the engine.
pub async fn preload(
    engine: &Engine,
    keys: &super::builtin::KeyStore,
    circuit: CircuitId,
) -> Result<PreloadSrsResponse, CallError> {
    let loaded = tokio::task::spawn_blocking(move || {
        Filecoin::from_env()
            .params()
            .load(circuit, KeyStore::global())
    })
    .await
    .map_err(|e| CallError::Internal(format!("the key loader stopped: {e}")))?;
    let (key, _, how) = loaded.map_err(|e| match e {
        e @ (crate::filecoin::FilecoinError::ParamsMissing { .. }
        | crate::filecoin::FilecoinError::Key(_)) => {
            CallError::Precondition(format!("{circuit}: {e}"))
        }
        e => CallError::Internal(format!("{circuit}: {e}")),
    })?;
    // Counted in turn with the jobs making room for their keys.
    let _turn = keys.room().await;
    engine
        .pin_key(key)
        .await
        .map_err(|e| CallError::Internal(e.to_string()))?;
    Ok(match how {
        Loaded::AlreadyLoaded => PreloadSrsResponse {
            already_loaded: true,
            load_time_ms: 0,
        },
        Loaded::Now { load_time, .. } => PreloadSrsResponse {
            already_loaded: false,
            load_time_ms: load_time.as_millis() as u64,
        },
    })
}

/// The engine's id of the resident key of `circuit`, if any (the reference is dropped at once,
/// so it does not count as a user).
pub(in crate::server) fn key_id(circuit: &str) -> Option<u64> {
    let store = KeyStore::global();
    let info = store.list().into_iter().find(|k| k.circuit_id == circuit)?;
    store.get(&info.path).map(|k: Arc<_>| k.id())
}

/// Drops the key of `circuit` unless a job holds it, and unpins it in the engine (counted and
/// logged by [`super::eviction::evict`], its one caller).
pub async fn evict(engine: &Engine, circuit: CircuitId) -> Result<EvictSrsResponse, CallError> {
    let id = circuit.to_string();
    let key = key_id(&id);
    let device = key.map_or(0, |k| engine.device_key_bytes(k));
    // The last reference may go here: freeing tens of GB is no work for the executor.
    let evicted = tokio::task::spawn_blocking(move || Filecoin::from_env().evict(circuit))
        .await
        .map_err(|e| CallError::Internal(format!("the key store stopped: {e}")))?;
    match evicted {
        Evicted::InUse { users } => Err(CallError::Precondition(format!(
            "key {id} is in use by {users} job(s); evict it when they end"
        ))),
        Evicted::NotLoaded => Ok(EvictSrsResponse::default()),
        Evicted::Freed { bytes } => {
            if let Some(k) = key {
                engine
                    .unpin_key(k)
                    .await
                    .map_err(|e| CallError::Internal(e.to_string()))?;
            }
            Ok(EvictSrsResponse {
                was_loaded: true,
                freed_bytes: bytes + device,
            })
        }
    }
}

/// The resident Filecoin keys with their size, users and tier.
pub fn list(engine: &Engine) -> Vec<SrsStatus> {
    let store = KeyStore::global();
    store
        .list()
        .into_iter()
        .map(|k| {
            let on_device = store
                .get(&k.path)
                .is_some_and(|key| engine.device_key_bytes(key.id()) > 0);
            let mut s = SrsStatus {
                circuit_id: k.circuit_id,
                size_bytes: k.bytes,
                ref_count: k.users as u32,
                ..SrsStatus::default()
            };
            s.set_tier(match on_device {
                true => srs_status::Tier::Hot,
                false => srs_status::Tier::Warm,
            });
            s
        })
        .collect()
}
