//! The daemon's proving keys by circuit id: loaded (or, for built-in circuits, made once and
//! cached under `state_dir/keys`) on first use, shared by every job of that circuit, counted per
//! job through a [`KeyLease`], kept resident while pinned by PreloadSRS, dropped when neither.
//! Each key remembers when a job last took or left it (for eviction under memory pressure, which
//! [`KeyStore::room`] serializes).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::OnceCell;

use crate::groth16::key::{Check, ProvingKey};
use crate::server::requests::kinds::KeySource;

/// Why a key is not available.
#[derive(Debug, Clone, thiserror::Error)]
pub enum KeyError {
    /// Reading, making or writing the key failed.
    #[error("key {id}: {reason}")]
    Load {
        /// The circuit id.
        id: String,
        /// Why.
        reason: String,
    },
    /// Eviction refused: jobs still prove with it.
    #[error("key {id} is in use by {users} job(s); evict it when they end")]
    InUse {
        /// The circuit id.
        id: String,
        /// Jobs using it.
        users: usize,
    },
}

struct Slot {
    key: Arc<OnceCell<Arc<ProvingKey>>>,
    users: usize,
    pinned: bool,
    /// When a job (or PreloadSRS) last took it or a job left it.
    last_used: Instant,
}

/// One key in [`KeyStore::list`].
#[derive(Clone, Debug)]
pub struct KeyInfo {
    /// The circuit id.
    pub id: String,
    /// Bytes of points in memory (0 while still loading).
    pub bytes: u64,
    /// Jobs using it.
    pub users: usize,
    /// Kept resident by PreloadSRS.
    pub pinned: bool,
    /// The key, once loaded.
    pub key: Option<Arc<ProvingKey>>,
    /// When a job (or PreloadSRS) last took it or a job left it.
    pub last_used: Instant,
}

/// Keys by circuit id.
pub struct KeyStore {
    dir: PathBuf,
    slots: Mutex<HashMap<String, Slot>>,
    /// Held while a job makes room for its key and is handed to the engine.
    room: tokio::sync::Mutex<()>,
}

/// One counted use of a key; dropping it counts the use out.
struct Counted {
    store: Arc<KeyStore>,
    id: String,
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.store.unuse(&self.id);
    }
}

/// One job's use of a key; dropping it (however the job ends) counts the job out.
pub struct KeyLease {
    _count: Counted,
    /// The key.
    pub key: Arc<ProvingKey>,
    /// Milliseconds this job waited for the key to load (0 when it was resident).
    pub load_ms: u64,
}

