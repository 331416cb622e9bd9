//! Sealing a small sector offline (random piece → pre-commit 1 and 2 → commit 1) and the vanilla
//! proofs of WinningPoSt, WindowPoSt and SnapDeals on it, through filecoin-proofs-api, for tests
//! and benchmarks. Parameters come from [`ensure_params`](crate::filecoin::testing::ensure_params) (baton's own setup, cached).

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use filecoin_proofs_api::seal::{self, SealCommitPhase1Output};
use filecoin_proofs_api::{
    post, update, Commitment, PaddedBytesAmount, PieceInfo, PrivateReplicaInfo,
    RegisteredPoStProof, RegisteredSealProof, RegisteredUpdateProof, SectorId, UnpaddedBytesAmount,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::error::{FilecoinError, Result};
use super::ids::{CircuitId, CircuitKind};
use super::params::ParamCache;
use super::setup::{generate_params, Generated};
use crate::stages::pipeline::PartitionCircuit;

fn up<E: std::fmt::Display>(during: &'static str) -> impl Fn(E) -> FilecoinError {
    move |e| FilecoinError::upstream(during, e)
}

/// A sealed sector and everything its proofs need.
pub struct SealedSector {
    /// Where its files are (the caller owns and removes it).
    pub dir: PathBuf,
    /// Its proof type.
    pub proof: RegisteredSealProof,
    /// The miner id.
    pub miner_id: u64,
    /// The prover id derived from it.
    pub prover_id: [u8; 32],
    /// The sector number.
    pub sector_id: u64,
    /// The ticket sealed with.
    pub ticket: [u8; 32],
    /// The interactive seed of commit 1.
    pub seed: [u8; 32],
    /// comm_r.
    pub comm_r: Commitment,
    /// comm_d.
    pub comm_d: Commitment,
    /// The C1 output.
    pub c1: SealCommitPhase1Output,
    /// The sealed replica.
    pub replica: PathBuf,
    /// The sealing cache (trees, p_aux, t_aux).
    pub cache: PathBuf,
}

/// The directory tests and benchmarks cache parameters in: `$BATON_TEST_CACHE`, else
/// `~/.cache/baton-test` (CI sets it).
pub fn test_cache_dir() -> PathBuf {
    std::env::var_os("BATON_TEST_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/baton-test")))
        .unwrap_or_else(|| std::env::temp_dir().join("baton-test"))
}

/// Points filecoin-proofs at the test cache (parameters and SDR parent graphs), so test
/// parameters never land in a real parameter cache, and baton's files for them (recordings,
/// check records) at its `baton` folder unless `BATON_CACHE_DIR` is set. Call it first, before
/// anything touches filecoin-proofs (it reads its settings once per process).
pub fn use_test_cache() -> ParamCache {
    static ONCE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let dir = ONCE.get_or_init(|| {
        let base = test_cache_dir();
        let params = base.join("filecoin-params");
        // Once per process, before filecoin-proofs reads its settings.
        std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &params);
        std::env::set_var("FIL_PROOFS_PARENT_CACHE", base.join("filecoin-parents"));
        if std::env::var_os("BATON_CACHE_DIR").is_none() {
            std::env::set_var("BATON_CACHE_DIR", base.join("baton"));
        }
        params
    });
    ParamCache::at(dir.clone())
}

/// Makes (once, cached in `cache`) the parameters of the given circuits with baton's setup.
pub fn ensure_params(cache: &ParamCache, circuits: &[CircuitId]) -> Result<Vec<Generated>> {
    let mut rng = rand::rngs::OsRng;
    circuits
        .iter()
        .map(|c| generate_params(*c, cache, &mut rng))
        .collect()
}

/// The four circuits of a sector size.
pub fn all_circuits(sector_size: u64) -> Vec<CircuitId> {
    CircuitKind::ALL
        .into_iter()
        .map(|kind| CircuitId { kind, sector_size })
        .collect()
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> FilecoinError + '_ {
    move |source| FilecoinError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Writes a random piece filling the sector to a staged file; returns its piece info.
fn stage_piece(
    proof: RegisteredSealProof,
    dir: &Path,
    name: &str,
    rng: &mut ChaCha8Rng,
) -> Result<(PathBuf, PieceInfo)> {
    let size = UnpaddedBytesAmount::from(PaddedBytesAmount(u64::from(proof.sector_size())));
    let piece: Vec<u8> = (0..size.0).map(|_| rng.gen()).collect();
    let staged = dir.join(name);
    let target = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&staged)
        .map_err(io(&staged))?;
    let (info, _) =
        seal::add_piece(proof, &piece[..], target, size, &[]).map_err(up("adding a piece"))?;
    Ok((staged, info))
}

