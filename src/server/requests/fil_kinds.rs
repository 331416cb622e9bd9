//! The Filecoin kinds of the wire (feature `filecoin`), in two steps: a `SubmitProofRequest` is
//! checked when it arrives, before it is journaled (the fields it names, the C1 envelope, the
//! parameters file, the replica id against the miner and sector), so that bad input is refused
//! with its gRPC status; the slow part (vanilla proofs verified, key loaded, partition circuits
//! built) is done on the runner by [`FilWork::build`], through the Filecoin module's
//! [`Filecoin`] and the daemon's key store.
//!
//! The fields are those Curio fills (`lib/ffi/cuzk_funcs.go`): POREP_SEAL_COMMIT takes the C1
//! output in `vanilla_proof` (Curio's `{"SectorNum", "Phase1Out", "SectorSize"}` envelope, or
//! the bare JSON with `sector_number`) and `miner_id`; WINNING_POST and WINDOW_POST_PARTITION
//! take one bincode `FallbackPoStSectorProof` per sector in `vanilla_proofs`, `randomness` and
//! `miner_id` (and `partition_index`); SNAP_DEALS_UPDATE takes one bincode `PartitionProof` per
//! partition and the three raw 32-byte commitments. `registered_proof` is the chain's number of
//! the proof type; `sector_size`, when set, must agree with it.

use std::sync::Arc;

use filecoin_proofs_api::PoStType;

use super::kind_error::KindError;
use crate::filecoin::{
    parse_c1, post_proof_from_number, prover_id_from_miner, seal_proof_from_number,
    update_proof_from_number, CircuitId, Commitment, Filecoin, FilecoinError, Job, ParamCache,
    RegisteredPoStProof, RegisteredUpdateProof, SealCommitPhase1Output,
};
use crate::keys::store::KeyStore;
use crate::server::proto::{ProofKind, SubmitProofRequest};

/// A Filecoin request checked on arrival, ready to be built on the runner.
pub struct FilWork {
    circuit: CircuitId,
    input: Input,
}

enum Input {
    Porep {
        c1: Box<SealCommitPhase1Output>,
        prover_id: [u8; 32],
        sector_id: u64,
    },
    Post {
        proof: RegisteredPoStProof,
        randomness: [u8; 32],
        prover_id: [u8; 32],
        vanilla: Vec<Vec<u8>>,
        /// `Some` for one WindowPoSt partition, `None` for WinningPoSt.
        partition: Option<usize>,
    },
    Snap {
        proof: RegisteredUpdateProof,
        vanilla: Vec<Vec<u8>>,
        comms: [Commitment; 3],
    },
}

/// The status a Filecoin error gets when it refuses a request: a missing or foreign parameters
/// file is the daemon's state (FAILED_PRECONDITION), a proof type not built is UNIMPLEMENTED,
/// everything else is the request's fault (INVALID_ARGUMENT). The message names the kind.
pub fn refused(kind: ProofKind, e: FilecoinError) -> KindError {
    let msg = format!("{}: {e}", kind.as_str_name());
    match e {
        FilecoinError::ParamsMissing { .. }
        | FilecoinError::ParamsMismatch { .. }
        | FilecoinError::Key(_) => KindError::Precondition(msg),
        FilecoinError::Unsupported(_) => KindError::Unimplemented(msg),
        _ => KindError::Invalid(msg),
    }
}

fn bytes32(kind: ProofKind, what: &str, b: &[u8]) -> Result<[u8; 32], KindError> {
    b.try_into().map_err(|_| {
        KindError::Invalid(format!(
            "{}: {what} must be 32 raw bytes, got {}",
            kind.as_str_name(),
            b.len()
        ))
    })
}

/// `sector_size`, when set, must be the proof type's.
fn same_size(
    kind: ProofKind,
    req: &SubmitProofRequest,
    proof: &dyn std::fmt::Debug,
    of_proof: u64,
) -> Result<(), KindError> {
    if req.sector_size == 0 || req.sector_size == of_proof {
        return Ok(());
    }
    Err(KindError::Invalid(format!(
        "{}: sector_size {} vs {proof:?} ({of_proof} bytes)",
        kind.as_str_name(),
        req.sector_size
    )))
}

/// The request's `vanilla_proofs`, refused when there are none.
fn vanilla_list(
    kind: ProofKind,
    req: &SubmitProofRequest,
    each: &str,
) -> Result<Vec<Vec<u8>>, KindError> {
    if req.vanilla_proofs.is_empty() {
        return Err(KindError::Invalid(format!(
            "{}: vanilla_proofs is empty (expected one bincode {each})",
            kind.as_str_name()
        )));
    }
    Ok(req.vanilla_proofs.clone())
}

