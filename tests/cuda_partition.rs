//! The device-resident partition against the CPU stages: H, the four G1 MSMs and B_G2 from one
//! `prove_partition` call equal `compute_h` + `g1_msms` + `b_g2_msm` on `CpuBackend`, at
//! 2^10..2^22 with PoRep-like witnesses and random densities, edge cases (zero and one
//! witnesses, empty and full densities, infinity and repeated bases), a/b/c handed already on
//! the device, the out-of-memory refusal that leaves a/b/c untouched, a key made resident
//! ahead of its partitions, and whole proofs through
//! the engine on the GPU that bellperson verifies. Without a GPU every test passes with a note.
#![cfg(feature = "cuda")]

mod support;

use support::{gpu_present, test_gpu_options};

use std::sync::OnceLock;

use baton::circuits::{KnownCircuit, Synthetic};
use baton::config::{BackendChoice, Bg2Device};
use baton::gpu::sample::{distinct_bases, g2_points, sample_abc, sample_witness, shaped_key};
use baton::gpu::{CudaBackend, GpuError};
use baton::groth16::backend::{Backend, CpuBackend};
use baton::groth16::prover::{self, Abc, Witness};
use baton::stages::partition::{AbcInput, PartitionProver, PartitionSums};
use baton::{Config, Engine, Error, ProvingKey, Request, Scalar};
use bellperson::groth16 as bp;
use blstrs::{Bls12, G1Affine, G2Affine};
use ff::Field;

fn gpu() -> Option<&'static CudaBackend> {
    static B: OnceLock<Option<CudaBackend>> = OnceLock::new();
    B.get_or_init(|| {
        gpu_present().then(|| match CudaBackend::with_options(0, &test_gpu_options()) {
            Ok(b) => b,
            Err(e) => panic!("a GPU is present but the backend failed to open: {e}"),
        })
    })
    .as_ref()
}

fn copy(abc: &Abc) -> Abc {
    Abc {
        a: abc.a.clone(),
        b: abc.b.clone(),
        c: abc.c.clone(),
    }
}

/// The CPU stages' results for the same partition.
fn cpu(pk: &ProvingKey, abc: &Abc, w: &Witness) -> PartitionSums {
    let mut abc = copy(abc);
    let h = prover::compute_h(&CpuBackend, &mut abc).expect("CPU H");
    let g1 = prover::g1_msms(&CpuBackend, pk, w, &h).expect("CPU G1");
    let g2 = prover::b_g2_msm(&CpuBackend, pk, w).expect("CPU G2");
    PartitionSums {
        g1,
        b_g2: Some(g2),
        times: Default::default(),
        peak_device_bytes: 0,
        streamed_sets: 0,
    }
}

fn same(what: &str, got: &PartitionSums, want: &PartitionSums) {
    let (g, w) = (&got.g1, &want.g1);
    assert_eq!(g.h, w.h, "{what}: H MSM");
    assert_eq!(g.l, w.l, "{what}: L MSM");
    assert_eq!(g.a, w.a, "{what}: A MSM");
    assert_eq!(g.b_g1, w.b_g1, "{what}: B_G1 MSM");
    assert_eq!(got.b_g2, want.b_g2, "{what}: B_G2 MSM");
}

/// Runs one partition on the device (host a/b/c) and checks it against the CPU; a/b/c must
/// come back through `abc_done` whole.
fn check(gpu: &CudaBackend, what: &str, pk: &ProvingKey, abc: Abc, w: &Witness) {
    let want = cpu(pk, &abc, w);
    let lens = (abc.a.len(), abc.b.len(), abc.c.len());
    let mut host = abc;
    let mut back = Vec::new();
    let got = gpu
        .prove_partition(pk, AbcInput::Host(&mut host), w, true, &mut |t| {
            back.push(t)
        })
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(back.len(), 1, "{what}: a/b/c handed back once");
    assert_eq!((back[0].a.len(), back[0].b.len(), back[0].c.len()), lens);
    same(what, &got, &want);
    assert!(
        got.peak_device_bytes > 0,
        "{what}: peak device memory recorded"
    );
}

fn points() -> (Vec<G1Affine>, Vec<G2Affine>) {
    (distinct_bases(4096, 11), g2_points(256, 12))
}

