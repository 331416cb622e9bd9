//! C1 outputs generated without sealing (`generate_c1`, `baton fil-gen-c1`): filecoin-proofs'
//! own vanilla verifier accepts them at every sector size; at 2 KiB and 8 MiB baton's C2 of
//! them passes `verify_seal` (another seed and a flipped byte fail); a changed label is refused
//! before proving with the challenge named; the same inputs give the same C1.
#![cfg(feature = "filecoin")]

use std::path::PathBuf;
use std::time::Instant;

use baton::filecoin::testing::{ensure_params, use_test_cache};
use baton::filecoin::{
    generate_c1, parse_c1, CircuitId, CircuitKind, Filecoin, FilecoinError, GenC1,
    SealCommitPhase1Output,
};
use baton::{Config, Engine};
use blstrs::Scalar as Fr;
use filecoin_proofs::constants::*;
use filecoin_proofs::{as_safe_commitment, DefaultPieceDomain, VanillaSealProof};
use filecoin_proofs_api::{Hasher, MerkleTreeTrait};
use serde_json::Value;
use storage_proofs_core::proof::ProofScheme;
use storage_proofs_porep::stacked::{generate_replica_id, PublicInputs, StackedDrg, Tau};

const MINER: u64 = 1000;

fn spec(size: u64, sector: u64) -> GenC1 {
    GenC1::new(size, MINER, sector).expect("a supported size")
}

fn generate(spec: &GenC1) -> SealCommitPhase1Output {
    let t = Instant::now();
    let c1 = generate_c1(spec).expect("generated");
    eprintln!("{:?}: generated in {:.2?}", spec.proof, t.elapsed());
    c1
}

/// filecoin-proofs' `verify_all_partitions` on the C1, with the replica id derived from the
/// prover, sector, ticket and comm_d as `verify_seal` derives it.
fn vanilla_ok<Tree: 'static + MerkleTreeTrait>(c1: &SealCommitPhase1Output, spec: &GenC1) -> bool {
    let config = c1.registered_proof.as_v1_config();
    let vanilla: Vec<Vec<VanillaSealProof<Tree>>> = c1
        .vanilla_proofs
        .clone()
        .try_into()
        .expect("proofs of this shape");
    let setup = filecoin_proofs::parameters::setup_params(&config).expect("setup");
    let pp = StackedDrg::<Tree, DefaultPieceHasher>::setup(&setup).expect("public params");
    let comm_d: DefaultPieceDomain = as_safe_commitment(&c1.comm_d, "comm_d").expect("comm_d");
    let replica_id = generate_replica_id::<Tree::Hasher, _>(
        &spec.prover_id,
        spec.sector_id,
        &c1.ticket,
        comm_d,
        &config.porep_id,
    );
    let stored: <Tree::Hasher as Hasher>::Domain = Fr::from(c1.replica_id).into();
    assert_eq!(replica_id, stored, "the C1's replica id is the derived one");
    let pub_in = PublicInputs {
        replica_id,
        tau: Some(Tau {
            comm_d,
            comm_r: as_safe_commitment(&c1.comm_r, "comm_r").expect("comm_r"),
        }),
        k: None,
        seed: Some(c1.seed),
    };
    StackedDrg::<Tree, DefaultPieceHasher>::verify_all_partitions(&pp, &pub_in, &vanilla)
        .expect("the verifier runs")
}

fn vanilla_accepted(c1: &SealCommitPhase1Output, spec: &GenC1) -> bool {
    let t = Instant::now();
    let ok = match u64::from(c1.registered_proof.sector_size()) {
        SECTOR_SIZE_2_KIB => vanilla_ok::<SectorShape2KiB>(c1, spec),
        SECTOR_SIZE_8_MIB => vanilla_ok::<SectorShape8MiB>(c1, spec),
        SECTOR_SIZE_512_MIB => vanilla_ok::<SectorShape512MiB>(c1, spec),
        SECTOR_SIZE_32_GIB => vanilla_ok::<SectorShape32GiB>(c1, spec),
        SECTOR_SIZE_64_GIB => vanilla_ok::<SectorShape64GiB>(c1, spec),
        other => panic!("size {other}"),
    };
    eprintln!("vanilla verification in {:.2?}: {ok}", t.elapsed());
    ok
}

/// Accepted as generated, refused for another seed (other challenges) or another comm_r.
fn accepted_and_only_so(size: u64) {
    let s = spec(size, 7);
    let c1 = generate(&s);
    assert!(vanilla_accepted(&c1, &s), "{:?} accepted", s.proof);
    let mut other_seed = c1.clone();
    other_seed.seed[0] ^= 1;
    assert!(!vanilla_accepted(&other_seed, &s), "another seed refused");
    let mut other_comm_r = c1;
    other_comm_r.comm_r[0] ^= 1;
    assert!(
        !vanilla_accepted(&other_comm_r, &s),
        "another comm_r refused"
    );
}

