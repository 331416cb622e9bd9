//! The CUDA backend against the CPU backend: H at 2^1..2^20, NTTs, G1 MSMs at 2^10..2^22+ and
//! G2 MSMs at 2^10..2^22+ on
//! random and PoRep-like scalars with and without densities (edge cases included), the memory
//! fallback, and whole proofs that bellperson verifies. Without a GPU every test passes with a
//! note (CI has none).
#![cfg(feature = "cuda")]

mod support;

use support::{gpu_present, test_gpu_options};

use std::sync::{Arc, OnceLock};

use baton::circuits::{KnownCircuit, Synthetic};
use baton::gpu::sample::{distinct_bases, porep_scalars, repeated_scalars};
use baton::gpu::CudaBackend;
use baton::groth16::backend::{Backend, Bases, CpuBackend, Query};
use baton::groth16::cs::Density;
use baton::groth16::domain::Domain;
use baton::{Proof, ProvingKey, Scalar};
use bellperson::groth16 as bp;
use blstrs::{Bls12, G1Affine, G2Affine, G2Projective};
use ff::Field;
use group::{Curve, Group};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

/// The shared backend on device 0, or None without a GPU.
fn gpu() -> Option<Arc<CudaBackend>> {
    static B: OnceLock<Option<Arc<CudaBackend>>> = OnceLock::new();
    B.get_or_init(|| {
        gpu_present().then(|| match CudaBackend::with_options(0, &test_gpu_options()) {
            Ok(b) => {
                let b = Arc::new(b);
                eprintln!("device: {} ({})", b.device_name(), b.arch());
                b
            }
            Err(e) => panic!("a GPU is present but the backend failed to open: {e}"),
        })
    })
    .clone()
}

/// A backend of the test's own (resident sets and memory caps apart from the shared one), with
/// the same knobs.
fn own_backend() -> Arc<CudaBackend> {
    match CudaBackend::with_options(0, &test_gpu_options()) {
        Ok(b) => Arc::new(b),
        Err(e) => panic!("a second backend failed to open: {e}"),
    }
}

fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed ^ std::process::id() as u64)
}

fn random_vec(n: usize, r: &mut ChaCha8Rng) -> Vec<Scalar> {
    (0..n).map(|_| Scalar::random(&mut *r)).collect()
}

fn check_h(gpu: &CudaBackend, log: u32, a: Vec<Scalar>, b: Vec<Scalar>, c: Vec<Scalar>) {
    let d = Domain::for_size(1 << log).unwrap();
    let (mut ca, mut cb, mut cc) = (a.clone(), b.clone(), c.clone());
    CpuBackend.compute_h(&d, &mut ca, &mut cb, &mut cc).unwrap();
    let (mut ga, mut gb, mut gc) = (a, b, c);
    gpu.compute_h(&d, &mut ga, &mut gb, &mut gc).unwrap();
    assert_eq!(ga.len(), (1 << log) - 1, "2^{log}: length");
    assert!(ga == ca, "2^{log}: H differs from the CPU");
}

/// H on random a, b, c, then on PoRep-like ones shorter than the domain (zero padding).
fn check_h_random_and_porep(gpu: &CudaBackend, log: u32, r: &mut ChaCha8Rng) {
    let n = 1usize << log;
    let (a, b, c) = (random_vec(n, r), random_vec(n, r), random_vec(n, r));
    check_h(gpu, log, a, b, c);
    let m = n - n / 4;
    let (a, b) = (porep_scalars(m, r.gen()), porep_scalars(m, r.gen()));
    let c: Vec<Scalar> = a.iter().zip(&b).map(|(x, y)| x * y).collect();
    check_h(gpu, log, a, b, c);
}

/// The device's NTT of a random 2^log vector equals the CPU domain's.
fn check_ntt(gpu: &CudaBackend, log: u32, r: &mut ChaCha8Rng) {
    let d = Domain::for_size(1 << log).unwrap();
    let v = random_vec(1 << log, r);
    let mut want = v.clone();
    d.ntt(&mut want).unwrap();
    let mut got = v;
    gpu.ntt(&mut got).unwrap();
    assert!(got == want, "NTT 2^{log} differs");
}

