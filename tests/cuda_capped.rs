//! The device under `gpu.memory_limit` (issue 38) against the CPU: MSMs whose bases do not fit
//! stream from the host in pieces (G1 and G2, random and PoRep-like scalars, loose and
//! key-tagged bases), H runs in two buffers where three do not fit, a partition whose key
//! cannot be resident streams the rest of its bases within its one device call (random and
//! PoRep-like witnesses), one whose own buffers do not fit takes the per-call path with
//! nothing on the CPU, the pool's peak stays under the limit, engine proofs under a limit
//! verify (a wrong input fails), a limit below a partition's minimum is refused by name while
//! another job proves, a request that no eviction could serve evicts nothing, and a
//! partition from device a/b/c asks no room for them twice, a partition with every set
//! streamed equals the CPU's, and `gpu.capped_recording` decides whether a partition from
//! device a/b/c evicts its recording to keep its sets or spares it. Without a
//! GPU every test passes with a note. The tests run one at a time (the pool's peak is the
//! device's).
#![cfg(feature = "cuda")]

mod support;

use support::{gpu_present, test_gpu_options};

use std::sync::{Arc, Mutex, MutexGuard};

use baton::circuits::{KnownCircuit, Synthetic};
use baton::config::{BackendChoice, Bg2Device};
use baton::gpu::options::GpuOptions;
use baton::gpu::plan;
use baton::gpu::sample::{
    distinct_bases, g2_points, porep_scalars, sample_abc, sample_witness, shaped_key,
};
use baton::gpu::CudaBackend;
use baton::groth16::backend::{Backend, Bases, CpuBackend, Query};
use baton::groth16::domain::Domain;
use baton::groth16::prover;
use baton::{Config, Engine, Request, Scalar};
use ff::Field;
use rand::SeedableRng;

/// One test at a time: the pool's high-water mark is the device's.
fn serial() -> Option<MutexGuard<'static, ()>> {
    static LOCK: Mutex<()> = Mutex::new(());
    gpu_present().then(|| LOCK.lock().unwrap_or_else(|p| p.into_inner()))
}

fn backend(limit: Option<u64>) -> CudaBackend {
    backend_with(GpuOptions {
        memory_limit: limit,
        ..test_gpu_options()
    })
}

fn backend_with(opts: GpuOptions) -> CudaBackend {
    match CudaBackend::with_options(0, &opts) {
        Ok(b) => b,
        Err(e) => panic!("a GPU is present but the backend failed to open: {e}"),
    }
}

fn random_vec(n: usize, seed: u64) -> Vec<Scalar> {
    let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| Scalar::random(&mut r)).collect()
}

/// The pool's peak since `reset`, which must stay under `limit`.
fn peak_within(gpu: &CudaBackend, limit: u64, what: &str) {
    let peak = gpu.peak_device_bytes().expect("a memory pool");
    assert!(
        peak <= limit,
        "{what}: peak {} MiB above the limit {} MiB",
        peak >> 20,
        limit >> 20
    );
    eprintln!("{what}: peak {} MiB of {} MiB", peak >> 20, limit >> 20);
}

/// For a G1 MSM over `n` bases: the room for streaming them in pieces of a quarter (with
/// 8 MiB to spare), and the bytes they take resident whole with their scratch.
fn quarter_room_and_whole(n: usize) -> (u64, u64) {
    use baton::gpu::host::G1;
    let rule = GpuOptions::default().window_rule();
    let room = plan::streamed_bytes::<G1>(n / 4, rule, plan::Streams::PointsAndScalars) + (8 << 20);
    (room, 96 * n as u64 + plan::msm_scratch_bound::<G1>(n, rule))
}

