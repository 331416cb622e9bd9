//! The good inputs the fuzzer mutates, made once per process: a 2 KiB sector sealed offline, its
//! C1 output (bare and in Curio's envelope), WinningPoSt and WindowPoSt vanilla proofs and a
//! SnapDeals update, each as the `SubmitProofRequest` a client sends; and a parameter cache of
//! stand-in `.params` files (not keys), so that requests get past "parameters missing" into the
//! runner's build, which then stops where it loads the key.

use std::path::PathBuf;
use std::sync::OnceLock;

use baton::filecoin::testing::{
    post_vanilla, randomness, seal_sector, snap_vanilla, test_cache_dir,
};
use baton::filecoin::{
    envelope, CircuitId, CircuitKind, ParamCache, RegisteredPoStProof, RegisteredSealProof,
    RegisteredUpdateProof,
};
use baton::server::proto::{ProofKind, SubmitProofRequest};

/// The sector sizes whose circuits get a stand-in `.params` file: every size but 64 GiB, whose
/// requests therefore end as "parameters missing".
pub const STAND_IN_SIZES: [u64; 4] = [2 << 10, 8 << 20, 512 << 20, 32 << 30];

/// Everything the fuzzer starts from.
pub struct Seeds {
    /// The C1 output JSON (bare, as filecoin-proofs-api writes it).
    pub c1_json: Vec<u8>,
    /// The C1 output as a JSON value, for structure-aware mutation.
    pub c1_value: serde_json::Value,
    /// Its sector number and size.
    pub sector_id: u64,
    /// Sector size in bytes.
    pub sector_size: u64,
    /// A good POREP_SEAL_COMMIT request (the envelope).
    pub porep: SubmitProofRequest,
    /// A good WINNING_POST request.
    pub winning: SubmitProofRequest,
    /// A good WINDOW_POST_PARTITION request.
    pub window: SubmitProofRequest,
    /// A good SNAP_DEALS_UPDATE request.
    pub snap: SubmitProofRequest,
    /// A good BATON_SYNTHETIC request.
    pub synthetic: SubmitProofRequest,
}

impl Seeds {
    /// The good request of `kind` (the baton kinds share one JSON document).
    pub fn request(&self, kind: ProofKind) -> SubmitProofRequest {
        let mut r = match kind {
            ProofKind::PorepSealCommit => self.porep.clone(),
            ProofKind::WinningPost => self.winning.clone(),
            ProofKind::WindowPostPartition => self.window.clone(),
            ProofKind::SnapDealsUpdate => self.snap.clone(),
            _ => self.synthetic.clone(),
        };
        r.proof_kind = kind as i32;
        r
    }

    /// Every good request, one per wire kind.
    pub fn all(&self) -> Vec<SubmitProofRequest> {
        [
            ProofKind::PorepSealCommit,
            ProofKind::WinningPost,
            ProofKind::WindowPostPartition,
            ProofKind::SnapDealsUpdate,
            ProofKind::BatonSynthetic,
            ProofKind::BatonMimc,
        ]
        .into_iter()
        .map(|k| self.request(k))
        .collect()
    }
}

/// The seeds (sealed on first use; a few seconds).
pub fn seeds() -> &'static Seeds {
    static SEEDS: OnceLock<Seeds> = OnceLock::new();
    SEEDS.get_or_init(|| make().unwrap_or_else(|e| panic!("the fuzzer's seeds: {e}")))
}

/// Points filecoin-proofs at this process's parameter cache of stand-ins (and the shared test
/// cache's SDR parents), before anything reads its settings.
fn stand_in_cache() -> Result<ParamCache, String> {
    let dir = std::env::temp_dir().join(format!("baton-parse-fuzz-{}", std::process::id()));
    let params = dir.join("params");
    std::fs::create_dir_all(&params).map_err(|e| format!("{}: {e}", params.display()))?;
    std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &params);
    std::env::set_var(
        "FIL_PROOFS_PARENT_CACHE",
        test_cache_dir().join("filecoin-parents"),
    );
    let cache = ParamCache::at(&params);
    for sector_size in STAND_IN_SIZES {
        for kind in CircuitKind::ALL {
            let files = cache
                .files(CircuitId { kind, sector_size })
                .map_err(|e| e.to_string())?;
            std::fs::write(&files.params, b"a stand-in, not a key")
                .map_err(|e| format!("{}: {e}", files.params.display()))?;
        }
    }
    Ok(cache)
}

fn make() -> Result<Seeds, String> {
    stand_in_cache()?;
    let dir: PathBuf =
        std::env::temp_dir().join(format!("baton-parse-fuzz-{}/sector", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (miner_id, sector_id) = (1234, 7);
    let s = seal_sector(
        &dir,
        RegisteredSealProof::StackedDrg2KiBV1_1,
        miner_id,
        sector_id,
        1,
    )
    .map_err(|e| format!("sealing: {e}"))?;
    let sector_size = u64::from(s.proof.sector_size());
    let c1_json = serde_json::to_vec(&s.c1).map_err(|e| e.to_string())?;
    let c1_value = serde_json::to_value(&s.c1).map_err(|e| e.to_string())?;
    let porep = SubmitProofRequest {
        proof_kind: ProofKind::PorepSealCommit as i32,
        vanilla_proof: envelope(&c1_json, sector_id, sector_size),
        miner_id,
        ..SubmitProofRequest::default()
    };
    let r = randomness(3);
    let post = |p: RegisteredPoStProof, number: u64, kind: ProofKind| {
        post_vanilla(&s, p, &r)
            .map(|v| SubmitProofRequest {
                proof_kind: kind as i32,
                registered_proof: number,
                vanilla_proofs: vec![v],
                randomness: r.to_vec(),
                miner_id,
                ..SubmitProofRequest::default()
            })
            .map_err(|e| format!("{p:?} vanilla proof: {e}"))
    };
    let winning = post(
        RegisteredPoStProof::StackedDrgWinning2KiBV1,
        0,
        ProofKind::WinningPost,
    )?;
    let window = post(
        RegisteredPoStProof::StackedDrgWindow2KiBV1_2,
        10,
        ProofKind::WindowPostPartition,
    )?;
    let (vanilla, comm_r_new, comm_d_new) =
        snap_vanilla(&s, RegisteredUpdateProof::StackedDrg2KiBV1, 4)
            .map_err(|e| format!("update vanilla proofs: {e}"))?;
    let snap = SubmitProofRequest {
        proof_kind: ProofKind::SnapDealsUpdate as i32,
        registered_proof: 0,
        vanilla_proofs: vanilla,
        comm_r_old: s.comm_r.to_vec(),
        comm_r_new: comm_r_new.to_vec(),
        comm_d_new: comm_d_new.to_vec(),
        ..SubmitProofRequest::default()
    };
    let synthetic = SubmitProofRequest {
        proof_kind: ProofKind::BatonSynthetic as i32,
        vanilla_proof: br#"{"constraints": 64, "seed": 1, "partitions": 2}"#.to_vec(),
        ..SubmitProofRequest::default()
    };
    let _ = std::fs::remove_dir_all(&dir);
    Ok(Seeds {
        c1_json,
        c1_value,
        sector_id,
        sector_size,
        porep,
        winning,
        window,
        snap,
        synthetic,
    })
}
