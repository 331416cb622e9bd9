//! The cost of keeping a witness packed as bits: packing it after synthesis and expanding it
//! before the device stage (into a new vector, and into one kept from the last partition),
//! against copying the plain witness once (the reference: what any
//! host-side hand-over of the plain vector costs), on values mixed as a real 32 GiB PoRep
//! partition's are (51.4 % zero, 47.3 % one, 1.3 % other; `baton fil-params --shape-only
//! --sector-size 32GiB --witness-mix`). Every expansion is checked equal to the original.
//!
//! `cargo bench --bench packed` (env: BATON_BENCH_SIZES="20,24", BATON_BENCH_RUNS=5).

use std::time::{Duration, Instant};

use baton::groth16::packed::PackedScalars;
use baton::Scalar;
use ff::Field;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

mod common;
use common::{env_list, median};

fn porep_like(n: usize) -> Vec<Scalar> {
    let mut v = Vec::with_capacity(n);
    v.par_extend((0..n).into_par_iter().map_init(
        || ChaCha8Rng::seed_from_u64(rayon::current_thread_index().unwrap_or(0) as u64),
        |rng, _| match rng.gen_range(0..1000) {
            0..=513 => Scalar::ZERO,
            514..=986 => Scalar::ONE,
            _ => Scalar::random(&mut *rng),
        },
    ));
    v
}

fn main() {
    let sizes = env_list("BATON_BENCH_SIZES", &[20, 24]);
    let runs = env_list("BATON_BENCH_RUNS", &[5])[0].max(1) as usize;
    let threads = rayon::current_num_threads();
    println!("packed witness, {threads} threads, median of {runs} runs");
    println!(
        "{:>4} {:>10} {:>10} {:>10} {:>10} {:>10} {:>12} {:>12}",
        "log", "plain MiB", "packed MiB", "pack", "expand", "into buf", "copy (ref)", "buf/copy"
    );
    for log in sizes {
        let n = 1usize << log;
        let values = porep_like(n);
        let (mut pack, mut expand, mut copy) = (Vec::new(), Vec::new(), Vec::new());
        let mut reused = Vec::new();
        let mut buf = vec![Scalar::ZERO; n];
        let mut packed = PackedScalars::default();
        for _ in 0..runs {
            let t = Instant::now();
            let mut out: Vec<Scalar> = Vec::with_capacity(n);
            out.par_extend(values.par_iter().copied());
            copy.push(t.elapsed());
            drop(out);
            let t = Instant::now();
            packed = PackedScalars::pack(&values);
            pack.push(t.elapsed());
            let t = Instant::now();
            let back = packed.unpack();
            expand.push(t.elapsed());
            assert!(back == values, "expansion differs at 2^{log}");
            drop(back);
            let t = Instant::now();
            packed.unpack_into(&mut buf);
            reused.push(t.elapsed());
            assert!(buf == values, "expansion into a buffer differs at 2^{log}");
        }
        let ms = |d: Duration| format!("{:.1} ms", d.as_secs_f64() * 1e3);
        let (p, e, c) = (median(pack), median(expand), median(copy));
        let r = median(reused);
        println!(
            "{:>4} {:>10.1} {:>10.1} {:>10} {:>10} {:>10} {:>12} {:>11.2}x",
            log,
            (n * 32) as f64 / (1u64 << 20) as f64,
            packed.bytes() as f64 / (1u64 << 20) as f64,
            ms(p),
            ms(e),
            ms(r),
            ms(c),
            r.as_secs_f64() / c.as_secs_f64()
        );
    }
}
