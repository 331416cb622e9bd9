//! Fuzzing (proptest: cargo-fuzz needs nightly) of every decoder the daemon runs on a client's
//! bytes: `kinds::parse` of a `SubmitProofRequest` of every kind (and of unknown kind numbers),
//! the C1 parser (bare JSON and Curio's envelope), the PoSt and SnapDeals vanilla proofs' bincode
//! as the runner decodes them in `FilWork::build`, and prost's decoding of a journaled request
//! followed by `parse` (the resume path). Inputs are mostly good ones mutated with their
//! structure in mind (see `parse_fuzz/mutate.rs`): bytes, JSON documents, envelope fields, and
//! vanilla proofs changed as the structures they decode to; so most cases get past the first
//! check. The parameter cache holds stand-in files, so an accepted Filecoin request is built as
//! far as loading its key.
//!
//! Properties: no call panics (caught, the input printed); none holds more than
//! `watch::peak_limit` of its input's size on its thread at once (a counting allocator); every
//! refusal is a `KindError` naming the kind or the field (a Filecoin kind's starting with the
//! kind), or a `FilecoinError` of the variants a bad input can cause. Panics filecoin-proofs
//! raises inside baton's `guard` come back as `FilecoinError::Panicked` and are allowed, each
//! site printed once, provided the good request still gets as far afterwards.
//!
//! Default: 1024 cases per property, about 17 s in all for a debug build on 2 busy cores
//! (sealing the seeds' 2 KiB sector included). `PROPTEST_CASES=n` runs n cases per property;
//! `--nocapture` shows how each property's cases ended, its largest allocation peak and how much
//! more the process held after it (0 but for other tests running beside it: nothing leaks).
//!
//! Long runs (debug build, 2 cores shared with other builds): before the PoSt shape check,
//! `PROPTEST_CASES=50000` over the five properties then written, 250 000 cases in 532 s, no
//! failure under the then limit of 256 MiB, but a largest peak of 15 MB (and 98 MB from a 37 KB
//! request in a further run): a WindowPoSt proof copied 2349 times, caught once the limit
//! became 32 MiB by `vanilla_proof_structures`, kept in
//! `a_window_post_proof_is_not_copied_2349_times_before_its_shape_is_checked`. With the check,
//! `PROPTEST_CASES=30000` over all six, 180 000 cases in 434 s, no failure, largest peak 10 MB;
//! each filecoin-proofs panic site met is printed once and has its case in
//! `panics_inside_filecoin_proofs_are_caught_and_named`.
#![cfg(all(feature = "filecoin", feature = "test-util"))]

#[path = "parse_fuzz/check.rs"]
mod check;
#[path = "parse_fuzz/mutate.rs"]
mod mutate;
#[path = "parse_fuzz/requests.rs"]
mod requests;
#[path = "parse_fuzz/seeds.rs"]
mod seeds;
#[path = "parse_fuzz/watch.rs"]
mod watch;

use baton::filecoin::{parse_c1, FilecoinError};
use baton::server::proto::{ProofKind, SubmitProofRequest};
use proptest::collection::vec;
use proptest::option::weighted;
use proptest::prelude::*;
use proptest::sample::Index;
use prost::Message;

use check::{fuzz, is_filecoin, submit, submit_then_good, Fate, Tally};
use mutate::{
    apply_bytes, apply_json, apply_text, byte_ops, envelope, json_ops, shape_ops, text_ops,
};
use requests::fields;
use seeds::seeds;
use watch::{checked, watch, Hex};

#[global_allocator]
static ALLOC: watch::Counting = watch::Counting;

/// Cases per property by default.
const CASES: u32 = 1024;

/// In a run of the default size or more, each of `fates` ended some case: the mutations still
/// get that far (a change that made every input fail at the first check would show here).
fn reached(name: &str, tally: &Tally, fates: &[Fate]) {
    if tally.values().sum::<u32>() < 256 {
        return;
    }
    for f in fates {
        assert!(
            tally.contains_key(f),
            "{name}: no case ended {f:?}: {tally:?}"
        );
    }
}

