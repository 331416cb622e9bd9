//! The recordings an engine knows, one per proving key, shared by every synthesis worker: made on
//! the first synthesis of a key's circuit, kept in memory while the key is in use, written under
//! baton's cache for a key read from a file ([`super::cache_path`]: by the key file's identity,
//! never beside the key; or into a folder, named by the key's tag, for keys made in memory) and
//! loaded from there on a later start or use. A recording an earlier version left beside the key
//! file is read once, written to its place and removed where the key's directory allows.
//!
//! [`Recordings::synthesize`] is the policy: the compiled path when the key has a recording,
//! full synthesis with a warning on any refusal of the compiled path (so a proof is never made
//! from constraints other than the circuit's; a recording that full synthesis proves wrong is
//! dropped and made again), full synthesis while another worker is still recording the same key.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use super::error::CompiledError;
use super::file::KeyTag;
use super::recording::Recording;
use crate::groth16::error::Result;
use crate::groth16::key::ProvingKey;
use crate::groth16::prover::{Abc, Witness};
use crate::keys::files::{self as key_files, KeyFileKind};

/// What is known of one key.
enum Entry {
    /// A worker is reading its recording file; the others wait for it (a read is far shorter
    /// than a synthesis).
    Loading,
    /// A worker is recording it; the others synthesize in full meanwhile (waiting would take as
    /// long as the recording, itself about one full synthesis).
    Recording,
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

impl Route {
    /// Every route, in the order of [`Recordings::routes`].
    pub const ALL: [Route; 4] = [Route::Compiled, Route::Loaded, Route::Recorded, Route::Full];
}

/// The recordings of an engine's keys.
#[derive(Default)]
pub struct Recordings {
    dir: Option<PathBuf>,
    entries: Mutex<HashMap<u64, Entry>>,
    /// Signalled whenever an entry leaves `Loading`.
    settled: Condvar,
    /// Keys whose recording a device refused: their next syntheses check on the host.
    distrusted: Mutex<HashSet<u64>>,
    /// Keys whose a/b/c a device could not hold beside their partition (its memory, or
    /// `gpu.memory_limit`): their partitions carry host a/b/c from now on.
    host_abc: Mutex<HashSet<u64>>,
    /// Recordings found beside their key files (where earlier versions wrote them), each read
    /// once: a stale one left in a read-only directory is not taken up again.
    old_read: Mutex<HashSet<PathBuf>>,
    /// Syntheses by route, in the order of [`Route::ALL`].
    routes: [AtomicU64; 4],
}

/// Marks a key busy until dropped or settled; dropping it unsettled (a failed or panicking
/// recording) forgets the key, so a later synthesis tries again.
struct Claim<'a> {
    recordings: &'a Recordings,
    key_id: u64,
    settled: bool,
}