#[test]
fn compute_h_matches_cpu() {
    let Some(gpu) = gpu() else { return };
    let mut r = rng(1);
    // 2^22 crosses the 64 MiB staging buffers (several chunks up and down).
    for log in [1u32, 3, 10, 11, 13, 16, 17, 18, 20, 22] {
        check_h_random_and_porep(&gpu, log, &mut r);
        eprintln!("compute_h 2^{log}: ok");
    }
    check_h(&gpu, 12, vec![], vec![], vec![]);
    assert_eq!(gpu.fallbacks(), 0);
}

#[test]
fn ntt_matches_domain() {
    let Some(gpu) = gpu() else { return };
    let mut r = rng(2);
    for log in [1u32, 2, 9, 10, 11, 17, 18, 20] {
        check_ntt(&gpu, log, &mut r);
    }
}

/// The twiddle table split in two parts (`gpu.ntt_twiddles = "split"`, the layout of a device
/// under 48 GiB) gives the CPU's transform and H, with the table made for the largest size
/// first so that the smaller transforms read it at a stride, and is a small fraction of the
/// whole table.
#[test]
fn split_twiddles_give_the_cpus_ntt_and_h() {
    if gpu().is_none() {
        return;
    }
    let opts = baton::gpu::options::GpuOptions {
        ntt_twiddles: baton::gpu::options::NttTwiddles::Split,
        ..test_gpu_options()
    };
    let split = match CudaBackend::with_options(0, &opts) {
        Ok(b) => b,
        Err(e) => panic!("a split-twiddle backend failed to open: {e}"),
    };
    assert!(
        split.twiddle_bytes(24) * 256 < 32 << 24,
        "2^24's split table is small"
    );
    let mut r = rng(3);
    // The table is made for 2^24 first; the smaller transforms read it at a stride.
    for log in [24u32, 20, 22, 21, 17, 10, 1] {
        check_ntt(&split, log, &mut r);
    }
    for log in [24u32, 20] {
        check_h_random_and_porep(&split, log, &mut r);
    }
    assert_eq!(split.fallbacks(), 0, "nothing ran on the CPU");
}

/// Every `gpu.ntt_block` under both `gpu.ntt_radix` kernels gives the CPU's transform and H,
/// with three columns, and four blocks with fewer (the pass list and the kernel are all they
/// change; any choice is correct, so other tests sharing the backend are unaffected).
#[test]
fn ntt_and_h_match_cpu_for_every_block() {
    let Some(gpu) = gpu() else { return };
    let mut r = rng(7);
    let three = [2u32, 4]
        .into_iter()
        .flat_map(|r| (4u32..=10).map(move |b| (r, b, 3)));
    let fewer = [(2u32, 1u32), (4, 2), (4, 1), (4, 0)]
        .into_iter()
        .flat_map(|(r, c)| [4u32, 7, 9, 10].map(|b| (r, b, c)));
    for (radix, block, cols) in three.chain(fewer) {
        gpu.set_ntt_radix(radix).unwrap();
        gpu.set_ntt_block(block).unwrap();
        gpu.set_ntt_columns(cols).unwrap();
        // One line per block, with its time: a slow block is named in the device log.
        let t0 = std::time::Instant::now();
        for log in [3u32, 9, 11, 14, 17, 21] {
            // Each step named before it runs: a stop inside this test shows where it was.
            eprintln!("  ntt 2^{log}, block 2^{block}, radix {radix}, columns {cols}");
            let d = Domain::for_size(1 << log).unwrap();
            let v = random_vec(1 << log, &mut r);
            let mut want = v.clone();
            d.ntt(&mut want).unwrap();
            let mut got = v;
            gpu.ntt(&mut got).unwrap();
            assert!(
                got == want,
                "NTT 2^{log} with blocks of 2^{block}, radix {radix}, columns {cols} differs"
            );
        }
        for log in [5u32, 12, 16, 19] {
            let n = 1usize << log;
            let m = n - n / 8;
            let (a, b) = (porep_scalars(m, r.gen()), porep_scalars(m, r.gen()));
            let c: Vec<Scalar> = a.iter().zip(&b).map(|(x, y)| x * y).collect();
            eprintln!("  h 2^{log}, block 2^{block}, radix {radix}, columns {cols}");
            check_h(&gpu, log, a, b, c);
        }
        let secs = t0.elapsed().as_secs_f64();
        eprintln!("ntt block 2^{block} radix {radix} columns {cols}: ok in {secs:.2} s");
    }
    assert!(gpu.set_ntt_radix(3).is_err(), "radix 3 is refused");
    gpu.set_ntt_radix(baton::gpu::options::DEFAULT_NTT_RADIX)
        .unwrap();
    assert!(gpu.set_ntt_block(3).is_err(), "block 2^3 is refused");
    assert!(gpu.set_ntt_block(11).is_err(), "block 2^11 is refused");
    assert!(gpu.set_ntt_columns(4).is_err(), "four columns are refused");
    gpu.set_ntt_columns(baton::gpu::options::DEFAULT_NTT_COLUMNS)
        .unwrap();
    gpu.set_ntt_block(baton::gpu::options::DEFAULT_NTT_BLOCK)
        .unwrap();
}

