//! The Filecoin kinds of `baton serve` driven by the Python client of tests/daemon_python.rs
//! (tests/python/cuzk_client.py, same harness), on a 2 KiB sector sealed here. A file of its own
//! so that it runs after tests/filecoin.rs, which makes the parameters on a new machine, and
//! beside no other daemon test: its C2 takes both cores for half a minute.
#![cfg(feature = "filecoin")]

#[path = "daemon/harness.rs"]
mod harness;

use harness::{config_with_budget, python, scenario_with, scratch, Daemon};

/// The four Filecoin kinds over gRPC, submitted as Curio submits them, on a 2 KiB sector sealed
/// here (baton::filecoin::testing), each proof checked with filecoin-proofs' own verifier (and
/// failing on another public input): PoRep C2, WinningPoSt, one WindowPoSt partition, SnapDeals.
/// Bad Filecoin input is refused with its status and cause while the PoRep job runs; the daemon
/// is SIGKILLed with that job running and finishes it after the restart from its journaled
/// request bytes. Parameters come from the cache tests/filecoin.rs makes ($BATON_TEST_CACHE).
#[test]
fn filecoin_kinds_over_grpc_verify_and_survive_a_restart() {
    use baton::filecoin::testing::{
        all_circuits, ensure_params, post_vanilla, randomness, seal_sector, snap_vanilla,
        use_test_cache,
    };
    use baton::filecoin::{RegisteredPoStProof, RegisteredSealProof, RegisteredUpdateProof};
    use filecoin_proofs_api::{post, seal, update, PublicReplicaInfo};

    let Some(py) = python() else { return };
    // Before anything reads filecoin-proofs' settings; the daemon inherits the variables.
    let cache = use_test_cache();
    ensure_params(&cache, &all_circuits(2048)).expect("test parameters");
    let dir = scratch("filecoin");
    let proof = RegisteredSealProof::StackedDrg2KiBV1_1;
    let s = seal_sector(&dir.join("sector"), proof, 1010, 9, 21).expect("seal");
    let c1 = serde_json::to_vec(&s.c1).expect("C1 serializes");
    let envelope = dir.join("c1.json");
    std::fs::write(&envelope, baton::filecoin::envelope(&c1, s.sector_id, 2048)).expect("write");
    let winning = RegisteredPoStProof::StackedDrgWinning2KiBV1;
    let window = RegisteredPoStProof::StackedDrgWindow2KiBV1_2;
    let update = RegisteredUpdateProof::StackedDrg2KiBV1;
    let (rw, rd) = (randomness(31), randomness(33));
    let vanilla = |p, r| hex::encode(post_vanilla(&s, p, r).expect("PoSt vanilla proof"));
    let (snap_vanilla, comm_r_new, comm_d_new) =
        snap_vanilla(&s, update, 35).expect("update vanilla proofs");
    // The chain's numbers of the proof types (abi.Registered*Proof), as Curio sends them.
    let doc = serde_json::json!({
        "c1": envelope.display().to_string(),
        "miner_id": s.miner_id,
        "sector_id": s.sector_id,
        "seal_proof": 5,
        "winning": {"proof": 0, "vanilla": vanilla(winning, &rw), "randomness": hex::encode(rw)},
        "window": {"proof": 10, "vanilla": vanilla(window, &rd), "randomness": hex::encode(rd)},
        "snap": {
            "proof": 0,
            "vanilla": snap_vanilla.iter().map(hex::encode).collect::<Vec<_>>(),
            "comm_r_old": hex::encode(s.comm_r),
            "comm_r_new": hex::encode(comm_r_new),
            "comm_d_new": hex::encode(comm_d_new),
        },
    });
    let inputs = dir.join("fil-inputs.json");
    std::fs::write(&inputs, doc.to_string()).expect("write");
    let fil = inputs.display().to_string();
    // An auto budget: resident keys are set aside from it, so GetStatus shows them.
    let toml = config_with_budget("auto", "");

    let mut d = Daemon::start(&dir, &toml, "127.0.0.1:0").expect("daemon starts");
    scenario_with(&py, "filecoin_before", &d, &["--fil", &fil]);
    d.kill();
    let d = Daemon::start(&dir, &toml, "127.0.0.1:0").expect("daemon starts again");
    assert!(d.log().contains("resumed unfinished jobs"), "{}", d.log());
    let out = scenario_with(&py, "filecoin_after", &d, &["--fil", &fil]);
    let bytes = |name: &str| hex::decode(out[name].as_str().expect("proof hex")).expect("hex");

    let porep = bytes("porep");
    let sealed = |seed| {
        let (ticket, id) = (s.ticket, s.sector_id.into());
        seal::verify_seal(
            proof,
            s.comm_r,
            s.comm_d,
            s.prover_id,
            id,
            ticket,
            seed,
            &porep,
        )
    };
    assert!(matches!(sealed(s.seed), Ok(true)), "verify_seal accepts it");
    let mut other = s.seed;
    other[0] ^= 1;
    assert!(!matches!(sealed(other), Ok(true)), "another seed fails");

    let replicas = |p| {
        let mut m = std::collections::BTreeMap::new();
        m.insert(s.sector_id.into(), PublicReplicaInfo::new(p, s.comm_r));
        m
    };
    let won = bytes("winning");
    let winning_ok =
        |r: &[u8; 32]| post::verify_winning_post(r, &won, &replicas(winning), s.prover_id);
    assert!(
        matches!(winning_ok(&rw), Ok(true)),
        "verify_winning_post accepts it"
    );
    assert!(
        !matches!(winning_ok(&rd), Ok(true)),
        "other randomness fails"
    );

    let wd = bytes("window");
    let window_ok = |r: &[u8; 32]| {
        post::verify_window_post(r, &[(window, &wd[..])], &replicas(window), s.prover_id)
    };
    assert!(
        matches!(window_ok(&rd), Ok(true)),
        "verify_window_post accepts it"
    );
    assert!(
        !matches!(window_ok(&rw), Ok(true)),
        "other randomness fails"
    );

    let up = bytes("snap");
    assert_eq!(up.len(), 192 * snap_vanilla.len());
    let snap_ok =
        |new| update::verify_empty_sector_update_proof(update, &up, s.comm_r, new, comm_d_new);
    assert!(
        matches!(snap_ok(comm_r_new), Ok(true)),
        "verify_empty_sector_update_proof accepts it"
    );
    assert!(
        !matches!(snap_ok(s.comm_r), Ok(true)),
        "another comm_r_new fails"
    );
    let _ = std::fs::remove_dir_all(dir.join("sector"));
}
