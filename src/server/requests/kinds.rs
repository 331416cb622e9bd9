//! From a `SubmitProofRequest` to the work it stands for: which key, which partition circuits,
//! and how their proofs become the bytes the client's verifier takes. Bad input is refused here,
//! before anything is journaled or queued.

use std::sync::Arc;

use serde::Deserialize;

use crate::circuits::{KnownCircuit, MimcChain, Synthetic};
use crate::groth16::proof::Proof;
use crate::scheduler::Priority;
use crate::server::proto::{ProofKind, SubmitProofRequest};
use crate::stages::pipeline::PartitionCircuit;

pub use super::kind_error::KindError;

/// Which built-in circuit family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    /// [`Synthetic`].
    Synthetic,
    /// [`MimcChain`].
    Mimc,
}

/// Everything needed to find, load or make a proving key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeySource {
    /// A built-in circuit of `constraints` constraints (its key is made once and cached).
    Builtin {
        /// The family.
        circuit: Builtin,
        /// Constraints per partition.
        constraints: usize,
    },
}

impl KeySource {
    /// The circuit id clients use in PreloadSRS, EvictSRS and GetStatus.
    pub fn circuit_id(&self) -> String {
        match self {
            KeySource::Builtin {
                circuit,
                constraints,
            } => format!("baton-{}-{constraints}", builtin_name(*circuit)),
        }
    }

    /// The key source a circuit id names.
    pub fn from_circuit_id(id: &str) -> Result<Self, KindError> {
        let unknown = || {
            KindError::Invalid(format!(
                "unknown circuit id {id:?} (built-in ids look like \"baton-synthetic-1024\" or \"baton-mimc-1024\")"
            ))
        };
        let rest = id.strip_prefix("baton-").ok_or_else(unknown)?;
        let (name, n) = rest.rsplit_once('-').ok_or_else(unknown)?;
        let circuit = match name {
            "synthetic" => Builtin::Synthetic,
            "mimc" => Builtin::Mimc,
            _ => return Err(unknown()),
        };
        let constraints = n.parse().map_err(|_| unknown())?;
        check_constraints(constraints)?;
        Ok(KeySource::Builtin {
            circuit,
            constraints,
        })
    }

    /// A circuit of this shape with any witness (what key generation needs).
    pub fn sample(&self) -> BuiltinCircuit {
        match *self {
            KeySource::Builtin {
                circuit,
                constraints,
            } => BuiltinCircuit::new(circuit, constraints, 0),
        }
    }
}

fn builtin_name(c: Builtin) -> &'static str {
    match c {
        Builtin::Synthetic => "synthetic",
        Builtin::Mimc => "mimc",
    }
}

/// A built-in circuit of either family, as one type (for key generation).
#[derive(Clone, Debug)]
pub enum BuiltinCircuit {
    /// See [`Synthetic`].
    Synthetic(Synthetic),
    /// See [`MimcChain`].
    Mimc(MimcChain),
}

impl BuiltinCircuit {
    /// The family's circuit with `constraints` constraints and witness seed `seed`.
    pub fn new(c: Builtin, constraints: usize, seed: u64) -> Self {
        match c {
            Builtin::Synthetic => BuiltinCircuit::Synthetic(Synthetic::new(constraints, seed)),
            Builtin::Mimc => BuiltinCircuit::Mimc(MimcChain::with_constraints(constraints, seed)),
        }
    }

    /// The shared circuit the engine proves.
    fn shared(self) -> Arc<dyn PartitionCircuit> {
        match self {
            BuiltinCircuit::Synthetic(c) => Arc::new(c),
            BuiltinCircuit::Mimc(c) => Arc::new(c),
        }
    }

    /// The key file name of this shape.
    pub fn shape_name(&self) -> String {
        match self {
            BuiltinCircuit::Synthetic(c) => c.shape_name(),
            BuiltinCircuit::Mimc(c) => c.shape_name(),
        }
    }
}

