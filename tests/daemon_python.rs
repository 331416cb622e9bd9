//! `baton serve` driven by a client not written in Rust: Python grpcio, with stubs generated from
//! our .proto by grpcio-tools inside the test (tests/python/cuzk_client.py). Skipped, saying so,
//! where grpcio is missing, unless BATON_REQUIRE_PYTHON=1 (CI sets it).

#[path = "daemon/harness.rs"]
mod harness;

use harness::{config, python, scenario, scenario_with, scratch, verify_proofs, Daemon};

#[test]
fn submit_await_prove_status_metrics_preload_evict() {
    let Some(py) = python() else { return };
    let dir = scratch("basic");
    let d = Daemon::start(&dir, &config(""), "127.0.0.1:0").expect("daemon starts");
    let r = scenario(&py, "basic", &d, "");
    assert_eq!(verify_proofs(&d.state, &r), 5);
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
    scenario_with(&py, "restart_before", &d, &["--curio-proto"]);
    d.kill();
    let before = dir.join("restart_before.json").display().to_string();
    let d = Daemon::start(&dir, &config(""), "127.0.0.1:0").expect("daemon starts again");
    assert!(d.log().contains("resumed unfinished jobs"), "{}", d.log());
    let r = scenario_with(
        &py,
        "restart_after",
        &d,
        &["--prev", &before, "--curio-proto"],
    );
    // r-done, r-run, r-q1, r-q2, two jobs under r-shared, and r-fail's retry.
    assert_eq!(verify_proofs(&d.state, &r), 7);
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
    let journal =
        baton::server::jobs::journal::Journal::open(&d.state).expect("journal free again");
    for rid in ["d-1", "d-2"] {
        let id = journal
            .newest_of(rid)
            .expect("read")
            .expect("its job is indexed");
        assert!(id.starts_with(&format!("{rid}#")), "{id}");
        let (rec, proof) = journal.get(&id).expect("read").expect("journaled");
        assert_eq!(rec.request_id, rid);
        assert_eq!(rec.state, baton::server::jobs::journal::JobState::Completed);
        assert_eq!(proof.map(|p| p.len()), Some(192));
    }
}

/// Curio's request semantics, spoken through Curio's own proto definitions and only `Prove`:
/// a reorged PoRep under its old id, retries after a failure and a cancel, WindowPoSt
/// partitions sharing one id at once, an identical request while the first runs.
#[test]
fn curio_semantics_a_request_id_is_a_label_and_a_job_is_its_payload() {
    let Some(py) = python() else { return };
    let dir = scratch("curio");
    let d = Daemon::start(&dir, &config(""), "127.0.0.1:0").expect("daemon starts");
    let r = scenario_with(&py, "curio", &d, &["--curio-proto"]);
    // Two PoReps, the retry, the re-sent cancel, three WindowPoSt partitions, one WinningPoSt.
    assert_eq!(verify_proofs(&d.state, &r), 8);
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

#[test]
fn client_ranges_admit_without_the_token_and_the_token_admits_the_rest() {
    let Some(py) = python() else { return };
    let dir = scratch("allow-clients");
    // With a token set, 127.0.0.1 is admitted without it only through the range.
    let toml = config("[server]\ntoken = \"s3cret\"\nallow_clients = [\"127.0.0.1/32\"]\n");
    let d = Daemon::start(&dir, &toml, "0.0.0.0:0").expect("daemon starts");
    let r = scenario(&py, "allow_clients", &d, "");
    assert_eq!(verify_proofs(&d.state, &r), 1);
    drop(d);
    let toml = config("[server]\ntoken = \"s3cret\"\nallow_clients = [\"10.0.0.0/8\"]\n");
    let d = Daemon::start(&dir, &toml, "0.0.0.0:0").expect("daemon starts again");
    let r = scenario(&py, "allow_clients_token", &d, "s3cret");
    assert_eq!(verify_proofs(&d.state, &r), 1);
    let log = d.log();
    assert!(
        log.lines()
            .any(|l| l.contains("refused a call") && l.contains("127.0.0.1")),
        "{log}"
    );
}

#[test]
fn a_cuzk_config_serves_its_unix_socket_in_a_new_directory_and_status() {
    let Some(py) = python() else { return };
    let dir = scratch("cuzk-config");
    let socket = dir.join("nested/dir/cuzk.sock");
    let cuzk = dir.join("cuzk.toml");
    let text = format!(
        "[daemon]\nlisten = \"unix://{}\"\nstatus_listen = \"127.0.0.1:0\"\nfuture_key = 1\n\
         [memory]\ntotal_budget = \"2GiB\"\neviction_min_idle = \"5m\"\n\
         [gpus]\ndevices = []\ngpu_threads = 4\n[pipeline]\nmax_parallel_synthesis = 1\n\
         [logging]\nlevel = \"info\"\n",
        socket.display()
    );
    std::fs::write(&cuzk, text).expect("write the cuzk config");
    // baton.toml adds what the cuzk file cannot say (no GPU here).
    let path = cuzk.display().to_string();
    let d = Daemon::start_with(
        &dir,
        "[gpu]\nbackend = \"cpu\"\n",
        &["--cuzk-config", &path],
    )
    .expect("daemon starts from the cuzk config");
    assert_eq!(d.grpc, format!("unix://{}", socket.display()));
    assert!(socket.exists(), "the socket's directory was made");
    let log = d.log();
    let ignored: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("no equivalent in baton"))
        .collect();
    assert_eq!(ignored.len(), 1, "{log}");
    for key in [
        "gpus.gpu_threads",
        "memory.eviction_min_idle",
        "unknown to cuzk too: daemon.future_key",
    ] {
        assert!(ignored[0].contains(key), "{key}: {}", ignored[0]);
    }
    let r = scenario(&py, "cuzk_status", &d, "");
    assert_eq!(verify_proofs(&d.state, &r), 2);
}