/// Each good request gets as far as it can: a built-in one is accepted, a Filecoin one is
/// refused only where its key is loaded (every check before accepted it), within the
/// allocation limit; so the mutations start from inputs that pass.
#[test]
fn good_requests_get_as_far_as_the_key() {
    for req in seeds().all() {
        let kind = ProofKind::try_from(req.proof_kind).map(|k| k.as_str_name());
        let w = watch(|| submit(&req));
        let want = match is_filecoin(req.proof_kind) {
            true => Fate::ReachedKey,
            false => Fate::Builtin,
        };
        assert_eq!(w.result, Ok(Ok(want)), "{kind:?}");
        assert!(w.peak_bytes < watch::PEAK_LIMIT_BYTES / 4, "{kind:?}");
    }
}

/// A good request of some kind with a few fields changed (any kind number, another kind's
/// fields, edge values, mutated documents and vanilla proofs).
#[test]
fn requests_with_changed_fields() {
    let name = "requests_with_changed_fields";
    let tally = fuzz(name, CASES, fields(), |f| {
        submit_then_good(&f.request(seeds()))
    });
    use Fate::*;
    reached(name, &tally, &[Refused, Builtin, Failed, ReachedKey]);
}

/// A C1 document: the seed mutated as JSON, as text and as bytes, bare or in an envelope.
fn c1_doc(
    json: &[mutate::JsonOp],
    text: &[mutate::TextOp],
    bytes: &[mutate::ByteOp],
    env: &Option<mutate::Envelope>,
) -> Vec<u8> {
    let s = seeds();
    let doc = serde_json::to_vec(&apply_json(&s.c1_value, json)).unwrap_or_default();
    let doc = apply_bytes(&apply_text(&doc, text), bytes);
    match env {
        Some(e) => e.wrap(&doc, s.sector_id, s.sector_size),
        None => doc,
    }
}

/// C1 outputs changed as JSON, as text and as bytes, bare or enveloped: `parse_c1` names what
/// is wrong, and POREP_SEAL_COMMIT takes them no further than the key.
#[test]
fn c1_documents() {
    let name = "c1_documents";
    let strategy = (
        vec(json_ops(), 0..=1).prop_map(|v| v.concat()),
        text_ops(),
        weighted(0.3, byte_ops()),
        weighted(0.7, envelope()),
    );
    let tally = fuzz(name, CASES, strategy, |(json, text, bytes, env)| {
        let doc = c1_doc(&json, &text, bytes.as_deref().unwrap_or(&[]), &env);
        let parsed = checked("parse_c1", &Hex(&doc), doc.len(), || {
            parse_c1(&doc).map(|_| ())
        })?;
        if let Err(e) = parsed {
            let named = match &e {
                FilecoinError::C1Json { .. } | FilecoinError::C1Base64 { .. } => {
                    e.to_string().contains("C1")
                }
                FilecoinError::Mismatch { what, .. } => *what == "sector size",
                _ => false,
            };
            if !named {
                return Err(format!("parse_c1 refused {} with {e:?}", hex::encode(&doc)));
            }
        }
        // A bare C1 output carries no sector number: the request gives it.
        let sector_number = if env.is_none() { seeds().sector_id } else { 0 };
        submit_then_good(&SubmitProofRequest {
            vanilla_proof: doc,
            sector_number,
            ..seeds().porep.clone()
        })
    });
    use Fate::*;
    reached(name, &tally, &[Refused, Failed, ReachedKey]);
}

/// PoSt and SnapDeals vanilla proofs with their bincode changed (length prefixes too),
/// sometimes sent as another proof type (another sector size's tree).
#[test]
fn vanilla_proof_bytes() {
    let name = "vanilla_proof_bytes";
    let strategy = (
        0usize..3,
        weighted(0.3, 0u64..15),
        any::<Index>(),
        byte_ops(),
    );
    let tally = fuzz(name, CASES, strategy, |(which, registered, at, ops)| {
        let s = seeds();
        let mut req = [&s.winning, &s.window, &s.snap][which].clone();
        if let Some(n) = registered {
            req.registered_proof = n;
        }
        let k = at.index(req.vanilla_proofs.len());
        req.vanilla_proofs[k] = apply_bytes(&req.vanilla_proofs[k], &ops);
        submit_then_good(&req)
    });
    reached(name, &tally, &[Fate::Failed]);
}