fn check_msm(
    gpu: &CudaBackend,
    what: &str,
    bases: Bases<'_, G1Affine>,
    s: &[Scalar],
    d: Option<&Density>,
) {
    let want = CpuBackend.msm_g1(bases, s, d).unwrap();
    let got = gpu.msm_g1(bases, s, d).unwrap();
    assert_eq!(got, want, "{what}: MSM differs from the CPU");
}

fn random_density(n: usize, p: f64, r: &mut ChaCha8Rng) -> Density {
    let mut d = Density::default();
    for i in 0..n {
        d.push();
        if r.gen_bool(p) {
            d.mark(i);
        }
    }
    d
}

#[test]
fn msm_g1_matches_cpu() {
    let Some(gpu) = gpu() else { return };
    let mut r = rng(3);
    let max = 1usize << 20;
    let all = distinct_bases(max + 17, r.gen());
    for log in [10u32, 11, 12, 14, 16, 18, 20] {
        let n = 1usize << log;
        let bases = Bases::loose(&all[..n]);
        let dense = random_vec(n, &mut r);
        let mut porep = porep_scalars(n, r.gen());
        porep[3] = -Scalar::ONE;
        porep[5] = Scalar::from(2u64);
        check_msm(&gpu, &format!("2^{log} dense"), bases, &dense, None);
        check_msm(&gpu, &format!("2^{log} porep"), bases, &porep, None);
        // A density over 2n variables that keeps a bit under half: bases are the kept ones.
        let sc = porep_scalars(2 * n, r.gen());
        let d = random_density(2 * n, 0.45, &mut r);
        let kept = Bases::loose(&all[..d.count()]);
        check_msm(&gpu, &format!("2^{log} density"), kept, &sc, Some(&d));
        eprintln!("msm 2^{log}: ok");
    }
    // Odd length, an infinity base, resident (key-tagged) bases.
    let n = max + 17;
    let mut pts = all.clone();
    pts[7] = G1Affine::default();
    let s = random_vec(n, &mut r);
    let keyed = Bases {
        key_id: u64::MAX - 1,
        query: Query::L,
        offset: 0,
        points: &pts[..],
    };
    check_msm(&gpu, "2^20+17 keyed", keyed, &s, None);
    check_msm(&gpu, "2^20+17 keyed again", keyed, &s, None);
    assert_eq!(gpu.fallbacks(), 0);
}

#[test]
fn msm_g1_large_window() {
    // Above 2^22 points the window is 20 bits.
    let Some(gpu) = gpu() else { return };
    let mut r = rng(4);
    let n = (1usize << 22) + 1000;
    let bases = distinct_bases(n, r.gen());
    let s = porep_scalars(n, r.gen());
    check_msm(
        &gpu,
        "2^22+1000 porep (c=20)",
        Bases::loose(&bases),
        &s,
        None,
    );
    let s = random_vec(n, &mut r);
    check_msm(
        &gpu,
        "2^22+1000 dense (c=20)",
        Bases::loose(&bases),
        &s,
        None,
    );
    // One value in 70 % of the scalars: a bucket per window over ~45,000 segments, summed by
    // every level of msm_chains (groups of 32, 1024 and 32768 segments).
    let s = repeated_scalars(n, r.gen());
    check_msm(
        &gpu,
        "2^22+1000 one value repeated (c=20)",
        Bases::loose(&bases),
        &s,
        None,
    );
}

