//! The recordings an engine knows, one per proving key, shared by every synthesis worker: made on
//! the first synthesis of a key's circuit, kept in memory, written beside the key (or into a
//! cache folder, named by the key's tag) and loaded from there on a later start.
//!
//! [`Recordings::synthesize`] is the policy: the compiled path when the key has a recording,
//! full synthesis with a warning on any refusal of the compiled path (so a proof is never made
//! from constraints other than the circuit's), full synthesis while another worker is still
//! recording the same key.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use super::error::CompiledError;
use super::file::{cache_path, KeyTag};
use super::recording::Recording;
use crate::error::Result;
use crate::key::ProvingKey;
use crate::prover::{Abc, Witness};

/// What is known of one key.
enum Entry {
    /// A worker is loading or recording it; the others synthesize in full meanwhile.
    Busy,
    /// Its recording, checked against the key.
    Ready(Arc<Recording>),
    /// Its circuit cannot be recorded (too large, or it does not fit its own key): full
    /// synthesis from now on, without trying again.
    Unusable,
}

/// Where a compiled synthesis came from, for logs and tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// Witness-only synthesis against a recording already known.
    Compiled,
    /// Witness-only synthesis against a recording just read from its file.
    Loaded,
    /// This synthesis made the recording.
    Recorded,
    /// Full synthesis (no recording yet, another worker recording, or the compiled path
    /// refused this circuit).
    Full,
}

/// The recordings of an engine's keys.
#[derive(Default)]
pub struct Recordings {
    dir: Option<PathBuf>,
    entries: Mutex<HashMap<u64, Entry>>,
    key_paths: Mutex<HashMap<u64, PathBuf>>,
}

/// Marks a key busy until dropped or settled; dropping it unsettled (a failed or panicking
/// recording) forgets the key, so a later synthesis tries again.
struct Claim<'a> {
    recordings: &'a Recordings,
    key_id: u64,
    settled: bool,
}

impl Claim<'_> {
    fn settle(mut self, entry: Entry) {
        self.recordings.lock().insert(self.key_id, entry);
        self.settled = true;
    }
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        if !self.settled {
            self.recordings.lock().remove(&self.key_id);
        }
    }
}

impl Recordings {
    /// Recordings kept in memory, and as files in `dir` (named by key tag) when it is given and
    /// a key's own path is not known.
    pub fn new(dir: Option<PathBuf>) -> Self {
        Recordings {
            dir,
            ..Self::default()
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<u64, Entry>> {
        // A panic while the map was held cannot leave an entry half-written: take it as it is.
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Says where `pk` was read from, so its recording lives beside it (`<key>.r1cs`).
    pub fn set_key_path(&self, pk: &ProvingKey, path: &Path) {
        let mut paths = self.key_paths.lock().unwrap_or_else(|e| e.into_inner());
        paths.insert(pk.id(), path.to_path_buf());
    }

    /// The file of `pk`'s recording, if it has a place on disk.
    pub fn file_for(&self, pk: &ProvingKey) -> Option<PathBuf> {
        let paths = self.key_paths.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(key_path) = paths.get(&pk.id()) {
            return Some(cache_path(key_path));
        }
        let tag = KeyTag::of(pk);
        self.dir
            .as_ref()
            .map(|d| d.join(format!("{}.r1cs", hex::encode(tag.0))))
    }

    /// `pk`'s recording, when one is ready.
    pub fn get(&self, pk: &ProvingKey) -> Option<Arc<Recording>> {
        match self.lock().get(&pk.id()) {
            Some(Entry::Ready(r)) => Some(r.clone()),
            _ => None,
        }
    }

    /// Bytes held by the recordings in memory (resident beside their keys).
    pub fn heap_bytes(&self) -> u64 {
        self.lock()
            .values()
            .map(|e| match e {
                Entry::Ready(r) => r.heap_bytes() as u64,
                _ => 0,
            })
            .sum()
    }

    /// Synthesizes one partition for `pk`: `compiled` against the key's recording when there
    /// is one (loaded from its file, or made by `record` on this first synthesis), `full`
    /// otherwise and whenever the compiled path refuses the circuit.
    pub fn synthesize(
        &self,
        pk: &ProvingKey,
        record: impl FnOnce() -> Result<(Recording, Abc, Witness), CompiledError>,
        compiled: impl FnOnce(&Recording) -> Result<(Abc, Witness), CompiledError>,
        full: impl FnOnce() -> Result<(Abc, Witness)>,
    ) -> Result<((Abc, Witness), Route)> {
        let claim = {
            let mut entries = self.lock();
            match entries.get(&pk.id()) {
                Some(Entry::Ready(r)) => {
                    let r = r.clone();
                    drop(entries);
                    return run_compiled(&r, compiled, full, Route::Compiled);
                }
                Some(Entry::Busy | Entry::Unusable) => return full().map(|x| (x, Route::Full)),
                None => {
                    entries.insert(pk.id(), Entry::Busy);
                    Claim {
                        recordings: self,
                        key_id: pk.id(),
                        settled: false,
                    }
                }
            }
        };
        let file = self.file_for(pk);
        if let Some(path) = file.as_deref().filter(|p| p.exists()) {
            match Recording::read_for_key(path, pk) {
                Ok(r) => {
                    let r = Arc::new(r);
                    claim.settle(Entry::Ready(r.clone()));
                    return run_compiled(&r, compiled, full, Route::Loaded);
                }
                Err(e) => tracing::warn!(error = %e, "recording file unusable; recording again"),
            }
        }
        match record() {
            Ok((r, abc, w)) => match r.check_key(pk) {
                Ok(()) => {
                    if let Some(path) = &file {
                        if let Err(e) = r.write_for_key(path, pk) {
                            tracing::warn!(error = %e, "recording kept in memory only");
                        }
                    }
                    claim.settle(Entry::Ready(Arc::new(r)));
                    Ok(((abc, w), Route::Recorded))
                }
                Err(e) => {
                    // Full synthesis names the mismatch the way every other path does.
                    tracing::warn!(error = %e, "circuit does not fit its key; not compiling it");
                    claim.settle(Entry::Unusable);
                    full().map(|x| (x, Route::Full))
                }
            },
            Err(e) => {
                let retry_later = matches!(
                    e,
                    CompiledError::Unsatisfied { .. } | CompiledError::Synthesis(_)
                );
                if !retry_later {
                    tracing::warn!(error = %e, "circuit cannot be recorded; full synthesis");
                    claim.settle(Entry::Unusable);
                } else {
                    drop(claim);
                }
                full().map(|x| (x, Route::Full))
            }
        }
    }
}

fn run_compiled(
    r: &Recording,
    compiled: impl FnOnce(&Recording) -> Result<(Abc, Witness), CompiledError>,
    full: impl FnOnce() -> Result<(Abc, Witness)>,
    path: Route,
) -> Result<((Abc, Witness), Route)> {
    match compiled(r) {
        Ok(x) => Ok((x, path)),
        Err(e) => {
            tracing::warn!(error = %e, "compiled synthesis refused; falling back to full synthesis");
            full().map(|x| (x, Route::Full))
        }
    }
}
