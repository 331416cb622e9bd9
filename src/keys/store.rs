//! The one store of proving keys, owned by whoever starts things (a daemon, the CLI, a library
//! caller) and passed down as `Arc<KeyStore>`: there is no process-wide store. It holds two kinds
//! of key, told apart by [`KeyId`]:
//! - a parameter file's key ([`Source::File`]), read and checked once (see `keys::trust`) and
//!   kept resident until evicted, however many jobs take it;
//! - a key its caller makes ([`Source::Made`], a daemon's built-in circuits), kept resident while
//!   a job leases it or PreloadSRS pins it.
//!
//! Either kind is taken the same ways: [`KeyStore::load`] (a bare `Arc`, the library's path),
//! [`KeyStore::lease`] (a job's counted use, see [`KeyLease`]) and [`KeyStore::pin`] (kept
//! resident until [`KeyStore::evict`] or [`KeyStore::unpin`]). Listing, idle keys and eviction
//! (refused while a job holds the key) are in `keys::residency`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

pub use super::residency::{Evicted, KeyInfo};
use crate::groth16::error::Error;
use crate::groth16::key::ProvingKey;
use crate::keys::trust::{read_checked_once, Trust};

/// A key that could not be loaded or made, naming it.
#[derive(Debug, thiserror::Error)]
pub enum KeyLoadError {
    /// Its parameter file could not be read, or did not check.
    #[error("proving key {}: {source}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// Why it failed.
        #[source]
        source: Error,
    },
    /// Its maker failed.
    #[error("key {circuit_id}: {reason}")]
    Made {
        /// The circuit id.
        circuit_id: String,
        /// Why.
        reason: String,
    },
}

/// What taking a key did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loaded {
    /// The key was already resident.
    AlreadyLoaded,
    /// The key was read (or made) now, in this time, trusted this way.
    Now {
        /// Time spent reading (and checking) the file, or making the key.
        load_time: Duration,
        /// How the file came to be trusted ([`Trust::Made`] for a made key).
        trust: Trust,
    },
}

/// Which key: the store's name for it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KeyId {
    /// A parameter file, by its full path.
    File(PathBuf),
    /// A key its caller makes, by circuit id.
    Made(String),
}

/// A maker of a key (read from its maker's own cache, or generated).
pub type Maker = Box<dyn FnOnce() -> Result<ProvingKey, String> + Send>;

/// Where a key comes from when it is not resident.
pub enum Source {
    /// A parameter file, read and checked once; kept resident until evicted.
    File(PathBuf),
    /// Made by the caller; kept resident while leased or pinned.
    Made(Maker),
}

/// The loaded key of a slot.
pub(super) struct Resident {
    pub(super) key: Arc<ProvingKey>,
    pub(super) load_time: Duration,
    pub(super) trust: Trust,
}

/// What a slot's users and pins are, beside `resident` so that counting or marking a use never
/// waits for a load.
pub(super) struct State {
    pub(super) leases: usize,
    /// Taken through a lease or a pin once: its users are its leases from then on.
    pub(super) leased: bool,
    pub(super) pinned: bool,
    /// The key is being read or made (its `resident` lock is held for that long).
    pub(super) loading: bool,
    /// When a job (or a pin) last took it, or a job left it.
    pub(super) last_used: Instant,
}

/// One key: its loading is serialized by the slot's own lock, so two jobs asking for the same
/// key at once load it once, and loads of different keys do not wait for each other.
pub(super) struct Slot {
    pub(super) id: KeyId,
    pub(super) circuit_id: String,
    pub(super) resident: Mutex<Option<Resident>>,
    pub(super) state: Mutex<State>,
}

impl Slot {
    /// Whether the key stays resident with no user: a file's key always, a made key while pinned.
    pub(super) fn kept(&self, state: &State) -> bool {
        matches!(self.id, KeyId::File(_)) || state.pinned
    }

    /// Holders of the resident key other than the store, `refs` the references to it held
    /// outside the store. A key taken through a lease or a pin (a daemon's keys; a made key is
    /// only taken so) is counted by its leases, so that a reference the engine keeps for a
    /// moment after a job or a pin is no user; a file's key only ever taken bare through
    /// [`KeyStore::load`] (a library's requests) is counted by `refs`.
    pub(super) fn users(&self, state: &State, refs: usize) -> usize {
        if matches!(self.id, KeyId::Made(_)) || state.leased {
            state.leases
        } else {
            refs
        }
    }
}

