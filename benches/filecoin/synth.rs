//! The `synth` rows of the Filecoin bench: one PoRep partition's synthesis on the real circuit,
//! full vs compiled, through `PartitionCircuit` with the key of a real C2 job: the bare
//! filecoin-proofs circuit (witness code on one thread; the streamed route) and the partition
//! the engine gets, whose challenges' witness code runs in parallel (its compiled route: the
//! parallel witness, then the sparse evaluation).

use std::time::{Duration, Instant};

use baton::compiled;
use baton::filecoin::testing::{porep_partition_pair, seal_sector};
use baton::filecoin::{seal_proof_for, Filecoin};

use super::{median, secs};

pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
        .block_on(f)
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let t = Instant::now();
    let out = f();
    (out, t.elapsed())
}

pub fn synth(size: u64, size_name: &str, runs: usize) {
    let dir = std::env::temp_dir().join(format!("baton-bench-synth-{}", std::process::id()));
    let proof_type = seal_proof_for(size).expect("seal proof");
    let s = seal_sector(&dir, proof_type, 1000, 2, 43).expect("seal");
    let fil = Filecoin::from_env();
    let job = fil.porep_c2(&s.c1, s.prover_id, s.sector_id).expect("job");
    let pk = job.request.key().clone();
    let pair = porep_partition_pair(&s).expect("partition 0");
    let (parallel, circuit, challenges) = (pair.parallel, pair.bare, pair.challenges);
    drop(job);
    let threads = rayon::current_num_threads();

    let ((rec, _, _), record) = timed(|| circuit.record().expect("record"));
    rec.check_key(&pk).expect("the recording fits the key");
    let path = dir.join("porep.r1cs");
    let (_, write) = timed(|| rec.write_for_key(&path, &pk).expect("write"));
    let file_bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let ((back, _), read) = timed(|| compiled::Recording::read_file(&path).expect("read"));
    assert!(back == rec, "the file reads back as written");
    drop(back);

    let (mut full, mut witness, mut eval, mut streamed) = (vec![], vec![], vec![], vec![]);
    let (mut par_witness, mut par_compiled) = (vec![], vec![]);
    for run in 0..=runs {
        let ((want_abc, want_w), t_full) =
            timed(|| circuit.synthesize(&pk).expect("full synthesis"));
        let (w, t_witness) = timed(|| circuit.synthesize_witness(&rec).expect("witness"));
        let (abc, t_eval) = timed(|| rec.evaluate(&w.inputs, &w.aux).expect("evaluate"));
        let ((sabc, sw), t_stream) = timed(|| circuit.synthesize_compiled(&rec).expect("streamed"));
        let (pw, t_par_witness) =
            timed(|| parallel.synthesize_witness(&rec).expect("parallel witness"));
        let ((pabc, pcw), t_par) = timed(|| {
            parallel
                .synthesize_compiled(&rec)
                .expect("parallel compiled")
        });
        let rows = rec.shape().rows();
        let same = |x: &baton::groth16::prover::Abc| {
            x.a[..rows] == want_abc.a[..rows]
                && x.b[..rows] == want_abc.b[..rows]
                && x.c[..rows] == want_abc.c[..rows]
        };
        let same_w =
            |x: &baton::groth16::prover::Witness| x.inputs == want_w.inputs && x.aux == want_w.aux;
        assert!(
            same(&abc) && same(&sabc) && same_w(&w) && same_w(&sw),
            "compiled a/b/c or witness differ from full synthesis"
        );
        assert!(
            same(&pabc) && same_w(&pw) && same_w(&pcw),
            "the parallel witness or its a/b/c differ from full synthesis"
        );
        eprintln!(
            "run {run}: full {:.3?}, witness {:.3?} + eval {:.3?}, streamed {:.3?}, parallel witness {:.3?}, parallel compiled {:.3?}{}",
            t_full,
            t_witness,
            t_eval,
            t_stream,
            t_par_witness,
            t_par,
            if run == 0 { " (warm-up)" } else { "" }
        );
        if run > 0 {
            full.push(t_full);
            witness.push(t_witness);
            eval.push(t_eval);
            streamed.push(t_stream);
            par_witness.push(t_par_witness);
            par_compiled.push(t_par);
        }
    }
    let shape = rec.shape();
    let (f, w, e, st) = (
        median(full),
        median(witness),
        median(eval),
        median(streamed),
    );
    println!();
    println!(
        "PoRep {size_name} partition: {} constraints, {} inputs, {} aux; {threads} threads, medians of {runs} interleaved runs",
        shape.constraints, shape.inputs, shape.aux
    );
    println!();
    println!("| circuit | full synthesis | witness-only | sparse a/b/c + check | one after the other | compiled, streamed | full ÷ (witness + sparse) | full ÷ streamed | full ÷ witness-only (ceiling) |");
    println!("|---|---|---|---|---|---|---|---|---|");
    println!(
        "| PoRep {size_name} | {:.3} s | {:.3} s | {:.3} s | {:.3} s | {:.3} s | {:.2}x | {:.2}x | {:.2}x |",
        secs(f),
        secs(w),
        secs(e),
        secs(w + e),
        secs(st),
        secs(f) / secs(w + e),
        secs(f) / secs(st),
        secs(f) / secs(w)
    );
    let (pw, pc) = (median(par_witness), median(par_compiled));
    println!();
    println!(
        "Challenges' witness code in parallel ({challenges} challenges per partition, the engine's compiled route):"
    );
    println!();
    println!("| circuit | full synthesis | parallel witness | parallel witness + sparse a/b/c | full ÷ (parallel witness + sparse) | full ÷ parallel witness (ceiling) | witness-only ÷ parallel witness |");
    println!("|---|---|---|---|---|---|---|");
    println!(
        "| PoRep {size_name} | {:.3} s | {:.3} s | {:.3} s | {:.2}x | {:.2}x | {:.2}x |",
        secs(f),
        secs(pw),
        secs(pc),
        secs(f) / secs(pc),
        secs(f) / secs(pw),
        secs(w) / secs(pw)
    );
    println!();
    println!("| recording | terms | coefficient table | in memory | file | bytes/term | record (incl. first a/b/c) | write | read |");
    println!("|---|---|---|---|---|---|---|---|---|");
    println!(
        "| PoRep {size_name} | {} | {} | {:.1} MiB | {:.1} MB | {:.2} | {:.2} s | {:.2} s | {:.2} s |",
        rec.terms(),
        rec.coeffs().len(),
        rec.heap_bytes() as f64 / (1u64 << 20) as f64,
        file_bytes as f64 / 1e6,
        file_bytes as f64 / rec.terms() as f64,
        secs(record),
        secs(write),
        secs(read)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
