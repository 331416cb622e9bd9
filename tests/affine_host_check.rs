//! The batch-affine arithmetic checked on the CPU (no GPU): `scripts/affine-host-check.sh`
//! compiles kernels/field/inv.cuh (`f_inv_window`, a^(m − 2) by 4-bit windows) and
//! kernels/ec/affine.cuh (`ec_affine_add_pairs`, K affine additions sharing one inversion) as C++
//! with the PTX carry chain emulated, in two builds (the host's FIELD_SQR=1 FIELD_LAZY=1 and the
//! headers' 0 0). f_inv_window(a)·a must be 1 on 200,000 random Fp residues and edge values
//! (0 → 0), on 100,000 more per field, and agree with 3- and 5-bit windows and mont.cuh's
//! bitwise f_inv; the pair additions, in batches of 1 to 16 mixing chords, doublings, negated
//! pairs and infinities (some with the output aliasing an input), must equal the XYZZ sums made
//! affine and lie on y² = x³ + 4; printed inversions and additions are checked against Python
//! integers. Then kernels/msm/pairs.cuh's round kernel, each block's threads run as CPU threads
//! meeting at a barrier: three rounds over buckets of every length and case, each bucket's
//! count halved (rounded up), its keys and values right and its sum kept.

use std::process::Command;

#[test]
fn kernel_batch_affine_additions_match_xyzz_and_python() {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "g++".into());
    if Command::new(&cxx).arg("--version").output().is_err() {
        eprintln!("skipped: no C++ compiler ({cxx})");
        return;
    }
    let out = Command::new("bash")
        .arg("scripts/affine-host-check.sh")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run scripts/affine-host-check.sh");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "affine host check failed:\n{text}");
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
            format!("{build} pairs: round 3, 1756 entries to 959 in 308 buckets"),
            format!("{build} pairs: 924 bucket checks after 3 rounds, 0 wrong"),
        ];
        for line in want {
            assert!(text.contains(&line), "missing \"{line}\":\n{text}");
        }
    }
    assert_eq!(
        text.matches("Python agrees: 26 inversions, 20 pair additions")
            .count(),
        2,
        "{text}"
    );
}
