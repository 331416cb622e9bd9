//! Key files checked once, then trusted by their record; a point outside the subgroup found by
//! the batched check and named; the key store shares, lists and evicts keys.

mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use baton::circuits::Synthetic;
use baton::keys::store::{Evicted, Loaded};
use baton::keys::trust::{read_checked_once, Trust};
use baton::{Check, KeyStore, ProvingKey};
use blstrs::G1Affine;
use rand::SeedableRng;

fn scratch(name: &str) -> PathBuf {
    support::own_cache();
    let d = std::env::temp_dir().join(format!("baton-keys-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// A key whose H query (2^15 points) is large enough for the batched subgroup test.
fn key_file(dir: &Path) -> (ProvingKey, PathBuf) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let pk =
        baton::generate_random_parameters(Synthetic::new(1 << 15, 0), &mut rng).expect("setup");
    let path = dir.join("k.params");
    pk.write_file(&path).expect("write");
    (pk, path)
}

/// A point on the curve outside G1 (from a small x coordinate).
fn outside_g1() -> G1Affine {
    (1u64..)
        .find_map(|x| {
            let mut enc = [0u8; 48];
            enc[40..].copy_from_slice(&x.to_be_bytes());
            enc[0] |= 0x80;
            let p: Option<G1Affine> = G1Affine::from_compressed_unchecked(&enc).into();
            p.filter(|p| bool::from(p.is_on_curve()) && !bool::from(p.is_torsion_free()))
        })
        .expect("some small x gives one")
}

/// Byte offset of H query point `i` in the file.
fn h_offset(pk: &ProvingKey, i: usize) -> usize {
    let vk = 96 * 3 + 192 * 3 + 4 + 96 * pk.vk.ic.len();
    vk + 4 + 96 * i
}

#[test]
fn a_key_is_checked_once_then_remembered() {
    let dir = scratch("trust");
    let (pk, path) = key_file(&dir);
    let (k, trust) = read_checked_once(&path).expect("first read");
    assert_eq!((k == pk, trust), (true, Trust::Checked));
    let (k, trust) = read_checked_once(&path).expect("second read");
    assert_eq!((k == pk, trust), (true, Trust::Remembered));
    // Rewritten with the same bytes: a new identity, the same content. (The pauses keep the
    // modification times apart on file systems with coarse timestamps.)
    let pause = || std::thread::sleep(std::time::Duration::from_millis(50));
    pause();
    std::fs::write(&path, std::fs::read(&path).expect("read")).expect("rewrite");
    let (_, trust) = read_checked_once(&path).expect("third read");
    assert_eq!(trust, Trust::SameContent);
    assert_eq!(
        read_checked_once(&path).expect("fourth").1,
        Trust::Remembered
    );

    // Changed content under the same length: checked again, and the bad point named.
    let mut bytes = std::fs::read(&path).expect("read");
    let at = h_offset(&pk, 20_000);
    bytes[at..at + 96].copy_from_slice(&outside_g1().to_uncompressed());
    pause();
    std::fs::write(&path, &bytes).expect("write");
    let err = read_checked_once(&path)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        err.contains("H query: point 20000") && err.contains("subgroup"),
        "{err}"
    );
    assert!(err.contains(&format!("byte {at}")), "{err}");
    // A point off the curve is named by the per-point check.
    bytes[at + 95] ^= 1;
    let err = ProvingKey::from_bytes(&bytes, Check::Full)
        .err()
        .map(|e| e.to_string());
    assert!(
        err.as_deref()
            .is_some_and(|e| e.contains("H query") && e.contains(&format!("byte {at}"))),
        "{err:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_store_shares_lists_and_evicts_only_unused_keys() {
    let dir = scratch("store");
    let (pk, path) = key_file(&dir);
    let store = KeyStore::new();
    let (a, how) = store.load("synthetic-15", &path).expect("load");
    assert!(matches!(how, Loaded::Now { .. }), "{how:?}");
    let (b, how) = store.load("synthetic-15", &path).expect("load again");
    assert_eq!(how, Loaded::AlreadyLoaded);
    assert!(Arc::ptr_eq(&a, &b), "one key shared by every user");
    assert_eq!(*a, pk);
    let listed = store.list();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0].circuit_id.as_str(), listed[0].users),
        ("synthetic-15", 2)
    );
    assert_eq!(listed[0].bytes, pk.heap_bytes());
    assert_eq!(store.evict("synthetic-15"), Evicted::InUse { users: 2 });
    drop((a, b));
    assert_eq!(
        store.evict("synthetic-15"),
        Evicted::Freed {
            bytes: pk.heap_bytes()
        }
    );
    assert_eq!(store.evict("synthetic-15"), Evicted::NotLoaded);
    assert!(store.list().is_empty() && store.get(&path).is_none());
    let missing = dir.join("none.params");
    let err = store
        .load("x", &missing)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains(&missing.display().to_string()), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn idle_keys_are_the_unheld_ones_with_their_last_use() {
    let dir = scratch("idle");
    let file = |name: &str, seed: u64| {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let pk = baton::generate_random_parameters(Synthetic::new(64, 0), &mut rng).expect("setup");
        let path = dir.join(name);
        pk.write_file(&path).expect("write");
        path
    };
    let (p1, p2) = (file("one.params", 1), file("two.params", 2));
    let store = KeyStore::new();
    let (one, _) = store.load("one", &p1).expect("load one");
    let (two, _) = store.load("two", &p2).expect("load two");
    let two_id = two.id();
    drop(one);
    let idle: Vec<String> = store.idle().into_iter().map(|k| k.circuit_id).collect();
    assert_eq!(idle, ["one"], "a held key is not idle");
    drop(two);
    let last = |id: &str| {
        let k = store.idle().into_iter().find(|k| k.circuit_id == id);
        k.expect("idle").last_used
    };
    let (one_before, two_before) = (last("one"), last("two"));
    assert!(one_before <= two_before, "taken in that order");
    std::thread::sleep(std::time::Duration::from_millis(5));
    store.touch(two_id);
    assert!(
        last("two") > two_before,
        "a job leaving a key marks it used"
    );
    assert_eq!(last("one"), one_before, "the other key is untouched");
    let _ = std::fs::remove_dir_all(&dir);
}