#[test]
fn partition_matches_cpu_from_2_10_to_2_22() {
    let Some(gpu) = gpu() else { return };
    let (g1, g2) = points();
    for log in [10u32, 12, 14, 16, 18, 20, 22] {
        let n = 1usize << log;
        let w = sample_witness(5, n / 2 + 17, 0.45, log as u64);
        let pk = shaped_key(n, &w, &g1, &g2);
        // Shorter than the domain (zero padding), as synthesis leaves it.
        let abc = sample_abc(n - n / 4, 100 + log as u64);
        check(gpu, &format!("2^{log}"), &pk, abc, &w);
        eprintln!("partition 2^{log}: ok");
    }
    assert_eq!(gpu.fallbacks(), 0);
}

/// The partition's MSMs over device scalars cut into pieces (`gpu.msm_pieces = 4`: H in three
/// uneven pieces of at least 2^20, L in two), under both bucket rules, against the CPU; the
/// pieces of one MSM share one bucket run. L's pieces start as the host witness uploads
/// piece by piece (each piece counted on the copy stream), H's are counted together.
#[test]
fn partition_in_pieces_matches_cpu() {
    if gpu().is_none() {
        return;
    }
    let (g1, g2) = points();
    let n = 1usize << 22;
    let w = sample_witness(5, n / 2 + 17, 0.45, 41);
    let pk = shaped_key(n, &w, &g1, &g2);
    let abc = sample_abc(n - 1000, 42);
    for buckets in ["shared", "own"] {
        let spec = format!("msm_pieces=4,msm_piece_buckets={buckets}");
        let opts = baton::gpu::options::variant(&test_gpu_options(), &spec).expect("variant");
        let gpu = CudaBackend::with_options(0, &opts).expect("backend in pieces");
        check(&gpu, &spec, &pk, copy(&abc), &w);
        assert_eq!(gpu.fallbacks(), 0, "{spec}");
    }
}

/// a, b, c and the witness page-locked in place (`register_host`): their uploads DMA straight
/// from them, L's pieces included (`msm_pieces = 4`), and the results equal the CPU's. A range
/// cannot be registered twice, and can be again once its registration drops.
#[test]
fn partition_from_registered_host_memory_matches_cpu() {
    if gpu().is_none() {
        return;
    }
    let (g1, g2) = points();
    let n = 1usize << 22;
    let w = sample_witness(5, n / 2 + 17, 0.45, 43);
    let pk = shaped_key(n, &w, &g1, &g2);
    let abc = sample_abc(n - 1000, 44);
    let want = cpu(&pk, &abc, &w);
    let opts = baton::gpu::options::variant(&test_gpu_options(), "msm_pieces=4").expect("variant");
    let gpu = CudaBackend::with_options(0, &opts).expect("backend in pieces");
    let mut host = copy(&abc);
    let mut back = Vec::new();
    // SAFETY: every registered vector is declared before `regs`, so it drops after it, and
    // none grows while registered (`abc_done` moves the vectors, not their memory).
    let regs = unsafe {
        [
            gpu.register_host(&host.a).expect("register a"),
            gpu.register_host(&host.b).expect("register b"),
            gpu.register_host(&host.c).expect("register c"),
            gpu.register_host(&w.aux).expect("register the witness"),
        ]
    };
    assert!(regs.iter().all(|r| r.bytes() >= 32 * (n / 2)));
    // SAFETY: as above; this one must fail (the range is registered).
    let twice = unsafe { gpu.register_host(&host.a[10..20]) };
    assert!(twice.is_err(), "a registered range registered again");
    let got = gpu
        .prove_partition(&pk, AbcInput::Host(&mut host), &w, true, &mut |t| {
            back.push(t)
        })
        .expect("partition from registered memory");
    assert_eq!(back.len(), 1, "a/b/c handed back once");
    same("registered host memory", &got, &want);
    assert_eq!(gpu.fallbacks(), 0);
    drop(regs);
    // SAFETY: `back` outlives `again`.
    let again = unsafe { gpu.register_host(&back[0].a) };
    assert!(
        again.is_ok(),
        "registered again after the registration dropped"
    );
}

