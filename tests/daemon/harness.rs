//! Starts and stops a `baton serve` process for the daemon tests, runs the Python client's
//! scenarios against it, and verifies the proofs they bring back.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;

use baton::circuits::{KnownCircuit, MimcChain, Synthetic};
use baton::{Check, PreparedVerifyingKey, Proof, ProvingKey, Scalar};

/// A running daemon.
pub struct Daemon {
    child: Option<Child>,
    /// gRPC address to connect to.
    pub grpc: String,
    /// HTTP address (/metrics, /healthz).
    pub http: String,
    /// Its state directory.
    pub state: PathBuf,
    log: PathBuf,
}

/// A fresh directory under the target dir for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("daemon-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// The config every daemon test starts from: a small budget, CPU backend, ports picked by the OS.
pub fn config(extra: &str) -> String {
    config_with_budget("2GiB", extra)
}

/// [`config`] with another memory budget.
pub fn config_with_budget(budget: &str, extra: &str) -> String {
    format!(
        "[memory]\nbudget = \"{budget}\"\n[synthesis]\nworkers = 1\n[gpu]\nbackend = \"cpu\"\n[metrics]\nlisten = \"127.0.0.1:0\"\n{extra}"
    )
}

impl Daemon {
    /// Starts `baton serve` on `listen` with `toml` as its config and `dir/state` as its state.
    pub fn start(dir: &Path, toml: &str, listen: &str) -> Result<Self, String> {
        Self::start_with(dir, toml, &["--listen", listen])
    }

    /// [`Daemon::start`] with `args` for `baton serve` instead of `--listen`.
    pub fn start_with(dir: &Path, toml: &str, args: &[&str]) -> Result<Self, String> {
        let state = dir.join("state");
        let cfg = dir.join("baton.toml");
        std::fs::write(&cfg, toml).map_err(|e| e.to_string())?;
        let log = dir.join(format!(
            "daemon-{}.log",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ));
        let stderr = std::fs::File::create(&log).map_err(|e| e.to_string())?;
        let mut child = Command::new(env!("CARGO_BIN_EXE_baton"))
            .arg("serve")
            .args(args)
            .arg("--state-dir")
            .arg(&state)
            .env("BATON_CONFIG", &cfg)
            .env("BATON_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(|e| e.to_string())?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            let first = lines.next();
            let _ = tx.send(first);
            for _ in lines {}
        });
        let line = match rx.recv_timeout(Duration::from_secs(120)) {
            Ok(Some(Ok(l))) => l,
            other => {
                let _ = child.kill();
                let _ = child.wait();
                let log_text = std::fs::read_to_string(&log).unwrap_or_default();
                return Err(format!(
                    "the daemon printed no address ({other:?}); its log:\n{log_text}"
                ));
            }
        };
        // "baton serve: grpc ADDR http ADDR state DIR"
        let words: Vec<&str> = line.split_whitespace().collect();
        let grpc = words
            .get(3)
            .ok_or(format!("odd first line {line:?}"))?
            .replace("0.0.0.0", "127.0.0.1");
        let http = words
            .get(5)
            .ok_or(format!("odd first line {line:?}"))?
            .to_string();
        Ok(Daemon {
            child: Some(child),
            grpc,
            http,
            state,
            log,
        })
    }

    /// The daemon's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SIGKILL, no drain.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// SIGTERM, then waits for the exit.
    pub fn terminate(&mut self) -> Option<ExitStatus> {
        let mut c = self.child.take()?;
        let _ = Command::new("kill")
            .args(["-TERM", &c.id().to_string()])
            .status();
        c.wait().ok()
    }

    /// Waits for the process to exit by itself.
    pub fn wait(&mut self) -> Option<ExitStatus> {
        self.child.take()?.wait().ok()
    }

    /// The process id.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `python3` with grpcio and grpcio-tools importable, and the PYTHONPATH that makes them so;