/// Constraints per partition the daemon accepts for a built-in circuit.
pub const BUILTIN_CONSTRAINTS: std::ops::RangeInclusive<usize> = 16..=(1 << 22);
/// Partitions per built-in job.
pub const BUILTIN_PARTITIONS: std::ops::RangeInclusive<usize> = 1..=64;

fn check_constraints(n: usize) -> Result<(), KindError> {
    if BUILTIN_CONSTRAINTS.contains(&n) {
        Ok(())
    } else {
        Err(KindError::Invalid(format!(
            "constraints must be within {}..={}, got {n}",
            BUILTIN_CONSTRAINTS.start(),
            BUILTIN_CONSTRAINTS.end()
        )))
    }
}

/// The `vanilla_proof` JSON of the baton kinds.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BuiltinInput {
    constraints: usize,
    seed: u64,
    #[serde(default = "one")]
    partitions: usize,
    /// Test hook: each partition's synthesis sleeps this long first (builds with `test-util`).
    #[serde(default)]
    synth_delay_ms: u64,
    /// Test hook: each partition's synthesis fails while this file exists (builds with
    /// `test-util`).
    #[serde(default)]
    fail_while: Option<String>,
}

fn one() -> usize {
    1
}

/// A request turned into work.
pub struct JobSpec {
    /// The wire kind.
    pub kind: ProofKind,
    /// The admission level.
    pub priority: Priority,
    /// What to prove.
    pub work: Work,
}

/// What a job proves.
pub enum Work {
    /// A built-in circuit: its key and one circuit per partition.
    Builtin {
        /// The key to prove under.
        key: KeySource,
        /// One circuit per partition.
        circuits: Vec<Arc<dyn PartitionCircuit>>,
    },
    /// A Filecoin proof, checked on arrival and built into a job on the runner.
    #[cfg(feature = "filecoin")]
    Filecoin(Arc<super::fil_kinds::FilWork>),
}

impl JobSpec {
    /// The circuit id its key goes by: jobs of one circuit reach the engine in acceptance order.
    pub fn circuit_id(&self) -> String {
        match &self.work {
            Work::Builtin { key, .. } => key.circuit_id(),
            #[cfg(feature = "filecoin")]
            Work::Filecoin(w) => w.circuit().to_string(),
        }
    }
}

/// The bytes the client gets for a built-in job's partition proofs, in order.
pub fn concat_proofs(proofs: &[Proof]) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(proofs.len() * 192);
    for p in proofs {
        p.write(&mut out).map_err(|e| e.to_string())?;
    }
    Ok(out)
}

/// The kind's name as the proto spells it.
pub fn kind_name(kind: i32) -> String {
    ProofKind::try_from(kind)
        .map(|k| k.as_str_name().to_string())
        .unwrap_or_else(|_| format!("{kind}"))
}

/// The level a request asks for, or its kind's default when unset.
fn priority_of(req: &SubmitProofRequest, kind: ProofKind) -> Result<Priority, KindError> {
    use crate::server::proto::Priority as Wire;
    Ok(match Wire::try_from(req.priority) {
        Ok(Wire::Low) => Priority::Low,
        Ok(Wire::Normal) => Priority::Normal,
        Ok(Wire::High) => Priority::High,
        Ok(Wire::Critical) => Priority::Critical,
        Ok(Wire::Unspecified) => match kind {
            ProofKind::WinningPost => Priority::Critical,
            ProofKind::WindowPostPartition => Priority::High,
            _ => Priority::Normal,
        },
        Err(_) => {
            return Err(KindError::Invalid(format!(
                "unknown priority {} (expected LOW, NORMAL, HIGH or CRITICAL)",
                req.priority
            )))
        }
    })
}

