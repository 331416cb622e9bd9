//! G1 MSM rows of the GPU bench for every MSM variant (`baton::gpu::options::MSM_VARIANTS`, or
//! `BATON_MSM_VARIANTS`), each on its own backend with its own kernels, timed side by side: for
//! each size and kind, every variant in turn on the same scalars and bases. Every result is
//! checked against the bases' construction; a variant that gives a wrong sum is marked so, its
//! timing dropped, and not run again. Prints a variant × size table with ratios to the first
//! variant (the default).

use std::time::Instant;

use baton::gpu::options::{variants, GpuOptions};
use baton::gpu::sample::{dense_scalars, porep_scalars, DistinctBases};
use baton::gpu::CudaBackend;
use baton::groth16::backend::{Backend, Bases, CpuBackend, Query};
use blstrs::G1Projective;

use super::{cpu_reference, cpu_runs, env_logs, median_ms, ms, Table};

/// One variant's backend and its fate.
pub struct Variant {
    pub name: String,
    pub gpu: CudaBackend,
    /// Why its results cannot be trusted, once one was wrong.
    pub wrong: Option<String>,
    /// (size label, median ms) per timed row.
    pub medians: Vec<(String, f64)>,
}

/// Opens a backend per variant over `base`; a variant that does not open is reported and left
/// out (the rest still run).
pub fn open_variants(base: &GpuOptions) -> Vec<Variant> {
    let list = std::env::var("BATON_MSM_VARIANTS").ok();
    let all = match variants(base, list.as_deref()) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("BATON_MSM_VARIANTS: {e}");
            return Vec::new();
        }
    };
    all.into_iter()
        .filter_map(|o| {
            let name = o.msm_label();
            let clock = Instant::now();
            match CudaBackend::with_options(0, &o) {
                Ok(gpu) => {
                    eprintln!(
                        "variant {name}: ready in {:.1} s",
                        clock.elapsed().as_secs_f64()
                    );
                    Some(Variant {
                        name,
                        gpu,
                        wrong: None,
                        medians: Vec::new(),
                    })
                }
                Err(e) => {
                    eprintln!("variant {name}: no backend: {e}");
                    None
                }
            }
        })
        .collect()
}

/// `reps` timed runs after a warm-up, every result compared with `want`: the times, or the
/// first wrong result.
fn checked_reps(
    reps: usize,
    want: &G1Projective,
    mut f: impl FnMut() -> baton::Result<G1Projective>,
) -> Result<Vec<f64>, String> {
    let mut times = Vec::with_capacity(reps);
    for k in 0..=reps {
        let clock = Instant::now();
        let got = f().map_err(|e| format!("error: {e}"))?;
        let dt = ms(clock.elapsed());
        if got != *want {
            return Err(format!("run {k}: wrong sum"));
        }
        if k > 0 {
            times.push(dt);
        }
    }
    Ok(times)
}

pub fn bench_msm(vs: &mut [Variant], bases: &DistinctBases, t: &mut Table, reps: usize) {
    for log in env_logs("BATON_BENCH_MSM", &[20, 22, 24, 26]) {
        let n = 1usize << log;
        let b = Bases {
            key_id: 0xbe9c_0000 + log as u64,
            query: Query::H,
            offset: 0,
            points: &bases.points[..n],
        };
        for (kind, scalars) in [
            ("dense", dense_scalars(n, 1000 + log as u64)),
            ("PoRep-like", porep_scalars(n, 2000 + log as u64)),
        ] {
            let want = bases.msm_check(&scalars).expect("check sum");
            let mut first: Option<f64> = None;
            for (i, v) in vs.iter_mut().enumerate() {
                if v.wrong.is_some() {
                    continue;
                }
                let what = format!("G1 MSM {kind} [{}]", v.name);
                let times = match checked_reps(reps, &want, || v.gpu.msm_g1(b, &scalars, None)) {
                    Ok(times) => times,
                    Err(e) => {
                        let why = format!("2^{log} {kind}: {e}");
                        eprintln!("variant {}: WRONG at {why}", v.name);
                        t.row(&what, log, f64::NAN, None, &format!("WRONG: {why}"));
                        v.wrong = Some(why);
                        continue;
                    }
                };
                let med = median_ms(times);
                v.medians.push((format!("2^{log} {kind}"), med));
                if i == 0 {
                    first = Some(med);
                    let cpu = cpu_reference(
                        cpu_runs(log, reps),
                        &want,
                        "CPU MSM vs the check sum",
                        || CpuBackend.msm_g1(b, &scalars, None).expect("CPU MSM"),
                    );
                    t.row(&what, log, med, cpu, "bases resident, checked");
                } else {
                    let note = first.map_or("checked".into(), |f| {
                        format!("checked; {:.3}× the first variant", med / f)
                    });
                    t.row(&what, log, med, None, &note);
                }
            }
        }
        for v in vs.iter() {
            v.gpu.clear_resident().expect("clear");
        }
    }
}

/// The variant × row table: medians, and each one's ratio to the first variant's.
pub fn print_variants(vs: &[Variant], reps: usize) {
    let Some(first) = vs.first() else { return };
    let cols: Vec<&String> = first.medians.iter().map(|(c, _)| c).collect();
    println!(
        "\n## G1 MSM variants: medians of {reps} (ms), in brackets the ratio to `{}`; WRONG = a result differed, untimed since\n",
        first.name
    );
    let head: Vec<String> = cols.iter().map(|c| c.to_string()).collect();
    println!("| variant | {} |", head.join(" | "));
    println!("|---|{}", "---|".repeat(cols.len()));
    for v in vs {
        let cells: Vec<String> = cols
            .iter()
            .map(|c| {
                let mine = v.medians.iter().find(|(k, _)| k == *c).map(|x| x.1);
                let base = first.medians.iter().find(|(k, _)| k == *c).map(|x| x.1);
                match (mine, base) {
                    (Some(m), Some(b)) => format!("{m:.2} ({:.3})", m / b),
                    (Some(m), None) => format!("{m:.2}"),
                    _ if v.wrong.is_some() => "WRONG".into(),
                    _ => "–".into(),
                }
            })
            .collect();
        println!("| {} | {} |", v.name, cells.join(" | "));
    }
    for v in vs.iter().filter(|v| v.wrong.is_some()) {
        println!(
            "\nvariant {} WRONG: {}",
            v.name,
            v.wrong.as_deref().unwrap_or("")
        );
    }
    println!("\n(end of the variant table)");
}
