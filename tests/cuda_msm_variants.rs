//! Every MSM variant the GPU bench times ([`baton::gpu::options::MSM_VARIANTS`], or
//! `BATON_MSM_VARIANTS`), each on its own backend, against the CPU backend before any timing:
//! G1 MSMs at 2^10..2^20 and 2^22 + 1000 (the 20-bit window) on random and PoRep-like scalars,
//! 2^23 + 4096 dense then PoRep-like (pieces of one window and of two), with densities, edge cases (all zero, all one, all equal, all −1, an infinity base, an empty
//! density, below the GPU threshold), G2 MSMs, a 2^18 device partition against the CPU stages,
//! and a proof through the variant that bellperson verifies while a wrong input fails. Every variant
//! runs to the end; the failures of all are reported together. Without a GPU the test passes
//! with a note (CI has none).
#![cfg(feature = "cuda")]

mod support;

use support::gpu_present;

use baton::circuits::{KnownCircuit, Synthetic};
use baton::gpu::options::{variants, GpuOptions};
use baton::gpu::sample::{
    distinct_bases, fold_tiled, g2_points, porep_scalars, random_density, repeated_scalars,
    sample_abc, sample_witness, shaped_key, tiled_bases,
};
use baton::gpu::CudaBackend;
use baton::groth16::backend::{Backend, Bases, CpuBackend};
use baton::groth16::cs::Density;
use baton::groth16::prover::{self, Abc, G1Sums, Witness};
use baton::stages::partition::{AbcInput, PartitionProver};
use baton::{Proof, ProvingKey, Scalar};
use bellperson::groth16 as bp;
use blstrs::{Bls12, G1Affine, G1Projective, G2Affine, G2Projective};
use ff::Field;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// What went wrong in one variant, as messages.
type Failures = Vec<String>;

fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed ^ std::process::id() as u64)
}

fn random_vec(n: usize, r: &mut ChaCha8Rng) -> Vec<Scalar> {
    (0..n).map(|_| Scalar::random(&mut *r)).collect()
}

/// One G1 case: what, scalars, density, how many bases, and the CPU's sum.
type G1Case = (String, Vec<Scalar>, Option<Density>, usize, G1Projective);

/// The inputs every variant is checked on, with the CPU's results (made once: the bases and
/// the CPU references are the slow part).
struct Inputs {
    g1: Vec<G1Affine>,
    /// 2^23 + 4096 bases repeating 2^16 points, and the scalars of the mixed case over them
    /// with the CPU's sum.
    tiled: Vec<G1Affine>,
    mixed: (Vec<Scalar>, G1Projective),
    g2: Vec<G2Affine>,
    cases: Vec<G1Case>,
    /// (what, scalars, the CPU's sum) for G2 over the first `scalars.len()` G2 bases.
    g2_cases: Vec<(String, Vec<Scalar>, G2Projective)>,
    part: Partition,
    proof: ProofCase,
}