/// Checks a request and builds its work.
pub fn parse(req: &SubmitProofRequest) -> Result<JobSpec, KindError> {
    let kind = ProofKind::try_from(req.proof_kind)
        .map_err(|_| KindError::Invalid(format!("unknown proof_kind {}", req.proof_kind)))?;
    let priority = priority_of(req, kind)?;
    let builtin = match kind {
        ProofKind::Unspecified => {
            return Err(KindError::Invalid("proof_kind is not set".into()));
        }
        ProofKind::PorepSealCommit
        | ProofKind::SnapDealsUpdate
        | ProofKind::WindowPostPartition
        | ProofKind::WinningPost => return filecoin(kind, priority, req),
        ProofKind::BatonSynthetic => Builtin::Synthetic,
        ProofKind::BatonMimc => Builtin::Mimc,
    };
    if req.vanilla_proof.is_empty() {
        return Err(KindError::Invalid(format!(
            "{}: vanilla_proof is empty (expected JSON {{\"constraints\": n, \"seed\": s}})",
            kind.as_str_name()
        )));
    }
    let input: BuiltinInput = serde_json::from_slice(&req.vanilla_proof).map_err(|e| {
        KindError::Invalid(format!(
            "{}: vanilla_proof is not the expected JSON {{\"constraints\": n, \"seed\": s, \"partitions\": p}}: {e}",
            kind.as_str_name()
        ))
    })?;
    check_constraints(input.constraints)?;
    if !BUILTIN_PARTITIONS.contains(&input.partitions) {
        return Err(KindError::Invalid(format!(
            "partitions must be within {}..={}, got {}",
            BUILTIN_PARTITIONS.start(),
            BUILTIN_PARTITIONS.end(),
            input.partitions
        )));
    }
    let circuits = (0..input.partitions as u64)
        .map(|i| {
            let c = BuiltinCircuit::new(builtin, input.constraints, input.seed.wrapping_add(i));
            paced(c, input.synth_delay_ms, input.fail_while.as_deref())
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(JobSpec {
        kind,
        priority,
        work: Work::Builtin {
            key: KeySource::Builtin {
                circuit: builtin,
                constraints: input.constraints,
            },
            circuits,
        },
    })
}

/// A Filecoin kind, checked now (the rest is done on the runner).
#[cfg(feature = "filecoin")]
fn filecoin(
    kind: ProofKind,
    priority: Priority,
    req: &SubmitProofRequest,
) -> Result<JobSpec, KindError> {
    let work = super::fil_kinds::parse(kind, req)?;
    Ok(JobSpec {
        kind,
        priority,
        work: Work::Filecoin(Arc::new(work)),
    })
}

#[cfg(not(feature = "filecoin"))]
fn filecoin(kind: ProofKind, _: Priority, _: &SubmitProofRequest) -> Result<JobSpec, KindError> {
    Err(KindError::Unimplemented(format!(
        "proof kind {} is not served by this build of baton (built without the `filecoin` feature)",
        kind.as_str_name()
    )))
}

#[cfg(feature = "test-util")]
fn paced(
    c: BuiltinCircuit,
    delay_ms: u64,
    fail_while: Option<&str>,
) -> Result<Arc<dyn PartitionCircuit>, KindError> {
    use crate::testing::Paced;
    if delay_ms == 0 && fail_while.is_none() {
        return Ok(c.shared());
    }
    if delay_ms > 60_000 {
        return Err(KindError::Invalid(format!(
            "synth_delay_ms is at most 60000, got {delay_ms}"
        )));
    }
    fn paced_as<C>(c: C, delay_ms: u64, fail_while: Option<&str>) -> Paced<C> {
        let p = Paced::new(c, delay_ms);
        match fail_while {
            Some(f) => p.fail_while(f.into()),
            None => p,
        }
    }
    Ok(match c {
        BuiltinCircuit::Synthetic(c) => Arc::new(paced_as(c, delay_ms, fail_while)),
        BuiltinCircuit::Mimc(c) => Arc::new(paced_as(c, delay_ms, fail_while)),
    })
}

#[cfg(not(feature = "test-util"))]
fn paced(
    c: BuiltinCircuit,
    delay_ms: u64,
    fail_while: Option<&str>,
) -> Result<Arc<dyn PartitionCircuit>, KindError> {
    if delay_ms != 0 || fail_while.is_some() {
        return Err(KindError::Invalid(
            "synth_delay_ms and fail_while are test hooks of builds with the test-util feature"
                .into(),
        ));
    }
    Ok(c.shared())
}
