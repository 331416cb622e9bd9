//! Real Filecoin proofs through baton's engine on 2 KiB sectors sealed offline (pieces → PC1 →
//! PC2 → C1; parameters made by baton's setup, cached under `$BATON_TEST_CACHE`), each checked
//! with filecoin-proofs' own verifier: PoRep C2 (`verify_seal`), WinningPoSt, WindowPoSt and
//! SnapDeals. Other public inputs and a flipped byte fail; bad inputs each get a clear error
//! while a good job in the same engine finishes. PoRep goes through the compiled path: its
//! circuit recorded once beside the key, the next C2 synthesized witness-only.
#![cfg(feature = "filecoin")]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Instant;

use baton::compiled::{self, Route};
use baton::filecoin::testing::{
    all_circuits, ensure_params, post_vanilla, randomness, seal_sector, snap_vanilla,
    use_test_cache, SealedSector,
};
use baton::filecoin::{
    parse_c1, prove_job, CircuitId, CircuitKind, Filecoin, FilecoinError, ParamCache,
    RegisteredPoStProof, RegisteredSealProof, RegisteredUpdateProof,
};
use baton::{Config, Engine, KeyStore, ProvingKey};

const SECTOR: u64 = 2048;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("baton-fil-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// The test parameters, made once per process (the tests of this file run in parallel).
fn params() -> &'static ParamCache {
    static PARAMS: OnceLock<ParamCache> = OnceLock::new();
    PARAMS.get_or_init(|| {
        let cache = use_test_cache();
        let t = Instant::now();
        let made = ensure_params(&cache, &all_circuits(SECTOR)).expect("test parameters");
        for g in &made {
            eprintln!("params {}: made={} in {:.1}s", g.circuit, g.made, g.seconds);
        }
        eprintln!("params ready in {:.1?}", t.elapsed());
        cache
    })
}

fn engine() -> Engine {
    Engine::start(Config {
        budget_bytes: Some(8 << 30),
        compiled: true,
        ..Config::default()
    })
    .expect("engine starts")
}

fn accepted(s: &SealedSector, seed: [u8; 32], proof: &[u8]) -> bool {
    accepted_for(s, s.sector_id, s.comm_r, seed, proof)
}

/// `verify_seal` of `proof` for `s` with this sector id, comm_r and seed.
fn accepted_for(
    s: &SealedSector,
    sector_id: u64,
    comm_r: [u8; 32],
    seed: [u8; 32],
    proof: &[u8],
) -> bool {
    matches!(
        filecoin_proofs_api::seal::verify_seal(
            s.proof,
            comm_r,
            s.comm_d,
            s.prover_id,
            sector_id.into(),
            s.ticket,
            seed,
            proof,
        ),
        Ok(true)
    )
}

#[test]
fn porep_c2_of_a_sealed_2kib_sector_verifies_and_bad_inputs_are_named() {
    let cache = params();
    let dir = scratch("porep");
    let t = Instant::now();
    let sector =
        seal_sector(&dir, RegisteredSealProof::StackedDrg2KiBV1_1, 1000, 7, 1).expect("seal");
    eprintln!("sealed in {:.1?}", t.elapsed());

    let engine = engine();
    let fil = Filecoin::from_env();
    assert_eq!(fil.params(), cache, "filecoin-proofs reads the test cache");
    let t = Instant::now();
    let job = fil
        .porep_c2(&sector.c1, sector.prover_id, sector.sector_id)
        .expect("job from C1");
    assert_eq!(job.finisher.partitions(), 1);
    eprintln!("job built (key loaded) in {:.1?}", t.elapsed());
    // Pinned, so the key's recording stays in memory between this job and the next.
    let pk = job.request.key().clone();
    block_on(engine.pin_key(pk.clone())).expect("key pinned");
    let t = Instant::now();
    let good = std::thread::scope(|s| {
        let good = s.spawn(|| {
            let proofs = engine.prove_blocking(job.request)?;
            job.finisher.finish(&proofs)
        });
        bad_inputs_are_named(&sector, cache);
        good.join().expect("good job thread")
    });
    eprintln!("C2 through the engine in {:.1?}", t.elapsed());
    let proof = good.expect("the good job finishes while bad inputs are refused");
    assert_eq!(proof.len(), 192);
    assert!(
        accepted(&sector, sector.seed, &proof),
        "verify_seal accepts baton's proof"
    );
    let mut other_seed = sector.seed;
    other_seed[0] ^= 1;
    assert!(!accepted(&sector, other_seed, &proof), "another seed fails");
    let mut flipped = proof.clone();
    flipped[100] ^= 0x04;
    assert!(
        !accepted(&sector, sector.seed, &flipped),
        "a flipped byte fails"
    );
    second_c2_runs_witness_only(&engine, &fil, &sector, &pk);
    engine.shutdown_blocking();
    let _ = std::fs::remove_dir_all(&dir);
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
        .block_on(f)
}