#[test]
fn partition_edge_cases() {
    let Some(gpu) = gpu() else { return };
    let (mut g1, g2) = points();
    g1[3] = G1Affine::default();
    let n = 1usize << 13;
    let m = n - 100;
    let base = sample_witness(3, m, 0.45, 7);
    let pk = shaped_key(n, &base, &g1, &g2);
    let with = |aux: Vec<Scalar>| Witness {
        inputs: base.inputs.clone(),
        aux,
        packed: None,
        a_aux_density: base.a_aux_density.clone(),
        b_input_density: base.b_input_density.clone(),
        b_aux_density: base.b_aux_density.clone(),
    };
    check(
        gpu,
        "zero witness",
        &pk,
        sample_abc(n, 1),
        &with(vec![Scalar::ZERO; m]),
    );
    check(
        gpu,
        "one witness",
        &pk,
        sample_abc(n, 2),
        &with(vec![Scalar::ONE; m]),
    );
    let x = Scalar::random(&mut rand::thread_rng());
    check(
        gpu,
        "repeated scalar",
        &pk,
        sample_abc(n, 3),
        &with(vec![x; m]),
    );
    let zero = Abc {
        a: vec![Scalar::ZERO; n],
        b: vec![Scalar::ZERO; n],
        c: vec![Scalar::ZERO; n],
    };
    check(gpu, "zero a/b/c", &pk, zero, &base);
    for p in [0.0, 1.0] {
        let w = sample_witness(3, m, p, 8);
        let pk = shaped_key(n, &w, &g1, &g2);
        check(
            gpu,
            &format!("densities p = {p}"),
            &pk,
            sample_abc(n, 4),
            &w,
        );
    }
}

#[test]
fn device_abc_matches_host_abc_and_oom_leaves_abc() {
    let Some(gpu) = gpu() else { return };
    let (g1, g2) = points();
    let n = 1usize << 14;
    let w = sample_witness(4, n / 2, 0.45, 9);
    let pk = shaped_key(n, &w, &g1, &g2);
    let abc = sample_abc(n, 5);
    let want = cpu(&pk, &abc, &w);
    let dev = gpu.upload_abc(&abc).expect("upload a/b/c");
    assert_eq!(dev.log_n(), 14);
    let got = gpu
        .prove_partition(&pk, AbcInput::Device(Box::new(dev)), &w, true, &mut |_| {
            panic!("device a/b/c are not handed back")
        })
        .expect("device input");
    same("device a/b/c", &got, &want);

    let own = CudaBackend::with_options(0, &test_gpu_options()).expect("second backend");
    own.set_memory_cap_bytes(Some(1 << 20));
    let mut host = copy(&abc);
    let mut called = false;
    let r = own.prove_partition(&pk, AbcInput::Host(&mut host), &w, true, &mut |_| {
        called = true
    });
    match r {
        Err(Error::Device(e)) => match e.downcast_ref::<GpuError>() {
            Some(GpuError::OutOfMemory {
                need_bytes,
                free_bytes,
                ..
            }) => assert!(need_bytes > free_bytes, "{need_bytes} vs {free_bytes}"),
            other => panic!("expected out of memory, got {other:?}"),
        },
        other => panic!("expected out of memory, got {:?}", other.map(|_| ())),
    }
    assert!(!called, "a/b/c were not taken");
    assert!(host.a == abc.a && host.c == abc.c, "a/b/c untouched");
    // The wrong shape is refused, not computed.
    let short = sample_witness(4, n / 2 - 1, 0.45, 9);
    let r = gpu.prove_partition(&pk, AbcInput::Host(&mut host), &short, true, &mut |_| {});
    assert!(
        matches!(r, Err(Error::KeyMismatch { .. })),
        "{:?}",
        r.map(|_| ())
    );
}

