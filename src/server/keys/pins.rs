//! PreloadSRS and GetStatus, one way for every key: the store loads (or makes) the key and pins
//! it, then the engine pins it, so that the ledger counts its bytes as resident until evicted
//! (see `eviction`). A job's key that stays in the store after the job (a Filecoin key) is
//! pinned in the engine the same way ([`pin_kept`]).

use std::sync::Arc;

use super::held::Keys;
use crate::engine::Engine;
use crate::groth16::key::ProvingKey;
use crate::keys::store::KeyLoadError;
use crate::server::error::CallError;
use crate::server::proto::{srs_status, PreloadSrsResponse, SrsStatus};

/// Loads the key of circuit `id` (built-in or Filecoin) and keeps it resident: pinned in the
/// store and in the engine.
pub async fn preload(
    engine: &Engine,
    keys: &Keys,
    id: &str,
) -> Result<PreloadSrsResponse, CallError> {
    let source = keys.source(id)?;
    let (store, circuit) = (keys.store().clone(), id.to_string());
    let pinned = tokio::task::spawn_blocking(move || store.pin(&circuit, source))
        .await
        .map_err(|e| CallError::Internal(format!("the key loader stopped: {e}")))?
        .map_err(|e| match e {
            // A parameter file that does not read or check: the operator's to fix.
            e @ KeyLoadError::File { .. } => CallError::Precondition(format!("{id}: {e}")),
            e @ KeyLoadError::Made { .. } => CallError::Internal(e.to_string()),
        })?;
    // Counted in turn with the jobs making room for their keys.
    let _turn = keys.room().await;
    engine
        .pin_key(pinned.key)
        .await
        .map_err(|e| CallError::Internal(e.to_string()))?;
    Ok(PreloadSrsResponse {
        already_loaded: pinned.already,
        load_time_ms: pinned.load_time.as_millis() as u64,
    })
}

/// Pins a job's `key` in the engine when the store keeps it resident after the job (a Filecoin
/// key, or one pinned by PreloadSRS), so that the ledger counts it as resident meanwhile;
/// pinning again is a no-op. Call it in the turn to make room.
pub async fn pin_kept(engine: &Engine, keys: &Keys, key: &Arc<ProvingKey>) {
    if !keys.store().kept(key.id()) {
        return;
    }
    if let Err(e) = engine.pin_key(key.clone()).await {
        tracing::warn!(key = key.id(), "a kept key is not counted as resident: {e}");
    }
}

/// Every key resident or being loaded, with its size, users and tier.
pub fn list(engine: &Engine, keys: &Keys) -> Vec<SrsStatus> {
    keys.store()
        .list()
        .into_iter()
        .map(|k| {
            let mut s = SrsStatus {
                circuit_id: k.circuit_id,
                size_bytes: k.bytes,
                ref_count: k.users as u32,
                ..SrsStatus::default()
            };
            s.set_tier(match k.key_id {
                Some(id) if engine.device_key_bytes(id) > 0 => srs_status::Tier::Hot,
                Some(_) => srs_status::Tier::Warm,
                None => srs_status::Tier::Cold,
            });
            s
        })
        .collect()
}
