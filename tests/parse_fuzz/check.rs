//! What every fuzzed request must satisfy, and the runner that counts how the cases ended: a
//! request goes through `kinds::parse` as the service (and the journal's resume) runs it and,
//! once accepted, through `FilWork::build` as the runner does; each step watched, each refusal
//! checked for a name and a fitting status.

use std::cell::RefCell;
use std::collections::BTreeMap;

use baton::filecoin::FilecoinError;
use baton::server::proto::{ProofKind, SubmitProofRequest};
use baton::server::requests::kinds::{
    self, KindError, Work, BUILTIN_CONSTRAINTS, BUILTIN_PARTITIONS,
};
use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestRunner};
use prost::Message;

use super::requests::Wire;
use super::seeds::seeds;
use super::watch::{checked, take_largest_peak};

/// The fields a refusal may name instead of its kind.
const FIELDS: [&str; 18] = [
    "proof_kind",
    "priority",
    "vanilla_proof",
    "vanilla_proofs",
    "constraints",
    "partitions",
    "synth_delay_ms",
    "seed",
    "randomness",
    "comm_r_old",
    "comm_r_new",
    "comm_d_new",
    "sector_size",
    "sector_number",
    "registered_proof",
    "miner_id",
    "partition_index",
    "sector_id",
];

/// Whether `kind` is one of the Filecoin kinds (whose refusals lead with the kind's name).
pub fn is_filecoin(kind: i32) -> bool {
    matches!(
        ProofKind::try_from(kind),
        Ok(ProofKind::PorepSealCommit
            | ProofKind::SnapDealsUpdate
            | ProofKind::WindowPostPartition
            | ProofKind::WinningPost)
    )
}

/// A refusal of `parse` names its kind or a field, and its status fits its cause.
pub fn named_refusal(kind: i32, e: &KindError) -> Result<(), String> {
    let msg = e.to_string();
    let name = ProofKind::try_from(kind)
        .ok()
        .filter(|k| *k != ProofKind::Unspecified)
        .map(|k| k.as_str_name());
    if msg.trim().is_empty() {
        return Err(format!("an empty message: {e:?}"));
    }
    // fil_kinds leads with the kind; the priority, checked first for every kind, names itself.
    let led = name.is_some_and(|n| msg.starts_with(n)) || msg.starts_with("unknown priority");
    if is_filecoin(kind) && !led {
        return Err(format!("a Filecoin refusal not led by its kind: {msg}"));
    }
    if !name.is_some_and(|n| msg.contains(n)) && !FIELDS.iter().any(|f| msg.contains(f)) {
        return Err(format!("a refusal naming neither kind nor field: {msg}"));
    }
    match e {
        KindError::Invalid(_) => Ok(()),
        KindError::Precondition(m) if m.contains("parameters") => Ok(()),
        KindError::Unimplemented(m) if m.contains("not supported") => Ok(()),
        _ => Err(format!("a status that does not fit: {e:?}")),
    }
}

/// An error of `FilWork::build` is one a bad input can cause (`Key` is where a good input
/// stops: the stand-in is no key).
pub fn named_build_error(e: &FilecoinError) -> Result<(), String> {
    if e.to_string().trim().is_empty() {
        return Err(format!("an empty message: {e:?}"));
    }
    match e {
        FilecoinError::Key(_)
        | FilecoinError::BadInput(_)
        | FilecoinError::VanillaInvalid(_)
        | FilecoinError::Mismatch { .. }
        | FilecoinError::Upstream { .. }
        | FilecoinError::Unsupported(_)
        | FilecoinError::ParamsMissing { .. }
        | FilecoinError::Panicked { .. } => Ok(()),
        other => Err(format!("an error no input should cause: {other:?}")),
    }
}

/// What became of a case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fate {
    /// Its bytes are no `SubmitProofRequest` (prost refused them).
    Undecoded,
    /// The change made a vanilla proof's structure no longer of its type: nothing was sent.
    Unencodable,
    /// Refused by `parse`.
    Refused,
    /// A built-in job, accepted.
    Builtin,
    /// A Filecoin job that `build` refused with a named error.
    Failed,
    /// A Filecoin job that `build` refused because filecoin-proofs panicked (caught by `guard`).
    Panicked,
    /// A Filecoin job built as far as loading its key: no check refused it.
    ReachedKey,
}

