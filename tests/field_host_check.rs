//! The kernels' field arithmetic checked on the CPU (no GPU): `scripts/field-host-check.sh`
//! compiles kernels/field/*.cuh as C++ with the PTX carry chain emulated, compares the
//! limb-pair product (`f_mul`) with the plain CIOS rows (`f_mul_rolled`) on a million operand
//! pairs per field (a quarter just below the modulus, plus 0, 1, R, m − 1, m − 2), the squaring
//! `f_sqr_pairs` with `f_mul(a, a)` on both operands of every pair plus edge values, and checks
//! printed products and squares against Python integers. The batch-affine arithmetic and the
//! MSM round kernel likewise, below (`scripts/affine-host-check.sh`).

use std::process::Command;

/// What `script` printed (stdout then stderr), after asserting it succeeded; `None` (the test
/// skipped) without a C++ compiler.
fn run_host_check(script: &str) -> Option<String> {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "g++".into());
    if Command::new(&cxx).arg("--version").output().is_err() {
        eprintln!("skipped: no C++ compiler ({cxx})");
        return None;
    }
    let out = Command::new("bash")
        .arg(script)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap_or_else(|e| panic!("run {script}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{script} failed:\n{text}");
    Some(text)
}

#[test]
fn kernel_field_products_match_python_and_the_plain_rows() {
    let Some(text) = run_host_check("scripts/field-host-check.sh") else {
        return;
    };
    for field in ["fp", "fr"] {
        assert!(
            text.contains(&format!("{field}: 1000025 products, 0 rolled mismatches")),
            "{field} not checked:\n{text}"
        );
        assert!(
            text.contains(&format!("{field}: 2000064 squares, 0 sqr_pairs mismatches")),
            "{field} squares not checked:\n{text}"
        );
    }
    assert!(text.contains("f_mul agrees with Python"), "{text}");
    assert!(text.contains("f_sqr_pairs on 28 squares"), "{text}");
}

/// The batch-affine arithmetic checked on the CPU (no GPU): `scripts/affine-host-check.sh`
/// compiles kernels/field/inv.cuh (`f_inv_window`, a^(m − 2) by 4-bit windows) and
/// kernels/ec/affine.cuh (`ec_affine_add_pairs`, K affine additions sharing one inversion) as C++
/// with the PTX carry chain emulated, in two builds (the host's FIELD_SQR=1 FIELD_LAZY=1 and the
/// headers' 0 0). f_inv_window(a)·a must be 1 on 200,000 random Fp residues and edge values
/// (0 → 0), on 100,000 more per field, and agree with 3- and 5-bit windows and mont.cuh's
/// bitwise f_inv; the pair additions, in batches of 1 to 16 mixing chords, doublings, negated
/// pairs and infinities (some with the output aliasing an input), must equal the XYZZ sums made
/// affine and lie on y² = x³ + 4; printed inversions and additions are checked against Python
/// integers. Then kernels/msm/pairs.cuh's round kernel, each block's threads run as CPU threads
/// meeting at a barrier: three rounds over buckets of every length and case, each bucket's
/// count halved (rounded up), its keys and values right and its sum kept; the same for the
/// round split in three kernels (`gpu.experimental.msm_affine_split`), its denominators
/// buffer filled with garbage first and past the outputs.
#[test]
fn kernel_batch_affine_additions_match_xyzz_and_python() {
    let Some(text) = run_host_check("scripts/affine-host-check.sh") else {
        return;
    };
    for (build, fp_count) in [("sqr=1 lazy=1", 200_009), ("sqr=0 lazy=0", 100_009)] {
        for (field, products, count) in [("fp", 485, fp_count), ("fr", 325, 100_009)] {
            let want = [
                format!("{build} {field}: f_inv_window runs {products} products"),
                format!("{build} {field}: {count} inversions, 0 wrong"),
                format!("{build} {field}: 2009 inversions by W = 3, W = 5 and mont.cuh's f_inv, 0 mismatches"),
            ];
            for line in want {
                assert!(text.contains(&line), "missing \"{line}\":\n{text}");
            }
        }
        let want = [
            format!("{build} g1: 20480 pair additions in 7936 batches"),
            format!("{build} g1: 0 differ from the XYZZ sums, 0 points off the curve"),
            format!("{build} pairs (16 a thread): round 3, 1756 entries to 959 in 308 buckets"),
            format!("{build} pairs (16 a thread): 924 bucket checks after 3 rounds, 0 wrong"),
            format!(
                "{build} pairs split (16 a thread): round 3, 1756 entries to 959 in 308 buckets"
            ),
            format!("{build} pairs split (16 a thread): 924 bucket checks after 3 rounds, 0 wrong"),
        ];
        for line in want {
            assert!(text.contains(&line), "missing \"{line}\":\n{text}");
        }
    }
    for mode in ["pairs", "pairs split"] {
        let per32 =
            format!("sqr=1 lazy=1 {mode} (32 a thread): 924 bucket checks after 3 rounds, 0 wrong");
        assert!(text.contains(&per32), "missing \"{per32}\":\n{text}");
    }
    assert_eq!(
        text.matches("Python agrees: 26 inversions, 20 pair additions")
            .count(),
        2,
        "{text}"
    );
}