/// Seals one sector of `proof` under `dir`: random piece, PC1, PC2, C1 with a seed from `seed`.
pub fn seal_sector(
    dir: &Path,
    proof: RegisteredSealProof,
    miner_id: u64,
    sector_id: u64,
    seed: u64,
) -> Result<SealedSector> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let cache = dir.join("cache");
    std::fs::create_dir_all(&cache).map_err(io(&cache))?;
    let replica = dir.join("sealed");
    File::create(&replica).map_err(io(&replica))?;
    let (staged, piece) = stage_piece(proof, dir, "staged", &mut rng)?;
    let prover_id = super::prover_id_from_miner(miner_id);
    let ticket: [u8; 32] = rng.gen();
    let mut interactive: [u8; 32] = rng.gen();
    interactive[31] &= 0x3f;
    let pieces = [piece];
    let sid = SectorId::from(sector_id);
    let pc1 = seal::seal_pre_commit_phase1(
        proof, &cache, &staged, &replica, prover_id, sid, ticket, &pieces,
    )
    .map_err(up("pre-commit 1"))?;
    let pc2 = seal::seal_pre_commit_phase2(pc1, &cache, &replica).map_err(up("pre-commit 2"))?;
    let (comm_r, comm_d) = (pc2.comm_r, pc2.comm_d);
    let c1 = seal::seal_commit_phase1(
        &cache,
        &replica,
        prover_id,
        sid,
        ticket,
        interactive,
        pc2,
        &pieces,
    )
    .map_err(up("commit 1"))?;
    Ok(SealedSector {
        dir: dir.to_path_buf(),
        proof,
        miner_id,
        prover_id,
        sector_id,
        ticket,
        seed: interactive,
        comm_r,
        comm_d,
        c1,
        replica,
        cache,
    })
}

/// A random PoSt randomness (a field element).
pub fn randomness(seed: u64) -> [u8; 32] {
    let mut r: [u8; 32] = ChaCha8Rng::seed_from_u64(seed).gen();
    r[31] &= 0x3f;
    r
}

/// The vanilla proof of `sector` for a PoSt of type `post` and `randomness` (bincode bytes, as
/// filecoin-ffi hands them over).
pub fn post_vanilla(
    sector: &SealedSector,
    post_proof: RegisteredPoStProof,
    randomness: &[u8; 32],
) -> Result<Vec<u8>> {
    let sid = SectorId::from(sector.sector_id);
    let challenges =
        post::generate_fallback_sector_challenges(post_proof, randomness, &[sid], sector.prover_id)
            .map_err(up("PoSt challenges"))?;
    let mine = challenges
        .get(&sid)
        .ok_or_else(|| FilecoinError::BadInput("no challenges for the sector".into()))?;
    let replica = PrivateReplicaInfo::new(
        post_proof,
        sector.comm_r,
        sector.cache.clone(),
        sector.replica.clone(),
    );
    post::generate_single_vanilla_proof(post_proof, sid, &replica, mine)
        .map_err(up("PoSt vanilla proof"))
}

/// A SnapDeals update of `sector` with a fresh random piece: the partition vanilla proofs and
/// the new commitments `(comm_r_new, comm_d_new)`.
pub fn snap_vanilla(
    sector: &SealedSector,
    update_proof: RegisteredUpdateProof,
    seed: u64,
) -> Result<(Vec<Vec<u8>>, Commitment, Commitment)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let dir = sector.dir.join("update");
    std::fs::create_dir_all(&dir).map_err(io(&dir))?;
    let new_cache = dir.join("cache");
    std::fs::create_dir_all(&new_cache).map_err(io(&new_cache))?;
    let new_replica = dir.join("sealed");
    // The encoder writes into a file of the sector's size.
    let f = File::create(&new_replica).map_err(io(&new_replica))?;
    f.set_len(u64::from(sector.proof.sector_size()))
        .map_err(io(&new_replica))?;
    let (staged, piece) = stage_piece(sector.proof, &dir, "staged", &mut rng)?;
    let encoded = update::empty_sector_update_encode_into(
        update_proof,
        &new_replica,
        &new_cache,
        &sector.replica,
        &sector.cache,
        &staged,
        &[piece],
    )
    .map_err(up("encoding the update"))?;
    let proofs = update::generate_partition_proofs(
        update_proof,
        sector.comm_r,
        encoded.comm_r_new,
        encoded.comm_d_new,
        &sector.replica,
        &sector.cache,
        &new_replica,
        &new_cache,
    )
    .map_err(up("update vanilla proofs"))?;
    let out = proofs.into_iter().map(|p| p.0).collect();
    Ok((out, encoded.comm_r_new, encoded.comm_d_new))
}