impl KeyStore {
    /// A store whose built-in keys live in `dir`.
    pub fn new(dir: PathBuf) -> Arc<Self> {
        Arc::new(KeyStore {
            dir,
            slots: Mutex::new(HashMap::new()),
            room: tokio::sync::Mutex::new(()),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Slot>> {
        // A panic while holding this lock leaves counts that are still consistent.
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Counts a use of `source`'s key (and pins it when `pin`), returning its cell.
    fn enter(&self, id: &str, pin: bool) -> (Arc<OnceCell<Arc<ProvingKey>>>, bool) {
        let mut slots = self.lock();
        let slot = slots.entry(id.to_string()).or_insert_with(|| Slot {
            key: Arc::new(OnceCell::new()),
            users: 0,
            pinned: false,
            last_used: Instant::now(),
        });
        slot.last_used = Instant::now();
        let was_pinned = slot.pinned;
        if pin {
            slot.pinned = true;
        } else {
            slot.users += 1;
        }
        (slot.key.clone(), was_pinned)
    }

    fn unuse(&self, id: &str) {
        let mut slots = self.lock();
        if let Some(slot) = slots.get_mut(id) {
            slot.users = slot.users.saturating_sub(1);
            slot.last_used = Instant::now();
            if slot.users == 0 && !slot.pinned {
                slots.remove(id);
            }
        }
    }

    async fn load(
        &self,
        id: &str,
        cell: &OnceCell<Arc<ProvingKey>>,
        source: &KeySource,
    ) -> Result<(Arc<ProvingKey>, u64), KeyError> {
        let t = Instant::now();
        let (dir, src) = (self.dir.clone(), source.clone());
        let key = cell
            .get_or_try_init(|| async move {
                tokio::task::spawn_blocking(move || load_or_make(&dir, &src))
                    .await
                    .map_err(|e| format!("the loader stopped: {e}"))?
            })
            .await
            .map_err(|reason| KeyError::Load {
                id: id.to_string(),
                reason,
            })?;
        Ok((key.clone(), t.elapsed().as_millis() as u64))
    }

    /// The key for one job, loading it if needed; the lease counts the job until dropped.
    pub async fn acquire(self: &Arc<Self>, source: &KeySource) -> Result<KeyLease, KeyError> {
        let id = source.circuit_id();
        let (cell, _) = self.enter(&id, false);
        // Counted before the load, so a failed or abandoned load counts the job out too.
        let count = Counted {
            store: self.clone(),
            id: id.clone(),
        };
        let (key, load_ms) = self.load(&id, &cell, source).await?;
        Ok(KeyLease {
            _count: count,
            key,
            load_ms,
        })
    }

    /// Loads `source`'s key and keeps it resident until [`evict`](Self::evict). Returns whether
    /// it was already pinned, the milliseconds spent loading and the key.
    pub async fn preload(
        &self,
        source: &KeySource,
    ) -> Result<(bool, u64, Arc<ProvingKey>), KeyError> {
        let id = source.circuit_id();
        let (cell, was_pinned) = self.enter(&id, true);
        let loaded = cell.initialized();
        match self.load(&id, &cell, source).await {
            Ok((key, ms)) => Ok((was_pinned, if loaded { 0 } else { ms }, key)),
            Err(e) => {
                self.unpin(&id);
                Err(e)
            }
        }
    }

    fn unpin(&self, id: &str) {
        let mut slots = self.lock();
        if let Some(slot) = slots.get_mut(id) {
            slot.pinned = false;
            if slot.users == 0 {
                slots.remove(id);
            }
        }
    }

    /// Drops a pinned key no job uses. `Ok(None)`: it was not pinned; `Ok(Some(key))`: the key
    /// that was released (its bytes are freed when the last reference goes).
    pub fn evict(&self, id: &str) -> Result<Option<Arc<ProvingKey>>, KeyError> {
        let mut slots = self.lock();
        let Some(slot) = slots.get(id) else {
            return Ok(None);
        };
        if slot.users > 0 {
            return Err(KeyError::InUse {
                id: id.to_string(),
                users: slot.users,
            });
        }
        if !slot.pinned {
            return Ok(None);
        }
        Ok(slots.remove(id).and_then(|s| s.key.get().cloned()))
    }

    /// Waits for the turn to make room for a job's key and hand the job to the engine: one job
    /// at a time, so that two arriving together do not both evict for the same room.
    pub async fn room(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.room.lock().await
    }

    /// Every key known now, by id.
    pub fn list(&self) -> Vec<KeyInfo> {
        let mut out: Vec<KeyInfo> = self
            .lock()
            .iter()
            .map(|(id, s)| {
                let key = s.key.get().cloned();
                KeyInfo {
                    id: id.clone(),
                    bytes: key.as_ref().map_or(0, |k| k.heap_bytes()),
                    users: s.users,
                    pinned: s.pinned,
                    key,
                    last_used: s.last_used,
                }
            })
            .collect();
        out.sort_by(|a, b| a.id.cmp(&b.id));
        out
    }
}

/// Reads the cached key of `source`, or makes, saves and returns one.
fn load_or_make(dir: &std::path::Path, source: &KeySource) -> Result<Arc<ProvingKey>, String> {
    let sample = source.sample();
    let path = dir.join(format!("{}.params", sample.shape_name()));
    if path.exists() {
        // Written by this daemon (a random key for a test circuit): no point checks.
        return ProvingKey::read_with(&path, Check::None)
            .map(Arc::new)
            .map_err(|e| format!("{}: {e}", path.display()));
    }
    let pk = match sample {
        crate::server::requests::kinds::BuiltinCircuit::Synthetic(c) => {
            crate::generate_random_parameters(c, &mut rand::rngs::OsRng)
        }
        crate::server::requests::kinds::BuiltinCircuit::Mimc(c) => {
            crate::generate_random_parameters(c, &mut rand::rngs::OsRng)
        }
    }
    .map_err(|e| format!("making the key: {e}"))?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    pk.write_file(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(Arc::new(pk))
}
