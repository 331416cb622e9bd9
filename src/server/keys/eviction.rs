//! Evicting proving keys, built-in and Filecoin alike: on request (EvictSRS), and under memory
//! pressure, since Curio never calls EvictSRS. Before a job is handed to the engine, the daemon
//! asks the engine whether it fits ([`Engine::room_for`](crate::Engine::room_for)); while proving
//! keys in use stand in its way and the idle ones could make up the difference, the least
//! recently used key that no job holds (never the job's own, never one being loaded) is evicted
//! from the store and unpinned in the engine, and the engine is asked again. One job at a time
//! makes room ([`Keys::room`]), until the engine has its request, so two jobs arriving together
//! do not both evict for the same bytes.

use std::time::{Duration, Instant};

use super::held::Keys;
use crate::engine::{Engine, EngineError, Request};
use crate::keys::store::Evicted;
use crate::metrics::KeyEviction;
use crate::server::error::CallError;
use crate::server::proto::EvictSrsResponse;

/// A resident key that no job holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdleKey {
    /// Its circuit id.
    pub circuit_id: String,
    /// Bytes of points in memory.
    pub bytes: u64,
    /// When a job last took or left it.
    pub last_used: Instant,
}

/// The order to evict idle keys in: least recently used first (ties by circuit id), the key
/// `own` (the job's) left out.
pub fn eviction_order(mut idle: Vec<IdleKey>, own: &str) -> Vec<IdleKey> {
    idle.retain(|k| k.circuit_id != own);
    idle.sort_by(|a, b| (a.last_used, &a.circuit_id).cmp(&(b.last_used, &b.circuit_id)));
    idle
}

/// The resident keys that no job holds.
fn idle_keys(keys: &Keys) -> Vec<IdleKey> {
    keys.store()
        .idle()
        .into_iter()
        .map(|k| IdleKey {
            circuit_id: k.circuit_id,
            bytes: k.bytes,
            last_used: k.last_used,
        })
        .collect()
}

/// Makes room for `request`, whose key is circuit `own`: evicts idle keys, least recently used
/// first, while the engine says keys in use stand in its way and idle ones hold enough to cure
/// it. Returns the turn to hand the job to the engine; drop it once the engine has the request.
/// Where eviction cannot help, nothing is evicted and the engine's answer to the submission
/// says why the job does not fit.
pub(in crate::server) async fn make_room<'d>(
    engine: &Engine,
    keys: &'d Keys,
    request: &Request,
    own: &str,
) -> tokio::sync::MutexGuard<'d, ()> {
    let turn = keys.room().await;
    evict_for(engine, keys, Want::Request(request), own).await;
    turn
}

/// Makes room, as [`make_room`] does, for circuit `own`'s key of about `bytes` before it is
/// read: a key of tens of GB must not arrive before the idle ones it displaces are gone. The
/// turn is given back at once (the key's load does not hold up other jobs' room); the job
/// makes room again, for its request, once its key is in.
pub(in crate::server) async fn room_to_load(engine: &Engine, keys: &Keys, own: &str, bytes: u64) {
    let _turn = keys.room().await;
    evict_for(engine, keys, Want::Key(bytes), own).await;
}

/// What room is made for.
#[derive(Clone, Copy)]
enum Want<'r> {
    /// A job's request, its key loaded.
    Request(&'r Request),
    /// A key of about this many bytes, not loaded yet.
    Key(u64),
}

/// Evicts idle keys, least recently used first and never `own`, while the engine says keys in
/// use stand in the way of `want` and the idle ones hold enough to cure it.
async fn evict_for(engine: &Engine, keys: &Keys, want: Want<'_>, own: &str) {
    let mut order: Option<std::vec::IntoIter<IdleKey>> = None;
    loop {
        let room = match want {
            Want::Request(r) => engine.room_for(r).await,
            Want::Key(bytes) => engine.room_for_key(bytes).await,
        };
        let (short_bytes, idle_bytes) = match room {
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
}

/// Evicts the key of circuit `id` (built-in or Filecoin) unless a job holds it, unpinning it in
/// the engine so that the ledger gives its bytes back; counted and logged when it was resident.
pub async fn evict(
    engine: &Engine,
    keys: &Keys,
    id: &str,
    reason: KeyEviction,
) -> Result<EvictSrsResponse, CallError> {
    #[cfg(feature = "filecoin")]
    if let Some(Err(e)) = super::filecoin::circuit_of(id) {
        return Err(e);
    }
    let info = keys.store().list().into_iter().find(|k| k.circuit_id == id);
    let idle = info
        .as_ref()
        .map_or(Duration::ZERO, |k| k.last_used.elapsed());
    let key_id = info.and_then(|k| k.key_id);
    let device = key_id.map_or(0, |k| engine.device_key_bytes(k));
    let (store, circuit) = (keys.store().clone(), id.to_string());
    // The last reference may go here: freeing tens of GB is no work for the executor.
    let evicted = tokio::task::spawn_blocking(move || store.evict(&circuit))
        .await
        .map_err(|e| CallError::Internal(format!("the key store stopped: {e}")))?;
    let freed = match evicted {
        Evicted::InUse { users } => {
            return Err(CallError::Precondition(format!(
                "key {id} is in use by {users} job(s); evict it when they end"
            )))
        }
        Evicted::NotLoaded => return Ok(EvictSrsResponse::default()),
        Evicted::Freed { bytes } => bytes,
    };
    if let Some(k) = key_id {
        engine
            .unpin_key(k)
            .await
            .map_err(|e| CallError::Internal(e.to_string()))?;
    }
    engine.metric_handles().key_evicted(reason);
    tracing::info!(
        circuit = id,
        bytes = freed,
        idle_secs = idle.as_secs_f64(),
        reason = reason.as_str(),
        "key evicted"
    );
    Ok(EvictSrsResponse {
        was_loaded: true,
        freed_bytes: freed + device,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(id: &str, age_ms: u64) -> IdleKey {
        IdleKey {
            circuit_id: id.into(),
            bytes: 100,
            last_used: Instant::now() - Duration::from_millis(age_ms),
        }
    }

    #[test]
    fn the_least_recently_used_idle_key_goes_first_never_the_jobs_own() {
        let now = Instant::now();
        let mut idle = vec![
            key("baton-synthetic-1024", 50),
            key("porep-2k", 500),
            key("baton-mimc-2048", 200),
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
            "oldest use first, built-in and Filecoin keys alike"
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
