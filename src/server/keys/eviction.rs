//! Evicting proving keys: on request (EvictSRS), and under memory pressure, since Curio never
//! calls EvictSRS. Before a job is handed to the engine, the daemon asks the engine whether it
//! fits ([`Engine::room_for`](crate::Engine::room_for)); while proving keys in use stand in its
//! way and the idle ones could make up the difference, the least recently used key that no job
//! holds (never the job's own, never one being loaded) is evicted from its store and unpinned in
//! the engine, and the engine is asked again. One job at a time makes room ([`KeyStore::room`]
//! (super::builtin::KeyStore::room)), until the engine has its request, so two jobs arriving
//! together do not both evict for the same bytes.

use std::time::{Duration, Instant};

use super::builtin::KeyStore;
use crate::engine::{Engine, EngineError, Request};
use crate::metrics::KeyEviction;
use crate::server::error::CallError;
use crate::server::proto::EvictSrsResponse;

/// Which store a resident key lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Store {
    /// The daemon's built-in keys ([`super::builtin::KeyStore`]).
    Builtin,
    /// The Filecoin keys ([`crate::keys::store::KeyStore::global`]).
    Filecoin,
}

/// A resident key that no job holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdleKey {
    /// Its circuit id.
    pub circuit_id: String,
    /// Bytes of points in memory.
    pub bytes: u64,
    /// When a job last took or left it.
    pub last_used: Instant,
    /// Where it lives.
    pub store: Store,
}

/// The order to evict idle keys in: least recently used first (ties by circuit id), the key
/// `own` (the job's) left out.
pub fn eviction_order(mut idle: Vec<IdleKey>, own: &str) -> Vec<IdleKey> {
    idle.retain(|k| k.circuit_id != own);
    idle.sort_by(|a, b| (a.last_used, &a.circuit_id).cmp(&(b.last_used, &b.circuit_id)));
    idle
}

/// The resident keys of both stores that no job holds (a built-in key stays only while pinned).
fn idle_keys(keys: &KeyStore) -> Vec<IdleKey> {
    #[allow(unused_mut)]
    let mut idle: Vec<IdleKey> = keys
        .list()
        .into_iter()
        .filter(|k| k.users == 0 && k.pinned && k.key.is_some())
        .map(|k| IdleKey {
            circuit_id: k.id,
            bytes: k.bytes,
            last_used: k.last_used,
            store: Store::Builtin,
        })
        .collect();
    #[cfg(feature = "filecoin")]
    idle.extend(
        crate::keys::store::KeyStore::global()
            .idle()
            .into_iter()
            .map(|k| IdleKey {
                circuit_id: k.circuit_id,
                bytes: k.bytes,
                last_used: k.last_used,
                store: Store::Filecoin,
            }),
    );
    idle
}

/// Makes room for `request`, whose key is circuit `own`: evicts idle keys, least recently used
/// first, while the engine says keys in use stand in its way and idle ones hold enough to cure
/// it. Returns the turn to hand the job to the engine; drop it once the engine has the request.
/// Where eviction cannot help, nothing is evicted and the engine's answer to the submission
/// says why the job does not fit.
pub(in crate::server) async fn make_room<'d>(
    engine: &Engine,
    keys: &'d KeyStore,
    request: &Request,
    own: &str,
) -> tokio::sync::MutexGuard<'d, ()> {
    let turn = keys.room().await;
    let mut order: Option<std::vec::IntoIter<IdleKey>> = None;
    loop {
        let (short_bytes, idle_bytes) = match engine.room_for(request).await {
            Err(EngineError::NoRoom {
                short_bytes,
                idle_bytes,
                ..
            }) => (short_bytes, idle_bytes),
            // It fits, or eviction cannot help: the submission gets the engine's answer.
            _ => break,
        };
        if idle_bytes < short_bytes {
            tracing::info!(
                circuit = own,
                short_bytes,
                idle_bytes,
                "no room for the job, and idle keys cannot make it: evicting none"
            );
            break;
        }
        let next = order
            .get_or_insert_with(|| eviction_order(idle_keys(keys), own).into_iter())
            .next();
        let Some(key) = next else {
            break;
        };
        if let Err(e) = evict(engine, keys, &key.circuit_id, KeyEviction::Pressure).await {
            // Taken by a job since it was listed: the next one.
            tracing::debug!(circuit = %key.circuit_id, "not evicted: {e}");
        }
    }
    turn
}