#[test]
fn streamed_msms_match_the_cpu_under_a_limit() {
    let Some(_one) = serial() else { return };
    let n = 1usize << 20;
    // Room for pieces of a quarter, not for the bases whole with their scratch.
    let (limit, whole) = quarter_room_and_whole(n);
    assert!(
        limit < whole,
        "the limit must keep the bases from being resident"
    );
    let gpu = backend(Some(limit));
    gpu.reset_peak_device_bytes().expect("reset peak");
    let all = distinct_bases(n + 5, 21);
    let mut porep = porep_scalars(n + 5, 22);
    porep[3] = -Scalar::ONE;
    let dense = random_vec(n + 5, 23);
    let keyed = Bases {
        key_id: u64::MAX - 7,
        query: Query::H,
        offset: 0,
        points: &all[..],
    };
    for (what, bases) in [("loose", Bases::loose(&all[..])), ("keyed", keyed)] {
        for (kind, s) in [("dense", &dense), ("porep", &porep)] {
            let want = CpuBackend.msm_g1(bases, s, None).expect("CPU");
            let got = gpu.msm_g1(bases, s, None).expect("GPU");
            assert_eq!(got, want, "G1 {what} {kind}: streamed MSM differs");
        }
    }
    assert_eq!(gpu.resident_bytes(), 0, "nothing made resident");
    let g2 = g2_points(n / 4, 24);
    let s2 = porep_scalars(n / 4, 25);
    let want = CpuBackend
        .msm_g2(Bases::loose(&g2), &s2, None)
        .expect("CPU");
    let got = gpu.msm_g2(Bases::loose(&g2), &s2, None).expect("GPU");
    assert_eq!(got, want, "G2: streamed MSM differs");
    assert_eq!(gpu.fallbacks(), 0, "nothing ran on the CPU");
    peak_within(&gpu, limit, "streamed MSMs");
}

/// A request that evicting every other set could not serve evicts nothing: a loose MSM far
/// larger than the limit streams, and the key's set made resident before it stays (before,
/// `make_room` gave that set up and then failed anyway, so the next call uploaded it again).
#[test]
fn a_request_eviction_cannot_serve_evicts_nothing() {
    let Some(_one) = serial() else { return };
    let gpu = backend(None);
    let small = distinct_bases(1 << 14, 31);
    let keyed = Bases {
        key_id: u64::MAX - 9,
        query: Query::L,
        offset: 0,
        points: &small[..],
    };
    let s = porep_scalars(small.len(), 32);
    let want = CpuBackend.msm_g1(keyed, &s, None).expect("CPU");
    assert_eq!(gpu.msm_g1(keyed, &s, None).expect("GPU"), want, "keyed MSM");
    assert_eq!(gpu.resident_base_sets(), 1, "the keyed set is resident");
    let kept = gpu.resident_bytes();
    let n = 1usize << 20;
    let (room, whole) = quarter_room_and_whole(n);
    assert!(
        room + kept < whole,
        "even with the keyed set evicted the loose bases must not fit"
    );
    gpu.set_memory_cap_bytes(Some(kept + room));
    let all = distinct_bases(n, 33);
    let dense = random_vec(n, 34);
    let want = CpuBackend
        .msm_g1(Bases::loose(&all), &dense, None)
        .expect("CPU");
    let got = gpu.msm_g1(Bases::loose(&all), &dense, None).expect("GPU");
    assert_eq!(got, want, "streamed MSM differs");
    assert_eq!(gpu.resident_base_sets(), 1, "the keyed set was evicted");
    assert_eq!(gpu.resident_bytes(), kept, "resident bytes changed");
    assert_eq!(gpu.fallbacks(), 0, "nothing ran on the CPU");
}

#[test]
fn h_in_two_buffers_matches_the_cpu() {
    let Some(_one) = serial() else { return };
    for log in [16u32, 20] {
        let n = 1u64 << log;
        // Twiddles, tables and two buffers fit; a third does not.
        let limit = 3 * 32 * n + plan::H_TABLES_BYTES + (1 << 20);
        let gpu = backend(Some(limit));
        gpu.reset_peak_device_bytes().expect("reset peak");
        let d = Domain::for_size(n as usize).expect("domain");
        let m = n as usize - 5;
        for (a, b) in [
            (random_vec(m, 31), random_vec(m, 32)),
            (porep_scalars(m, 33), porep_scalars(m, 34)),
        ] {
            let c: Vec<Scalar> = a.iter().zip(&b).map(|(x, y)| x * y + Scalar::ONE).collect();
            let (mut ca, mut cb, mut cc) = (a.clone(), b.clone(), c.clone());
            CpuBackend
                .compute_h(&d, &mut ca, &mut cb, &mut cc)
                .expect("CPU H");
            let (mut ga, mut gb, mut gc) = (a, b, c);
            gpu.compute_h(&d, &mut ga, &mut gb, &mut gc).expect("GPU H");
            assert!(ga == ca, "2^{log}: H in two buffers differs from the CPU");
        }
        assert_eq!(gpu.fallbacks(), 0, "2^{log}: H ran on the device");
        peak_within(&gpu, limit, &format!("H 2^{log}"));
    }
}