/// PoSt and SnapDeals vanilla proofs changed as the structures they decode to (a Merkle path
/// cut or repeated, an index or a hash changed), encoded again, sometimes sent as another proof
/// type.
#[test]
fn vanilla_proof_structures() {
    let name = "vanilla_proof_structures";
    let strategy = (
        0usize..3,
        weighted(0.3, prop_oneof![0u64..15, Just(8), Just(13)]),
        any::<Index>(),
        shape_ops(),
    );
    let tally = fuzz(name, CASES, strategy, |(which, registered, at, ops)| {
        let s = seeds();
        let mut req = [&s.winning, &s.window, &s.snap][which].clone();
        if let Some(n) = registered {
            req.registered_proof = n;
        }
        let k = at.index(req.vanilla_proofs.len());
        let change = |v: &mut serde_json::Value| *v = apply_json(v, &ops);
        let changed = match which {
            2 => reencode::<SnapProof>(&req.vanilla_proofs[k], change),
            _ => reencode::<PostProof>(&req.vanilla_proofs[k], change),
        };
        let Some(bytes) = changed else {
            return Ok(Fate::Unencodable);
        };
        req.vanilla_proofs[k] = bytes;
        submit_then_good(&req)
    });
    reached(name, &tally, &[Fate::Failed, Fate::ReachedKey]);
}

/// A built-in member's value: mostly `good`, else at or past a bound, or of another type.
fn builtin_value(good: &'static str) -> impl Strategy<Value = String> {
    let odd = prop_oneof![
        4 => prop_oneof![
            Just(0u64), Just(1), Just(15), Just(16), Just(64), Just(65), Just(60_000), Just(60_001),
            Just(1 << 22), Just((1 << 22) + 1), Just(u64::MAX), any::<u64>(),
        ].prop_map(|n| n.to_string()),
        1 => prop_oneof![
            Just("-1"), Just("16.0"), Just("1e3"), Just("18446744073709551616"), Just("null"),
            Just("\"16\""), Just("[]"), Just("{}"), Just("true"),
        ].prop_map(String::from),
    ];
    prop_oneof![2 => Just(good.to_string()), 1 => odd]
}

/// The built-in kinds' JSON document: each member present or not, good or at and past its
/// bounds, and sometimes a member unknown or twice.
#[test]
fn builtin_documents() {
    let name = "builtin_documents";
    let member =
        |k: &'static str, good| weighted(0.85, builtin_value(good)).prop_map(move |v| (k, v));
    let strategy = (
        any::<bool>(),
        (
            member("constraints", "64"),
            member("seed", "1"),
            member("partitions", "2"),
            member("synth_delay_ms", "0"),
        ),
        weighted(0.1, ("[a-z_]{0,12}", builtin_value("1"))),
        weighted(0.2, byte_ops()),
    );
    let tally = fuzz(name, CASES, strategy, |(mimc, members, extra, ops)| {
        let (a, b, c, d) = members;
        let mut body: Vec<String> = [a, b, c, d]
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| format!("{k:?}: {v}")))
            .collect();
        if let Some((k, v)) = extra {
            body.push(format!("{k:?}: {v}"));
        }
        let doc = format!("{{{}}}", body.join(", ")).into_bytes();
        let kind = match mimc {
            true => ProofKind::BatonMimc,
            false => ProofKind::BatonSynthetic,
        };
        submit(&SubmitProofRequest {
            proof_kind: kind as i32,
            vanilla_proof: ops.map_or(doc.clone(), |o| apply_bytes(&doc, &o)),
            ..SubmitProofRequest::default()
        })
    });
    reached(name, &tally, &[Fate::Refused, Fate::Builtin]);
}