/// Proving keys by [`KeyId`]; see the module docs. `KeyStore::new()` (or `Default`) for one of
/// your own, shared as an `Arc<KeyStore>`.
#[derive(Default)]
pub struct KeyStore {
    pub(super) slots: Mutex<std::collections::BTreeMap<KeyId, Arc<Slot>>>,
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock leaves plain data behind; keep using it.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// What [`KeyStore::pin`] did.
#[derive(Clone, Debug)]
pub struct Pinned {
    /// The key.
    pub key: Arc<ProvingKey>,
    /// Whether it was kept resident already (pinned before, or a file's resident key).
    pub already: bool,
    /// Time spent loading it now (zero when it was resident).
    pub load_time: Duration,
}

/// One job's use of a key, counted until dropped (however the job ends); dropping it marks the
/// key used and drops a made key that is neither pinned nor leased again.
pub struct KeyLease {
    store: Arc<KeyStore>,
    slot: Arc<Slot>,
    /// The key.
    pub key: Arc<ProvingKey>,
    /// What taking it did.
    pub loaded: Loaded,
}

impl KeyLease {
    /// Milliseconds this job spent loading the key (0 when it was resident).
    pub fn load_ms(&self) -> u64 {
        match self.loaded {
            Loaded::AlreadyLoaded => 0,
            Loaded::Now { load_time, .. } => load_time.as_millis() as u64,
        }
    }
}

impl Drop for KeyLease {
    fn drop(&mut self) {
        self.store
            .release(&self.slot, |s| s.leases = s.leases.saturating_sub(1));
    }
}

/// A key taken from a slot and what taking it did, or why it could not be loaded.
type Taken = Result<(Arc<ProvingKey>, Loaded), KeyLoadError>;

/// The full path of a parameter file, naming it in the error.
fn canonical(path: &Path) -> Result<PathBuf, KeyLoadError> {
    std::fs::canonicalize(path).map_err(|e| KeyLoadError::File {
        path: path.to_path_buf(),
        source: Error::Io(e),
    })
}

impl KeyStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// The key at `path`, read (and checked once) if it is not resident; `circuit_id` names it
    /// in [`KeyStore::list`] and [`KeyStore::evict`]. The caller holds a bare `Arc`: the key's
    /// users are the references held.
    pub fn load(
        &self,
        circuit_id: &str,
        path: &Path,
    ) -> Result<(Arc<ProvingKey>, Loaded), KeyLoadError> {
        let source = Source::File(path.to_path_buf());
        let (_, r) = self.fetch(circuit_id, source, |_| {})?;
        r
    }

    /// The key of `circuit_id` for one job, loaded or made if it is not resident; the lease
    /// counts the job until dropped (counted before the load, so that a key being loaded for a
    /// job is never evicted).
    pub fn lease(
        self: &Arc<Self>,
        circuit_id: &str,
        source: Source,
    ) -> Result<KeyLease, KeyLoadError> {
        let (slot, r) = self.fetch(circuit_id, source, |s| {
            s.leases += 1;
            s.leased = true;
        })?;
        // Counted out by the lease's drop, also when the load failed.
        let lease = |(key, loaded)| KeyLease {
            store: self.clone(),
            slot: slot.clone(),
            key,
            loaded,
        };
        match r {
            Ok(k) => Ok(lease(k)),
            Err(e) => {
                self.release(&slot, |s| s.leases = s.leases.saturating_sub(1));
                Err(e)
            }
        }
    }

    /// A lease on `key`, taken already from this store (say by [`KeyStore::load`]), if it is
    /// still resident here; never waits for a load.
    pub fn lease_key(self: &Arc<Self>, key: &Arc<ProvingKey>) -> Option<KeyLease> {
        let slots = lock(&self.slots);
        let slot = slots.values().find(|slot| match slot.resident.try_lock() {
            Ok(r) => r.as_ref().is_some_and(|r| Arc::ptr_eq(&r.key, key)),
            Err(_) => false,
        })?;
        let mut state = lock(&slot.state);
        state.leases += 1;
        state.leased = true;
        state.last_used = Instant::now();
        Some(KeyLease {
            store: self.clone(),
            slot: slot.clone(),
            key: key.clone(),
            loaded: Loaded::AlreadyLoaded,
        })
    }

    /// Loads (or makes) the key of `circuit_id` and keeps it resident until
    /// [`evict`](Self::evict) or [`unpin`](Self::unpin) (the daemon's PreloadSRS).
    pub fn pin(&self, circuit_id: &str, source: Source) -> Result<Pinned, KeyLoadError> {
        let mut was_pinned = false;
        let (slot, r) = self.fetch(circuit_id, source, |s| {
            was_pinned = s.pinned;
            s.pinned = true;
            s.leased = true;
        })?;
        match r {
            Ok((key, loaded)) => Ok(Pinned {
                key,
                already: was_pinned
                    || (matches!(slot.id, KeyId::File(_)) && loaded == Loaded::AlreadyLoaded),
                load_time: match loaded {
                    Loaded::AlreadyLoaded => Duration::ZERO,
                    Loaded::Now { load_time, .. } => load_time,
                },
            }),
            Err(e) => {
                if !was_pinned {
                    self.release(&slot, |s| s.pinned = false);
                }
                Err(e)
            }
        }
    }

    /// Stops keeping the keys of `circuit_id` resident on their own: a made key no job leases
    /// goes at once (a file's key stays until evicted).
    pub fn unpin(&self, circuit_id: &str) {
        let named: Vec<Arc<Slot>> = lock(&self.slots)
            .values()
            .filter(|s| s.circuit_id == circuit_id)
            .cloned()
            .collect();
        for slot in named {
            self.release(&slot, |s| s.pinned = false);
        }
    }