/// The CPU's G1 sums and B_G2 of a partition.
fn cpu_partition(
    pk: &baton::ProvingKey,
    abc: &prover::Abc,
    w: &prover::Witness,
) -> (prover::G1Sums, blstrs::G2Projective) {
    let mut abc = copy_abc(abc);
    let h = prover::compute_h(&CpuBackend, &mut abc).expect("CPU H");
    let g1 = prover::g1_msms(&CpuBackend, pk, w, &h).expect("CPU G1");
    (g1, prover::b_g2_msm(&CpuBackend, pk, w).expect("CPU G2"))
}

fn copy_abc(abc: &prover::Abc) -> prover::Abc {
    prover::Abc {
        a: abc.a.clone(),
        b: abc.b.clone(),
        c: abc.c.clone(),
    }
}

fn sums_of(g1: &prover::G1Sums) -> [blstrs::G1Projective; 4] {
    [g1.h, g1.l, g1.a, g1.b_g1]
}

/// A limit with room for the twiddles and H tables, the call's own buffers for witness `w`
/// (lean pieces), every base set but H's, and the smallest streamed pieces of H with a little
/// slack: the call fits, and H's bases do not where they are larger than those pieces and the
/// slack ([`h_streams`]).
fn one_call_limit(pk: &baton::ProvingKey, w: &prover::Witness) -> u64 {
    let call = backend(None)
        .partition_call_bytes(pk, Some(w), [true; 5])
        .expect("the witness fits the key");
    let rule = GpuOptions::default().window_rule();
    let h_least =
        plan::streamed_minimum::<baton::gpu::host::G1>(pk.h.len(), rule, plan::Streams::Points);
    let others = set_bytes(pk, false);
    let log_n = (pk.h.len() + 1).trailing_zeros();
    twiddle_bytes(log_n) + (4 << 20) + call + others + h_least + (24 << 20)
}

/// Device bytes of the twiddles for 2^log_n in the layout the test knobs pick under a limit
/// of these tests' size (below 48 GiB), as the capped backend counts them.
fn twiddle_bytes(log_n: u32) -> u64 {
    let split = test_gpu_options().ntt_twiddles.split(1 << 30);
    plan::twiddle_bytes(log_n, plan::twiddle_split(log_n, split))
}

/// Host bytes of `pk`'s base sets (L, A, B_G1, B_G2, and H's with `with_h`): what they take
/// resident.
fn set_bytes(pk: &baton::ProvingKey, with_h: bool) -> u64 {
    let h = if with_h { size_of_val(&pk.h[..]) } else { 0 };
    (h + size_of_val(&pk.l[..])
        + size_of_val(&pk.a[..])
        + size_of_val(&pk.b_g1[..])
        + size_of_val(&pk.b_g2[..])) as u64
}

/// Whether H's bases are larger than the room [`one_call_limit`] leaves them.
fn h_streams(pk: &baton::ProvingKey) -> bool {
    let rule = GpuOptions::default().window_rule();
    let h_least =
        plan::streamed_minimum::<baton::gpu::host::G1>(pk.h.len(), rule, plan::Streams::Points);
    std::mem::size_of_val(&pk.h[..]) as u64 > h_least + (32 << 20)
}