/// Partitions synthesized so far by route, named.
fn routes(engine: &Engine) -> BTreeMap<String, u64> {
    let status = engine.status_blocking().expect("status");
    Route::ALL
        .iter()
        .zip(status.synthesis_routes)
        .map(|(r, n)| (format!("{r:?}"), n))
        .collect()
}

/// The compiled path on the real circuit (synthesis.compiled, the default): the first C2's
/// partition recorded the circuit (or read the recording a previous run left under baton's cache),
/// none was synthesized in full, and the second C2 runs witness-only against the recording
/// kept in memory, its challenges' witness code in parallel; its proof passes `verify_seal` and
/// fails for another seed, sector id or comm_r.
fn second_c2_runs_witness_only(
    engine: &Engine,
    fil: &Filecoin<'_>,
    sector: &SealedSector,
    pk: &ProvingKey,
) {
    let first = routes(engine);
    assert_eq!(first["Full"], 0, "no full synthesis: {first:?}");
    assert_eq!(first["Recorded"] + first["Loaded"], 1, "{first:?}");
    assert_eq!(first["Compiled"], 0, "{first:?}");
    let key_path = pk.path().expect("the key knows its file");
    let file = compiled::cache_path(key_path);
    let on_disk = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
    assert!(
        on_disk > 0,
        "recording written under baton's cache: {file:?}"
    );
    assert!(
        !file.starts_with(key_path.parent().expect("a directory")),
        "{file:?}"
    );
    eprintln!("recording {} ({on_disk} bytes)", file.display());

    let t = Instant::now();
    let job = fil
        .porep_c2(&sector.c1, sector.prover_id, sector.sector_id)
        .expect("second job");
    let proofs = engine.prove_blocking(job.request).expect("second C2");
    let proof = job
        .finisher
        .finish(&proofs)
        .expect("verified by the finisher");
    eprintln!("second C2 (witness-only) in {:.1?}", t.elapsed());
    let second = routes(engine);
    assert_eq!(second["Compiled"], 1, "witness-only: {second:?}");
    assert_eq!(second["Full"], 0, "{second:?}");
    assert_eq!(second["Recorded"] + second["Loaded"], 1, "{second:?}");
    assert!(accepted(sector, sector.seed, &proof), "verify_seal accepts");
    let mut other_seed = sector.seed;
    other_seed[7] ^= 0x20;
    assert!(!accepted(sector, other_seed, &proof), "another seed fails");
    let (id, seed) = (sector.sector_id, sector.seed);
    assert!(
        !accepted_for(sector, id + 1, sector.comm_r, seed, &proof),
        "another sector id fails"
    );
    let mut other_comm_r = sector.comm_r;
    other_comm_r[0] ^= 0x02;
    assert!(
        !accepted_for(sector, id, other_comm_r, seed, &proof),
        "another comm_r fails"
    );
}