#[test]
fn msm_g1_edge_cases() {
    let Some(gpu) = gpu() else { return };
    let mut r = rng(5);
    let n = 1usize << 12;
    let all = distinct_bases(n, r.gen());
    let b = Bases::loose(&all);
    let x = Scalar::random(&mut r);
    for (what, v) in [
        ("all zero", Scalar::ZERO),
        ("all one", Scalar::ONE),
        ("all equal", x),
        ("all −1", -Scalar::ONE),
    ] {
        check_msm(&gpu, what, b, &vec![v; n], None);
    }
    let empty = random_density(n, 0.0, &mut r);
    check_msm(
        &gpu,
        "empty after density",
        Bases::loose(&all[..0]),
        &random_vec(n, &mut r),
        Some(&empty),
    );
    let full = random_density(n, 1.0, &mut r);
    check_msm(&gpu, "full density", b, &random_vec(n, &mut r), Some(&full));
    check_msm(
        &gpu,
        "below the GPU threshold",
        Bases::loose(&all[..100]),
        &random_vec(100, &mut r),
        None,
    );
    // Length errors match the CPU's.
    assert!(gpu
        .msm_g1(Bases::loose(&all[..10]), &random_vec(11, &mut r), None)
        .is_err());
}

/// n distinct G2 points A[i mod 1024] + B[i / 1024] (random A, B; n ≤ 2^20 keeps them distinct
/// with overwhelming probability), with the point at infinity at index 7.
fn g2_bases(n: usize, r: &mut ChaCha8Rng) -> Vec<G2Affine> {
    let a: Vec<G2Projective> = (0..1024).map(|_| G2Projective::random(&mut *r)).collect();
    let b: Vec<G2Projective> = (0..n.div_ceil(1024))
        .map(|_| G2Projective::random(&mut *r))
        .collect();
    let proj: Vec<G2Projective> = (0..n)
        .into_par_iter()
        .map(|i| a[i % 1024] + b[i / 1024])
        .collect();
    let mut out = vec![G2Affine::default(); n];
    G2Projective::batch_normalize(&proj, &mut out);
    if n > 7 {
        out[7] = G2Affine::default();
    }
    out
}

fn check_msm_g2(
    gpu: &CudaBackend,
    what: &str,
    bases: Bases<'_, G2Affine>,
    s: &[Scalar],
    d: Option<&Density>,
) {
    let want = CpuBackend.msm_g2(bases, s, d).unwrap();
    let got = gpu.msm_g2(bases, s, d).unwrap();
    assert_eq!(got, want, "{what}: G2 MSM differs from the CPU");
}

