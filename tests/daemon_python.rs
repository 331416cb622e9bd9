//! `baton serve` driven by a client not written in Rust: Python grpcio, with stubs generated from
//! our .proto by grpcio-tools inside the test (tests/python/cuzk_client.py). Skipped, saying so,
//! where grpcio is missing, unless BATON_REQUIRE_PYTHON=1 (CI sets it).

#[path = "daemon/harness.rs"]
mod harness;

use harness::{
    config, config_with_budget, python, scenario, scenario_with, scratch, verify_proofs, Daemon,
};

#[test]
fn submit_await_prove_status_metrics_preload_evict() {
    let Some(py) = python() else { return };
    let dir = scratch("basic");
    let d = Daemon::start(&dir, &config(""), "127.0.0.1:0").expect("daemon starts");
    let r = scenario(&py, "basic", &d, "");
    assert_eq!(verify_proofs(&d.state, &r), 4);
}

#[test]
fn bad_input_gets_its_status_while_a_good_job_proves() {
    let Some(py) = python() else { return };
    let dir = scratch("bad-input");
    let toml = config("[server]\nmax_request_bytes = \"1MiB\"\n");
    let d = Daemon::start(&dir, &toml, "127.0.0.1:0").expect("daemon starts");
    let r = scenario(&py, "bad_input", &d, "");
    assert_eq!(verify_proofs(&d.state, &r), 1);
    scenario(&py, "slow_http", &d, "");
}

#[test]
fn a_reachable_listener_needs_the_token() {
    let Some(py) = python() else { return };
    let dir = scratch("auth");
    let err = Daemon::start(&dir, &config(""), "0.0.0.0:0")
        .err()
        .expect("refused without a token");
    assert!(err.contains("server.token"), "{err}");
    let toml = config("[server]\ntoken = \"s3cret-token\"\n");
    // Bound on every interface, reached here through loopback only.
    let d = Daemon::start(&dir, &toml, "0.0.0.0:0").expect("daemon starts with a token");
    let r = scenario(&py, "auth", &d, "s3cret-token");
    assert_eq!(verify_proofs(&d.state, &r), 1);
}

#[test]
fn tls_through_rustls() {
    let Some(py) = python() else { return };
    let dir = scratch("tls");
    let cert =
        rcgen::generate_simple_self_signed(vec!["localhost".to_string(), "127.0.0.1".to_string()])
            .expect("self-signed certificate");
    let (cert_pem, key_pem) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&cert_pem, cert.cert.pem()).expect("write");
    std::fs::write(&key_pem, cert.signing_key.serialize_pem()).expect("write");
    let toml = config(&format!(
        "[server]\ntls_cert = \"{}\"\ntls_key = \"{}\"\n",
        cert_pem.display(),
        key_pem.display()
    ));
    let d = Daemon::start(&dir, &toml, "127.0.0.1:0").expect("daemon starts with TLS");
    let ca = cert_pem.display().to_string();
    let r = scenario_with(&py, "tls", &d, &["--ca", &ca]);
    assert_eq!(verify_proofs(&d.state, &r), 1);
}

#[test]
fn sigkill_with_jobs_queued_running_and_finished_loses_nothing() {
    let Some(py) = python() else { return };
    let dir = scratch("restart");
    let mut d = Daemon::start(&dir, &config(""), "127.0.0.1:0").expect("daemon starts");
    scenario(&py, "restart_before", &d, "");
    d.kill();
    let before = dir.join("restart_before.json").display().to_string();
    let d = Daemon::start(&dir, &config(""), "127.0.0.1:0").expect("daemon starts again");
    assert!(d.log().contains("resumed unfinished jobs"), "{}", d.log());
    let r = scenario_with(&py, "restart_after", &d, &["--prev", &before]);
    assert_eq!(verify_proofs(&d.state, &r), 4);
}

#[test]
fn sigterm_drains_accepted_jobs_then_exits() {
    let Some(py) = python() else { return };
    let dir = scratch("drain");
    let mut d = Daemon::start(&dir, &config(""), "127.0.0.1:0").expect("daemon starts");
    let pid = d.pid().expect("running").to_string();
    let r = scenario_with(&py, "drain", &d, &["--pid", &pid]);
    assert_eq!(verify_proofs(&d.state, &r), 2);
    let status = d.wait().expect("exits");
    assert!(status.success(), "{status:?}\n{}", d.log());
    assert!(d.log().contains("drained and stopped"), "{}", d.log());
    let journal = baton::server::journal::Journal::open(&d.state).expect("journal free again");
    for id in ["d-1", "d-2"] {
        let (rec, proof) = journal.get(id).expect("read").expect("journaled");
        assert_eq!(rec.state, baton::server::journal::JobState::Completed);
        assert_eq!(proof.map(|p| p.len()), Some(192));
    }
}

#[test]
fn a_critical_job_submitted_last_is_answered_before_the_low_queue() {
    let Some(py) = python() else { return };
    let dir = scratch("priority");
    let d = Daemon::start(&dir, &config(""), "127.0.0.1:0").expect("daemon starts");
    let r = scenario(&py, "priority", &d, "");
    assert_eq!(verify_proofs(&d.state, &r), 7);
}

#[test]
fn cancel_queued_and_running_settles_the_ledger_and_the_next_job_proves() {
    let Some(py) = python() else { return };
    let dir = scratch("cancel");
    let d = Daemon::start(&dir, &config(""), "127.0.0.1:0").expect("daemon starts");
    let r = scenario(&py, "cancel", &d, "");
    assert_eq!(verify_proofs(&d.state, &r), 1);
}

/// The four Filecoin kinds over gRPC, submitted as Curio submits them, on a 2 KiB sector sealed
/// here (baton::filecoin::testing), each proof checked with filecoin-proofs' own verifier (and
/// failing on another public input): PoRep C2, WinningPoSt, one WindowPoSt partition, SnapDeals.
/// Bad Filecoin input is refused with its status and cause while the PoRep job runs; the daemon
/// is SIGKILLed with that job running and finishes it after the restart from its journaled
/// request bytes. Parameters come from the cache tests/filecoin.rs makes ($BATON_TEST_CACHE).
#[cfg(feature = "filecoin")]
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
    let toml = config_with_budget("6GiB", "");

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