/// Each refused before any proving, with the cause named.
fn bad_inputs_are_named(sector: &SealedSector, cache: &ParamCache) {
    let fil = Filecoin::from_env();
    let json = serde_json::to_vec(&sector.c1).expect("C1 serializes");
    assert!(parse_c1(&json).is_ok());

    let cut = parse_c1(&json[..json.len() / 2])
        .err()
        .map(|e| e.to_string());
    assert!(
        cut.as_deref().is_some_and(|e| e.contains("truncated")),
        "{cut:?}"
    );
    let mut garbled = json.clone();
    garbled[json.len() / 3] = b'}';
    let garbled = parse_c1(&garbled).err().map(|e| e.to_string());
    assert!(
        garbled.as_deref().is_some_and(|e| e.contains("C1")),
        "{garbled:?}"
    );

    // A sector size with no parameters in the cache: the error names the file looked for.
    // An empty cache of its own, so the check holds whatever the shared test cache holds
    // (the bench leaves 8 MiB parameters there).
    let empty_dir = scratch("no-params");
    std::fs::create_dir_all(&empty_dir).expect("dir");
    let empty = ParamCache::at(&empty_dir);
    let text = String::from_utf8(json.clone()).expect("utf8");
    let other = text.replacen("StackedDrg2KiBV1_1", "StackedDrg8MiBV1_1", 1);
    let c1 = parse_c1(other.as_bytes()).expect("still a C1").output;
    let want = empty
        .files(CircuitId {
            kind: CircuitKind::Porep,
            sector_size: 8 << 20,
        })
        .expect("named")
        .params;
    let no_params_store = KeyStore::new();
    match Filecoin::new(empty, &no_params_store).porep_c2(&c1, sector.prover_id, sector.sector_id) {
        Err(e @ FilecoinError::ParamsMissing { .. }) => {
            assert!(e.to_string().contains(&want.display().to_string()), "{e}")
        }
        other => panic!("expected missing parameters, got {:?}", other.err()),
    }
    let _ = std::fs::remove_dir_all(&empty_dir);

    // Parameters of another circuit under the PoRep name.
    let wrong_dir = scratch("wrong-params");
    std::fs::create_dir_all(&wrong_dir).expect("dir");
    let wrong = ParamCache::at(&wrong_dir);
    let porep = CircuitId {
        kind: CircuitKind::Porep,
        sector_size: SECTOR,
    };
    let winning = CircuitId {
        kind: CircuitKind::WinningPost,
        sector_size: SECTOR,
    };
    std::fs::copy(
        cache.files(winning).expect("named").params,
        wrong.files(porep).expect("named").params,
    )
    .expect("copy");
    let store = KeyStore::new();
    match Filecoin::new(wrong, &store).porep_c2(&sector.c1, sector.prover_id, sector.sector_id) {
        Err(e @ FilecoinError::ParamsMismatch { .. }) => {
            assert!(e.to_string().contains("public inputs"), "{e}")
        }
        other => panic!("expected a parameter mismatch, got {:?}", other.err()),
    }
    let _ = std::fs::remove_dir_all(&wrong_dir);

    // Vanilla proofs that do not verify (another seed than the one they answer).
    let mut bad = sector.c1.clone();
    bad.seed[3] ^= 0x10;
    match fil.porep_c2(&bad, sector.prover_id, sector.sector_id) {
        Err(FilecoinError::VanillaInvalid(_)) => {}
        other => panic!("expected invalid vanilla proofs, got {:?}", other.err()),
    }

    // The wrong miner: the replica id does not match.
    let wrong_prover = baton::filecoin::prover_id_from_miner(sector.miner_id + 1);
    match fil.porep_c2(&sector.c1, wrong_prover, sector.sector_id) {
        Err(
            e @ FilecoinError::Mismatch {
                what: "replica id", ..
            },
        ) => {
            assert!(e.to_string().contains("wrong miner or sector id"), "{e}")
        }
        other => panic!("expected a replica id mismatch, got {:?}", other.err()),
    }
}

fn replicas(
    s: &SealedSector,
    proof: RegisteredPoStProof,
) -> BTreeMap<filecoin_proofs_api::SectorId, filecoin_proofs_api::PublicReplicaInfo> {
    let mut m = BTreeMap::new();
    m.insert(
        s.sector_id.into(),
        filecoin_proofs_api::PublicReplicaInfo::new(proof, s.comm_r),
    );
    m
}