fn inputs() -> Inputs {
    let mut r = rng(31);
    let big = (1usize << 22) + 1000;
    let mut g1 = distinct_bases(big, r.gen());
    g1[7] = G1Affine::default();
    let mut raw: Vec<(String, Vec<Scalar>, Option<Density>, usize)> = Vec::new();
    for log in [10u32, 12, 16, 20] {
        let n = 1usize << log;
        let mut porep = porep_scalars(n, r.gen());
        porep[3] = -Scalar::ONE;
        porep[5] = Scalar::from(2u64);
        raw.push((format!("2^{log} dense"), random_vec(n, &mut r), None, n));
        raw.push((format!("2^{log} PoRep-like"), porep, None, n));
        let d = random_density(2 * n, 0.45, r.gen());
        let kept = d.count();
        let sc = porep_scalars(2 * n, r.gen());
        raw.push((format!("2^{log} density"), sc, Some(d), kept));
    }
    raw.push((
        "2^22+1000 PoRep-like".into(),
        porep_scalars(big, r.gen()),
        None,
        big,
    ));
    raw.push(("2^22+1000 dense".into(), random_vec(big, &mut r), None, big));
    raw.push((
        "2^22+1000 one value repeated".into(),
        repeated_scalars(big, r.gen()),
        None,
        big,
    ));
    let n = 1usize << 12;
    let x = Scalar::random(&mut r);
    for (what, v) in [
        ("all zero", Scalar::ZERO),
        ("all one", Scalar::ONE),
        ("all equal", x),
        ("all −1", -Scalar::ONE),
    ] {
        raw.push((what.into(), vec![v; n], None, n));
    }
    // 2^20 equal scalars: one bucket per window over thousands of segments.
    raw.push(("2^20 all equal".into(), vec![x; 1 << 20], None, 1 << 20));
    let empty = random_density(n, 0.0, r.gen());
    raw.push((
        "empty after density".into(),
        random_vec(n, &mut r),
        Some(empty),
        0,
    ));
    raw.push((
        "below the GPU threshold".into(),
        random_vec(100, &mut r),
        None,
        100,
    ));
    let cases = raw
        .into_iter()
        .map(|(what, s, d, kept)| {
            let want = CpuBackend
                .msm_g1(Bases::loose(&g1[..kept]), &s, d.as_ref())
                .expect("CPU MSM");
            (what, s, d, kept, want)
        })
        .collect();
    // G2: tiled random points (repeats are fine for a comparison), the infinity at index 7.
    let pool = g2_points(1024, r.gen());
    let mut g2: Vec<G2Affine> = (0..1usize << 16).map(|i| pool[(i * 7919) % 1024]).collect();
    g2[7] = G2Affine::default();
    let g2_cases = [
        ("G2 2^12 dense", random_vec(1 << 12, &mut r)),
        ("G2 2^16 PoRep-like", porep_scalars(1 << 16, r.gen())),
    ]
    .into_iter()
    .map(|(what, s)| {
        let want = CpuBackend
            .msm_g2(Bases::loose(&g2[..s.len()]), &s, None)
            .expect("CPU G2 MSM");
        (what.to_string(), s, want)
    })
    .collect();
    // 2^23 + 4096 scalars, dense then PoRep-like, over bases repeating 2^16 points (the CPU's
    // sum is the MSM of the folded scalars): cut in two (`msm_pieces=2`) the pieces are counted
    // and choose windows 20 and 16, so each ends its own bucket run; cut in four
    // (`msm_pieces=4`) they take 16 each and add to one run.
    let (tn, period) = ((1usize << 23) + 4096, 1usize << 16);
    let tiled = tiled_bases(tn, period, r.gen());
    let mut mixed = random_vec(tn / 2, &mut r);
    mixed.extend(porep_scalars(tn - tn / 2, r.gen()));
    let want = CpuBackend
        .msm_g1(
            Bases::loose(&tiled[..period]),
            &fold_tiled(&mixed, period),
            None,
        )
        .expect("CPU MSM");
    Inputs {
        g1,
        tiled,
        mixed: (mixed, want),
        g2,
        cases,
        g2_cases,
        part: partition(),
        proof: proof_case(),
    }
}

/// The G1 and G2 MSMs of `inputs` on `gpu` against the CPU.
fn check_msms(gpu: &CudaBackend, inp: &Inputs, fails: &mut Failures) {
    for (what, s, d, kept, want) in &inp.cases {
        match gpu.msm_g1(Bases::loose(&inp.g1[..*kept]), s, d.as_ref()) {
            Ok(g) if g == *want => {}
            other => fails.push(format!("G1 {what}: GPU {other:?}, CPU {want:?}")),
        }
    }
    let (s, want) = &inp.mixed;
    match gpu.msm_g1(Bases::loose(&inp.tiled), s, None) {
        Ok(g) if g == *want => {}
        other => fails.push(format!(
            "G1 2^23+4096 dense, then PoRep-like: GPU {other:?}, CPU {want:?}"
        )),
    }
    for (what, s, want) in &inp.g2_cases {
        match gpu.msm_g2(Bases::loose(&inp.g2[..s.len()]), s, None) {
            Ok(g) if g == *want => {}
            other => fails.push(format!("{what}: GPU {other:?}, CPU {want:?}")),
        }
    }
    if gpu.fallbacks() != 0 {
        fails.push(format!("{} calls fell back to the CPU", gpu.fallbacks()));
    }
}

/// A 2^18 partition (PoRep-like witness and a/b/c) with the CPU stages' sums.
struct Partition {
    pk: ProvingKey,
    w: Witness,
    abc: Abc,
    want: (G1Sums, G2Projective),
}

fn copy(abc: &Abc) -> Abc {
    Abc {
        a: abc.a.clone(),
        b: abc.b.clone(),
        c: abc.c.clone(),
    }
}

fn partition() -> Partition {
    let n = 1usize << 18;
    let w = sample_witness(5, n / 2 + 17, 0.45, 41);
    let pk = shaped_key(n, &w, &distinct_bases(1 << 16, 43), &g2_points(256, 44));
    let abc = sample_abc(n - n / 4, 42);
    let mut cpu_abc = copy(&abc);
    let h = prover::compute_h(&CpuBackend, &mut cpu_abc).expect("CPU H");
    let g1 = prover::g1_msms(&CpuBackend, &pk, &w, &h).expect("CPU G1");
    let g2 = prover::b_g2_msm(&CpuBackend, &pk, &w).expect("CPU G2");
    Partition {
        pk,
        w,
        abc,
        want: (g1, g2),
    }
}