#[test]
fn msm_g2_matches_cpu() {
    let Some(gpu) = gpu() else { return };
    let mut r = rng(8);
    let max = 1usize << 20;
    let all = g2_bases(max, &mut r);
    for log in [10u32, 12, 16, 20] {
        let n = 1usize << log;
        let bases = Bases::loose(&all[..n]);
        let mut porep = porep_scalars(n, r.gen());
        porep[3] = -Scalar::ONE;
        porep[5] = Scalar::from(2u64);
        check_msm_g2(&gpu, &format!("2^{log} porep"), bases, &porep, None);
        check_msm_g2(
            &gpu,
            &format!("2^{log} dense"),
            bases,
            &random_vec(n, &mut r),
            None,
        );
        let sc = porep_scalars(2 * n, r.gen());
        let d = random_density(2 * n, 0.45, &mut r);
        let kept = Bases::loose(&all[..d.count()]);
        check_msm_g2(&gpu, &format!("2^{log} density"), kept, &sc, Some(&d));
        eprintln!("msm_g2 2^{log}: ok");
    }
    let n = 1usize << 12;
    let b = Bases::loose(&all[..n]);
    let x = Scalar::random(&mut r);
    for (what, v) in [
        ("all one", Scalar::ONE),
        ("all equal", x),
        ("all −1", -Scalar::ONE),
    ] {
        check_msm_g2(&gpu, what, b, &vec![v; n], None);
    }
    // Resident bases of a key's B query, used twice.
    let keyed = Bases {
        key_id: u64::MAX - 2,
        query: Query::BG2,
        offset: 0,
        points: &all[..],
    };
    let s = porep_scalars(max, r.gen());
    check_msm_g2(&gpu, "2^20 keyed", keyed, &s, None);
    check_msm_g2(&gpu, "2^20 keyed again", keyed, &s, None);
    // Above 2^22 the window is 20 bits: tiled bases (repeats are fine for a comparison).
    let big: Vec<G2Affine> = (0..(1usize << 22) + 1000).map(|i| all[i % max]).collect();
    let s = porep_scalars(big.len(), r.gen());
    check_msm_g2(&gpu, "2^22+1000 porep (c=20)", Bases::loose(&big), &s, None);
    let s = repeated_scalars(max, r.gen());
    check_msm_g2(
        &gpu,
        "2^20 one value repeated",
        Bases::loose(&all),
        &s,
        None,
    );
    assert_eq!(gpu.fallbacks(), 0);
}

#[test]
fn memory_cap_falls_back_to_cpu() {
    if gpu().is_none() {
        return;
    }
    let own = own_backend();
    own.set_memory_cap_bytes(Some(1 << 20));
    let mut r = rng(6);
    let n = 1usize << 14;
    let all = distinct_bases(n, r.gen());
    check_msm(
        &own,
        "capped msm",
        Bases::loose(&all),
        &random_vec(n, &mut r),
        None,
    );
    check_h(
        &own,
        14,
        random_vec(n, &mut r),
        random_vec(n, &mut r),
        random_vec(n, &mut r),
    );
    assert_eq!(own.fallbacks(), 2, "both calls ran on the CPU");
    own.set_memory_cap_bytes(None);
    check_msm(
        &own,
        "uncapped msm",
        Bases::loose(&all),
        &random_vec(n, &mut r),
        None,
    );
    assert_eq!(own.fallbacks(), 2);
}

fn bp_vk(pk: &ProvingKey) -> bp::PreparedVerifyingKey<Bls12> {
    let mut bytes = Vec::new();
    pk.write(&mut bytes).expect("write key");
    let params =
        bp::Parameters::<Bls12>::read(&bytes[..], false).expect("bellperson reads our key");
    bp::prepare_verifying_key(&params.vk)
}

fn bp_proof(p: &Proof) -> bp::Proof<Bls12> {
    bp::Proof::read(&p.to_bytes()[..]).expect("bellperson reads our proof")
}

#[test]
fn proofs_verify_with_bellperson() {
    if gpu().is_none() {
        return;
    }
    // An own backend, so that the resident-set counts are not disturbed by other tests.
    let gpu = own_backend();
    let size = 1 << 14;
    let mut r = rng(7);
    let pk = baton::generate_random_parameters(Synthetic::new(size, 1), &mut r).expect("setup");
    let pvk = bp_vk(&pk);
    let mut resident = Vec::new();
    for seed in [2u64, 3] {
        let circuit = Synthetic::new(size, seed);
        let inputs = circuit.public_inputs();
        let (proof, t) =
            baton::prove_timed(&*gpu, circuit.clone(), &pk, &mut rng(seed)).expect("GPU proof");
        let cpu = baton::prove(circuit, &pk, &mut rng(seed)).expect("CPU proof");
        assert_eq!(proof, cpu, "same r, s: the GPU proof equals the CPU proof");
        let bproof = bp_proof(&proof);
        assert!(
            bp::verify_proof(&pvk, &bproof, &inputs).expect("verify"),
            "bellperson rejects the GPU proof"
        );
        let mut wrong = inputs.clone();
        wrong[0] += Scalar::ONE;
        assert!(
            !bp::verify_proof(&pvk, &bproof, &wrong).expect("verify"),
            "a wrong input verifies"
        );
        eprintln!("proof seed {seed}: h {:?} g1 {:?}", t.h, t.g1);
        resident.push((gpu.resident_base_sets(), gpu.resident_bytes()));
    }
    // The key's bases stay resident after the first proof; the second reuses them, uploading
    // nothing new.
    assert!(resident[0].0 > 0, "bases resident after a proof");
    assert_eq!(
        resident[0], resident[1],
        "second proof reused the resident bases"
    );
    assert_eq!(gpu.fallbacks(), 0);
}