#[test]
fn a_partition_whose_key_does_not_fit_streams_its_bases_in_one_device_call() {
    let Some(_one) = serial() else { return };
    use baton::stages::partition::{AbcInput, PartitionProver};
    let n = 1usize << 21;
    // Random private variables, then PoRep-like ones (most 0 or 1) of the same shape.
    let random = sample_witness(4, n / 2 + 11, 0.45, 51);
    let mut porep = sample_witness(4, n / 2 + 11, 0.45, 51);
    porep.aux = porep_scalars(porep.aux.len(), 53);
    let pk = shaped_key(n, &random, &distinct_bases(4096, 54), &g2_points(256, 55));
    assert!(h_streams(&pk), "H's bases must not fit beside the call");
    let limit = one_call_limit(&pk, &random);
    let gpu = backend(Some(limit));
    gpu.reset_peak_device_bytes().expect("reset peak");
    for (i, w) in [&random, &porep, &random].into_iter().enumerate() {
        let abc = sample_abc(n - 9, 56 + i as u64);
        let cpu = cpu_partition(&pk, &abc, w);
        let mut host = copy_abc(&abc);
        let before = gpu.uploaded_bytes();
        let s = gpu
            .prove_partition(&pk, AbcInput::Host(&mut host), w, true, &mut |_| {})
            .unwrap_or_else(|e| panic!("partition {i} under {} MiB: {e}", limit >> 20));
        let moved = gpu.uploaded_bytes() - before;
        assert!(s.streamed_sets > 0, "partition {i}: some bases streamed");
        assert_eq!(sums_of(&s.g1), sums_of(&cpu.0), "partition {i}: G1 sums");
        assert_eq!(s.b_g2, Some(cpu.1), "partition {i}: B_G2");
        // a, b, c and the witness are well under the bytes moved: bases streamed, also once
        // whatever fits is resident (the second and third partitions).
        let own = 32 * (3 * n + w.aux.len()) as u64;
        assert!(
            moved > own + (16 << 20),
            "partition {i}: {moved} bytes moved, {own} of them a/b/c and witness"
        );
        assert!(
            gpu.resident_bytes() < pk.heap_bytes(),
            "the key is not resident whole"
        );
    }
    assert_eq!(gpu.fallbacks(), 0, "nothing ran on the CPU");
    peak_within(&gpu, limit, "one-call partition 2^21 with streamed bases");
}

/// a, b, c evaluated on the device are not asked for twice: under a limit that holds the
/// twiddles, every base set, a, b, c and the rest of the call's own buffers (with a little
/// slack, far less than a, b, c), a partition from device a/b/c keeps every set resident and
/// equals the CPU. Asking room for a, b, c again (the call's whole peak beside those already
/// allocated) streamed a set that fits (BENCHMARKS.md, "H100 — 32 and 64 GiB PoRep C2
/// through the engine": L on 80 GB).
/// A partition of n constraints whose sets all stream under a limit of its lean call and
/// `room`: (random and PoRep-like witnesses, seeds from `seed`; the key; the call's bytes; a
/// room of the largest of the smallest streamed pieces of every set with 24 MiB over).
fn all_streamed(
    n: usize,
    seed: u64,
) -> (
    prover::Witness,
    prover::Witness,
    baton::ProvingKey,
    u64,
    u64,
) {
    use baton::gpu::host::{G1, G2};
    let random = sample_witness(4, n / 2 + 11, 0.45, seed);
    let mut porep = sample_witness(4, n / 2 + 11, 0.45, seed);
    porep.aux = porep_scalars(porep.aux.len(), seed + 2);
    let pk = shaped_key(
        n,
        &random,
        &distinct_bases(4096, seed + 3),
        &g2_points(256, seed + 4),
    );
    let call = backend(None)
        .partition_call_bytes(&pk, Some(&random), [true; 5])
        .expect("the witness fits the key");
    let rule = GpuOptions::default().window_rule();
    let points = plan::Streams::Points;
    let least = [
        plan::streamed_minimum::<G1>(pk.h.len(), rule, points),
        plan::streamed_minimum::<G1>(pk.l.len(), rule, points),
        plan::streamed_minimum::<G1>(pk.a.len(), rule, points),
        plan::streamed_minimum::<G1>(pk.b_g1.len(), rule, points),
        plan::streamed_minimum::<G2>(pk.b_g2.len(), rule, points),
    ]
    .into_iter()
    .max()
    .unwrap_or(0);
    // Room for the least streamed pieces and no more: every set together must not fit in it
    // (else the lean call keeps them all resident, as three times the least did on an H100).
    (random, porep, pk, call, least + (24 << 20))
}