/// Parses `req` as the service does and, when accepted, builds its work as the runner does.
pub fn submit(req: &SubmitProofRequest) -> Result<Fate, String> {
    let size = req.encoded_len();
    let spec = match checked("kinds::parse", &Wire(req), size, || kinds::parse(req))? {
        Err(e) => return named_refusal(req.proof_kind, &e).map(|()| Fate::Refused),
        Ok(spec) => spec,
    };
    if spec.kind as i32 != req.proof_kind {
        return Err(format!("parsed as {:?}: {:?}", spec.kind, Wire(req)));
    }
    match &spec.work {
        Work::Builtin { key, circuits } => {
            let kinds::KeySource::Builtin { constraints, .. } = key;
            if !BUILTIN_PARTITIONS.contains(&circuits.len())
                || !BUILTIN_CONSTRAINTS.contains(constraints)
            {
                return Err(format!("accepted out of range: {:?}", Wire(req)));
            }
            Ok(Fate::Builtin)
        }
        Work::Filecoin(work) => match checked("FilWork::build", &Wire(req), size, || {
            work.build(Default::default())
        })? {
            Ok(_) => Err(format!("built with a stand-in key: {:?}", Wire(req))),
            Err(FilecoinError::Key(_)) => Ok(Fate::ReachedKey),
            Err(e @ FilecoinError::Panicked { .. }) => {
                named_build_error(&e).map(|()| Fate::Panicked)
            }
            Err(e) => named_build_error(&e).map(|()| Fate::Failed),
        },
    }
}

/// `submit`; and after a panic filecoin-proofs raised, the good request of that kind still gets
/// as far as its key (the panic left nothing poisoned).
pub fn submit_then_good(req: &SubmitProofRequest) -> Result<Fate, String> {
    let fate = submit(req)?;
    if fate == Fate::Panicked {
        let kind = ProofKind::try_from(req.proof_kind).map_err(|e| e.to_string())?;
        let after = submit(&seeds().request(kind))?;
        if after != Fate::ReachedKey {
            return Err(format!(
                "after a caught panic the good {} request ends {after:?}; the panic came from {:?}",
                kind.as_str_name(),
                Wire(req)
            ));
        }
    }
    Ok(fate)
}

/// How the cases of one property ended.
pub type Tally = BTreeMap<Fate, u32>;

/// Runs `default_cases` cases of `strategy` (`PROPTEST_CASES` overrides), a failure saved in
/// `tests/parse_fuzz.proptest-regressions` and replayed first next time; prints and returns
/// how the cases ended.
pub fn fuzz<S: Strategy>(
    name: &'static str,
    default_cases: u32,
    strategy: S,
    case: impl Fn(S::Value) -> Result<Fate, String>,
) -> Tally {
    let mut config = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = default_cases;
    }
    config.max_shrink_iters = 2048;
    config.source_file = Some("tests/parse_fuzz.rs");
    config.test_name = Some(name);
    let cases = config.cases;
    let tally = RefCell::new(Tally::new());
    let t = std::time::Instant::now();
    take_largest_peak();
    let live_before = super::watch::live_bytes();
    let mut runner = TestRunner::new(config);
    let result = runner.run(&strategy, |v| {
        let fate = case(v).map_err(TestCaseError::fail)?;
        *tally.borrow_mut().entry(fate).or_default() += 1;
        Ok(())
    });
    if let Err(e) = result {
        panic!("{name}: {e}\n{runner}");
    }
    let tally = tally.into_inner();
    eprintln!(
        "{name}: {cases} cases in {:.1?}, the largest peak {} KiB, live {} KiB more: {tally:?}",
        t.elapsed(),
        take_largest_peak() >> 10,
        (super::watch::live_bytes() - live_before) >> 10
    );
    tally
}
