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

/// A small key made in memory, as a daemon makes its built-in circuits' keys.
fn made(seed: u64) -> baton::keys::store::Source {
    baton::keys::store::Source::Made(Box::new(move || {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        baton::generate_random_parameters(Synthetic::new(64, 0), &mut rng)
            .map_err(|e| e.to_string())
    }))
}

#[test]
fn made_keys_are_leased_pinned_listed_and_evicted_in_the_same_store() {
    let store = Arc::new(KeyStore::new());
    // Leased by a job: resident while the lease lasts, counted by leases, not evictable.
    let lease = store.lease("made-1", made(1)).expect("made");
    assert!(
        matches!(
            lease.loaded,
            Loaded::Now {
                trust: Trust::Made,
                ..
            }
        ),
        "{:?}",
        lease.loaded
    );
    let again = store.lease("made-1", made(99)).expect("resident");
    assert_eq!(again.loaded, Loaded::AlreadyLoaded);
    assert!(Arc::ptr_eq(&lease.key, &again.key), "made once, shared");
    let listed = store.list();
    assert_eq!(
        (listed.len(), listed[0].users, listed[0].pinned),
        (1, 2, false)
    );
    assert_eq!(store.evict("made-1"), Evicted::InUse { users: 2 });
    assert!(store.idle().is_empty() && !store.kept(lease.key.id()));
    drop((lease, again));
    assert!(
        store.list().is_empty(),
        "neither pinned nor leased: gone with its last lease"
    );

    // Pinned: kept with no job, idle, then evicted; a second pin says it was pinned already.
    let pinned = store.pin("made-2", made(2)).expect("pinned");
    assert!(!pinned.already && pinned.load_time > std::time::Duration::ZERO);
    let again = store.pin("made-2", made(2)).expect("pinned again");
    assert!(again.already && again.load_time.is_zero());
    let bytes = pinned.key.heap_bytes();
    assert!(store.kept(pinned.key.id()));
    drop((pinned, again));
    let lease = store.lease("made-2", made(2)).expect("leased");
    assert_eq!(store.evict("made-2"), Evicted::InUse { users: 1 });
    drop(lease);
    let idle: Vec<String> = store.idle().into_iter().map(|k| k.circuit_id).collect();
    assert_eq!(idle, ["made-2"], "pinned and unused: idle, still resident");
    assert_eq!(store.bytes(), bytes);
    assert_eq!(store.evict("made-2"), Evicted::Freed { bytes });
    assert_eq!(store.evict("made-2"), Evicted::NotLoaded);

    // Unpinned with no lease: gone. A maker that fails names the key, and leaves nothing.
    store.pin("made-3", made(3)).expect("pinned");
    store.unpin("made-3");
    assert!(store.list().is_empty());
    let failing = baton::keys::store::Source::Made(Box::new(|| Err("no disk".into())));
    let err = store.lease("made-4", failing).err().map(|e| e.to_string());
    assert_eq!(err.as_deref(), Some("key made-4: no disk"));
    assert!(
        store.list().is_empty(),
        "a failed make leaves no key behind"
    );
}

#[test]
fn a_leased_file_key_is_counted_by_its_leases() {
    let dir = scratch("leased");
    let (_, path) = key_file(&dir);
    let store = Arc::new(KeyStore::new());
    let (bare, _) = store.load("file", &path).expect("load");
    assert_eq!(
        store.list()[0].users,
        1,
        "taken bare: counted by its references"
    );
    let lease = store.lease_key(&bare).expect("resident here");
    assert_eq!(store.list()[0].users, 1, "leased: counted by its leases");
    let other = Arc::new(KeyStore::new());
    assert!(other.lease_key(&bare).is_none(), "not a key of that store");
    drop(lease);
    // A reference kept a moment longer (as the engine keeps a job's) is no user.
    assert_eq!(store.list()[0].users, 0);
    assert!(store.kept(bare.id()), "a file's key stays resident");
    let bytes = bare.heap_bytes();
    assert_eq!(store.evict("file"), Evicted::Freed { bytes });
    drop(bare);
    let _ = std::fs::remove_dir_all(&dir);
}
