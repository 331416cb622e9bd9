//! The `baton` command line as a new user meets it: sizes and counts it cannot use are refused
//! before any work with the minimum named, a request refused for the budget says so (and not
//! that proofs failed to verify), and a good run proves and verifies.

use std::path::PathBuf;
use std::process::{Command, Output};

/// A cache directory of its own for each test (keys made there are small).
fn cache(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("baton-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Runs `baton args...` with its own cache and no config file; (status ok, stdout, stderr).
fn baton(cache: &PathBuf, args: &[&str]) -> (bool, String, String) {
    let Output {
        status,
        stdout,
        stderr,
    } = Command::new(env!("CARGO_BIN_EXE_baton"))
        .args(args)
        .env("BATON_CACHE_DIR", cache)
        .env("BATON_CONFIG", cache.join("no-such-baton.toml"))
        .env_remove("BATON_LOG")
        .output()
        .expect("the baton binary runs");
    (
        status.success(),
        String::from_utf8_lossy(&stdout).into_owned(),
        String::from_utf8_lossy(&stderr).into_owned(),
    )
}

#[test]
fn too_few_constraints_are_refused_naming_the_minimum_before_any_key_is_made() {
    let dir = cache("constraints");
    let (ok, _, err) = baton(&dir, &["prove", "--constraints", "0", "--backend", "cpu"]);
    assert!(!ok, "{err}");
    assert!(
        err.contains("--constraints 0: the synthetic circuit needs at least 10 constraints"),
        "{err}"
    );
    assert!(!err.contains("unsatisfiable"), "{err}");
    let (ok, _, err) = baton(&dir, &["setup", "--circuit", "mimc", "--constraints", "4"]);
    assert!(!ok, "{err}");
    assert!(err.contains("needs at least 5 constraints"), "{err}");
    assert!(!dir.exists(), "no key was made");
}

#[test]
fn zero_workers_or_proofs_are_refused_as_the_config_refuses_them() {
    let dir = cache("zero");
    let (ok, _, err) = baton(&dir, &["prove", "--workers", "0", "--backend", "cpu"]);
    assert!(!ok, "{err}");
    assert!(
        err.contains("--workers: config key `synthesis.workers`: must be at least 1"),
        "{err}"
    );
    let (ok, _, err) = baton(&dir, &["prove", "--budget", "0", "--backend", "cpu"]);
    assert!(!ok, "{err}");
    assert!(
        err.contains("--budget: config key `memory.budget`"),
        "{err}"
    );
    let (ok, _, err) = baton(&dir, &["prove", "--proofs", "0"]);
    assert!(!ok, "{err}");
    assert!(err.contains("--proofs"), "{err}");
    assert!(!dir.exists(), "no key was made");
}

#[test]
fn a_request_refused_for_the_budget_says_so_and_a_good_run_verifies() {
    let dir = cache("budget");
    let small = ["prove", "--constraints", "1024", "--backend", "cpu"];
    let (ok, _, err) = baton(
        &dir,
        &[&small[..], &["--proofs", "1", "--budget", "1KiB"]].concat(),
    );
    assert!(!ok, "{err}");
    assert!(
        err.contains("1 of 1 request(s) failed: request rejected"),
        "{err}"
    );
    assert!(err.contains("the whole budget is 1024 bytes"), "{err}");
    assert!(!err.contains("did not verify"), "{err}");
    // The same key (now cached) with room to prove: the binary counts a proof verified when it
    // verifies against its inputs and fails against a changed input.
    let (ok, out, err) = baton(
        &dir,
        &[&small[..], &["--proofs", "2", "--budget", "64MiB"]].concat(),
    );
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("proofs verified: 2/2"), "{out}");
    assert!(err.contains("key: loaded"), "the key was cached: {err}");
    let _ = std::fs::remove_dir_all(&dir);
}