fn winning_ok(s: &SealedSector, r: &[u8; 32], proof: &[u8]) -> bool {
    let p = RegisteredPoStProof::StackedDrgWinning2KiBV1;
    matches!(
        filecoin_proofs_api::post::verify_winning_post(r, proof, &replicas(s, p), s.prover_id),
        Ok(true)
    )
}

fn window_ok(s: &SealedSector, r: &[u8; 32], proof: &[u8]) -> bool {
    let p = RegisteredPoStProof::StackedDrgWindow2KiBV1_2;
    matches!(
        filecoin_proofs_api::post::verify_window_post(
            r,
            &[(p, proof)],
            &replicas(s, p),
            s.prover_id
        ),
        Ok(true)
    )
}

fn flipped(proof: &[u8]) -> Vec<u8> {
    let mut f = proof.to_vec();
    f[100] ^= 0x04;
    f
}

#[test]
fn winning_post_of_a_2kib_sector_verifies() {
    params();
    let dir = scratch("winning");
    let s = seal_sector(&dir, RegisteredSealProof::StackedDrg2KiBV1_1, 1001, 3, 2).expect("seal");
    let p = RegisteredPoStProof::StackedDrgWinning2KiBV1;
    let r = randomness(5);
    let vanilla = post_vanilla(&s, p, &r).expect("vanilla proof");
    let fil = Filecoin::from_env();
    let engine = engine();
    let job = fil
        .winning_post(p, &r, s.prover_id, std::slice::from_ref(&vanilla))
        .expect("job");
    let proof = prove_job(&engine, job).expect("WinningPoSt proves and verifies");
    assert_eq!(proof.len(), 192);
    assert!(
        winning_ok(&s, &r, &proof),
        "verify_winning_post accepts baton's proof"
    );
    assert!(
        !winning_ok(&s, &randomness(6), &proof),
        "other randomness fails"
    );
    assert!(
        !winning_ok(&s, &r, &flipped(&proof)),
        "a flipped byte fails"
    );
    // Vanilla proofs answering other randomness, and bytes that are no vanilla proof.
    match fil.winning_post(
        p,
        &randomness(6),
        s.prover_id,
        std::slice::from_ref(&vanilla),
    ) {
        Err(FilecoinError::VanillaInvalid(_)) => {}
        other => panic!("expected invalid vanilla proofs, got {:?}", other.err()),
    }
    match fil.winning_post(p, &r, s.prover_id, &[vec![1, 2, 3]]) {
        Err(e @ FilecoinError::BadInput(_)) => {
            assert!(e.to_string().contains("vanilla proof 0"), "{e}")
        }
        other => panic!("expected a bad vanilla proof, got {:?}", other.err()),
    }
    engine.shutdown_blocking();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn window_post_of_a_2kib_sector_verifies_whole_and_per_partition() {
    params();
    let dir = scratch("window");
    let s = seal_sector(&dir, RegisteredSealProof::StackedDrg2KiBV1_1, 1002, 4, 3).expect("seal");
    let p = RegisteredPoStProof::StackedDrgWindow2KiBV1_2;
    let r = randomness(7);
    let vanilla = vec![post_vanilla(&s, p, &r).expect("vanilla proof")];
    let fil = Filecoin::from_env();
    let engine = engine();
    let whole = prove_job(
        &engine,
        fil.window_post(p, &r, s.prover_id, &vanilla, None)
            .expect("job"),
    )
    .expect("WindowPoSt proves and verifies");
    let part = prove_job(
        &engine,
        fil.window_post(p, &r, s.prover_id, &vanilla, Some(0))
            .expect("job"),
    )
    .expect("one WindowPoSt partition proves and verifies");
    for proof in [&whole, &part] {
        assert_eq!(proof.len(), 192);
        assert!(
            window_ok(&s, &r, proof),
            "verify_window_post accepts baton's proof"
        );
        assert!(
            !window_ok(&s, &randomness(8), proof),
            "other randomness fails"
        );
        assert!(!window_ok(&s, &r, &flipped(proof)), "a flipped byte fails");
    }
    match fil.winning_post(p, &r, s.prover_id, &vanilla) {
        Err(e @ FilecoinError::BadInput(_)) => {
            assert!(e.to_string().contains("not a WinningPoSt"), "{e}")
        }
        other => panic!("expected a wrong proof type, got {:?}", other.err()),
    }
    engine.shutdown_blocking();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn snap_deals_of_a_2kib_sector_verifies() {
    params();
    let dir = scratch("snap");
    let s = seal_sector(&dir, RegisteredSealProof::StackedDrg2KiBV1_1, 1003, 5, 4).expect("seal");
    let p = RegisteredUpdateProof::StackedDrg2KiBV1;
    let (vanilla, comm_r_new, comm_d_new) = snap_vanilla(&s, p, 9).expect("update vanilla proofs");
    let fil = Filecoin::from_env();
    let engine = engine();
    let job = fil
        .snap_deals(p, &vanilla, s.comm_r, comm_r_new, comm_d_new)
        .expect("job");
    let proof = prove_job(&engine, job).expect("SnapDeals proves and verifies");
    let ok = |proof: &[u8], comm_r_new| {
        matches!(
            filecoin_proofs_api::update::verify_empty_sector_update_proof(
                p, proof, s.comm_r, comm_r_new, comm_d_new
            ),
            Ok(true)
        )
    };
    assert_eq!(proof.len(), 192 * vanilla.len());
    assert!(
        ok(&proof, comm_r_new),
        "verify_empty_sector_update_proof accepts baton's proof"
    );
    assert!(!ok(&proof, s.comm_r), "another comm_r_new fails");
    assert!(!ok(&flipped(&proof), comm_r_new), "a flipped byte fails");
    match fil.snap_deals(p, &vanilla, s.comm_r, s.comm_r, comm_d_new) {
        Err(FilecoinError::VanillaInvalid(_)) => {}
        other => panic!("expected invalid vanilla proofs, got {:?}", other.err()),
    }
    engine.shutdown_blocking();
    let _ = std::fs::remove_dir_all(&dir);
}

/// `baton porep-c2` as field scripts call it: exit 0 and a proof `verify_seal` accepts for a good
/// envelope; a clear error and no output file for bad input.
#[test]
fn porep_c2_command_line() {
    let cache = params();
    let dir = scratch("cli");
    let s = seal_sector(&dir, RegisteredSealProof::StackedDrg2KiBV1_1, 1004, 11, 5).expect("seal");
    let json = serde_json::to_vec(&s.c1).expect("C1 serializes");
    let envelope = dir.join("c1.json");
    std::fs::write(
        &envelope,
        baton::filecoin::envelope(&json, s.sector_id, SECTOR),
    )
    .expect("write");
    let bare = dir.join("c1-bare.json");
    std::fs::write(&bare, &json).expect("write");
    let out = dir.join("proof.bin");
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_baton"))
            .arg("porep-c2")
            .args(args)
            .env("FIL_PROOFS_PARAMETER_CACHE", cache.dir())
            .env("BATON_MEMORY_BUDGET", "8GiB")
            .output()
            .expect("baton runs")
    };
    let path = |p: &PathBuf| p.display().to_string();
    let (c1, bare, out_s) = (path(&envelope), path(&bare), path(&out));

    // Bad input first (fast): each names its cause and writes nothing.
    let fails = |args: &[&str], needle: &str| {
        let o = run(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} must fail");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!out.exists(), "nothing written for {args:?}");
    };
    fails(
        &["--c1", &bare, "--miner-id", "1004", "--out", &out_s],
        "sector",
    );
    fails(
        &["--c1", &c1, "--miner-id", "1005", "--out", &out_s],
        "wrong miner or sector id",
    );
    fails(
        &[
            "--c1",
            &c1,
            "--miner-id",
            "1004",
            "--sector-id",
            "12",
            "--out",
            &out_s,
        ],
        "sector id",
    );

    let o = run(&["--c1", &c1, "--miner-id", "1004", "--out", &out_s]);
    assert!(
        o.status.success(),
        "porep-c2: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let proof = std::fs::read(&out).expect("proof written");
    assert_eq!(proof.len(), 192);
    assert!(
        accepted(&s, s.seed, &proof),
        "verify_seal accepts the CLI's proof"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