/// `None` (after saying why) when they are missing, unless BATON_REQUIRE_PYTHON=1.
pub fn python() -> Option<Option<String>> {
    let path = std::env::var("BATON_PYTHONPATH").ok().or_else(|| {
        let local = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/pydeps");
        local.is_dir().then(|| local.display().to_string())
    });
    let mut check = Command::new("python3");
    check.args(["-c", "import grpc, grpc_tools"]);
    if let Some(p) = &path {
        check.env("PYTHONPATH", p);
    }
    let ok = check.output().is_ok_and(|o| o.status.success());
    if ok {
        return Some(path);
    }
    let why = "python3 with grpcio and grpcio-tools is not available (pip install --target DIR grpcio grpcio-tools, then BATON_PYTHONPATH=DIR)";
    if std::env::var("BATON_REQUIRE_PYTHON").as_deref() == Ok("1") {
        panic!("BATON_REQUIRE_PYTHON=1 but {why}");
    }
    eprintln!("skipped: {why}");
    None
}

/// Runs one scenario of tests/python/cuzk_client.py; returns its result document.
pub fn scenario(
    pythonpath: &Option<String>,
    name: &str,
    d: &Daemon,
    token: &str,
) -> serde_json::Value {
    scenario_with(pythonpath, name, d, &["--token", token])
}

/// [`scenario`] with any extra arguments.
pub fn scenario_with(
    pythonpath: &Option<String>,
    name: &str,
    d: &Daemon,
    extra: &[&str],
) -> serde_json::Value {
    let out = d.state.with_file_name(format!("{name}.json"));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/cuzk_client.py");
    let mut cmd = Command::new("python3");
    cmd.arg(&script)
        .args([name, "--grpc", &d.grpc, "--http", &d.http])
        .args(extra)
        .arg("--out")
        .arg(&out);
    if let Some(p) = pythonpath {
        cmd.env("PYTHONPATH", p);
    }
    let o = cmd.output().expect("python3 runs");
    assert!(
        o.status.success(),
        "scenario {name} failed:\n{}\n{}\n--- daemon log ---\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
        d.log()
    );
    let text = std::fs::read_to_string(&out).expect("result file");
    serde_json::from_str(&text).expect("result JSON")
}

/// Verifies every proof a scenario brought back against its circuit's public inputs, and checks
/// that each fails against a wrong input. Returns how many partition proofs were checked.
pub fn verify_proofs(state: &Path, result: &serde_json::Value) -> usize {
    let mut checked = 0;
    for p in result["proofs"].as_array().into_iter().flatten() {
        let (n, seed, parts) = (
            p["constraints"].as_u64().expect("constraints") as usize,
            p["seed"].as_u64().expect("seed"),
            p["partitions"].as_u64().expect("partitions"),
        );
        let bytes = hex::decode(p["proof"].as_str().expect("proof hex")).expect("hex");
        assert_eq!(bytes.len() as u64, 192 * parts, "{p}");
        let inputs: Vec<(String, Vec<Scalar>)> = (0..parts)
            .map(|i| match p["circuit"].as_str() {
                Some("mimc") => {
                    let c = MimcChain::with_constraints(n, seed + i);
                    (c.shape_name(), c.public_inputs())
                }
                _ => {
                    let c = Synthetic::new(n, seed + i);
                    (c.shape_name(), c.public_inputs())
                }
            })
            .collect();
        let key = state.join("keys").join(format!("{}.params", inputs[0].0));
        let pk = ProvingKey::read_with(&key, Check::None).expect("the daemon's cached key");
        let pvk = PreparedVerifyingKey::new(&pk.vk);
        for (chunk, (_, public)) in bytes.chunks(192).zip(&inputs) {
            let arr: &[u8; 192] = chunk.try_into().expect("192 bytes");
            let proof = Proof::from_bytes(arr).expect("a proof");
            baton::verify(&pvk, &proof, public).unwrap_or_else(|e| panic!("job {}: {e}", p["job"]));
            let mut wrong = public.clone();
            wrong[0] += Scalar::from(1u64);
            assert!(
                baton::verify(&pvk, &proof, &wrong).is_err(),
                "a wrong input verified"
            );
            checked += 1;
        }
    }
    checked
}
