//! A 2 KiB sector sealed offline (pieces → PC1 → PC2 → C1, parameters made by baton's setup and
//! cached), C2 through baton's engine, checked by filecoin-proofs' `verify_seal`; another seed
//! and a flipped byte fail; bad inputs each get a clear error while the good job finishes.
#![cfg(feature = "filecoin")]

use std::path::PathBuf;
use std::time::Instant;

use baton::filecoin::testing::{all_circuits, ensure_params, seal_sector, use_test_cache};
use baton::filecoin::{
    parse_c1, CircuitId, CircuitKind, Filecoin, FilecoinError, ParamCache, RegisteredSealProof,
};
use baton::{Config, Engine, KeyStore};

const SECTOR: u64 = 2048;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("baton-fil-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn engine() -> Engine {
    Engine::start(Config {
        budget_bytes: Some(8 << 30),
        ..Config::default()
    })
    .expect("engine starts")
}

fn accepted(s: &baton::filecoin::testing::SealedSector, seed: [u8; 32], proof: &[u8]) -> bool {
    matches!(
        filecoin_proofs_api::seal::verify_seal(
            s.proof,
            s.comm_r,
            s.comm_d,
            s.prover_id,
            s.sector_id.into(),
            s.ticket,
            seed,
            proof,
        ),
        Ok(true)
    )
}

#[test]
fn porep_c2_of_a_sealed_2kib_sector_verifies_and_bad_inputs_are_named() {
    let cache = use_test_cache();
    let t = Instant::now();
    let made = ensure_params(&cache, &all_circuits(SECTOR)).expect("test parameters");
    for g in &made {
        eprintln!("params {}: made={} in {:.1}s", g.circuit, g.made, g.seconds);
    }
    eprintln!("params ready in {:.1?}", t.elapsed());
    let dir = scratch("porep");
    let t = Instant::now();
    let sector =
        seal_sector(&dir, RegisteredSealProof::StackedDrg2KiBV1_1, 1000, 7, 1).expect("seal");
    eprintln!("sealed in {:.1?}", t.elapsed());

    let engine = engine();
    let fil = Filecoin::from_env();
    assert_eq!(fil.params(), &cache, "filecoin-proofs reads the test cache");
    let job = fil
        .porep_c2(&sector.c1, sector.prover_id, sector.sector_id)
        .expect("job from C1");
    assert_eq!(job.finisher.partitions(), 1);
    let t = Instant::now();
    let good = std::thread::scope(|s| {
        let good = s.spawn(|| {
            let proofs = engine.prove_blocking(job.request)?;
            job.finisher.finish(&proofs)
        });
        bad_inputs_are_named(&sector, &cache);
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
    engine.shutdown_blocking();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Each refused before any proving, with the cause named.
fn bad_inputs_are_named(sector: &baton::filecoin::testing::SealedSector, cache: &ParamCache) {
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
    let text = String::from_utf8(json.clone()).expect("utf8");
    let other = text.replacen("StackedDrg2KiBV1_1", "StackedDrg8MiBV1_1", 1);
    let c1 = parse_c1(other.as_bytes()).expect("still a C1").output;
    let want = cache
        .files(CircuitId {
            kind: CircuitKind::Porep,
            sector_size: 8 << 20,
        })
        .expect("named")
        .params;
    match fil.porep_c2(&c1, sector.prover_id, sector.sector_id) {
        Err(e @ FilecoinError::ParamsMissing { .. }) => {
            assert!(e.to_string().contains(&want.display().to_string()), "{e}")
        }
        other => panic!("expected missing parameters, got {:?}", other.err()),
    }

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