/// The device partition (B_G2 on the device) against the CPU stages.
fn check_partition(gpu: &CudaBackend, p: &Partition, fails: &mut Failures) {
    let mut host = copy(&p.abc);
    let got = gpu.prove_partition(&p.pk, AbcInput::Host(&mut host), &p.w, true, &mut |_| {});
    let (w1, w2) = &p.want;
    match got {
        Ok(g) => {
            let g1 = &g.g1;
            if !(g1.h == w1.h && g1.l == w1.l && g1.a == w1.a && g1.b_g1 == w1.b_g1) {
                fails.push("device partition 2^18: G1 sums differ from the CPU stages".into());
            }
            if g.b_g2.as_ref() != Some(w2) {
                fails.push("device partition 2^18: B_G2 differs from the CPU stage".into());
            }
        }
        Err(e) => fails.push(format!("device partition 2^18: {e}")),
    }
}

/// A real key (2^14 constraints), bellperson's verifying key, a circuit and the CPU's proof.
struct ProofCase {
    pk: ProvingKey,
    pvk: bp::PreparedVerifyingKey<Bls12>,
    circuit: Synthetic,
    cpu: Proof,
}

fn proof_case() -> ProofCase {
    let size = 1 << 14;
    let pk =
        baton::generate_random_parameters(Synthetic::new(size, 1), &mut rng(51)).expect("setup");
    let mut bytes = Vec::new();
    pk.write(&mut bytes).expect("write key");
    let params = bp::Parameters::<Bls12>::read(&bytes[..], false).expect("bellperson reads it");
    let circuit = Synthetic::new(size, 2);
    let cpu = baton::prove(circuit.clone(), &pk, &mut rng(2)).expect("CPU proof");
    ProofCase {
        pvk: bp::prepare_verifying_key(&params.vk),
        pk,
        circuit,
        cpu,
    }
}

/// A proof through `gpu` equals the CPU's, bellperson verifies it, and a wrong input fails.
fn check_proof(gpu: &CudaBackend, c: &ProofCase, fails: &mut Failures) {
    let inputs = c.circuit.public_inputs();
    let proof = match baton::prove_timed(gpu, c.circuit.clone(), &c.pk, &mut rng(2)) {
        Ok((p, _)) => p,
        Err(e) => return fails.push(format!("GPU proof: {e}")),
    };
    if proof != c.cpu {
        fails.push("the GPU proof differs from the CPU's (same r, s)".into());
    }
    let bproof = match bp::Proof::<Bls12>::read(&proof.to_bytes()[..]) {
        Ok(p) => p,
        Err(e) => return fails.push(format!("bellperson cannot read the proof: {e}")),
    };
    if !bp::verify_proof(&c.pvk, &bproof, &inputs).unwrap_or(false) {
        fails.push("bellperson rejects the GPU proof".into());
    }
    let mut wrong = inputs;
    wrong[0] += Scalar::ONE;
    if bp::verify_proof(&c.pvk, &bproof, &wrong).unwrap_or(true) {
        fails.push("a wrong public input verifies".into());
    }
}

#[test]
fn every_msm_variant_matches_the_cpu() {
    if !gpu_present() {
        eprintln!("no GPU: skipping the MSM variants");
        return;
    }
    let list = std::env::var("BATON_MSM_VARIANTS").ok();
    let all = variants(&GpuOptions::default(), list.as_deref()).expect("variant list");
    // Each step named before it runs: a stop (the device watchdog kills a test silent for a
    // minute) shows where it was.
    let clock = std::time::Instant::now();
    let inp = inputs();
    eprintln!(
        "CPU references ready in {:.1} s",
        clock.elapsed().as_secs_f64()
    );
    let mut report = Vec::new();
    for opts in &all {
        let name = opts.msm_label();
        let clock = std::time::Instant::now();
        let mut fails = Failures::new();
        eprintln!("variant {name}: compiling the kernels");
        match CudaBackend::with_options(0, opts) {
            Ok(gpu) => {
                eprintln!("variant {name}: MSMs");
                check_msms(&gpu, &inp, &mut fails);
                eprintln!("variant {name}: partition");
                check_partition(&gpu, &inp.part, &mut fails);
                eprintln!("variant {name}: proof");
                check_proof(&gpu, &inp.proof, &mut fails);
            }
            Err(e) => fails.push(format!("backend: {e}")),
        }
        let verdict = if fails.is_empty() { "ok" } else { "FAILED" };
        eprintln!(
            "variant {name}: {verdict} in {:.1} s",
            clock.elapsed().as_secs_f64()
        );
        for f in &fails {
            eprintln!("  {name}: {f}");
        }
        report.extend(fails.into_iter().map(|f| format!("{name}: {f}")));
    }
    assert!(report.is_empty(), "variants failed:\n{}", report.join("\n"));
}
