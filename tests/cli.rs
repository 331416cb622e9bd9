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

/// `GET path` on `addr`: the whole answer, headers included.
fn http_get(addr: &str, path: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .expect("timeout");
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut out = String::new();
    s.read_to_string(&mut out).expect("an answer");
    out
}

#[test]
fn status_port_serves_the_page_and_the_runs_status_while_it_proves() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let dir = cache("status-port");
    let mut child = Command::new(env!("CARGO_BIN_EXE_baton"))
        .args(["prove", "--backend", "cpu", "--constraints", "1024"])
        .args(["--proofs", "300", "--requests", "3", "--status-port", "0"])
        .env("BATON_CACHE_DIR", &dir)
        .env("BATON_CONFIG", dir.join("no-such-baton.toml"))
        .env_remove("BATON_LOG")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the baton binary runs");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let addr = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|l| {
            Some(
                l.strip_prefix("status: http://")?
                    .trim_end_matches('/')
                    .to_string(),
            )
        })
        .expect("the address is printed");
    let page = http_get(&addr, "/");
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(page.contains("<title>baton status</title>"), "{page}");
    // Until a job shows (they are submitted just after the address is printed).
    let mut seen = None;
    for _ in 0..200 {
        let answer = http_get(&addr, "/status");
        let body = answer.split_once("\r\n\r\n").map_or("", |x| x.1);
        let doc: serde_json::Value = serde_json::from_str(body).expect("JSON");
        assert_eq!(doc["baton_source"], "cli", "{doc}");
        assert!(doc.get("counters").is_none(), "{doc}");
        if let Some(p) = doc["pipelines"].as_array().and_then(|p| p.first()) {
            seen = Some(p.clone());
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let job = seen.expect("a job on /status while the run lasts");
    assert!(job["job_id"]
        .as_str()
        .is_some_and(|id| id.starts_with("job-")));
    assert_eq!(job["proof_kind"], "baton-synthetic");
    assert_eq!(job["total_partitions"], 100);
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().expect("exits");
    assert!(status.success(), "{}", rest.join("\n"));

    // A port already taken is refused, naming the flag.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = taken.local_addr().expect("addr").port().to_string();
    let (ok, _, err) = baton(
        &dir,
        &[
            "prove",
            "--backend",
            "cpu",
            "--constraints",
            "1024",
            "--proofs",
            "1",
        ]
        .into_iter()
        .chain(["--status-port", port.as_str()])
        .collect::<Vec<_>>(),
    );
    assert!(!ok, "{err}");
    assert!(err.contains(&format!("--status-port {port}:")), "{err}");
}