// ---- a/b/c from a recorded R1CS on the device (issue 14) ----------------------------------

use baton::circuits::MimcChain;
use baton::compiled::{self, WitnessCs};
use baton::groth16::msm::Scalars;
use baton::groth16::packed::PackedScalars;
use baton::stages::partition::{AbcInput, PartitionProver};

/// Records `make(0)`, synthesizes `make(5)` witness-only, and checks the device's a/b/c
/// against the CPU evaluation (the domain's padding zero), from the plain witness and from the
/// same witness packed as bits (expanded on the device); returns the recording's
/// coefficient-index width in bytes.
fn check_device_abc<C: bellperson::Circuit<Scalar>>(
    gpu: &CudaBackend,
    what: &str,
    make: impl Fn(u64) -> C,
) -> usize {
    let (rec, _, _) = compiled::record(make(0)).expect("record");
    let cs = WitnessCs::synthesize(make(5), rec.shape()).expect("witness");
    let cpu = rec.evaluate(&cs.inputs, &cs.aux).expect("CPU a/b/c");
    let packed = PackedScalars::pack(&cs.aux);
    for (how, aux) in [
        ("plain", Scalars::Plain(&cs.aux)),
        ("packed", Scalars::Packed(&packed)),
    ] {
        let t = std::time::Instant::now();
        let dev = gpu
            .evaluate_abc(&rec, &cs.inputs, aux)
            .expect("device a/b/c");
        let took = t.elapsed();
        let n = rec.shape().domain_size();
        assert_eq!(1usize << dev.log_n(), n, "{what}: domain");
        let got = gpu.download_abc(&dev).expect("download");
        for (name, g, c) in [
            ("a", &got.a, &cpu.a),
            ("b", &got.b, &cpu.b),
            ("c", &got.c, &cpu.c),
        ] {
            assert_eq!(g.len(), n, "{what} ({how}): {name} holds the domain");
            assert!(
                g[..c.len()] == c[..],
                "{what} ({how}): {name} differs from the CPU"
            );
            assert!(
                g[c.len()..].iter().all(|x| x.is_zero_vartime()),
                "{what} ({how}): {name} padding"
            );
        }
        let mix = packed.mix();
        eprintln!(
            "{what} ({how}): {} rows, {} terms on the device in {took:?}; witness {} zeros, {} ones, {} other",
            rec.shape().rows(),
            rec.terms(),
            mix.zeros,
            mix.ones,
            mix.dense
        );
    }
    rec.matrices()[0].coeffs().width()
}