/// A limit with room for the call (lean pieces) and a streaming room of the largest of the
/// smallest streamed pieces of H and of the witness's MSMs (24 MiB over), below the sets'
/// bytes together and far below the room a set needs beside the call to stay resident
/// (the call and [`plan::STREAM_ROOM`]): every set streams in the one device
/// call, B_G2's G2 pieces among them, with H computed first (the lean cut) and a, b, c sent
/// to the coset as each arrives. Random and PoRep-like witnesses equal the CPU, and the peak
/// stays under the limit.
#[test]
fn every_set_streamed_in_one_call_matches_the_cpu() {
    let Some(_one) = serial() else { return };
    use baton::stages::partition::{AbcInput, PartitionProver};
    let n = 1usize << 21;
    let (random, porep, pk, call, room) = all_streamed(n, 71);
    assert!(
        room < plan::STREAM_ROOM && room < set_bytes(&pk, true),
        "no set may stay resident beside the call's room ({} MiB, sets {} MiB)",
        room >> 20,
        set_bytes(&pk, true) >> 20
    );
    let limit = twiddle_bytes(21) + (4 << 20) + call + room;
    let gpu = backend(Some(limit));
    gpu.reset_peak_device_bytes().expect("reset peak");
    for (i, w) in [&random, &porep].into_iter().enumerate() {
        let abc = sample_abc(n - 9, 76 + i as u64);
        let cpu = cpu_partition(&pk, &abc, w);
        let mut host = copy_abc(&abc);
        let s = gpu
            .prove_partition(&pk, AbcInput::Host(&mut host), w, true, &mut |_| {})
            .unwrap_or_else(|e| panic!("partition {i} under {} MiB: {e}", limit >> 20));
        assert_eq!(s.streamed_sets, 5, "partition {i}: every set streamed");
        assert_eq!(sums_of(&s.g1), sums_of(&cpu.0), "partition {i}: G1 sums");
        assert_eq!(s.b_g2, Some(cpu.1), "partition {i}: B_G2");
    }
    assert_eq!(gpu.fallbacks(), 0, "nothing ran on the CPU");
    peak_within(
        &gpu,
        limit,
        "partition 2^21 with H streamed between the witness's pieces",
    );
}

/// `gpu.experimental.capped_h_beside`: under a limit with room for the lean call and two
/// rooms of the smallest streamed pieces (every set streams), H's MSM runs on the twin's
/// streams beside the witness's MSMs; random and PoRep-like witnesses equal the CPU and the
/// peak stays under the limit. With room for one only, H's MSM follows the witness's.
#[test]
fn h_beside_the_witness_msms_matches_the_cpu_within_the_limit() {
    let Some(_one) = serial() else { return };
    use baton::stages::partition::{AbcInput, PartitionProver};
    let n = 1usize << 21;
    let (random, porep, pk, call, room) = all_streamed(n, 91);
    let base = twiddle_bytes(21) + (4 << 20) + call;
    for (rooms, beside) in [(2, 2), (1, 0)] {
        let limit = base + rooms * room;
        let gpu = backend_with(GpuOptions {
            memory_limit: Some(limit),
            capped_h_beside: baton::gpu::options::CappedHBeside::On,
            ..test_gpu_options()
        });
        gpu.reset_peak_device_bytes().expect("reset peak");
        for (i, w) in [&random, &porep].into_iter().enumerate() {
            let abc = sample_abc(n - 9, 96 + i as u64);
            let cpu = cpu_partition(&pk, &abc, w);
            let mut host = copy_abc(&abc);
            let s = gpu
                .prove_partition(&pk, AbcInput::Host(&mut host), w, true, &mut |_| {})
                .unwrap_or_else(|e| panic!("partition {i} under {} MiB: {e}", limit >> 20));
            assert_eq!(
                s.streamed_sets, 5,
                "{rooms} rooms, partition {i}: every set streamed"
            );
            assert_eq!(
                sums_of(&s.g1),
                sums_of(&cpu.0),
                "{rooms} rooms, partition {i}: G1"
            );
            assert_eq!(s.b_g2, Some(cpu.1), "{rooms} rooms, partition {i}: B_G2");
        }
        assert_eq!(
            gpu.h_beside_calls(),
            beside,
            "{rooms} rooms: calls with H's MSM beside the witness's"
        );
        assert_eq!(gpu.fallbacks(), 0, "nothing ran on the CPU");
        peak_within(
            &gpu,
            limit,
            "partition 2^21 with H's MSM beside the witness's",
        );
    }
}