/// When the resident key of circuit `id` was last used, if it is resident and not loading.
fn last_used(keys: &KeyStore, id: &str) -> Option<Instant> {
    let builtin = keys.list().into_iter().find(|k| k.id == id);
    #[cfg(feature = "filecoin")]
    if builtin.is_none() {
        let fil = crate::keys::store::KeyStore::global().idle();
        return fil
            .into_iter()
            .find(|k| k.circuit_id == id)
            .map(|k| k.last_used);
    }
    builtin.map(|k| k.last_used)
}

/// Evicts the key of circuit `id` (built-in or Filecoin) unless a job holds it, unpinning it in
/// the engine so that the ledger gives its bytes back; counted and logged when it was resident.
pub async fn evict(
    engine: &Engine,
    keys: &KeyStore,
    id: &str,
    reason: KeyEviction,
) -> Result<EvictSrsResponse, CallError> {
    let idle = last_used(keys, id).map_or(Duration::ZERO, |t| t.elapsed());
    #[cfg(feature = "filecoin")]
    let evicted = match super::filecoin::circuit_of(id) {
        Some(circuit) => super::filecoin::evict(engine, circuit?).await,
        None => evict_builtin(engine, keys, id).await,
    }?;
    #[cfg(not(feature = "filecoin"))]
    let evicted = evict_builtin(engine, keys, id).await?;
    if evicted.was_loaded {
        engine.metric_handles().key_evicted(reason);
        tracing::info!(
            circuit = id,
            bytes = evicted.freed_bytes,
            idle_secs = idle.as_secs_f64(),
            reason = reason.as_str(),
            "key evicted"
        );
    }
    Ok(evicted)
}

/// Evicts a pinned built-in key no job uses, and unpins it in the engine.
async fn evict_builtin(
    engine: &Engine,
    keys: &KeyStore,
    id: &str,
) -> Result<EvictSrsResponse, CallError> {
    let evicted = keys
        .evict(id)
        .map_err(|e| CallError::Precondition(e.to_string()))?;
    let Some(key) = evicted else {
        return Ok(EvictSrsResponse::default());
    };
    let device = engine.device_key_bytes(key.id());
    engine
        .unpin_key(key.id())
        .await
        .map_err(|e| CallError::Internal(e.to_string()))?;
    Ok(EvictSrsResponse {
        was_loaded: true,
        freed_bytes: key.heap_bytes() + device,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(id: &str, age_ms: u64, store: Store) -> IdleKey {
        IdleKey {
            circuit_id: id.into(),
            bytes: 100,
            last_used: Instant::now() - Duration::from_millis(age_ms),
            store,
        }
    }

    #[test]
    fn the_least_recently_used_idle_key_goes_first_never_the_jobs_own() {
        let now = Instant::now();
        let mut idle = vec![
            key("baton-synthetic-1024", 50, Store::Builtin),
            key("porep-2k", 500, Store::Filecoin),
            key("baton-mimc-2048", 200, Store::Builtin),
        ];
        let order = |idle: Vec<IdleKey>, own| -> Vec<String> {
            eviction_order(idle, own)
                .into_iter()
                .map(|k| k.circuit_id)
                .collect()
        };
        assert_eq!(
            order(idle.clone(), "winning-2k"),
            ["porep-2k", "baton-mimc-2048", "baton-synthetic-1024"],
            "oldest use first, across both stores"
        );
        assert_eq!(
            order(idle.clone(), "porep-2k"),
            ["baton-mimc-2048", "baton-synthetic-1024"],
            "the job's own key is never evicted for it"
        );
        // Same last use: by circuit id, so the choice does not depend on listing order.
        for k in &mut idle {
            k.last_used = now;
        }
        assert_eq!(
            order(idle, ""),
            ["baton-mimc-2048", "baton-synthetic-1024", "porep-2k"]
        );
        assert!(
            order(Vec::new(), "x").is_empty(),
            "no idle key, nothing to evict"
        );
    }
}