/// Checks a Filecoin request as far as it can be checked without the key or the vanilla
/// proofs' verification.
pub fn parse(kind: ProofKind, req: &SubmitProofRequest) -> Result<FilWork, KindError> {
    // Only its parameter cache is used: an empty key store costs nothing.
    let fil = Filecoin::from_env();
    let (circuit, input) = match kind {
        ProofKind::PorepSealCommit => porep(&fil, req)?,
        ProofKind::WinningPost | ProofKind::WindowPostPartition => post(kind, req)?,
        ProofKind::SnapDealsUpdate => snap(req)?,
        _ => {
            return Err(KindError::Invalid(format!(
                "{} is not a Filecoin proof kind",
                kind.as_str_name()
            )))
        }
    };
    fil.params()
        .existing(circuit)
        .map_err(|e| refused(kind, e))?;
    Ok(FilWork { circuit, input })
}

fn porep(fil: &Filecoin, req: &SubmitProofRequest) -> Result<(CircuitId, Input), KindError> {
    let kind = ProofKind::PorepSealCommit;
    let invalid = |m: String| KindError::Invalid(format!("{}: {m}", kind.as_str_name()));
    if req.vanilla_proof.is_empty() {
        return Err(invalid(
            "vanilla_proof is empty (expected the C1 output, bare or in Curio's {\"SectorNum\", \"Phase1Out\", \"SectorSize\"} envelope)".into(),
        ));
    }
    let input = parse_c1(&req.vanilla_proof).map_err(|e| refused(kind, e))?;
    let sector_id = match input.sector_id {
        Some(env) if req.sector_number != 0 && req.sector_number != env => {
            return Err(invalid(format!(
                "sector_number {} vs the envelope's SectorNum {env}",
                req.sector_number
            )))
        }
        Some(env) => env,
        None => req.sector_number,
    };
    let c1 = input.output;
    let proof = c1.registered_proof;
    // 0 (StackedDrg2KiBV1, also proto3's unset) takes the C1 output's own type.
    if req.registered_proof != 0 {
        let asked = seal_proof_from_number(req.registered_proof).map_err(|e| refused(kind, e))?;
        if asked != proof {
            return Err(invalid(format!(
                "registered_proof {} ({asked:?}) vs the C1 output's {proof:?}",
                req.registered_proof
            )));
        }
    }
    same_size(kind, req, &proof, u64::from(proof.sector_size()))?;
    let prover_id = prover_id_from_miner(req.miner_id);
    let circuit = fil
        .porep_check(&c1, prover_id, sector_id)
        .map_err(|e| refused(kind, e))?;
    let input = Input::Porep {
        c1: Box::new(c1),
        prover_id,
        sector_id,
    };
    Ok((circuit, input))
}

fn post(kind: ProofKind, req: &SubmitProofRequest) -> Result<(CircuitId, Input), KindError> {
    let invalid = |m: String| KindError::Invalid(format!("{}: {m}", kind.as_str_name()));
    let proof = post_proof_from_number(req.registered_proof).map_err(|e| refused(kind, e))?;
    let (want, partition) = match kind {
        ProofKind::WinningPost => (PoStType::Winning, None),
        _ => (PoStType::Window, Some(req.partition_index as usize)),
    };
    if proof.typ() != want {
        return Err(invalid(format!(
            "registered_proof {} is {proof:?}, not a {want:?} PoSt type",
            req.registered_proof
        )));
    }
    if want == PoStType::Winning && req.partition_index != 0 {
        return Err(invalid("WinningPoSt has no partition_index".into()));
    }
    same_size(kind, req, &proof, u64::from(proof.sector_size()))?;
    let input = Input::Post {
        proof,
        randomness: bytes32(kind, "randomness", &req.randomness)?,
        prover_id: prover_id_from_miner(req.miner_id),
        vanilla: vanilla_list(kind, req, "FallbackPoStSectorProof per sector")?,
        partition,
    };
    Ok((CircuitId::of_post(proof), input))
}

fn snap(req: &SubmitProofRequest) -> Result<(CircuitId, Input), KindError> {
    let kind = ProofKind::SnapDealsUpdate;
    let proof = update_proof_from_number(req.registered_proof).map_err(|e| refused(kind, e))?;
    same_size(kind, req, &proof, u64::from(proof.sector_size()))?;
    let comms = [
        bytes32(kind, "comm_r_old", &req.comm_r_old)?,
        bytes32(kind, "comm_r_new", &req.comm_r_new)?,
        bytes32(kind, "comm_d_new", &req.comm_d_new)?,
    ];
    let input = Input::Snap {
        proof,
        vanilla: vanilla_list(kind, req, "PartitionProof per partition")?,
        comms,
    };
    Ok((CircuitId::of_update(proof), input))
}

impl FilWork {
    /// The circuit (and key) it proves with.
    pub fn circuit(&self) -> CircuitId {
        self.circuit
    }

