//! baton's own files for a key file stay out of the key's directory: with the parameter
//! directory read-only, a key is read, checked, recorded and proved and the directory holds what
//! it held before, the check record and the recording under baton's cache; what an earlier
//! version left beside a key is taken up once and moved; keys of one name in two directories get
//! files of their own, and a recording is never applied to another key. Every proof verifies and
//! fails for a changed input.

mod support;

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use baton::circuits::Synthetic;
use baton::compiled::{self, Route};
use baton::keys::files::{self as key_files, KeyFileKind};
use baton::keys::store::Loaded;
use baton::keys::trust::Trust;
use baton::testing::cpu_stages;
use baton::{Check, Engine, KeyStore, ProvingKey, Request};
use rand::SeedableRng;
use support::{check_proofs, circuits, config, key, own_cache, wait_settled, CONSTRAINTS};

fn set_writable(dir: &Path, writable: bool) {
    let mode = if writable { 0o755 } else { 0o555 };
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// A parameter directory of the test's own holding `pk` as `k.params`.
fn param_dir(test: &str, pk: &ProvingKey) -> (PathBuf, PathBuf) {
    own_cache();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(test);
    if dir.exists() {
        set_writable(&dir, true);
        std::fs::remove_dir_all(&dir).expect("clear");
    }
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("k.params");
    pk.write_file(&path).expect("key");
    (dir, path)
}

/// What a directory holds (names, sizes, modification times) and its own modification time,
/// which any file made and removed in it changes.
#[derive(Debug, PartialEq)]
struct Listing {
    files: BTreeSet<(String, u64, SystemTime)>,
    modified: SystemTime,
}

fn listing(dir: &Path) -> Listing {
    let files = std::fs::read_dir(dir)
        .expect("list")
        .map(|e| {
            let e = e.expect("entry");
            let m = e.metadata().expect("metadata");
            let name = e.file_name().to_string_lossy().into_owned();
            (name, m.len(), m.modified().expect("mtime"))
        })
        .collect();
    let modified = std::fs::metadata(dir)
        .and_then(|m| m.modified())
        .expect("dir mtime");
    Listing { files, modified }
}

/// Whether a read-only directory stops this process writing (it does not stop root).
fn read_only_holds(dir: &Path) -> bool {
    let probe = dir.join(".probe");
    match std::fs::write(&probe, b"") {
        Ok(()) => {
            let _ = std::fs::remove_file(&probe);
            false
        }
        Err(_) => true,
    }
}

/// Proves `seeds` with `pk` on a fresh CPU engine (one worker, so the routes are in order), as
/// a new process would; checks the proofs and returns the routes the syntheses took.
fn prove(pk: &Arc<ProvingKey>, seeds: std::ops::Range<u64>) -> Vec<(Route, u64)> {
    let stages = cpu_stages();
    let recordings = stages.recordings.clone();
    let engine = Engine::start_with(config(64 << 20, 1, None, 1), stages).expect("start");
    let cs = circuits(seeds);
    let proofs = engine
        .prove_blocking(Request::new(pk.clone(), cs.clone()))
        .expect("proofs");
    check_proofs(pk, &proofs, &cs);
    wait_settled(&engine);
    engine.shutdown_blocking();
    Route::ALL
        .into_iter()
        .zip(recordings.routes())
        .filter(|(_, n)| *n > 0)
        .collect()
}

/// Loads `path` through a fresh key store, as a new process would; how it came to be trusted.
fn load(path: &Path) -> (Arc<ProvingKey>, Trust) {
    match KeyStore::new().load("k", path).expect("load") {
        (pk, Loaded::Now { trust, .. }) => (pk, trust),
        (_, how) => panic!("a fresh store loads: {how:?}"),
    }
}

fn record_path(key: &Path) -> PathBuf {
    let vk = key_files::vk_digest_of_file(key).expect("verifying key");
    key_files::path_for(key, &vk, KeyFileKind::CheckRecord)
}

const RECORDED: [(Route, u64); 2] = [(Route::Compiled, 2), (Route::Recorded, 1)];
const LOADED: [(Route, u64); 2] = [(Route::Compiled, 2), (Route::Loaded, 1)];

#[test]
fn a_read_only_parameter_directory_is_left_as_it_was() {
    let (dir, path) = param_dir("files-read-only", &key());
    set_writable(&dir, false);
    let before = listing(&dir);

    let (pk, trust) = load(&path);
    assert_eq!(trust, Trust::Checked);
    assert_eq!(prove(&pk, 0..3), RECORDED);
    let (record, recording) = (record_path(&path), compiled::cache_path(&path));
    for file in [&record, &recording] {
        assert!(file.starts_with(own_cache()) && file.is_file(), "{file:?}");
    }
    assert!(record.starts_with(own_cache().join("checked-keys")));
    assert!(recording.starts_with(own_cache().join("recordings")));

    // The next start finds both: no check, no recording.
    let (pk, trust) = load(&path);
    assert_eq!(trust, Trust::Remembered);
    assert_eq!(prove(&pk, 3..6), LOADED);
    assert_eq!(
        listing(&dir),
        before,
        "nothing written in the parameter directory"
    );
    set_writable(&dir, true);
}

/// Leaves beside the key what an earlier version wrote there (its recording as `k.r1cs`, the
/// record of its check as `k.params.baton-checked`), then loads and proves as a new version.
fn moved_from_beside_the_key(test: &str, read_only: bool) {
    let (dir, path) = param_dir(test, &key());
    let old_recording = KeyFileKind::Recording.old_path(&path);
    let old_record = KeyFileKind::CheckRecord.old_path(&path);
    let pk = ProvingKey::read_with(&path, Check::None).expect("read");
    let (rec, _, _) = compiled::record(circuits(0..1).remove(0)).expect("record");
    rec.write_for_key(&old_recording, &pk)
        .expect("old recording");
    baton::keys::trust::read_checked_once(&path).expect("check");
    std::fs::rename(record_path(&path), &old_record).expect("old record");
    set_writable(&dir, !read_only);
    let before = listing(&dir);

    // Taken up: the old record spares the check, the old recording the recording.
    let (pk, trust) = load(&path);
    assert_eq!(
        trust,
        Trust::Remembered,
        "the record beside the key was read"
    );
    assert_eq!(
        prove(&pk, 10..13),
        LOADED,
        "the recording beside the key was read"
    );
    assert!(record_path(&path).is_file(), "record moved into the cache");
    assert!(compiled::cache_path(&path).is_file(), "recording moved too");

    let after = listing(&dir);
    let key_only: Vec<_> = after.files.iter().map(|f| f.0.as_str()).collect();
    if !read_only {
        assert_eq!(key_only, ["k.params"], "the old files are removed");
    } else if read_only_holds(&dir) {
        assert_eq!(after, before, "a read-only directory keeps them, untouched");
    } else {
        // Root writes through the mode: the old files may go, nothing new appears.
        assert!(after.files.is_subset(&before.files), "{after:?}");
    }

    // From now on read from the cache alone, whatever is left beside the key.
    let (pk, trust) = load(&path);
    assert_eq!(trust, Trust::Remembered);
    assert_eq!(prove(&pk, 13..16), LOADED);
    set_writable(&dir, true);
}

#[test]
fn files_left_beside_a_key_in_a_writable_directory_are_moved() {
    moved_from_beside_the_key("files-old-writable", false);
}

#[test]
fn files_left_beside_a_key_in_a_read_only_directory_are_copied() {
    moved_from_beside_the_key("files-old-read-only", true);
}

#[test]
fn keys_of_one_name_in_two_directories_get_files_of_their_own() {
    let other = baton::generate_random_parameters(
        Synthetic::new(CONSTRAINTS, 0),
        &mut rand_chacha::ChaCha8Rng::seed_from_u64(8),
    )
    .expect("setup");
    let (_, a) = param_dir("files-name-a", &key());
    let (_, b) = param_dir("files-name-b", &other);
    // The same bytes under the same name elsewhere is another file too.
    let (_, c) = param_dir("files-name-c", &key());
    let recordings = [&a, &b, &c].map(|k| compiled::cache_path(k));
    let records = [&a, &b, &c].map(|k| record_path(k));
    for set in [&recordings, &records] {
        let distinct: BTreeSet<_> = set.iter().collect();
        assert_eq!(distinct.len(), 3, "{set:?}");
    }

    let (pk_a, trust) = load(&a);
    assert_eq!(trust, Trust::Checked);
    let (pk_b, trust) = load(&b);
    assert_eq!(trust, Trust::Checked, "a's record does not vouch for b");
    assert!(records[..2].iter().all(|r| r.is_file()));
    assert_eq!(prove(&pk_a, 20..23), RECORDED);
    assert_eq!(prove(&pk_b, 20..23), RECORDED, "a's recording is not b's");

    // a's recording put where b's belongs is refused (its key tag), recorded over, then used.
    std::fs::copy(&recordings[0], &recordings[1]).expect("copy");
    assert_eq!(prove(&pk_b, 23..26), RECORDED);
    assert_eq!(prove(&pk_b, 26..29), LOADED);
}
