//! A process-wide store of proving keys: each file is loaded once (checked once, see
//! `keys::trust`) and its `Arc<ProvingKey>` shared by every partition of every job that names it.
//! Keys are listed with their size, users and last use, and evicted only when no job holds them:
//! the shape a daemon's PreloadSRS / EvictSRS / GetStatus calls (and its eviction of the least
//! recently used idle key under memory pressure) need.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use crate::groth16::error::Error;
use crate::groth16::key::ProvingKey;
use crate::keys::trust::{read_checked_once, Trust};

/// A key that could not be loaded, naming its file.
#[derive(Debug, thiserror::Error)]
#[error("proving key {}: {source}", path.display())]
pub struct KeyLoadError {
    /// The file.
    pub path: PathBuf,
    /// Why it failed.
    #[source]
    pub source: Error,
}

/// What [`KeyStore::load`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loaded {
    /// The key was already resident.
    AlreadyLoaded,
    /// The key was read now, in this time, trusted this way.
    Now {
        /// Time spent reading (and checking) the file.
        load_time: Duration,
        /// How the file came to be trusted.
        trust: Trust,
    },
}

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

/// One resident key in [`KeyStore::list`].
#[derive(Clone, Debug)]
pub struct KeyInfo {
    /// The caller's name for the circuit (e.g. `porep-32g`).
    pub circuit_id: String,
    /// The file it was read from.
    pub path: PathBuf,
    /// Bytes of points in memory.
    pub bytes: u64,
    /// Holders other than the store (jobs in flight, callers keeping the `Arc`).
    pub users: usize,
    /// Time the load took.
    pub load_time: Duration,
    /// How the file came to be trusted.
    pub trust: Trust,
    /// When a job last took it (loaded it, or found it resident) or left it.
    pub last_used: Instant,
}

struct Resident {
    key: Arc<ProvingKey>,
    load_time: Duration,
    trust: Trust,
}

/// One file: its loading is serialized by the slot's own lock, so two jobs asking for the same
/// key at once read it once, and loads of different files do not wait for each other.
struct Slot {
    circuit_id: String,
    resident: Mutex<Option<Resident>>,
    /// Beside `resident`, so that marking a use never waits for a load.
    last_used: Mutex<Instant>,
}