/// Witnesses of every mix, packed and expanded on the device: all zeros, all ones, all dense
/// (no bit set in one bitmap or the other), PoRep-like (mostly 0/1) and random, at lengths
/// that end inside a 32- and a 64-value word, give a/b/c equal to the CPU's.
#[test]
fn packed_witness_expands_on_the_device_for_every_mix() {
    let Some(gpu) = gpu() else { return };
    let mut r = rng(77);
    for len in [1usize, 31, 33, 64, 65, 1000, 70_001] {
        let (rec, _, _) = compiled::record(Echo(vec![Scalar::ZERO; len])).expect("record");
        let kinds: [(&str, MakeScalar); 5] = [
            ("zeros", |_| Scalar::ZERO),
            ("ones", |_| Scalar::ONE),
            ("dense", |r| Scalar::random(r)),
            ("porep-like", |r| match r.gen_range(0..24) {
                0 => Scalar::random(r),
                1..=11 => Scalar::ONE,
                _ => Scalar::ZERO,
            }),
            ("random mix", |r| match r.gen_range(0..3) {
                0 => Scalar::random(r),
                1 => Scalar::ONE,
                _ => Scalar::ZERO,
            }),
        ];
        for (what, make) in kinds {
            let aux: Vec<Scalar> = (0..len).map(|_| make(&mut r)).collect();
            let inputs = vec![Scalar::ONE];
            let cpu = rec.evaluate(&inputs, &aux).expect("CPU a/b/c");
            let packed = PackedScalars::pack(&aux);
            let dev = gpu
                .evaluate_abc(&rec, &inputs, Scalars::Packed(&packed))
                .expect("device a/b/c from packed");
            let got = gpu.download_abc(&dev).expect("download");
            // a holds the witness itself (row i is x_i · 1 = x_i).
            assert!(
                got.a[..len] == aux[..],
                "{what}, {len} values: the device's expansion differs from the witness"
            );
            assert!(
                got.c[..cpu.c.len()] == cpu.c[..] && got.b[..cpu.b.len()] == cpu.b[..],
                "{what}, {len} values: b or c differs from the CPU"
            );
        }
    }
}

/// Makes one witness value of a kind.
type MakeScalar = fn(&mut ChaCha8Rng) -> Scalar;

/// One constraint x_i · 1 = x_i per private variable, whatever its value: a/b/c's a is the
/// witness itself.
struct Echo(Vec<Scalar>);

impl bellperson::Circuit<Scalar> for Echo {
    fn synthesize<CS: bellperson::ConstraintSystem<Scalar>>(
        self,
        cs: &mut CS,
    ) -> Result<(), bellperson::SynthesisError> {
        for (i, v) in self.0.into_iter().enumerate() {
            let x = cs.alloc(|| format!("x{i}"), || Ok(v))?;
            cs.enforce(
                || format!("x{i} * 1 = x{i}"),
                |lc| lc + x,
                |lc| lc + CS::one(),
                |lc| lc + x,
            );
        }
        Ok(())
    }
}

#[test]
fn sparse_abc_matches_the_cpu_evaluation() {
    let Some(gpu) = gpu() else { return };
    let mut widths = std::collections::BTreeSet::new();
    for log in [8u32, 10, 14, 16, 18, 20] {
        let what = format!("synthetic 2^{log}");
        widths.insert(check_device_abc(&gpu, &what, |s| {
            Synthetic::new(1 << log, s)
        }));
    }
    widths.insert(check_device_abc(&gpu, "synthetic 3000, 7 inputs", |s| {
        Synthetic {
            public_inputs: 7,
            ..Synthetic::new(3000, s)
        }
    }));
    widths.insert(check_device_abc(&gpu, "mimc 2001", |s| {
        MimcChain::with_constraints(2001, s)
    }));
    widths.insert(check_device_abc(&gpu, "mimc 200k", |s| {
        MimcChain::with_constraints(200_001, s)
    }));
    assert_eq!(
        widths.into_iter().collect::<Vec<_>>(),
        vec![1, 2, 4],
        "every index width"
    );
}

/// Rows of 1 to 929 terms (several long ones in most warps, in A and in C, as a bit-heavy
/// circuit's recording has): the device's a/b/c equal the CPU's.
#[test]
fn sparse_abc_long_rows_match_the_cpu_evaluation() {
    let Some(gpu) = gpu() else { return };
    for (rows, every) in [(3000usize, 3usize), (5001, 1), (40_000, 1000)] {
        let what = format!("long rows {rows}/{every}");
        check_device_abc(&gpu, &what, |s| {
            baton::circuits::LongRows::new(rows, every, s)
        });
    }
}

