//! Shape-only PoRep keys (`filecoin::shape_key`, `baton fil-params --shape-only`): at 2 KiB the
//! shape key's queries have exactly the real key's lengths (h, l, a, b_g1, b_g2, ic), and its
//! shape (challenges synthesized in parallel) is one full synthesis's at 2 KiB and 8 MiB; a proof
//! made with the shape key does not verify against its vk, while the same circuit's proof with
//! the real key does; the CLI prints the sizes with the label, and writes a `.shape` file only
//! outside the parameter cache.
#![cfg(feature = "filecoin")]

use std::path::PathBuf;
use std::process::Command;

use baton::filecoin::testing::{ensure_params, use_test_cache};
use baton::filecoin::{
    full_shape, shape_circuit, shape_key, CircuitId, CircuitKind, ParamCache, SHAPE_ONLY,
};
use baton::groth16::prover;
use baton::{verify, PreparedVerifyingKey, ProvingKey};
use filecoin_proofs::constants::{SectorShape2KiB, SectorShape32GiB, SectorShape8MiB};

const SECTOR: u64 = 2048;

fn porep() -> CircuitId {
    CircuitId {
        kind: CircuitKind::Porep,
        sector_size: SECTOR,
    }
}

/// The test cache, with the real 2 KiB PoRep key made once if it is missing.
fn cache() -> ParamCache {
    let cache = use_test_cache();
    ensure_params(&cache, &[porep()]).expect("the 2 KiB PoRep parameters");
    cache
}

fn real_key(cache: &ParamCache) -> ProvingKey {
    let path = cache.files(porep()).expect("named").params;
    ProvingKey::read(&path).expect("the real 2 KiB key")
}

fn lengths(pk: &ProvingKey) -> [usize; 6] {
    [
        pk.h.len(),
        pk.l.len(),
        pk.a.len(),
        pk.b_g1.len(),
        pk.b_g2.len(),
        pk.vk.ic.len(),
    ]
}

#[test]
fn the_shape_key_has_the_real_keys_sizes_and_its_proofs_do_not_verify() {
    let real = real_key(&cache());
    let shape = shape_key(SECTOR).expect("shape key");
    assert_eq!(shape.label(), SHAPE_ONLY);
    assert!(format!("{shape:?}").contains("NOT a real key"));
    let fake = shape.unverifiable_key();
    eprintln!(
        "2 KiB: real {:?}, shape {:?}, {:?}",
        lengths(&real),
        lengths(&fake),
        shape.shape()
    );
    assert_eq!(lengths(&fake), lengths(&real), "h, l, a, b_g1, b_g2, ic");
    assert_eq!(fake.heap_bytes(), real.heap_bytes());
    assert_eq!(shape.shape().key_bytes(), real.heap_bytes());

    let circuit = shape_circuit::<SectorShape2KiB>(SECTOR).expect("partition 0");
    let (_, w) = prover::synthesize(circuit.clone(), &real).expect("synthesized");
    let inputs = w.public_inputs().to_vec();
    let mut rng = rand::rngs::OsRng;

    let proof = baton::prove(circuit.clone(), &real, &mut rng).expect("proved, real key");
    verify(&PreparedVerifyingKey::new(&real.vk), &proof, &inputs)
        .expect("the real key's proof verifies");

    let proof = baton::prove(circuit, &fake, &mut rng).expect("proved, shape key");
    let r = verify(&PreparedVerifyingKey::new(&fake.vk), &proof, &inputs);
    eprintln!("the shape key's proof against its own vk: {r:?} (as it must: not a real key)");
    assert!(
        matches!(r, Err(baton::Error::VerificationFailed)),
        "a shape key's proof must not verify: {r:?}"
    );
}

/// The shape key's challenges are synthesized in parallel; one full synthesis gives the same.
#[test]
fn the_parallel_shape_is_the_full_synthesis_shape() {
    for (size, full) in [
        (SECTOR, full_shape::<SectorShape2KiB> as fn(u64) -> _),
        (8 << 20, full_shape::<SectorShape8MiB>),
    ] {
        let parallel = *shape_key(size).expect("shape key").shape();
        assert_eq!(
            parallel,
            full(size).expect("full synthesis"),
            "sector size {size}"
        );
    }
}

