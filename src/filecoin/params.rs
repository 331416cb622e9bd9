//! Where the Groth16 parameters of a circuit live (the directory and file names filecoin-proofs
//! uses) and loading them through the key store, refusing files of another circuit.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use filecoin_proofs::TreeRHasher;
use filecoin_proofs_api::MerkleTreeTrait;
use storage_proofs_core::parameter_cache::{self, CacheableParameters};
use storage_proofs_update::{EmptySectorUpdateCircuit, EmptySectorUpdateCompound};

use crate::groth16::key::ProvingKey;
use crate::keys::store::{KeyStore, Loaded};

use super::error::{FilecoinError, Result};
use super::ids::{post_proof_for, seal_proof_for, CircuitId, CircuitKind};
use super::shape::{guard, with_tree};

/// A parameter cache directory. [`ParamCache::from_env`] is the one filecoin-proofs itself reads
/// (`FIL_PROOFS_PARAMETER_CACHE`, else `/var/tmp/filecoin-proof-parameters/`), which is also
/// where its verifiers read the `.vk` files that check every proof before it is returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamCache {
    dir: PathBuf,
}

/// The three files of a circuit's parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamFiles {
    /// The proving key (`.params`).
    pub params: PathBuf,
    /// The verifying key (`.vk`).
    pub vk: PathBuf,
    /// The metadata (`.meta`, `{"sector_size": n}`).
    pub meta: PathBuf,
}

impl ParamCache {
    /// filecoin-proofs' own parameter cache.
    pub fn from_env() -> Self {
        ParamCache {
            dir: PathBuf::from(&storage_proofs_core::settings::SETTINGS.parameter_cache),
        }
    }

    /// Another directory (tests, tools). filecoin-proofs' verifiers still read `.vk` files from
    /// [`ParamCache::from_env`]'s directory.
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        ParamCache { dir: dir.into() }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The files of `id`, named as filecoin-proofs names them (cache version, circuit, hash
    /// of its public parameters).
    pub fn files(&self, id: CircuitId) -> Result<ParamFiles> {
        let cache_id = guard("naming the parameter files", || {
            with_tree!(id.sector_size, cache_identifier, id)
        })?;
        let file = |name: String| self.dir.join(name);
        Ok(ParamFiles {
            params: file(parameter_cache::parameter_id(&cache_id)),
            vk: file(parameter_cache::verifying_key_id(&cache_id)),
            meta: file(parameter_cache::metadata_id(&cache_id)),
        })
    }

    /// The `.params` file of `id`, or [`FilecoinError::ParamsMissing`] naming where it was
    /// looked for.
    pub fn existing(&self, id: CircuitId) -> Result<PathBuf> {
        let path = self.files(id)?.params;
        if path.is_file() {
            Ok(path)
        } else {
            Err(FilecoinError::ParamsMissing {
                circuit: id.to_string(),
                path,
            })
        }
    }

    /// The proving key of `id` from `keys` (read and checked once per file), with its path and
    /// what loading it took.
    pub fn load(
        &self,
        id: CircuitId,
        keys: &KeyStore,
    ) -> Result<(Arc<ProvingKey>, PathBuf, Loaded)> {
        let path = self.existing(id)?;
        let (key, loaded) = keys.load(&id.to_string(), &path)?;
        Ok((key, path, loaded))
    }
}

/// Refuses a key whose public-input count is not the circuit's (parameters of another circuit).
pub(crate) fn check_inputs(
    pk: &ProvingKey,
    id: CircuitId,
    path: &Path,
    public_inputs: usize,
) -> Result<()> {
    let key = pk.vk.ic.len().saturating_sub(1);
    if key == public_inputs {
        return Ok(());
    }
    Err(FilecoinError::ParamsMismatch {
        circuit: id.to_string(),
        path: path.to_path_buf(),
        what: "public inputs",
        key,
        expected: public_inputs,
    })
}

/// filecoin-proofs' cache identifier of a circuit (what its parameter file names are made of).
fn cache_identifier<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    id: CircuitId,
) -> Result<String> {
    let up = |e| FilecoinError::upstream("naming the parameter files", e);
    let none = || FilecoinError::BadInput(format!("no proof type for {id}"));
    match id.kind {
        CircuitKind::Porep => {
            let proof = seal_proof_for(id.sector_size).ok_or_else(none)?;
            proof
                .as_v1_config()
                .get_cache_identifier::<Tree>()
                .map_err(up)
        }
        CircuitKind::WindowPost | CircuitKind::WinningPost => {
            let proof = post_proof_for(id.kind, id.sector_size).ok_or_else(none)?;
            proof
                .as_v1_config()
                .get_cache_identifier::<Tree>()
                .map_err(up)
        }
        // filecoin-proofs-api's `RegisteredUpdateProof::cache_params_path` names the PoRep file;
        // filecoin-proofs itself loads this one.
        CircuitKind::SnapDeals => {
            let pp = storage_proofs_update::PublicParams::from_sector_size(id.sector_size);
            Ok(<EmptySectorUpdateCompound<Tree> as CacheableParameters<
                EmptySectorUpdateCircuit<Tree>,
                _,
            >>::cache_identifier(&pp))
        }
    }
}