/// Keys by file. Use [`KeyStore::global`] to share keys process-wide.
#[derive(Default)]
pub struct KeyStore {
    slots: Mutex<BTreeMap<PathBuf, Arc<Slot>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock leaves plain data behind; keep using it.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl KeyStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// The process-wide store.
    pub fn global() -> &'static KeyStore {
        static STORE: OnceLock<KeyStore> = OnceLock::new();
        STORE.get_or_init(KeyStore::new)
    }

    /// The key at `path`, read (and checked once) if it is not resident; `circuit_id` names it
    /// in [`KeyStore::list`] and [`KeyStore::evict`].
    pub fn load(
        &self,
        circuit_id: &str,
        path: &Path,
    ) -> Result<(Arc<ProvingKey>, Loaded), KeyLoadError> {
        let full = std::fs::canonicalize(path).map_err(|e| KeyLoadError {
            path: path.to_path_buf(),
            source: Error::Io(e),
        })?;
        loop {
            let slot = lock(&self.slots)
                .entry(full.clone())
                .or_insert_with(|| {
                    Arc::new(Slot {
                        circuit_id: circuit_id.to_string(),
                        resident: Mutex::new(None),
                        last_used: Mutex::new(Instant::now()),
                    })
                })
                .clone();
            let mut resident = lock(&slot.resident);
            // An eviction may have removed the slot while we waited for it: take the new one.
            let current = lock(&self.slots)
                .get(&full)
                .is_some_and(|s| Arc::ptr_eq(s, &slot));
            if !current {
                continue;
            }
            *lock(&slot.last_used) = Instant::now();
            if let Some(r) = resident.as_ref() {
                return Ok((r.key.clone(), Loaded::AlreadyLoaded));
            }
            let t = Instant::now();
            let (key, trust) = read_checked_once(&full).map_err(|source| KeyLoadError {
                path: full.clone(),
                source,
            })?;
            let load_time = t.elapsed();
            let key = Arc::new(key);
            *resident = Some(Resident {
                key: key.clone(),
                load_time,
                trust,
            });
            tracing::info!(circuit = circuit_id, path = %full.display(), ?load_time, ?trust, "key loaded");
            return Ok((key, Loaded::Now { load_time, trust }));
        }
    }

    /// The resident key read from `path`, if any.
    pub fn get(&self, path: &Path) -> Option<Arc<ProvingKey>> {
        let full = std::fs::canonicalize(path).ok()?;
        let slot = lock(&self.slots).get(&full)?.clone();
        let r = lock(&slot.resident);
        r.as_ref().map(|r| r.key.clone())
    }

    /// Marks the resident key `key_id` used now (a job leaving it).
    pub fn touch(&self, key_id: u64) {
        for (_, slot) in self.slots() {
            let found = match slot.resident.try_lock() {
                Ok(r) => r.as_ref().is_some_and(|r| r.key.id() == key_id),
                Err(_) => false,
            };
            if found {
                *lock(&slot.last_used) = Instant::now();
            }
        }
    }

    fn slots(&self) -> Vec<(PathBuf, Arc<Slot>)> {
        lock(&self.slots)
            .iter()
            .map(|(p, s)| (p.clone(), s.clone()))
            .collect()
    }

    fn info(path: PathBuf, slot: &Slot, r: &Resident) -> KeyInfo {
        KeyInfo {
            circuit_id: slot.circuit_id.clone(),
            path,
            bytes: r.key.heap_bytes(),
            users: Arc::strong_count(&r.key) - 1,
            load_time: r.load_time,
            trust: r.trust,
            last_used: *lock(&slot.last_used),
        }
    }

    /// Every resident key, ordered by file.
    pub fn list(&self) -> Vec<KeyInfo> {
        self.slots()
            .into_iter()
            .filter_map(|(path, slot)| {
                let r = lock(&slot.resident);
                Some(Self::info(path, &slot, r.as_ref()?))
            })
            .collect()
    }

    /// The resident keys no job holds, ordered by file; never waits for a load (a key being
    /// loaded is wanted by a job, so it is not idle).
    pub fn idle(&self) -> Vec<KeyInfo> {
        self.slots()
            .into_iter()
            .filter_map(|(path, slot)| {
                let r = slot.resident.try_lock().ok()?;
                Some(Self::info(path, &slot, r.as_ref()?)).filter(|k| k.users == 0)
            })
            .collect()
    }

    /// Drops the resident keys named `circuit_id`, unless a job still holds one of them or one
    /// is being loaded (then nothing is dropped). The memory returns with the last `Arc`.
    pub fn evict(&self, circuit_id: &str) -> Evicted {
        let mut slots = lock(&self.slots);
        let named: Vec<(PathBuf, Arc<Slot>)> = slots
            .iter()
            .filter(|(_, s)| s.circuit_id == circuit_id)
            .map(|(p, s)| (p.clone(), s.clone()))
            .collect();
        let mut held = Vec::with_capacity(named.len());
        let mut users = 0;
        for (path, slot) in &named {
            match slot.resident.try_lock() {
                Ok(r) => {
                    users += r.as_ref().map_or(0, |r| Arc::strong_count(&r.key) - 1);
                    held.push((path, r));
                }
                // Being loaded right now: a job is waiting for it.
                Err(std::sync::TryLockError::WouldBlock) => users += 1,
                Err(std::sync::TryLockError::Poisoned(p)) => held.push((path, p.into_inner())),
            }
        }
        if users > 0 {
            return Evicted::InUse { users };
        }
        let mut freed = None;
        for (path, mut r) in held {
            if let Some(res) = r.take() {
                *freed.get_or_insert(0) += res.key.heap_bytes();
            }
            slots.remove(path);
        }
        match freed {
            Some(bytes) => Evicted::Freed { bytes },
            None => Evicted::NotLoaded,
        }
    }
}