/// What one circuit allocates and enforces (as written, before the prover's input constraints).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shape {
    /// Constraints.
    pub constraints: usize,
    /// Public inputs (the constant one not counted).
    pub inputs: usize,
    /// Private variables.
    pub aux: usize,
}

impl bellperson::ConstraintSystem<blstrs::Scalar> for Shape {
    type Root = Self;
    fn alloc<F, A, AR>(
        &mut self,
        _: A,
        _: F,
    ) -> Result<bellperson::Variable, bellperson::SynthesisError>
    where
        F: FnOnce() -> Result<blstrs::Scalar, bellperson::SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux += 1;
        Ok(bellperson::Variable::new_unchecked(bellperson::Index::Aux(
            self.aux - 1,
        )))
    }
    fn alloc_input<F, A, AR>(
        &mut self,
        _: A,
        _: F,
    ) -> Result<bellperson::Variable, bellperson::SynthesisError>
    where
        F: FnOnce() -> Result<blstrs::Scalar, bellperson::SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.inputs += 1;
        Ok(bellperson::Variable::new_unchecked(
            bellperson::Index::Input(self.inputs),
        ))
    }
    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, _: LA, _: LB, _: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(
            bellperson::LinearCombination<blstrs::Scalar>,
        ) -> bellperson::LinearCombination<blstrs::Scalar>,
        LB: FnOnce(
            bellperson::LinearCombination<blstrs::Scalar>,
        ) -> bellperson::LinearCombination<blstrs::Scalar>,
        LC: FnOnce(
            bellperson::LinearCombination<blstrs::Scalar>,
        ) -> bellperson::LinearCombination<blstrs::Scalar>,
    {
        self.constraints += 1;
    }
    ignore_namespaces!();
}

/// The shape of partition 0 of the sector's C2, counted on the real circuit.
pub fn porep_shape(sector: &SealedSector) -> Result<Shape> {
    fn count<Tree: 'static + filecoin_proofs_api::MerkleTreeTrait>(
        s: &SealedSector,
    ) -> Result<Shape> {
        use bellperson::Circuit;
        let (circuits, _) = super::porep::porep_circuits::<Tree>(&s.c1, &s.prover_id, s.sector_id)?;
        let mut shape = Shape::default();
        if let Some(c) = circuits.into_iter().next() {
            c.circuit()
                .clone()
                .synthesize(&mut shape)
                .map_err(|e| FilecoinError::upstream("counting the circuit", e))?;
        }
        Ok(shape)
    }
    super::shape::with_tree!(u64::from(sector.proof.sector_size()), count, sector)
}

/// Partition 0 of a sector's C2 twice, from [`porep_partition_pair`].
pub struct PorepPair {
    /// As the engine gets it: a [`super::PorepPartition`], its challenges' witness code in
    /// parallel.
    pub parallel: Arc<dyn PartitionCircuit>,
    /// filecoin-proofs' bare circuit: a circuit like any other, synthesized in one sequence.
    pub bare: Arc<dyn PartitionCircuit>,
    /// Its challenges.
    pub challenges: usize,
}

/// Partition 0 of the sector's C2, parallel and bare.
pub fn porep_partition_pair(sector: &SealedSector) -> Result<PorepPair> {
    fn pair<Tree: 'static + filecoin_proofs_api::MerkleTreeTrait>(
        s: &SealedSector,
    ) -> Result<PorepPair> {
        let (circuits, _) = super::porep::porep_circuits::<Tree>(&s.c1, &s.prover_id, s.sector_id)?;
        let partition = circuits.into_iter().next().ok_or(FilecoinError::Mismatch {
            what: "partitions",
            left: "none built".into(),
            right: "at least one".into(),
        })?;
        let bare = partition.circuit().clone();
        Ok(PorepPair {
            challenges: bare.challenges(),
            parallel: Arc::new(partition),
            bare: Arc::new(bare),
        })
    }
    super::shape::with_tree!(u64::from(sector.proof.sector_size()), pair, sector)
}