/// A key made resident ahead of its partitions (`warm`) is what they read: the whole queries,
/// uploaded once, so the partition after it equals the CPU and uploads nothing more, and a
/// second warm-up uploads nothing. A second key that would fit only by evicting the first is
/// not made resident, and the first stays.
#[test]
fn a_key_warmed_ahead_serves_its_partitions() {
    if gpu().is_none() {
        return;
    }
    let own = CudaBackend::with_options(0, &test_gpu_options()).expect("backend");
    let (g1, g2) = points();
    let n = 1usize << 16;
    let w = sample_witness(5, n / 2 + 17, 0.45, 77);
    let pk = shaped_key(n, &w, &g1, &g2);
    let up = own.warm(&pk, true).expect("warm");
    let g1_points = pk.h.len() + pk.l.len() + pk.a.len() + pk.b_g1.len();
    assert_eq!(up, (96 * g1_points + 192 * pk.b_g2.len()) as u64);
    assert_eq!(own.resident_key_bytes(pk.id()), up);
    assert_eq!(own.warm(&pk, true).expect("warm again"), 0);
    check(&own, "warmed key", &pk, sample_abc(n - 3, 78), &w);
    assert_eq!(
        own.resident_key_bytes(pk.id()),
        up,
        "the partition read the warmed sets"
    );
    let w2 = sample_witness(5, n / 2 + 9, 0.45, 79);
    let pk2 = shaped_key(n, &w2, &g1, &g2);
    own.set_memory_cap_bytes(Some(own.resident_bytes() + (1 << 20)));
    assert_eq!(own.warm(&pk2, true).expect("no room"), 0);
    assert_eq!(own.resident_key_bytes(pk2.id()), 0);
    assert_eq!(own.resident_key_bytes(pk.id()), up, "nothing evicted");
    own.set_memory_cap_bytes(None);
    assert_eq!(own.fallbacks(), 0);
}

fn bp_check(pk: &ProvingKey, proofs: &[baton::Proof], circuits: &[Synthetic]) {
    let mut bytes = Vec::new();
    pk.write(&mut bytes).expect("write key");
    let params = bp::Parameters::<Bls12>::read(&bytes[..], false).expect("bellperson reads");
    let pvk = bp::prepare_verifying_key(&params.vk);
    for (p, c) in proofs.iter().zip(circuits) {
        let proof = bp::Proof::read(&p.to_bytes()[..]).expect("proof bytes");
        let inputs = c.public_inputs();
        assert!(bp::verify_proof(&pvk, &proof, &inputs).expect("verify"));
        let mut wrong = inputs.clone();
        wrong[0] += Scalar::ONE;
        assert!(!bp::verify_proof(&pvk, &proof, &wrong).expect("verify"));
    }
}

#[test]
fn engine_proofs_on_the_device_verify_with_bellperson() {
    if gpu().is_none() {
        return;
    }
    let size = 1 << 12;
    let mut rng = rand::thread_rng();
    let pk = std::sync::Arc::new(
        baton::generate_random_parameters(Synthetic::new(size, 0), &mut rng).expect("setup"),
    );
    for bg2 in [Bg2Device::Gpu, Bg2Device::Cpu] {
        let cfg = Config {
            budget_bytes: Some(4 << 30),
            synthesis_workers: 2,
            backend: BackendChoice::Cuda,
            bg2_device: bg2,
            gpu: test_gpu_options(),
            ..Config::default()
        };
        let engine = Engine::start(cfg).expect("engine on the GPU");
        // Pinned: the key keeps its recording between the two jobs.
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        rt.block_on(engine.pin_key(pk.clone())).expect("pinned");
        let circuits: Vec<Synthetic> = (0..4).map(|s| Synthetic::new(size, 40 + s)).collect();
        let proofs = engine
            .prove_blocking(Request::new(pk.clone(), circuits.clone()))
            .expect("proofs");
        bp_check(&pk, &proofs, &circuits);
        // A job admitted once the circuit is recorded sends its partitions to the device as a
        // witness packed as bits, expanded there: never on the host.
        let more: Vec<Synthetic> = (0..3).map(|s| Synthetic::new(size, 50 + s)).collect();
        let proofs = engine
            .prove_blocking(Request::new(pk.clone(), more.clone()))
            .expect("proofs of the second job");
        bp_check(&pk, &proofs, &more);
        let steps = engine.metric_handles().step_means();
        assert!(steps.iter().any(|(s, _)| *s == "device_abc"), "{steps:?}");
        assert!(steps.iter().all(|(s, _)| *s != "expand"), "{steps:?}");
        engine.shutdown_blocking();
        eprintln!("engine on the device, B_G2 on {bg2:?}: 7 proofs verified");
    }
}