#[test]
fn sparse_abc_refuses_an_unsatisfied_witness_at_its_row() {
    let Some(gpu) = gpu() else { return };
    let n = 1 << 12;
    let (rec, _, _) = compiled::record(Synthetic::new(n, 0)).unwrap();
    for k in [0usize, 3, 17, 1000, n - 6] {
        let broken = Synthetic {
            break_at: Some(k),
            ..Synthetic::new(n, 9)
        };
        let cs = WitnessCs::synthesize(broken, rec.shape()).unwrap();
        let packed = PackedScalars::pack(&cs.aux);
        for aux in [Scalars::Plain(&cs.aux), Scalars::Packed(&packed)] {
            match gpu.evaluate_abc(&rec, &cs.inputs, aux) {
                Err(baton::Error::Unsatisfied { index, .. }) => assert_eq!(index, k),
                other => panic!("broken at {k}: {:?}", other.map(|d| d.log_n())),
            }
        }
    }
    let cs = WitnessCs::synthesize(Synthetic::new(n, 9), rec.shape()).unwrap();
    let short = PackedScalars::pack(&cs.aux[1..]);
    for aux in [Scalars::Plain(&cs.aux[1..]), Scalars::Packed(&short)] {
        assert!(
            matches!(
                gpu.evaluate_abc(&rec, &cs.inputs, aux),
                Err(baton::Error::Malformed { .. })
            ),
            "a witness of another length is refused before any launch"
        );
    }
}

#[test]
fn device_abc_proofs_verify_with_bellperson() {
    if gpu().is_none() {
        return;
    }
    // An own backend: its resident-set counts are this test's alone.
    let gpu = own_backend();
    let size = 1 << 14;
    let mut r = rng(21);
    let pk = baton::generate_random_parameters(Synthetic::new(size, 1), &mut r).expect("setup");
    let pvk = bp_vk(&pk);
    let (rec, _, _) = compiled::record(Synthetic::new(size, 2)).unwrap();
    rec.check_key(&pk).unwrap();
    let mut resident = Vec::new();
    for seed in [3u64, 4] {
        let circuit = Synthetic::new(size, seed);
        let inputs = circuit.public_inputs();
        let cs = WitnessCs::synthesize(circuit, rec.shape()).unwrap();
        // The second witness packed: expanded on the device, never plain on the host.
        let w = match seed {
            3 => rec.witness(cs.inputs, cs.aux),
            _ => rec.packed_witness(cs.inputs, PackedScalars::pack(&cs.aux)),
        };
        let dev = gpu
            .evaluate_abc(&rec, &w.inputs, w.aux_scalars())
            .expect("device a/b/c");
        let sums = gpu
            .prove_partition(&pk, AbcInput::Device(Box::new(dev)), &w, true, &mut |_| {
                panic!("no host a/b/c to hand back")
            })
            .expect("partition from device a/b/c");
        // After the partition: the recording and the key's bases both resident (the key
        // becomes resident on the first partition, so measuring before it differs by it).
        resident.push(gpu.resident_bytes());
        let b_g2 = sums.b_g2.expect("B_G2 asked for");
        let proof = baton::groth16::prover::assemble(
            &pk.vk,
            &sums.g1,
            b_g2,
            Scalar::random(&mut r),
            Scalar::random(&mut r),
        )
        .unwrap();
        let bproof = bp_proof(&proof);
        assert!(
            bp::verify_proof(&pvk, &bproof, &inputs).unwrap(),
            "bellperson rejects it"
        );
        let mut wrong = inputs.clone();
        wrong[0] += Scalar::ONE;
        assert!(
            !bp::verify_proof(&pvk, &bproof, &wrong).unwrap(),
            "a wrong input verifies"
        );
        eprintln!(
            "device a/b/c proof {seed}: peak device {} MiB",
            sums.peak_device_bytes >> 20
        );
    }
    assert_eq!(
        resident[0], resident[1],
        "the recording stays resident, uploaded once"
    );
    // A cap below what the call needs: a clean out-of-memory error, nothing launched.
    gpu.clear_resident().unwrap();
    gpu.set_memory_cap_bytes(Some(1 << 20));
    let cs = WitnessCs::synthesize(Synthetic::new(size, 5), rec.shape()).unwrap();
    match gpu.evaluate_abc(&rec, &cs.inputs, Scalars::Plain(&cs.aux)) {
        Err(baton::Error::Device(e)) => assert!(e.is_out_of_memory(), "{e}"),
        other => panic!("expected out of memory, got {:?}", other.map(|d| d.log_n())),
    }
}