#[test]
fn a_tree_of_another_size_is_refused_with_an_error() {
    let r = shape_circuit::<SectorShape32GiB>(SECTOR).map(|_| ());
    assert!(
        format!("{r:?}").contains("tree shape vs sector size"),
        "{r:?}"
    );
    assert!(shape_key(4096).is_err());
}

fn baton(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_baton"))
        .args(args)
        .output()
        .expect("baton runs");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

#[test]
fn the_cli_prints_the_sizes_and_writes_a_shape_file_only_outside_the_cache() {
    let cache = cache();
    let real = real_key(&cache);
    let (ok, text) = baton(&["fil-params", "--shape-only", "--sector-size", "2KiB"]);
    eprintln!("{text}");
    assert!(ok, "{text}");
    let [h, l, a, b_g1, b_g2, ic] = lengths(&real);
    let sizes = format!("h {h}  l {l}  a {a}  b_g1 {b_g1}  b_g2 {b_g2}  ic {ic}");
    assert!(text.contains(&sizes), "{sizes} in:\n{text}");
    assert!(text.contains(SHAPE_ONLY) && text.contains("densities:"));
    assert!(text.contains("NOT a real key"));

    let dir = std::env::temp_dir().join(format!("baton-shape-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let inside = cache.dir().join("porep-2k.shape.params");
    let tries: [(PathBuf, &str); 2] = [
        (dir.join("porep-2k.params"), "must contain `.shape`"),
        (inside.clone(), "inside the parameter cache"),
    ];
    for (path, why) in tries {
        let p = path.to_string_lossy().into_owned();
        let args = [
            "fil-params",
            "--shape-only",
            "--sector-size",
            "2KiB",
            "--out",
            &p,
        ];
        let (ok, text) = baton(&args);
        assert!(!ok && text.contains(why), "{p}: {text}");
        assert!(!path.exists());
    }
    let path = dir.join("porep-2k.shape");
    let p = path.to_string_lossy().into_owned();
    let (ok, text) = baton(&[
        "fil-params",
        "--shape-only",
        "--sector-size",
        "2KiB",
        "--out",
        &p,
    ]);
    assert!(ok, "{text}");
    let written = ProvingKey::read(&path).expect("the written shape key reads back");
    assert_eq!(lengths(&written), lengths(&real));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The witness mix (`filecoin::witness_mix`, `--witness-mix`): synthesized witness-only with its
/// challenges in parallel, it counts exactly the zeros, ones and other values of one full
/// synthesis of partition 0, which packs far smaller than its scalars.
#[test]
fn the_witness_mix_counts_what_a_full_synthesis_holds() {
    use baton::filecoin::{witness_mix_by, Sha256Route};
    use baton::groth16::cs::ProvingAssignment;
    use baton::groth16::packed::Mix;
    for size in [SECTOR, 8 << 20] {
        let m = baton::filecoin::witness_mix(size, None).expect("mix");
        let full = match size {
            SECTOR => {
                ProvingAssignment::synthesize(shape_circuit::<SectorShape2KiB>(size).unwrap())
            }
            _ => ProvingAssignment::synthesize(shape_circuit::<SectorShape8MiB>(size).unwrap()),
        }
        .expect("full synthesis");
        assert_eq!(m.mix, Mix::of(&full.aux), "{size}");
        let gadget = witness_mix_by(size, None, Sha256Route::Gadget).expect("gadget mix");
        assert_eq!(gadget.mix, m.mix, "{size}: through the gadget");
        assert_eq!((m.challenges, m.of), (2, 2));
        assert_eq!(m.partition(), m.mix);
        assert!(
            m.mix.packed_bytes() * 20 < m.mix.plain_bytes(),
            "{:?}",
            m.mix
        );
    }
    // One challenge by value, then both through the gadget.
    for (extra, want) in [
        ("1", ["1 of 2 challenges", "SHA-256 by value"]),
        (
            "--gadget-sha256",
            ["2 of 2 challenges", "through the gadget"],
        ),
    ] {
        let args = ["fil-params", "--shape-only", "--sector-size", "2KiB"];
        let (ok, text) = baton(&[&args[..], &["--witness-mix", extra]].concat());
        assert!(ok, "{text}");
        for w in want.iter().chain(&["packed"]) {
            assert!(text.contains(w), "{w}: {text}");
        }
    }
}