/// Wire bytes as the journal's resume path reads them: random, or a good request's encoding
/// changed; whatever prost decodes is parsed (and built).
#[test]
fn wire_bytes() {
    let name = "wire_bytes";
    let strategy = (
        any::<Index>(),
        byte_ops(),
        weighted(0.3, vec(any::<u8>(), 0..256)),
    );
    let tally = fuzz(name, CASES, strategy, |(which, ops, random)| {
        let all = seeds().all();
        let bytes = random
            .unwrap_or_else(|| apply_bytes(&all[which.index(all.len())].encode_to_vec(), &ops));
        let decoded = checked("decode", &Hex(&bytes), bytes.len(), || {
            SubmitProofRequest::decode(bytes.as_slice())
        })?;
        match decoded {
            Ok(req) => submit_then_good(&req),
            Err(_) => Ok(Fate::Undecoded),
        }
    });
    use Fate::*;
    reached(name, &tally, &[Undecoded, Refused, ReachedKey]);
}

// Hand-picked inputs, each with the error it must get.

/// The little-endian u64 at `at` (a bincode length prefix) set to `n`, after checking that it
/// held a plausible length.
fn with_prefix(bytes: &[u8], at: usize, n: u64) -> Vec<u8> {
    let mut b = bytes.to_vec();
    let mut was = [0u8; 8];
    was.copy_from_slice(&b[at..at + 8]);
    assert!(u64::from_le_bytes(was) < 4096, "no length prefix at {at}");
    b[at..at + 8].copy_from_slice(&n.to_le_bytes());
    b
}

/// The error `FilWork::build` refuses `req` with (`parse` must accept it), and the bytes the
/// two held at once.
fn build_error(req: &SubmitProofRequest) -> (FilecoinError, isize) {
    let w = watch(|| {
        let spec = baton::server::requests::kinds::parse(req).expect("parse accepts it");
        match spec.work {
            baton::server::requests::kinds::Work::Filecoin(work) => {
                work.build(Default::default()).err()
            }
            _ => None,
        }
    });
    match w.result {
        Ok(Some(e)) => (e, w.peak_bytes),
        other => panic!(
            "expected a build error, got {:?}",
            other.map(|e| e.is_some())
        ),
    }
}

/// A bincode vanilla proof whose first vector claims 2^60 (or 2^64 - 1) elements, in 2 KiB of
/// bytes, is refused as not a vanilla proof, without the exabytes being asked for.
#[test]
fn vanilla_proofs_claiming_2_pow_60_elements_are_refused_unallocated() {
    let s = seeds();
    // FallbackPoStSectorProof: sector_id (8 bytes), comm_r (32), then its sector proofs' count.
    // PartitionProof: comm_c (32), then its apex leafs' count.
    for (req, at) in [(&s.winning, 40), (&s.window, 40), (&s.snap, 32)] {
        for n in [1 << 60, u64::MAX] {
            let mut req = req.clone();
            req.vanilla_proofs[0] = with_prefix(&req.vanilla_proofs[0], at, n);
            let (e, peak) = build_error(&req);
            let msg = e.to_string();
            assert!(matches!(e, FilecoinError::BadInput(_)), "{msg}");
            assert!(msg.contains("vanilla proof 0"), "{msg}");
            assert!(peak < 4 << 20, "{peak} bytes held for {msg}");
        }
    }
}

/// prost refuses a `vanilla_proof` whose length says 2^60 bytes in a 10-byte message.
#[test]
fn a_wire_length_of_2_pow_60_is_refused_unallocated() {
    // Field 10, length-delimited, then the varint 2^60.
    let bytes = [0x52, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10];
    let w = watch(|| SubmitProofRequest::decode(&bytes[..]).is_err());
    assert_eq!(w.result, Ok(true));
    assert!(w.peak_bytes < 1 << 20, "{} bytes held", w.peak_bytes);
}

