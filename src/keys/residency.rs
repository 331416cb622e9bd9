//! What the key store holds and letting keys go: every key with its size, users, pin and last
//! use ([`KeyStore::list`]), the ones no job holds ([`KeyStore::idle`], for eviction under
//! memory pressure), their bytes, and eviction, refused while a job holds the key or it is being
//! loaded (the daemon's EvictSRS). Built-in and file keys alike.

use std::sync::{Arc, TryLockError};
use std::time::{Duration, Instant};

use super::store::{lock, KeyId, KeyStore, Resident, Slot, State};
use super::trust::Trust;

/// What [`KeyStore::evict`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Evicted {
    /// No key of that id was resident.
    NotLoaded,
    /// The store dropped its keys of that id; the bytes they held.
    Freed {
        /// Bytes of points released.
        bytes: u64,
    },
    /// A job still holds the key; nothing was evicted.
    InUse {
        /// Holders other than the store.
        users: usize,
    },
}

/// One key in [`KeyStore::list`].
#[derive(Clone, Debug)]
pub struct KeyInfo {
    /// The caller's name for the circuit (e.g. `porep-32g`, `baton-synthetic-1024`).
    pub circuit_id: String,
    /// The store's name for the key: its file, or its circuit id for a made key.
    pub id: KeyId,
    /// The engine's id of the resident key ([`ProvingKey::id`](crate::ProvingKey::id));
    /// `None` while it is being loaded.
    pub key_id: Option<u64>,
    /// Bytes of points in memory (0 while it is being loaded).
    pub bytes: u64,
    /// Holders other than the store (jobs in flight, callers keeping the `Arc`); a key being
    /// loaded counts its loader.
    pub users: usize,
    /// Kept resident by [`KeyStore::pin`].
    pub pinned: bool,
    /// Time the load took.
    pub load_time: Duration,
    /// How the file came to be trusted.
    pub trust: Option<Trust>,
    /// When a job last took it (loaded it, or found it resident) or left it.
    pub last_used: Instant,
}

/// What a listing reads of a resident key, copied out under its lock.
struct Seen {
    key_id: u64,
    bytes: u64,
    /// References held outside the store.
    refs: usize,
    load_time: Duration,
    trust: Trust,
}

impl Seen {
    fn of(r: &Resident) -> Self {
        Seen {
            key_id: r.key.id(),
            bytes: r.key.heap_bytes(),
            refs: Arc::strong_count(&r.key) - 1,
            load_time: r.load_time,
            trust: r.trust,
        }
    }
}

/// `r` is `None` while the key is being loaded.
fn info(slot: &Slot, state: &State, r: Option<&Seen>) -> KeyInfo {
    KeyInfo {
        circuit_id: slot.circuit_id.clone(),
        id: slot.id.clone(),
        key_id: r.map(|r| r.key_id),
        bytes: r.map_or(0, |r| r.bytes),
        users: r.map_or(state.leases.max(1), |r| slot.users(state, r.refs)),
        pinned: state.pinned,
        load_time: r.map_or(Duration::ZERO, |r| r.load_time),
        trust: r.map(|r| r.trust),
        last_used: state.last_used,
    }
}

impl KeyStore {
    fn all(&self) -> Vec<Arc<Slot>> {
        lock(&self.slots).values().cloned().collect()
    }

    /// Every key resident or being loaded, ordered by circuit id; never waits for a load.
    pub fn list(&self) -> Vec<KeyInfo> {
        let mut out: Vec<KeyInfo> = self
            .all()
            .into_iter()
            .filter_map(|slot| {
                // Copied out at once: the key's lock is held as briefly as can be.
                let r = match slot.resident.try_lock() {
                    Ok(r) => Some(Seen::of(r.as_ref()?)),
                    Err(TryLockError::WouldBlock) => None,
                    Err(TryLockError::Poisoned(p)) => Some(Seen::of(p.into_inner().as_ref()?)),
                };
                Some(info(&slot, &lock(&slot.state), r.as_ref()))
            })
            .collect();
        out.sort_by(|a, b| (&a.circuit_id, &a.id).cmp(&(&b.circuit_id, &b.id)));
        out
    }

    /// The resident keys no job holds, ordered by circuit id; never waits for a load (a key
    /// being loaded is wanted by a job, so it is not idle).
    pub fn idle(&self) -> Vec<KeyInfo> {
        self.list()
            .into_iter()
            .filter(|k| k.key_id.is_some() && k.users == 0)
            .collect()
    }

    /// Bytes of points of every resident key.
    pub fn bytes(&self) -> u64 {
        self.list().iter().map(|k| k.bytes).sum()
    }

    /// Drops the keys named `circuit_id` (unpinning them), unless a job still holds or leases
    /// one of them or one is being loaded (then nothing is dropped). The memory returns with the
    /// last `Arc`.
    pub fn evict(&self, circuit_id: &str) -> Evicted {
        // A key's lock is held for a moment by a listing; try again then, never for long.
        for _ in 0..1000 {
            if let Some(done) = self.try_evict(circuit_id) {
                return done;
            }
            std::thread::yield_now();
        }
        Evicted::InUse { users: 1 }
    }

    /// [`KeyStore::evict`], or `None` when a key's lock was held by someone not loading it.
    fn try_evict(&self, circuit_id: &str) -> Option<Evicted> {
        let mut slots = lock(&self.slots);
        let named: Vec<Arc<Slot>> = slots
            .values()
            .filter(|s| s.circuit_id == circuit_id)
            .cloned()
            .collect();
        let mut held = Vec::with_capacity(named.len());
        let mut users = 0;
        for slot in &named {
            let state = lock(&slot.state);
            match slot.resident.try_lock() {
                Ok(r) => {
                    users += r
                        .as_ref()
                        .map_or(state.leases, |r| slot.users(&state, Seen::of(r).refs));
                    held.push((slot, r));
                }
                // Being loaded right now: a job is waiting for it.
                Err(TryLockError::WouldBlock) if state.loading => users += state.leases.max(1),
                Err(TryLockError::WouldBlock) => return None,
                Err(TryLockError::Poisoned(p)) => held.push((slot, p.into_inner())),
            }
        }
        if users > 0 {
            return Some(Evicted::InUse { users });
        }
        let mut freed = None;
        for (slot, mut r) in held {
            if let Some(res) = r.take() {
                *freed.get_or_insert(0) += res.key.heap_bytes();
            }
            slots.remove(&slot.id);
        }
        Some(match freed {
            Some(bytes) => Evicted::Freed { bytes },
            None => Evicted::NotLoaded,
        })
    }
}