impl Claim<'_> {
    /// Marks the key (still claimed) as being loaded or recorded, waking those who wait.
    fn mark(&self, entry: Entry) {
        self.recordings.lock().insert(self.key_id, entry);
        self.recordings.settled.notify_all();
    }

    fn settle(mut self, entry: Entry) {
        self.mark(entry);
        self.settled = true;
    }
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        if !self.settled {
            self.recordings.lock().remove(&self.key_id);
            self.recordings.settled.notify_all();
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

    /// The file of `pk`'s recording, if it has a place on disk: for a key read from a file,
    /// under baton's cache by that file's identity (as [`super::cache_path`] names it), else in
    /// the folder (named by the key's tag), else none (memory only).
    pub fn file_for(&self, pk: &ProvingKey) -> Option<PathBuf> {
        if let Some(key_path) = pk.path() {
            let tag = KeyTag::of(pk);
            return Some(key_files::path_for(
                key_path,
                &tag.0,
                KeyFileKind::Recording,
            ));
        }
        let tag = KeyTag::of(pk);
        self.dir
            .as_ref()
            .map(|d| d.join(format!("{}.r1cs", hex::encode(tag.0))))
    }

    /// The recording an earlier version left beside `pk`'s key file, while it is there and
    /// unread by this process.
    fn old_file(&self, pk: &ProvingKey) -> Option<PathBuf> {
        let old = KeyFileKind::Recording.old_path(pk.path()?);
        let unread = !lock_set(&self.old_read).contains(&old);
        (unread && old.is_file()).then_some(old)
    }

    /// Where `pk`'s recording is read from now, if anywhere: its file, else the one an earlier
    /// version left beside the key (then `true`).
    fn source(&self, pk: &ProvingKey, file: Option<&PathBuf>) -> Option<(PathBuf, bool)> {
        match file.filter(|p| p.exists()) {
            Some(p) => Some((p.clone(), false)),
            None => self.old_file(pk).map(|p| (p, true)),
        }
    }

    /// Drops what is known of the key with id `key_id` (its last job ended): the memory goes
    /// back, and a later use loads the file again or records anew.
    pub fn forget(&self, key_id: u64) {
        self.lock().remove(&key_id);
        self.distrusted_keys().remove(&key_id);
        lock_set(&self.host_abc).remove(&key_id);
    }

    fn distrusted_keys(&self) -> MutexGuard<'_, HashSet<u64>> {
        lock_set(&self.distrusted)
    }

    /// A device refused `pk`'s recording for a witness: until a host synthesis checks the
    /// key's partitions against it again ([`Recordings::trust`]), they are evaluated on the
    /// host.
    pub fn distrust(&self, pk: &ProvingKey) {
        self.distrusted_keys().insert(pk.id());
    }

    /// A device lacked the memory to evaluate `pk`'s a/b/c beside its partition: its later
    /// partitions are evaluated on the host (and charged their host a/b/c) while the key is
    /// known. Unlike [`Recordings::distrust`], no host synthesis lifts this: the device's memory
    /// does not grow.
    pub fn keep_abc_on_host(&self, pk: &ProvingKey) {
        lock_set(&self.host_abc).insert(pk.id());
    }

    /// Whether `pk`'s partitions must reach the device with host a/b/c: its recording is
    /// distrusted, or the device could not hold its a/b/c.
    pub fn abc_on_host(&self, pk: &ProvingKey) -> bool {
        self.distrusted(pk) || lock_set(&self.host_abc).contains(&pk.id())
    }

    /// Whether `pk`'s recording was refused by a device and not checked on the host since.
    pub fn distrusted(&self, pk: &ProvingKey) -> bool {
        self.distrusted_keys().contains(&pk.id())
    }

    /// A host synthesis of `pk` went through (checked against its recording, or with the
    /// recording replaced): devices may evaluate its partitions again.
    pub fn trust(&self, pk: &ProvingKey) {
        self.distrusted_keys().remove(&pk.id());
    }

    /// What `pk`'s recording will hold in memory, as far as is known before it is used: its
    /// size when it is loaded, else its file's, else 0 (it is made by the job's first synthesis).
    pub fn expected_bytes(&self, pk: &ProvingKey) -> u64 {
        if let Some(Entry::Ready(r)) = self.lock().get(&pk.id()) {
            return r.heap_bytes() as u64;
        }
        self.source(pk, self.file_for(pk).as_ref())
            .and_then(|(p, _)| std::fs::metadata(p).ok())
            .map_or(0, |m| m.len())
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

    /// How many syntheses took each route so far, in the order of [`Route::ALL`].
    pub fn routes(&self) -> [u64; 4] {
        self.routes.each_ref().map(|n| n.load(Ordering::Relaxed))
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
        let out = self.route(pk, record, compiled, full);
        if let Ok((_, route)) = &out {
            let i = Route::ALL.iter().position(|r| r == route).unwrap_or(3);
            self.routes[i].fetch_add(1, Ordering::Relaxed);
        }
        out
    }

    fn route(
        &self,
        pk: &ProvingKey,
        record: impl FnOnce() -> Result<(Recording, Abc, Witness), CompiledError>,
        compiled: impl FnOnce(&Recording) -> Result<(Abc, Witness), CompiledError>,
        full: impl FnOnce() -> Result<(Abc, Witness)>,
    ) -> Result<((Abc, Witness), Route)> {
        let file = self.file_for(pk);
        let source = self.source(pk, file.as_ref());
        let claim = {
            let mut entries = self.lock();
            loop {
                match entries.get(&pk.id()) {
                    Some(Entry::Ready(r)) => {
                        let r = r.clone();
                        drop(entries);
                        return self.run_compiled(pk, &r, compiled, full, Route::Compiled);
                    }
                    Some(Entry::Recording | Entry::Unusable) => {
                        drop(entries);
                        return full().map(|x| (x, Route::Full));
                    }
                    Some(Entry::Loading) => {
                        entries = self
                            .settled
                            .wait(entries)
                            .unwrap_or_else(|e| e.into_inner());
                    }
                    None => {
                        let busy = if source.is_some() {
                            Entry::Loading
                        } else {
                            Entry::Recording
                        };
                        entries.insert(pk.id(), busy);
                        break Claim {
                            recordings: self,
                            key_id: pk.id(),
                            settled: false,
                        };
                    }
                }
            }
        };
        if let Some((path, old)) = &source {
            if *old {
                lock_set(&self.old_read).insert(path.clone());
            }
            match Recording::read_for_key(path, pk) {
                Ok(r) => {
                    let r = Arc::new(r);
                    claim.settle(Entry::Ready(r.clone()));
                    if let (true, Some(new)) = (*old, &file) {
                        match r.write_for_key(new, pk) {
                            Ok(()) => key_files::retire(KeyFileKind::Recording, path, new),
                            Err(e) => tracing::warn!(error = %e, "recording left beside its key"),
                        }
                    }
                    return self.run_compiled(pk, &r, compiled, full, Route::Loaded);
                }
                Err(e) => {
                    tracing::warn!(error = %e, "recording file unusable; recording again");
                    claim.mark(Entry::Recording);
                }
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
                if matches!(e, CompiledError::Unsupported) {
                    claim.settle(Entry::Unusable);
                } else if !retry_later {
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

impl Recordings {
    /// Witness-only synthesis against `r`, or full synthesis when it is refused. A refusal that
    /// full synthesis then does not share (the circuit is fine, so the recording is not its)
    /// drops the recording and its file, so the next synthesis records the circuit anew.
    fn run_compiled(
        &self,
        pk: &ProvingKey,
        r: &Arc<Recording>,
        compiled: impl FnOnce(&Recording) -> Result<(Abc, Witness), CompiledError>,
        full: impl FnOnce() -> Result<(Abc, Witness)>,
        route: Route,
    ) -> Result<((Abc, Witness), Route)> {
        let e = match compiled(r) {
            Ok(x) => return Ok((x, route)),
            Err(e) => e,
        };
        tracing::warn!(error = %e, "compiled synthesis refused; falling back to full synthesis");
        let parts = full()?;
        let mut entries = self.lock();
        if matches!(entries.get(&pk.id()), Some(Entry::Ready(known)) if Arc::ptr_eq(known, r)) {
            tracing::warn!("the circuit no longer matches its recording; recording it again");
            entries.remove(&pk.id());
            if let Some(file) = self.file_for(pk) {
                let _ = std::fs::remove_file(file);
            }
        }
        Ok((parts, Route::Full))
    }
}

fn lock_set<T>(m: &Mutex<HashSet<T>>) -> MutexGuard<'_, HashSet<T>> {
    // A panic while a set was held cannot leave it half-changed: take it as it is.
    m.lock().unwrap_or_else(|e| e.into_inner())
}
