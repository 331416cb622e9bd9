//! The kernels' field arithmetic checked on the CPU (no GPU): `scripts/field-host-check.sh`
//! compiles kernels/field/*.cuh as C++ with the PTX carry chain emulated, compares the
//! limb-pair product (`f_mul`) with the plain CIOS rows (`f_mul_rolled`) on a million operand
//! pairs per field (a quarter just below the modulus, plus 0, 1, R, m − 1, m − 2), the squaring
//! `f_sqr_pairs` with `f_mul(a, a)` on both operands of every pair plus edge values, and checks
//! printed products and squares against Python integers.

use std::process::Command;

#[test]
fn kernel_field_products_match_python_and_the_plain_rows() {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "g++".into());
    if Command::new(&cxx).arg("--version").output().is_err() {
        eprintln!("skipped: no C++ compiler ({cxx})");
        return;
    }
    let out = Command::new("bash")
        .arg("scripts/field-host-check.sh")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run scripts/field-host-check.sh");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "field host check failed:\n{text}");
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
