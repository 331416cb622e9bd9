//! The keys of the daemon's built-in circuits: made once (a random key for a test circuit) and
//! cached under `state_dir/keys`, so that a restarted daemon proves with the same key. The store
//! calls the maker only when the key is not resident.

use std::path::{Path, PathBuf};

use crate::groth16::key::{Check, ProvingKey};
use crate::keys::store::{Maker, Source};
use crate::server::requests::kinds::{BuiltinCircuit, KeySource};

/// Where the store gets the key of `source` when it is not resident: the cached file in `dir`,
/// or a new key, saved there.
pub fn source(dir: &Path, source: &KeySource) -> Source {
    let (dir, source) = (dir.to_path_buf(), source.clone());
    let make: Maker = Box::new(move || load_or_make(&dir, &source));
    Source::Made(make)
}

/// The file in `dir` that caches the key of `source`.
pub fn cached_path(dir: &Path, source: &KeySource) -> PathBuf {
    dir.join(format!("{}.params", source.sample().shape_name()))
}

/// Reads the cached key of `source`, or makes, saves and returns one.
fn load_or_make(dir: &PathBuf, source: &KeySource) -> Result<ProvingKey, String> {
    let sample = source.sample();
    let path = cached_path(dir, source);
    if path.exists() {
        // Written by this daemon (a random key for a test circuit): no point checks.
        return ProvingKey::read_with(&path, Check::None)
            .map_err(|e| format!("{}: {e}", path.display()));
    }
    let pk = match sample {
        BuiltinCircuit::Synthetic(c) => {
            crate::generate_random_parameters(c, &mut rand::rngs::OsRng)
        }
        BuiltinCircuit::Mimc(c) => crate::generate_random_parameters(c, &mut rand::rngs::OsRng),
    }
    .map_err(|e| format!("making the key: {e}"))?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    pk.write_file(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(pk)
}