    /// Builds the job (slow: verifies the vanilla proofs, loads the key if it is not resident,
    /// builds the partition circuits). Returns it with the milliseconds spent loading the key
    /// (0 when it was resident). Run it off the async executor.
    pub fn build(&self, keys: Arc<KeyStore>) -> Result<(Job, u64), FilecoinError> {
        let fil = Filecoin::shared(ParamCache::from_env(), keys);
        let id = self.circuit.to_string();
        let resident = fil.loaded().iter().any(|k| k.circuit_id == id);
        let job = match &self.input {
            Input::Porep {
                c1,
                prover_id,
                sector_id,
            } => fil.porep_c2(c1, *prover_id, *sector_id)?,
            Input::Post {
                proof,
                randomness,
                prover_id,
                vanilla,
                partition: None,
            } => fil.winning_post(*proof, randomness, *prover_id, vanilla)?,
            Input::Post {
                proof,
                randomness,
                prover_id,
                vanilla,
                partition,
            } => fil.window_post(*proof, randomness, *prover_id, vanilla, *partition)?,
            Input::Snap {
                proof,
                vanilla,
                comms,
            } => fil.snap_deals(*proof, vanilla, comms[0], comms[1], comms[2])?,
        };
        let load_ms = match resident {
            true => 0,
            false => fil
                .loaded()
                .iter()
                .find(|k| k.circuit_id == id)
                .map_or(0, |k| k.load_time.as_millis() as u64),
        };
        Ok((job, load_ms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused_with(kind: ProofKind, req: SubmitProofRequest) -> KindError {
        match parse(
            kind,
            &SubmitProofRequest {
                proof_kind: kind as i32,
                ..req
            },
        ) {
            Ok(_) => panic!("{} accepted a bad request", kind.as_str_name()),
            Err(e) => e,
        }
    }

    fn invalid_naming(e: KindError, kind: ProofKind, needle: &str) {
        let msg = e.to_string();
        assert!(matches!(e, KindError::Invalid(_)), "{msg}");
        assert!(
            msg.starts_with(kind.as_str_name()) && msg.contains(needle),
            "{msg}"
        );
    }

    /// The field checks come before anything reads a file, each naming the kind and the field.
    #[test]
    fn bad_fields_are_refused_naming_the_kind_and_the_field() {
        let post = |registered_proof, randomness: &[u8]| SubmitProofRequest {
            registered_proof,
            randomness: randomness.to_vec(),
            vanilla_proofs: vec![vec![1]],
            ..SubmitProofRequest::default()
        };
        let (win, wd) = (ProofKind::WinningPost, ProofKind::WindowPostPartition);
        invalid_naming(refused_with(win, post(0, &[0; 31])), win, "randomness");
        // 5 is a WindowPoSt type.
        invalid_naming(refused_with(win, post(5, &[0; 32])), win, "not a Winning");
        invalid_naming(refused_with(wd, post(0, &[0; 32])), wd, "not a Window");
        invalid_naming(refused_with(win, post(99, &[0; 32])), win, "99");
        let sized = SubmitProofRequest {
            sector_size: 4096,
            ..post(0, &[0; 32])
        };
        invalid_naming(refused_with(win, sized), win, "sector_size 4096");
        let snap = ProofKind::SnapDealsUpdate;
        let short = SubmitProofRequest {
            comm_r_old: vec![0; 40],
            ..SubmitProofRequest::default()
        };
        invalid_naming(
            refused_with(snap, short),
            snap,
            "comm_r_old must be 32 raw bytes",
        );
        let porep = ProofKind::PorepSealCommit;
        invalid_naming(
            refused_with(porep, SubmitProofRequest::default()),
            porep,
            "vanilla_proof is empty",
        );
        let garbled = SubmitProofRequest {
            vanilla_proof: b"{\"SectorNum\": 1, \"Phase1Out\": \"%%\", \"SectorSize\": 2048}"
                .to_vec(),
            ..SubmitProofRequest::default()
        };
        invalid_naming(refused_with(porep, garbled), porep, "base64");
    }

    #[test]
    fn missing_parameters_are_a_precondition_and_unbuilt_types_unimplemented() {
        let missing = FilecoinError::ParamsMissing {
            circuit: "porep-32g".into(),
            path: "/nowhere/x.params".into(),
        };
        let e = refused(ProofKind::PorepSealCommit, missing);
        assert!(matches!(e, KindError::Precondition(_)), "{e}");
        assert!(e.to_string().contains("/nowhere/x.params"), "{e}");
        let e = refused(
            ProofKind::PorepSealCommit,
            FilecoinError::Unsupported("NI".into()),
        );
        assert!(matches!(e, KindError::Unimplemented(_)), "{e}");
        assert!(e.to_string().starts_with("POREP_SEAL_COMMIT"), "{e}");
    }
}
