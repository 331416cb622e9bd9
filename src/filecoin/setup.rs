//! Test parameters made offline by baton's own setup on each circuit's blank form (as
//! filecoin-proofs' `paramcache` does with bellperson's), written as the `.params`, `.vk` and
//! `.meta` files filecoin-proofs looks for, so its provers and verifiers take them. The toxic
//! waste is known to this process: for tests and benchmarks only, never for the chain.

use std::io::Write;
use std::time::Instant;

use filecoin_proofs::constants::DefaultPieceHasher;
use filecoin_proofs::TreeRHasher;
use filecoin_proofs_api::MerkleTreeTrait;
use rand_core::RngCore;
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_porep::stacked::{StackedCompound, StackedDrg};
use storage_proofs_post::fallback::FallbackPoStCompound;
use storage_proofs_update::EmptySectorUpdateCompound;

use crate::groth16::key::ProvingKey;

use super::error::{FilecoinError, Result};
use super::ids::{post_proof_for, seal_proof_for, CircuitId, CircuitKind};
use super::params::{ParamCache, ParamFiles};
use super::shape::{guard, with_tree};

/// What [`generate_params`] did.
#[derive(Clone, Debug)]
pub struct Generated {
    /// The circuit.
    pub circuit: CircuitId,
    /// Its files.
    pub files: ParamFiles,
    /// False when both files were already there (nothing was made).
    pub made: bool,
    /// Seconds spent.
    pub seconds: f64,
}

/// Makes random parameters for `circuit` in `cache`, unless its `.params` and `.vk` exist.
pub fn generate_params(
    circuit: CircuitId,
    cache: &ParamCache,
    rng: &mut (impl RngCore + Send),
) -> Result<Generated> {
    let files = cache.files(circuit)?;
    let t = Instant::now();
    if files.params.is_file() && files.vk.is_file() {
        return Ok(Generated {
            circuit,
            files,
            made: false,
            seconds: 0.0,
        });
    }
    let size = circuit.sector_size;
    let pk = guard("making parameters", || match circuit.kind {
        CircuitKind::Porep => with_tree!(size, porep_key, size, rng),
        CircuitKind::WindowPost | CircuitKind::WinningPost => {
            with_tree!(size, post_key, circuit.kind, size, rng)
        }
        CircuitKind::SnapDeals => with_tree!(size, snap_key, size, rng),
    })?;
    std::fs::create_dir_all(cache.dir()).map_err(|source| FilecoinError::Io {
        path: cache.dir().to_path_buf(),
        source,
    })?;
    write_atomically(&files.vk, |w| Ok(pk.vk.write(w)?))?;
    write_atomically(&files.meta, |w| {
        w.write_all(format!("{{\"sector_size\":{size}}}").as_bytes())
            .map_err(|e| crate::groth16::error::Error::Io(e).into())
    })?;
    pk.write_file(&files.params)?;
    Ok(Generated {
        circuit,
        files,
        made: true,
        seconds: t.elapsed().as_secs_f64(),
    })
}

fn write_atomically(
    path: &std::path::Path,
    f: impl FnOnce(&mut std::fs::File) -> Result<()>,
) -> Result<()> {
    let io = |source| FilecoinError::Io {
        path: path.to_path_buf(),
        source,
    };
    let tmp = path.with_extension("tmp");
    let mut file = std::fs::File::create(&tmp).map_err(io)?;
    f(&mut file)?;
    file.sync_all().map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)
}

fn porep_key<Tree: 'static + MerkleTreeTrait>(
    size: u64,
    rng: &mut (impl RngCore + Send),
) -> Result<ProvingKey> {
    let proof = seal_proof_for(size)
        .ok_or_else(|| FilecoinError::BadInput(format!("no PoRep for sector size {size}")))?;
    let pp = filecoin_proofs::parameters::public_params::<Tree>(&proof.as_v1_config())
        .map_err(|e| FilecoinError::upstream("setting up the PoRep parameters", e))?;
    let blank = <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<
        StackedDrg<'_, Tree, DefaultPieceHasher>,
        _,
    >>::blank_circuit(&pp);
    Ok(crate::groth16::setup::generate_random_parameters(
        blank, rng,
    )?)
}

fn post_key<Tree: 'static + MerkleTreeTrait>(
    kind: CircuitKind,
    size: u64,
    rng: &mut (impl RngCore + Send),
) -> Result<ProvingKey> {
    let proof = post_proof_for(kind, size)
        .ok_or_else(|| FilecoinError::BadInput(format!("no {kind:?} for sector size {size}")))?;
    let config = proof.as_v1_config();
    let pp = match kind {
        CircuitKind::WinningPost => {
            filecoin_proofs::parameters::winning_post_public_params::<Tree>(&config)
        }
        _ => filecoin_proofs::parameters::window_post_public_params::<Tree>(&config),
    }
    .map_err(|e| FilecoinError::upstream("setting up the PoSt parameters", e))?;
    let blank = FallbackPoStCompound::<Tree>::blank_circuit(&pp);
    Ok(crate::groth16::setup::generate_random_parameters(
        blank, rng,
    )?)
}

fn snap_key<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    size: u64,
    rng: &mut (impl RngCore + Send),
) -> Result<ProvingKey> {
    let pp = storage_proofs_update::PublicParams::from_sector_size(size);
    let blank = EmptySectorUpdateCompound::<Tree>::blank_circuit(&pp);
    Ok(crate::groth16::setup::generate_random_parameters(
        blank, rng,
    )?)
}
