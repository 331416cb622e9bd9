//! Helpers shared by the engine tests: one seeded key, circuits, a CPU config, proof checks
//! (each proof verifies, a changed input fails), waiting for the ledger to settle, a cache
//! folder of the binary's own, and whether a GPU is present (the CUDA tests skip without one).
#![allow(dead_code)]

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use baton::circuits::{KnownCircuit, Synthetic};
use baton::config::BackendChoice;
use baton::engine::EngineStatus;
use baton::{
    Config, Engine, EngineError, PreparedVerifyingKey, Proof, ProvingKey, Request, Scalar,
};
use ff::Field;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

pub const CONSTRAINTS: usize = 1 << 8;

/// Points baton's cache (`BATON_CACHE_DIR`) at a folder of this test binary's own under the
/// target's temp dir, emptied at the first call of the run, so that no recording or check
/// record of another binary or an earlier run is found. Call it before reading or recording
/// any key file.
pub fn own_cache() -> std::path::PathBuf {
    static DIR: OnceLock<std::path::PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("cache-{}", env!("CARGO_CRATE_NAME")));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("cache dir");
        std::env::set_var("BATON_CACHE_DIR", &d);
        d
    })
    .clone()
}

/// One key for every test (setup is the slowest part of a tiny proof).
pub fn key() -> Arc<ProvingKey> {
    static KEY: OnceLock<Arc<ProvingKey>> = OnceLock::new();
    KEY.get_or_init(|| {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        Arc::new(
            baton::generate_random_parameters(Synthetic::new(CONSTRAINTS, 0), &mut rng)
                .expect("setup"),
        )
    })
    .clone()
}

pub fn circuits(seeds: std::ops::Range<u64>) -> Vec<Synthetic> {
    seeds.map(|s| Synthetic::new(CONSTRAINTS, s)).collect()
}

pub fn config(
    budget_bytes: u64,
    workers: usize,
    slots: Option<usize>,
    retry_attempts: u32,
) -> Config {
    Config {
        budget_bytes: Some(budget_bytes),
        synthesis_workers: workers,
        slots,
        retry_attempts,
        backend: BackendChoice::Cpu,
        ..Config::default()
    }
}

/// Each proof verifies against its circuit's inputs and fails against a changed input.
pub fn check_proofs(pk: &ProvingKey, proofs: &[Proof], circuits: &[Synthetic]) {
    assert_eq!(proofs.len(), circuits.len(), "one proof per partition");
    let pvk = PreparedVerifyingKey::new(&pk.vk);
    for (i, (p, c)) in proofs.iter().zip(circuits).enumerate() {
        let inputs = c.public_inputs();
        baton::verify(&pvk, p, &inputs).unwrap_or_else(|e| panic!("proof {i}: {e}"));
        let mut wrong = inputs.clone();
        wrong[0] += Scalar::ONE;
        assert!(
            baton::verify(&pvk, p, &wrong).is_err(),
            "proof {i} verifies a wrong input"
        );
    }
}