#[test]
fn a_partition_from_device_abc_asks_no_room_for_them_twice() {
    let Some(_one) = serial() else { return };
    use baton::stages::partition::{AbcInput, PartitionProver};
    let n = 1usize << 20;
    let w = sample_witness(4, n / 2 + 11, 0.45, 61);
    let pk = shaped_key(n, &w, &distinct_bases(4096, 62), &g2_points(256, 63));
    let call = backend(None)
        .partition_call_bytes(&pk, Some(&w), [true; 5])
        .expect("the witness fits the key");
    let abc_bytes = 3 * 32 * n as u64;
    let bases = set_bytes(&pk, true);
    let slack = 24u64 << 20;
    assert!(slack < abc_bytes / 2, "the slack must not hide a, b, c");
    // Twiddles (in the layout a limit this small picks) and H tables, every set, then the
    // call's peak (a, b, c among it).
    let limit = twiddle_bytes(20) + (4 << 20) + bases + call + slack;
    let gpu = backend(Some(limit));
    gpu.reset_peak_device_bytes().expect("reset peak");
    for i in 0..2u64 {
        let abc = sample_abc(n - 9, 64 + i);
        let cpu = cpu_partition(&pk, &abc, &w);
        let dev = gpu.upload_abc(&abc).expect("a, b, c fit under the limit");
        let s = gpu
            .prove_partition(&pk, AbcInput::Device(Box::new(dev)), &w, true, &mut |_| {
                panic!("device a/b/c are not handed back")
            })
            .unwrap_or_else(|e| panic!("partition {i} under {} MiB: {e}", limit >> 20));
        assert_eq!(sums_of(&s.g1), sums_of(&cpu.0), "partition {i}: G1 sums");
        assert_eq!(s.b_g2, Some(cpu.1), "partition {i}: B_G2");
        assert_eq!(s.streamed_sets, 0, "partition {i}: every set resident");
    }
    assert_eq!(
        gpu.resident_key_bytes(pk.id()),
        bases,
        "the whole key stays"
    );
    assert_eq!(gpu.fallbacks(), 0, "nothing ran on the CPU");
    peak_within(&gpu, limit, "partition 2^20 from device a/b/c");
}

/// `gpu.capped_recording` under a limit where every base set fits beside a partition from
/// device a/b/c only with the recording those a, b, c came from evicted: "evict" gives the
/// recording up and keeps the sets, "spare" (the default) keeps it and streams them, so that
/// the next partition's a, b, c need no upload of it (BENCHMARKS.md, "H200 — 32 GiB PoRep C2
/// through the engine"). Each partition equals the CPU's under either, and the peak stays
/// under the limit.
#[test]
fn capped_recording_spare_keeps_device_abc_recording_and_evict_gives_it_up() {
    let Some(_one) = serial() else { return };
    use baton::compiled::{self, WitnessCs};
    use baton::gpu::options::CappedRecording;
    use baton::stages::partition::{AbcInput, PartitionProver};
    let size = 1usize << 22;
    let (rec, _, _) = compiled::record(Synthetic::new(size, 2)).expect("record");
    let ws: Vec<prover::Witness> = [3u64, 4]
        .into_iter()
        .map(|seed| {
            let cs =
                WitnessCs::synthesize(Synthetic::new(size, seed), rec.shape()).expect("synthesize");
            rec.witness(cs.inputs, cs.aux)
        })
        .collect();
    let n = rec.shape().domain_size();
    let pk = shaped_key(n, &ws[0], &distinct_bases(4096, 91), &g2_points(256, 92));
    rec.check_key(&pk)
        .expect("the key has the recording's shape");
    let cpu: Vec<_> = ws
        .iter()
        .map(|w| {
            let abc = rec.evaluate(&w.inputs, &w.aux).expect("CPU a/b/c");
            cpu_partition(&pk, &abc, w)
        })
        .collect();
    // In use when a partition from device a/b/c asks for room (the recording, a, b, c and the
    // witness), and the recording alone, on an unlimited backend.
    let (in_use, recording) = {
        let probe = backend(None);
        let abc = probe
            .evaluate_abc(&rec, &ws[0].inputs, ws[0].aux_scalars())
            .expect("device a/b/c");
        probe.reset_peak_device_bytes().expect("streams idle");
        let r = (probe.device_bytes(), probe.resident_bytes());
        drop(abc);
        r
    };
    let call = backend(None)
        .partition_call_bytes(&pk, Some(&ws[0]), [true; 5])
        .expect("the witness fits the key")
        .saturating_sub(3 * 32 * n as u64);
    assert!(
        recording / 2 > 64 << 20,
        "the recording ({} MiB) must outweigh the counts' slack",
        recording >> 20
    );
    // Every set beside the call, short by half the recording: they fit only with it evicted.
    let limit =
        twiddle_bytes(n.trailing_zeros()) + (4 << 20) + in_use + set_bytes(&pk, true) + call
            - recording / 2;
    for rule in [CappedRecording::Evict, CappedRecording::Spare] {
        let gpu = backend_with(GpuOptions {
            memory_limit: Some(limit),
            capped_recording: rule,
            ..test_gpu_options()
        });
        gpu.reset_peak_device_bytes().expect("reset peak");
        for (i, (w, cpu)) in ws.iter().zip(&cpu).enumerate() {
            let dev = gpu
                .evaluate_abc(&rec, &w.inputs, w.aux_scalars())
                .unwrap_or_else(|e| panic!("{rule:?}, partition {i}: device a/b/c: {e}"));
            let s = gpu
                .prove_partition(&pk, AbcInput::Device(Box::new(dev)), w, true, &mut |_| {
                    panic!("device a/b/c are not handed back")
                })
                .unwrap_or_else(|e| {
                    panic!("{rule:?}, partition {i} under {} MiB: {e}", limit >> 20)
                });
            assert_eq!(
                sums_of(&s.g1),
                sums_of(&cpu.0),
                "{rule:?}, partition {i}: G1"
            );
            assert_eq!(s.b_g2, Some(cpu.1), "{rule:?}, partition {i}: B_G2");
            let kept = gpu.resident_recordings();
            match rule {
                CappedRecording::Evict => assert_eq!(
                    (kept, s.streamed_sets),
                    (0, 0),
                    "evict, partition {i}: (recordings resident, sets streamed)"
                ),
                CappedRecording::Spare => {
                    assert_eq!(kept, 1, "spare, partition {i}: the recording stays");
                    assert!(s.streamed_sets > 0, "spare, partition {i}: a set streams");
                }
            }
        }
        assert_eq!(gpu.fallbacks(), 0, "{rule:?}: nothing ran on the CPU");
        peak_within(
            &gpu,
            limit,
            &format!("{rule:?}: partitions 2^22 from device a/b/c"),
        );
    }
}