#[test]
fn vanilla_proofs_of_small_sectors_pass_filecoin_proofs_verifier() {
    for size in [SECTOR_SIZE_2_KIB, SECTOR_SIZE_8_MIB, SECTOR_SIZE_512_MIB] {
        accepted_and_only_so(size);
    }
    // The first proof version too (another parent graph).
    let mut v1 = spec(SECTOR_SIZE_2_KIB, 7);
    v1.proof = baton::filecoin::RegisteredSealProof::StackedDrg2KiBV1;
    assert!(vanilla_accepted(&generate(&v1), &v1), "V1 accepted");
    // Synthetic and non-interactive PoRep are not generated.
    v1.proof = baton::filecoin::RegisteredSealProof::StackedDrg2KiBV1_1_Feat_SyntheticPoRep;
    assert!(matches!(
        generate_c1(&v1),
        Err(FilecoinError::Unsupported(_))
    ));
}

#[test]
fn vanilla_proofs_of_32gib_pass_filecoin_proofs_verifier() {
    accepted_and_only_so(SECTOR_SIZE_32_GIB);
}

#[test]
fn vanilla_proofs_of_64gib_pass_filecoin_proofs_verifier() {
    accepted_and_only_so(SECTOR_SIZE_64_GIB);
}

#[test]
fn same_inputs_same_c1_and_each_input_counts() {
    let s = spec(SECTOR_SIZE_2_KIB, 3);
    let json = |c1: &SealCommitPhase1Output| serde_json::to_vec(c1).expect("serializes");
    let a = generate(&s);
    assert_eq!(json(&a), json(&generate(&s)), "deterministic");
    // The all-zero sector's comm_d (that of 32 GiB is the well-known CC one).
    let c32 = spec(SECTOR_SIZE_32_GIB, 3);
    assert_eq!(
        hex::encode(generate(&c32).comm_d),
        "077e5fde35c50a9303a55009e3498a4ebedff39c42b710b730d8ec7ac7afa63e"
    );
    let other_sector = generate(&spec(SECTOR_SIZE_2_KIB, 4));
    assert_eq!(other_sector.comm_d, a.comm_d, "same (zero) data");
    assert_ne!(other_sector.replica_id, a.replica_id);
    assert_ne!(other_sector.comm_r, a.comm_r);
    let mut t = s.clone();
    t.ticket[0] ^= 1;
    let other_ticket = generate(&t);
    assert_ne!(other_ticket.replica_id, a.replica_id);
    assert!(vanilla_accepted(&other_ticket, &t));
    let mut other_miner = s.clone();
    other_miner.prover_id = baton::filecoin::prover_id_from_miner(MINER + 1);
    assert_ne!(generate(&other_miner).replica_id, a.replica_id);
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("baton-genc1-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// The JSON of challenge `i` of partition 0.
fn challenge(v: &mut Value, i: usize) -> &mut Value {
    let proofs = v["vanilla_proofs"]
        .as_object_mut()
        .and_then(|m| m.values_mut().next())
        .expect("the per-size variant");
    &mut proofs[0][i]
}

/// Changes the low byte of the 32-byte label at `label` (still a field element).
fn bump(label: &mut Value) {
    let b = label[0].as_u64().expect("a byte");
    label[0] = Value::from(b ^ 1);
}

#[test]
fn a_changed_label_is_refused_before_proving_naming_the_challenge() {
    use_test_cache();
    let s = spec(SECTOR_SIZE_2_KIB, 9);
    let c1 = generate(&s);
    let good = serde_json::to_value(&c1).expect("to JSON");
    let node = good["vanilla_proofs"]["StackedDrg2KiBV1"][0][1]["replica_column_proofs"]["c_x"]
        ["column"]["index"]
        .as_u64()
        .expect("the challenge's node");
    let fil = Filecoin::from_env();
    let refused = |edit: &dyn Fn(&mut Value), needle: &str| {
        let mut v = good.clone();
        edit(&mut v);
        let bad: SealCommitPhase1Output = serde_json::from_value(v).expect("still a C1");
        assert!(
            !vanilla_accepted(&bad, &s),
            "filecoin-proofs refuses it too"
        );
        match fil.porep_c2(&bad, s.prover_id, s.sector_id) {
            Err(e @ FilecoinError::VanillaInvalid(_)) => {
                let e = e.to_string();
                let named = format!("partition 0, challenge 1 (node {node})");
                assert!(e.contains(&named), "{e}");
                assert!(e.contains(needle), "{e}");
                eprintln!("refused: {e}");
            }
            other => panic!("expected invalid vanilla proofs, got {:?}", other.err()),
        }
    };
    // The challenged node's layer-2 label in its column.
    refused(
        &|v| bump(&mut challenge(v, 1)["replica_column_proofs"]["c_x"]["column"]["rows"][1]),
        "its column (its labels) does not open",
    );
    // A parent's label as its labeling proof hashes it.
    refused(
        &|v| bump(&mut challenge(v, 1)["labeling_proofs"][1]["parents"][0]),
        "its layer-2 label is not the hash of its parents' labels",
    );
    // A label in the column of an expansion parent.
    refused(
        &|v| {
            bump(
                &mut challenge(v, 1)["replica_column_proofs"]["exp_parents"][2]["column"]["rows"]
                    [0],
            )
        },
        "the column of its parent 8",
    );
}

fn engine() -> Engine {
    Engine::start(Config {
        budget_bytes: Some(8 << 30),
        ..Config::default()
    })
    .expect("engine starts")
}

fn seal_ok(c1: &SealCommitPhase1Output, s: &GenC1, seed: [u8; 32], proof: &[u8]) -> bool {
    matches!(
        filecoin_proofs_api::seal::verify_seal(
            c1.registered_proof,
            c1.comm_r,
            c1.comm_d,
            s.prover_id,
            s.sector_id.into(),
            c1.ticket,
            seed,
            proof,
        ),
        Ok(true)
    )
}

/// Generated C1 → baton's C2 through the engine → `verify_seal`.
fn c2_of_generated_c1_verifies(size: u64) {
    let cache = use_test_cache();
    let circuit = CircuitId {
        kind: CircuitKind::Porep,
        sector_size: size,
    };
    let t = Instant::now();
    ensure_params(&cache, &[circuit]).expect("PoRep parameters");
    eprintln!("{circuit} parameters ready in {:.1?}", t.elapsed());
    let s = spec(size, 11);
    let c1 = generate(&s);
    let fil = Filecoin::from_env();
    let job = fil.porep_c2(&c1, s.prover_id, s.sector_id).expect("job");
    let engine = engine();
    let t = Instant::now();
    let proofs = engine.prove_blocking(job.request).expect("proved");
    let proof = job
        .finisher
        .finish(&proofs)
        .expect("verified by the finisher");
    eprintln!("{circuit}: C2 through the engine in {:.1?}", t.elapsed());
    engine.shutdown_blocking();
    assert!(seal_ok(&c1, &s, c1.seed, &proof), "verify_seal accepts");
    let mut other_seed = c1.seed;
    other_seed[5] ^= 0x10;
    assert!(!seal_ok(&c1, &s, other_seed, &proof), "another seed fails");
    let mut flipped = proof.clone();
    flipped[100] ^= 0x04;
    assert!(!seal_ok(&c1, &s, c1.seed, &flipped), "a flipped byte fails");
}

#[test]
fn c2_of_a_generated_2kib_c1_passes_verify_seal() {
    c2_of_generated_c1_verifies(SECTOR_SIZE_2_KIB);
}

/// Makes the 8 MiB PoRep parameters on first use (minutes), then reuses them.
#[test]
fn c2_of_a_generated_8mib_c1_passes_verify_seal() {
    c2_of_generated_c1_verifies(SECTOR_SIZE_8_MIB);
}

/// `baton fil-gen-c1` writes the C1 `generate_c1` makes (bare or in Curio's envelope) and
/// names bad arguments.
#[test]
fn fil_gen_c1_command_line() {
    let dir = scratch("cli");
    let out = dir.join("c1.json");
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_baton"))
            .arg("fil-gen-c1")
            .args(args)
            .output()
            .expect("baton runs")
    };
    let out_s = out.display().to_string();
    let seed = "11".repeat(32);
    let base = [
        "--sector-size",
        "2KiB",
        "--miner-id",
        "1000",
        "--sector-id",
        "5",
        "--out",
        &out_s,
    ];
    let o = run(&[&base[..], &["--seed", &seed, "--envelope"]].concat());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let input = parse_c1(&std::fs::read(&out).expect("written")).expect("a C1 envelope");
    assert_eq!(input.sector_id, Some(5));
    assert_eq!(input.sector_size, Some(2048));
    let mut s = spec(SECTOR_SIZE_2_KIB, 5);
    s.seed = [0x11; 32];
    let want = serde_json::to_vec(&generate(&s)).expect("json");
    assert_eq!(serde_json::to_vec(&input.output).expect("json"), want);

    let o = run(&base);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let bare = parse_c1(&std::fs::read(&out).expect("written")).expect("a bare C1");
    assert_eq!(bare.sector_id, None);
    assert!(vanilla_accepted(&bare.output, &spec(SECTOR_SIZE_2_KIB, 5)));

    let fails = |args: &[&str], needle: &str| {
        let o = run(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} must fail");
        assert!(err.contains(needle), "{args:?}: {err}");
    };
    fails(&[&base[..], &["--seed", "abc"]].concat(), "--seed");
    fails(
        &[&base[..], &["--ticket", "00"]].concat(),
        "expected 32 bytes",
    );
    let mut odd = base;
    odd[1] = "3KiB";
    fails(&odd, "sector size");
    let _ = std::fs::remove_dir_all(&dir);
}