    /// The resident key read from `path`, if any.
    pub fn get(&self, path: &Path) -> Option<Arc<ProvingKey>> {
        let full = std::fs::canonicalize(path).ok()?;
        let slot = lock(&self.slots).get(&KeyId::File(full))?.clone();
        let r = lock(&slot.resident);
        r.as_ref().map(|r| r.key.clone())
    }

    /// Marks the resident key `key_id` (its engine id) used now (a job leaving it).
    pub fn touch(&self, key_id: u64) {
        if let Some(slot) = self.slot_of(key_id) {
            lock(&slot.state).last_used = Instant::now();
        }
    }

    /// Whether the resident key `key_id` (its engine id) stays resident once no job uses it: a
    /// file's key, or a pinned one. Never waits for a load.
    pub fn kept(&self, key_id: u64) -> bool {
        self.slot_of(key_id)
            .is_some_and(|slot| slot.kept(&lock(&slot.state)))
    }

    /// The slot whose resident key is `key_id`; never waits for a load.
    fn slot_of(&self, key_id: u64) -> Option<Arc<Slot>> {
        let slots: Vec<Arc<Slot>> = lock(&self.slots).values().cloned().collect();
        slots
            .into_iter()
            .find(|slot| match slot.resident.try_lock() {
                Ok(r) => r.as_ref().is_some_and(|r| r.key.id() == key_id),
                Err(_) => false,
            })
    }

    /// Updates the use of `slot` with `f` and marks it used; drops it from the store when it is
    /// neither kept nor leased any more.
    fn release(&self, slot: &Arc<Slot>, f: impl FnOnce(&mut State)) {
        let mut slots = lock(&self.slots);
        let mut state = lock(&slot.state);
        f(&mut state);
        state.last_used = Instant::now();
        let current = slots.get(&slot.id).is_some_and(|s| Arc::ptr_eq(s, slot));
        if current && state.leases == 0 && !slot.kept(&state) {
            slots.remove(&slot.id);
        }
    }

    /// The slot of the key, entered with `enter` (a lease, a pin) under the store's lock and
    /// marked used, and its key, loaded from `source` if it is not resident.
    /// Fails before entering anything only when a file's path does not resolve.
    fn fetch(
        &self,
        circuit_id: &str,
        source: Source,
        mut enter: impl FnMut(&mut State),
    ) -> Result<(Arc<Slot>, Taken), KeyLoadError> {
        let (id, source) = match source {
            Source::File(path) => {
                let full = canonical(&path)?;
                (KeyId::File(full.clone()), Source::File(full))
            }
            Source::Made(make) => (KeyId::Made(circuit_id.to_string()), Source::Made(make)),
        };
        loop {
            let slot = {
                let mut slots = lock(&self.slots);
                let slot = slots.entry(id.clone()).or_insert_with(|| {
                    Arc::new(Slot {
                        id: id.clone(),
                        circuit_id: circuit_id.to_string(),
                        resident: Mutex::new(None),
                        state: Mutex::new(State {
                            leases: 0,
                            leased: false,
                            pinned: false,
                            loading: false,
                            last_used: Instant::now(),
                        }),
                    })
                });
                let mut state = lock(&slot.state);
                enter(&mut state);
                state.last_used = Instant::now();
                drop(state);
                slot.clone()
            };
            let mut resident = lock(&slot.resident);
            // An eviction may have removed the slot while we waited for it: take the new one.
            let current = lock(&self.slots)
                .get(&id)
                .is_some_and(|s| Arc::ptr_eq(s, &slot));
            if !current {
                continue;
            }
            if let Some(r) = resident.as_ref() {
                return Ok((slot.clone(), Ok((r.key.clone(), Loaded::AlreadyLoaded))));
            }
            lock(&slot.state).loading = true;
            let t = Instant::now();
            let read = match source {
                Source::File(full) => {
                    read_checked_once(&full).map_err(|source| KeyLoadError::File {
                        path: full.clone(),
                        source,
                    })
                }
                Source::Made(make) => {
                    make()
                        .map(|key| (key, Trust::Made))
                        .map_err(|reason| KeyLoadError::Made {
                            circuit_id: circuit_id.to_string(),
                            reason,
                        })
                }
            };
            lock(&slot.state).loading = false;
            let (key, trust) = match read {
                Ok(k) => k,
                Err(e) => {
                    drop(resident);
                    return Ok((slot, Err(e)));
                }
            };
            let load_time = t.elapsed();
            let key = Arc::new(key);
            *resident = Some(Resident {
                key: key.clone(),
                load_time,
                trust,
            });
            tracing::info!(circuit = circuit_id, key = ?id, ?load_time, ?trust, "key loaded");
            return Ok((slot.clone(), Ok((key, Loaded::Now { load_time, trust }))));
        }
    }
}