#[test]
fn a_partition_under_a_limit_takes_the_per_call_path_on_the_device() {
    let Some(_one) = serial() else { return };
    use baton::stages::partition::{AbcInput, PartitionProver};
    let n = 1usize << 20;
    let w = sample_witness(4, n / 2 + 11, 0.45, 41);
    let pk = shaped_key(n, &w, &distinct_bases(4096, 42), &g2_points(256, 43));
    let abc = sample_abc(n - 9, 44);
    let cpu = cpu_partition(&pk, &abc, &w);
    // The per-call path fits (H in two buffers, the MSMs in streamed pieces); the partition
    // call's own buffers do not.
    let limit = minimum_of(&pk) + (24 << 20);
    let gpu = backend(Some(limit));
    gpu.reset_peak_device_bytes().expect("reset peak");
    let mut host = copy_abc(&abc);
    let whole = gpu.prove_partition(&pk, AbcInput::Host(&mut host), &w, true, &mut |_| {});
    assert!(
        matches!(&whole, Err(baton::Error::Device(e)) if e.is_out_of_memory()),
        "the whole partition does not fit: {:?}",
        whole.map(|_| ())
    );
    let mut abc = host;
    let h = prover::compute_h(&gpu, &mut abc).expect("GPU H");
    let g1 = prover::g1_msms(&gpu, &pk, &w, &h).expect("GPU G1");
    let g2 = prover::b_g2_msm(&gpu, &pk, &w).expect("GPU G2");
    assert_eq!(sums_of(&g1), sums_of(&cpu.0));
    assert_eq!(g2, cpu.1, "B_G2");
    assert_eq!(gpu.fallbacks(), 0, "nothing ran on the CPU");
    peak_within(&gpu, limit, "per-call partition 2^20");
}