/// Polls status until `done` holds, or panics after `timeout` with the last status.
pub fn wait_for(
    engine: &Engine,
    timeout: Duration,
    done: impl Fn(&EngineStatus) -> bool,
) -> EngineStatus {
    let until = Instant::now() + timeout;
    loop {
        let st = engine.status_blocking().expect("status");
        if done(&st) {
            return st;
        }
        assert!(Instant::now() < until, "timed out; last status {st:?}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Submits every request at once, one client thread each; the outcomes in request order.
pub fn prove_concurrently(
    engine: &Engine,
    pk: &Arc<ProvingKey>,
    requests: &[Vec<Synthetic>],
) -> Vec<Result<Vec<Proof>, EngineError>> {
    std::thread::scope(|s| {
        let handles: Vec<_> = requests
            .iter()
            .map(|cs| s.spawn(move || engine.prove_blocking(Request::new(pk.clone(), cs.clone()))))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("join"))
            .collect()
    })
}

/// Waits until every job has ended and the ledger reads zero.
pub fn wait_settled(engine: &Engine) -> EngineStatus {
    wait_for(engine, Duration::from_secs(10), |st| {
        st.ledger.charged_bytes == 0 && st.ledger.outstanding_grants == 0 && st.jobs.is_empty()
    })
}

pub fn metric(engine: &Engine, line: &str) -> bool {
    engine.metric_handles().render().lines().any(|l| l == line)
}

/// The `[gpu]` knobs the CUDA tests open their backends with: the defaults, or the variant
/// `BATON_TEST_GPU_VARIANT` names (`key=value` pairs joined by commas, as in `MSM_VARIANTS`), so
/// that a device call can run the whole suite under a candidate default.
#[cfg(feature = "cuda")]
#[allow(dead_code)]
pub fn test_gpu_options() -> baton::gpu::options::GpuOptions {
    use baton::gpu::options::{variant, GpuOptions};
    match std::env::var("BATON_TEST_GPU_VARIANT") {
        Ok(spec) => match variant(&GpuOptions::default(), &spec) {
            Ok(o) => {
                eprintln!("gpu knobs: {}", o.msm_label());
                o
            }
            Err(e) => panic!("BATON_TEST_GPU_VARIANT: {e}"),
        },
        Err(_) => GpuOptions::default(),
    }
}

/// Whether a CUDA device is present; without one the caller skips (with a note).
#[cfg(feature = "cuda")]
pub fn gpu_present() -> bool {
    // SAFETY: only probes whether libcuda can be opened.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        eprintln!("skipping: no CUDA driver");
        return false;
    }
    match cudarc::driver::CudaContext::device_count() {
        Ok(n) if n > 0 => true,
        other => {
            eprintln!("skipping: no CUDA device ({other:?})");
            false
        }
    }
}

/// `good` with C's ±1 coefficients swapped: the counts and densities a key checks are the same,
/// the rows are not (a stale or tampered recording that passes every structural check).
pub fn stale_copy(good: &baton::compiled::Recording) -> baton::compiled::Recording {
    use baton::compiled::{CoeffIndices, Recording, SparseMatrix};
    let flip = |i: u32| match i {
        0 => 1,
        1 => 0,
        k => k,
    };
    let [a, b, c] = good.matrices().clone();
    let flipped = match c.coeffs() {
        CoeffIndices::U8(v) => CoeffIndices::U8(v.iter().map(|&i| flip(i.into()) as u8).collect()),
        CoeffIndices::U16(v) => {
            CoeffIndices::U16(v.iter().map(|&i| flip(i.into()) as u16).collect())
        }
        CoeffIndices::U32(v) => CoeffIndices::U32(v.iter().map(|&i| flip(i)).collect()),
    };
    let shape = good.shape();
    let c = SparseMatrix::new(
        c.row_ptr().to_vec(),
        c.cols().to_vec(),
        flipped,
        shape.inputs + shape.aux,
        good.coeffs().len(),
    )
    .expect("same structure");
    Recording::from_parts(shape, good.coeffs().to_vec(), [a, b, c]).expect("same shape")
}

/// The device share of a partition computed on the CPU (tests' stand-ins for a device): H, the
/// G1 MSMs and, with `with_b_g2`, the B_G2 MSM.
pub fn cpu_partition_sums(
    pk: &ProvingKey,
    abc: &mut baton::groth16::prover::Abc,
    w: &baton::groth16::prover::Witness,
    with_b_g2: bool,
) -> baton::Result<baton::stages::partition::PartitionSums> {
    use baton::groth16::backend::CpuBackend;
    use baton::groth16::prover;
    let h = prover::compute_h(&CpuBackend, abc)?;
    let g1 = prover::g1_msms(&CpuBackend, pk, w, &h)?;
    let b_g2 = match with_b_g2 {
        true => Some(prover::b_g2_msm(&CpuBackend, pk, w)?),
        false => None,
    };
    Ok(baton::stages::partition::PartitionSums {
        g1,
        b_g2,
        times: Default::default(),
        peak_device_bytes: 0,
        streamed_sets: 0,
    })
}
