//! Compiles every kernel (production and test set) to PTX through NVRTC, on a machine without a
//! GPU. Without libnvrtc the test passes with a note, unless `BATON_REQUIRE_NVRTC=1` (CI).
#![cfg(feature = "cuda")]

use baton::gpu::kernels::{self, KernelSet};
use baton::gpu::options::{variants, GpuOptions};

fn nvrtc_present() -> bool {
    // SAFETY: only probes whether the shared library can be opened.
    let present = unsafe { cudarc::nvrtc::sys::is_culib_present() };
    if !present {
        let required = std::env::var("BATON_REQUIRE_NVRTC").is_ok_and(|v| v == "1");
        assert!(
            !required,
            "BATON_REQUIRE_NVRTC=1 but libnvrtc was not found"
        );
        eprintln!("skipping: libnvrtc not found (set LD_LIBRARY_PATH to an NVRTC install)");
    }
    present
}

fn check(set: KernelSet, expected: &[&str]) {
    check_with(set, &GpuOptions::default(), expected);
}

fn check_with(set: KernelSet, opts: &GpuOptions, expected: &[&str]) {
    if !nvrtc_present() {
        return;
    }
    let clock = std::time::Instant::now();
    let ptx = match kernels::compile_with_cache(set, "compute_90", opts, None) {
        Ok(p) => p.to_src(),
        Err(e) => panic!("{set:?} {}: {e}", opts.msm_label()),
    };
    let entries: Vec<&str> = ptx
        .lines()
        .filter_map(|l| l.strip_prefix(".visible .entry "))
        .map(|l| l.split('(').next().unwrap_or(l))
        .collect();
    eprintln!(
        "{set:?} {}: {} PTX chars, {} kernels in {:.1} s",
        opts.msm_label(),
        ptx.len(),
        entries.len(),
        clock.elapsed().as_secs_f64()
    );
    for name in expected {
        assert!(
            entries.contains(name),
            "{set:?}: kernel {name} missing from the PTX"
        );
    }
}

const PRODUCTION: &[&str] = &[
    "ntt_pass",
    "ntt_coset_h",
    "ntt_coset_h2",
    "fr_scale",
    "fr_scale_tab",
    "fr_bitrev",
    "fr_bitrev_inplace",
    "fr_powers",
    "msm_count",
    "msm_scatter",
    "msm_scatter_window",
    "msm_count_store",
    "msm_scatter_stored",
    "ntt_pass_r4",
    "msm_nontrivial",
    "msm_seg_keys",
    "msm_pairs_count",
    "msm_pairs_round",
    "msm_pairs_den",
    "msm_batch_inverse",
    "msm_pairs_finish",
    "scan_block",
    "scan_add",
    "msm_accumulate",
    "msm_finalize",
    "msm_accumulate_seeded",
    "msm_finalize_seeded",
    "msm_reduce_level",
    "msm_ones",
    "ec_sum",
    "msm_accumulate_g2",
    "msm_finalize_g2",
    "msm_accumulate_seeded_g2",
    "msm_finalize_seeded_g2",
    "msm_reduce_level_g2",
    "msm_ones_g2",
    "ec_sum_g2",
    "density_popc",
    "density_gather",
    "packed_expand",
    "spmv_u8",
    "spmv_u16",
    "spmv_u32",
    "abc_check",
];

#[test]
fn production_kernels_compile() {
    check(KernelSet::Production, PRODUCTION);
}

/// Every MSM variant the bench compares (the knobs reach the kernels as defines), so that no
/// variant first fails to compile on the device.
#[test]
fn every_msm_variant_compiles() {
    let all = variants(&GpuOptions::default(), None).expect("variants");
    for opts in all.iter().skip(1) {
        check_with(KernelSet::Production, opts, PRODUCTION);
    }
}

#[test]
fn test_kernels_compile() {
    let mut all = PRODUCTION.to_vec();
    all.extend([
        "test_fr_ops",
        "test_fp_ops",
        "test_g1_ops",
        "test_gen_bases",
        "test_fr_dot_eidx",
        "test_fp_mul_bench",
        "test_fr_mul_bench",
    ]);
    check(KernelSet::WithTests, &all);
}

#[test]
fn cached_compile_is_reused() {
    if !nvrtc_present() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("baton-ptx-{}", std::process::id()));
    let opts = baton::gpu::GpuOptions::default();
    let compile =
        || kernels::compile_with_cache(KernelSet::Production, "compute_90", &opts, Some(&dir));
    let first = compile().expect("compile").to_src();
    let files = std::fs::read_dir(&dir).expect("cache dir").count();
    assert_eq!(files, 1, "one cached PTX file");
    let second = compile().expect("cache").to_src();
    assert_eq!(first, second);
    let _ = std::fs::remove_dir_all(&dir);
}