/// Bellperson's verdict on `proofs` of `circuits`, and on the first with a wrong input.
fn check_proofs(pk: &baton::ProvingKey, proofs: &[baton::Proof], circuits: &[Synthetic]) {
    let pvk = baton::PreparedVerifyingKey::new(&pk.vk);
    for (p, c) in proofs.iter().zip(circuits) {
        baton::verify(&pvk, p, &c.public_inputs()).expect("verifies");
    }
    let mut wrong = circuits[0].public_inputs();
    wrong[0] += Scalar::ONE;
    assert!(
        baton::verify(&pvk, &proofs[0], &wrong).is_err(),
        "a wrong input verified"
    );
}

/// The least device memory a partition of `pk` needs with B_G2 on the device.
fn minimum_of(pk: &baton::ProvingKey) -> u64 {
    let rule = GpuOptions::default().window_rule();
    let log_n = (pk.h.len() + 1).next_power_of_two().trailing_zeros();
    let g1 =
        pk.h.len()
            .max(pk.l.len())
            .max(pk.a.len())
            .max(pk.b_g1.len());
    plan::partition_minimum(log_n, twiddle_bytes(log_n), g1, pk.b_g2.len(), rule).0
}

fn engine(limit: u64) -> Engine {
    let cfg = Config {
        budget_bytes: Some(8 << 30),
        synthesis_workers: 2,
        backend: BackendChoice::Cuda,
        bg2_device: Bg2Device::Gpu,
        gpu: GpuOptions {
            memory_limit: Some(limit),
            ..test_gpu_options()
        },
        ..Config::default()
    };
    Engine::start(cfg).expect("engine on the GPU")
}

#[test]
fn engine_proofs_under_a_limit_verify_and_a_limit_below_the_minimum_is_refused() {
    let Some(_one) = serial() else { return };
    let size = 1usize << 20;
    let mut rng = rand::thread_rng();
    let pk = Arc::new(
        baton::generate_random_parameters(Synthetic::new(size, 0), &mut rng).expect("setup"),
    );
    // Room for the capped path, not for the key resident with a partition.
    let minimum = minimum_of(&pk);
    let limit = minimum + (16 << 20);
    assert!(limit < pk.heap_bytes(), "the key must not fit resident");
    let e = engine(limit);
    let circuits: Vec<Synthetic> = (0..3).map(|s| Synthetic::new(size, 60 + s)).collect();
    let proofs = e
        .prove_blocking(Request::new(pk.clone(), circuits.clone()))
        .expect("proofs under the limit");
    check_proofs(&pk, &proofs, &circuits);
    let text = e.metric_handles().render();
    assert!(
        text.lines()
            .any(|l| l.starts_with("baton_device_bytes{device=")),
        "baton_device_bytes is served"
    );
    e.shutdown_blocking();

    // Room for a partition call and every set but H's: one device call per partition (at
    // this size H's set is smaller than its smallest streamed pieces, so it may stay
    // resident; the streaming itself is the test above).
    let (_, w) = prover::synthesize(Synthetic::new(size, 64), &pk).expect("a witness");
    let e = engine(one_call_limit(&pk, &w));
    let circuits: Vec<Synthetic> = (0..2).map(|s| Synthetic::new(size, 65 + s)).collect();
    let proofs = e
        .prove_blocking(Request::new(pk.clone(), circuits.clone()))
        .expect("proofs with streamed bases");
    check_proofs(&pk, &proofs, &circuits);
    e.shutdown_blocking();

    // Below the minimum: the big job fails naming the limit, a small one beside it proves.
    let small = Arc::new(
        baton::generate_random_parameters(Synthetic::new(1 << 10, 0), &mut rng).expect("setup"),
    );
    let small_min = minimum_of(&small);
    let limit = (minimum + small_min) / 2;
    assert!(small_min < limit && limit < minimum);
    let e = engine(limit);
    let big = e.submit(Request::new(pk.clone(), vec![Synthetic::new(size, 70)]));
    let little_circuits = vec![Synthetic::new(1 << 10, 71)];
    let little = e.submit(Request::new(small.clone(), little_circuits.clone()));
    let err = big.blocking_outcome().expect_err("below the minimum");
    let msg = err.to_string();
    assert!(
        msg.contains("gpu.memory_limit") && msg.contains(&limit.to_string()),
        "{msg}"
    );
    assert!(
        msg.contains(&minimum.to_string()),
        "names the minimum: {msg}"
    );
    let proofs = little
        .blocking_outcome()
        .expect("the other job proves")
        .proofs;
    check_proofs(&small, &proofs, &little_circuits);
    e.shutdown_blocking();
}
