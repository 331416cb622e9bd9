//! The Filecoin circuits' keys (feature `filecoin`; ids as cuzk names them: `porep-32g`,
//! `wpost-2k`, `winning-512m`, `snap-64g`): read from filecoin-proofs' parameter cache into the
//! daemon's key store, where they stay resident until evicted.

use crate::filecoin::{CircuitId, FilecoinError, ParamCache};
use crate::keys::store::Source;
use crate::server::error::CallError;

/// `None` when `id` does not look like a Filecoin circuit id; else the circuit, or why the id
/// is not one.
pub fn circuit_of(id: &str) -> Option<Result<CircuitId, CallError>> {
    let prefix = id.split_once('-')?.0;
    if !["porep", "wpost", "winning", "snap"].contains(&prefix) {
        return None;
    }
    Some(
        id.parse::<CircuitId>()
            .map_err(|e| CallError::Invalid(format!("unknown circuit id {id:?}: {e}"))),
    )
}

/// Where the store reads the key of `circuit`: its parameter file, which must exist.
pub fn source(circuit: CircuitId) -> Result<Source, CallError> {
    match ParamCache::from_env().existing(circuit) {
        Ok(path) => Ok(Source::File(path)),
        Err(e @ FilecoinError::ParamsMissing { .. }) => {
            Err(CallError::Precondition(format!("{circuit}: {e}")))
        }
        Err(e) => Err(CallError::Internal(format!("{circuit}: {e}"))),
    }
}