/// POREP_SEAL_COMMIT's refusal of `doc`, which must be `Invalid` naming the kind and `needle`.
fn porep_refused(doc: Vec<u8>, needle: &str) {
    let req = SubmitProofRequest {
        vanilla_proof: doc,
        ..seeds().porep.clone()
    };
    match baton::server::requests::kinds::parse(&req) {
        Err(e @ baton::server::requests::kinds::KindError::Invalid(_)) => {
            let msg = e.to_string();
            assert!(msg.starts_with("POREP_SEAL_COMMIT: "), "{msg}");
            assert!(msg.contains(needle), "{needle:?} not in {msg}");
        }
        Err(e) => panic!("refused with the wrong status: {e:?}"),
        Ok(_) => panic!("accepted a bad C1 document"),
    }
}

/// JSON 100 000 levels deep, in the envelope, inside its base64, or in a bare C1 output where
/// its vanilla proofs go, is refused where a bracket does not fit the type (no field of these
/// documents takes arbitrary JSON), long before the stack would run out.
#[test]
fn deep_nesting_is_refused_without_descending() {
    let deep = "[".repeat(100_000);
    let outer = format!(r#"{{"SectorNum": {deep}, "Phase1Out": "", "SectorSize": 2048}}"#);
    porep_refused(
        outer.into_bytes(),
        "C1 envelope is JSON but not a C1 output",
    );
    let s = seeds();
    let inner = baton::filecoin::envelope(deep.as_bytes(), s.sector_id, s.sector_size);
    porep_refused(inner, "the envelope's Phase1Out is");
    let mut bare = s.c1_value.clone();
    bare["vanilla_proofs"] = serde_json::json!({ "StackedDrg2KiBV1": "X" });
    let bare = serde_json::to_string(&bare)
        .unwrap_or_default()
        .replace("\"X\"", &deep);
    let w = watch(|| parse_c1(bare.as_bytes()).err().map(|e| e.to_string()));
    let e = w.result.expect("no panic");
    assert!(
        e.as_deref().is_some_and(|e| e.contains("C1 JSON is")),
        "{e:?}"
    );
}

/// Each envelope field wrong in its own way is refused naming the envelope or its C1 output.
#[test]
fn envelope_fields_out_of_range_are_named() {
    let s = seeds();
    let b64 = {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(&s.c1_json)
    };
    let env = |num: &str, out: &str, size: &str| {
        format!(r#"{{"SectorNum": {num}, "Phase1Out": {out}, "SectorSize": {size}}}"#).into_bytes()
    };
    let good_out = format!("{b64:?}");
    porep_refused(
        env("18446744073709551616", &good_out, "2048"),
        "C1 envelope is JSON but not a C1 output",
    );
    porep_refused(env("-1", &good_out, "2048"), "C1 envelope");
    porep_refused(
        env("7", &good_out, "4096"),
        "sector size: envelope SectorSize 4096",
    );
    porep_refused(env("7", "\"%%%\"", "2048"), "Phase1Out is not base64");
    porep_refused(env("7", "[1, 2]", "2048"), "C1 envelope");
    let cut = format!("{:?}", &b64[..b64.len() / 2]);
    porep_refused(env("7", &cut, "2048"), "Phase1Out");
    // The envelope's SectorNum and the request's sector_number must agree.
    let req = SubmitProofRequest {
        sector_number: 8,
        ..s.porep.clone()
    };
    let e = baton::server::requests::kinds::parse(&req)
        .err()
        .map(|e| e.to_string());
    assert!(
        e.as_deref()
            .is_some_and(|e| e.contains("sector_number 8 vs the envelope's SectorNum 7")),
        "{e:?}"
    );
}

/// The built-in kinds' document: a number past `u64`, a member twice, and bounds, each named.
#[test]
fn builtin_documents_out_of_range_are_named() {
    let refused = |kind: ProofKind, doc: &str, needle: &str| {
        let req = SubmitProofRequest {
            proof_kind: kind as i32,
            vanilla_proof: doc.as_bytes().to_vec(),
            ..SubmitProofRequest::default()
        };
        let e = baton::server::requests::kinds::parse(&req).err();
        assert!(
            matches!(&e, Some(baton::server::requests::kinds::KindError::Invalid(m)) if m.contains(needle)),
            "{doc}: {needle:?} not in {e:?}"
        );
    };
    let (syn, mimc) = (ProofKind::BatonSynthetic, ProofKind::BatonMimc);
    refused(
        syn,
        r#"{"constraints": 18446744073709551616, "seed": 1}"#,
        "BATON_SYNTHETIC",
    );
    refused(
        mimc,
        r#"{"constraints": 16, "constraints": 16, "seed": 1}"#,
        "duplicate field",
    );
    refused(
        syn,
        r#"{"constraints": 4194305, "seed": 1}"#,
        "constraints must be within",
    );
    refused(
        syn,
        r#"{"constraints": 16, "seed": 1, "partitions": 65}"#,
        "partitions must be",
    );
    refused(
        syn,
        r#"{"constraints": 16, "seed": 1, "partitions": 0}"#,
        "partitions must be",
    );
    refused(
        mimc,
        r#"{"constraints": 16, "seed": 1, "synth_delay_ms": 60001}"#,
        "synth_delay_ms",
    );
    refused(syn, r#"{"constraints": 16, "seed": -1}"#, "BATON_SYNTHETIC");
    refused(syn, "", "vanilla_proof is empty");
}

/// A PoSt vanilla proof of the seeds' sector, as filecoin-proofs decodes it.
type PostProof = filecoin_proofs::FallbackPoStSectorProof<filecoin_proofs::SectorShape2KiB>;

/// A SnapDeals partition proof of the seeds' sector.
type SnapProof = filecoin_proofs::PartitionProof<filecoin_proofs::SectorShape2KiB>;

/// Bincode `bytes` of a `T`, changed as JSON by `f` and encoded again; `None` when the change
/// made it no `T` (it cannot be encoded then).
fn reencode<T: serde::Serialize + serde::de::DeserializeOwned>(
    bytes: &[u8],
    f: impl FnOnce(&mut serde_json::Value),
) -> Option<Vec<u8>> {
    let p: T = bincode::deserialize(bytes).expect("the seed decodes");
    let mut v = serde_json::to_value(&p).expect("as JSON");
    f(&mut v);
    let p: T = serde_json::from_value(v).ok()?;
    Some(bincode::serialize(&p).expect("encodes"))
}

/// A PoSt vanilla proof changed as JSON by `f` (which keeps it one).
fn rewrite_post(bytes: &[u8], f: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
    reencode::<PostProof>(bytes, f).expect("still a vanilla proof")
}

/// The first value under `key`, depth first.
fn first_under<'v>(v: &'v mut serde_json::Value, key: &str) -> Option<&'v mut serde_json::Value> {
    use serde_json::Value;
    match v {
        Value::Object(m) => {
            if m.contains_key(key) {
                return m.get_mut(key);
            }
            m.values_mut().find_map(|c| first_under(c, key))
        }
        Value::Array(a) => a.iter_mut().find_map(|c| first_under(c, key)),
        _ => None,
    }
}

/// `FilWork::build` refuses `req` because filecoin-proofs panicked `during` this step (baton's
/// `guard` caught it), and the good request of its kind still gets as far as its key after.
fn caught(req: &SubmitProofRequest, during: &str) {
    let (e, _) = build_error(req);
    assert!(
        matches!(&e, FilecoinError::Panicked { during: d, .. } if *d == during),
        "{e:?}"
    );
    let kind = ProofKind::try_from(req.proof_kind).expect("a wire kind");
    assert_eq!(submit(&seeds().request(kind)), Ok(Fate::ReachedKey));
}

/// Vanilla proofs of a shape filecoin-proofs panics on (found by this fuzzer) are refused by
/// baton's shape check first, naming the proof: no sector proofs (filecoin-proofs pads with the
/// last one, api/post_util.rs:275, `len() - 1`), and a sector proof without inclusion proofs
/// (storage-proofs-post fallback/vanilla.rs:612 for WindowPoSt, post_util.rs:317 for
/// WinningPoSt).
#[test]
fn vanilla_proofs_filecoin_proofs_panics_on_are_refused_by_shape() {
    let s = seeds();
    let refused = |req: &SubmitProofRequest, needle: &str| {
        let (e, _) = build_error(req);
        let msg = e.to_string();
        assert!(matches!(e, FilecoinError::BadInput(_)), "{msg}");
        assert!(
            msg.contains("vanilla proof 0 is not a StackedDrgWin"),
            "{msg}"
        );
        assert!(msg.contains(needle), "{needle:?} not in {msg}");
    };
    let mut req = s.window.clone();
    req.vanilla_proofs[0] = with_prefix(&req.vanilla_proofs[0], 40, 0)[..48].to_vec();
    refused(&req, "it holds 0 sector proofs, not 1");
    for seed in [&s.window, &s.winning] {
        let mut req = seed.clone();
        req.vanilla_proofs[0] = rewrite_post(&req.vanilla_proofs[0], |v| {
            if let Some(p) = first_under(v, "inclusion_proofs") {
                *p = serde_json::json!([]);
            }
        });
        refused(&req, "it holds 0 inclusion proofs, not");
    }
}

/// Inputs on which filecoin-proofs still panics, one per site this fuzzer found that no cheap
/// check of baton's precedes (with `guard` gone, each would unwind through the runner's
/// blocking task): each is refused as `FilecoinError::Panicked` naming the step. A check that
/// refuses one of them first changes its error to `BadInput`; update the case then.
#[test]
fn panics_inside_filecoin_proofs_are_caught_and_named() {
    let s = seeds();
    let post = "building the PoSt circuits";
    // A Merkle path index far past the tree's arity (storage-proofs-core merkle/proof.rs:191).
    let mut req = s.winning.clone();
    req.vanilla_proofs[0] = rewrite_post(&req.vanilla_proofs[0], |v| {
        if let Some(i) = first_under(v, "index") {
            *i = serde_json::json!(1u64 << 31);
        }
    });
    caught(&req, post);
    // A path hash that is no field element (filecoin-hashers poseidon.rs, `from_repr failure`).
    let mut req = s.winning.clone();
    req.vanilla_proofs[0] = rewrite_post(&req.vanilla_proofs[0], |v| {
        if let Some(h) = first_under(v, "hashes").and_then(|h| h.get_mut(0)) {
            *h = serde_json::json!(vec![255u8; 32]);
        }
    });
    caught(&req, post);
    // The same on arrival: a C1 output whose replica id is no field element.
    let mut c1 = s.c1_value.clone();
    c1["replica_id"] = serde_json::json!(vec![255u8; 32]);
    let doc = serde_json::to_vec(&c1).expect("JSON");
    porep_refused(
        baton::filecoin::envelope(&doc, s.sector_id, s.sector_size),
        "filecoin-proofs panicked while checking the replica id",
    );
}

/// Found by `vanilla_proof_structures` (saved in parse_fuzz.proptest-regressions): a WindowPoSt
/// vanilla proof sent as a 32 GiB type was copied by filecoin-proofs for each of the partition's
/// 2349 sectors before anything was verified, so 60 KB of inclusion proofs became 150 MB (and a
/// request at `max_request_bytes` hundreds of GB). Its shape is refused first now, naming it.
#[test]
fn a_window_post_proof_is_not_copied_2349_times_before_its_shape_is_checked() {
    let s = seeds();
    for registered_proof in [8, 13] {
        let mut req = SubmitProofRequest {
            registered_proof,
            ..s.window.clone()
        };
        // The seed's proof (a 2 KiB tree's paths) as is, and with 100 inclusion proofs.
        let grown = rewrite_post(&req.vanilla_proofs[0], |v| {
            if let Some(serde_json::Value::Array(a)) = first_under(v, "inclusion_proofs") {
                let first = a[0].clone();
                a.resize(100, first);
            }
        });
        for vanilla in [req.vanilla_proofs[0].clone(), grown] {
            req.vanilla_proofs[0] = vanilla;
            let (e, peak) = build_error(&req);
            let msg = e.to_string();
            assert!(matches!(e, FilecoinError::BadInput(_)), "{msg}");
            assert!(
                msg.contains("vanilla proof 0 is not a StackedDrgWindow32GiB"),
                "{msg}"
            );
            assert!(peak < 4 << 20, "{peak} bytes held for {msg}");
        }
    }
}
