//! The status page (`GET /` on the daemon's HTTP port) in headless Chromium: with a job
//! synthesizing, jobs queued at two priorities and one failed, the page renders without script
//! errors and shows, in its DOM, the jobs, the partition stages, the ledger figures, the queue
//! per priority and the failure that `/status` reports; a screenshot goes to
//! target/status-page.png. Skipped, saying so, where `chromium` is missing, unless
//! BATON_REQUIRE_CHROMIUM=1 (CI sets it).

#[path = "daemon/harness.rs"]
mod harness;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use baton::server::proto::proving_engine_client::ProvingEngineClient;
use baton::server::proto::{Priority, ProofKind, SubmitProofRequest};
use harness::{config, scratch, Daemon};
use serde_json::Value;

/// The Chromium binary, or `None` (after saying why) unless BATON_REQUIRE_CHROMIUM=1.
fn chromium() -> Option<&'static str> {
    for name in ["chromium", "chromium-browser"] {
        let ok = Command::new(name)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            return Some(name);
        }
    }
    let why = "chromium is not installed (apt-get install chromium)";
    if std::env::var("BATON_REQUIRE_CHROMIUM").as_deref() == Ok("1") {
        panic!("BATON_REQUIRE_CHROMIUM=1 but {why}");
    }
    eprintln!("skipped: {why}");
    None
}

/// Headless Chromium on `url` with `args`, given `budget_ms` of virtual time for the page's
/// script (its polls) before it dumps or shoots; killed after 120 s.
fn headless(bin: &str, profile: &Path, url: &str, args: &[&str]) -> Output {
    let child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=6000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chromium starts");
    // Its output is read while it runs (a full pipe would stall it), on a thread of its own.
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = match rx.recv_timeout(Duration::from_secs(120)) {
        Ok(out) => out,
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            rx.recv().expect("chromium was killed")
        }
    };
    out.expect("chromium's output")
}

/// `GET path` on `addr`: the status code and the body.
fn http_get(addr: &str, path: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut out = String::new();
    s.read_to_string(&mut out).expect("an answer");
    let (head, body) = out.split_once("\r\n\r\n").expect("headers end");
    let code = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .expect("a status code");
    (code, body.to_string())
}

fn status(addr: &str) -> Value {
    let (code, body) = http_get(addr, "/status");
    assert_eq!(code, 200, "{body}");
    serde_json::from_str(&body).expect("JSON")
}

/// A built-in synthetic job.
fn job(
    rid: &str,
    seed: u64,
    partitions: u64,
    extra: &str,
    priority: Priority,
) -> SubmitProofRequest {
    let body = format!(r#"{{"constraints":1024,"seed":{seed},"partitions":{partitions}{extra}}}"#);
    SubmitProofRequest {
        request_id: rid.into(),
        proof_kind: ProofKind::BatonSynthetic as i32,
        priority: priority as i32,
        vanilla_proof: body.into_bytes(),
        ..SubmitProofRequest::default()
    }
}

/// Text as Chromium's DOM serialization writes it between tags.
fn escaped(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('\u{a0}', "&nbsp;")
}

/// The job ids of a document.
fn job_ids(doc: &Value) -> Vec<String> {
    doc["pipelines"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["job_id"].as_str().map(str::to_string))
        .collect()
}

/// Where the screenshot goes: target/status-page.png.
fn screenshot_path() -> PathBuf {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent().unwrap_or(&tmp).join("status-page.png")
}

#[test]
fn the_page_shows_what_status_reports() {
    let Some(bin) = chromium() else { return };
    let dir = scratch("status-page");
    let failing = dir.join("fail-while-this-exists");
    std::fs::write(&failing, b"").expect("write");
    let toml = config("").replace("workers = 1", "workers = 2");
    let d = Daemon::start(&dir, &toml, "127.0.0.1:0").expect("daemon starts");

    // One job fails for good, one synthesizes slowly on both workers (a third partition waits),
    // two wait behind it at NORMAL and LOW.
    let fail_while = format!(r#","fail_while":"{}""#, failing.display());
    let jobs = [
        job("st-fail", 1, 1, &fail_while, Priority::High),
        job(
            "st-slow",
            2,
            3,
            r#","synth_delay_ms":45000"#,
            Priority::Normal,
        ),
        job("st-normal", 3, 1, "", Priority::Normal),
        job("st-low", 4, 2, "", Priority::Low),
    ];
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let ids: Vec<String> = rt.block_on(async {
        let mut c = ProvingEngineClient::connect(format!("http://{}", d.grpc))
            .await
            .expect("connect");
        let mut ids = Vec::new();
        for j in jobs {
            let r = c.submit_proof(j).await.expect("accepted").into_inner();
            ids.push(r.job_id);
            // In this order: the slow job takes both workers before the others arrive.
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        ids
    });
    let (fail_id, slow_id, low_id) = (&ids[0], &ids[1], &ids[3]);

    // Until /status shows every stage the page is to draw.
    let deadline = Instant::now() + Duration::from_secs(120);
    let before = loop {
        let doc = status(&d.http);
        let failed = doc["baton_failures"]
            .as_array()
            .is_some_and(|f| f.iter().any(|f| f["job_id"] == fail_id.as_str()));
        let job = |id: &str| {
            doc["pipelines"]
                .as_array()
                .and_then(|p| p.iter().find(|p| p["job_id"] == id).cloned())
        };
        let states = |id: &str| -> Vec<String> {
            job(id)
                .and_then(|j| j["partitions"].as_array().cloned())
                .into_iter()
                .flatten()
                .filter_map(|p| p["baton_state"].as_str().map(str::to_string))
                .collect()
        };
        let slow = states(slow_id);
        let low = states(low_id);
        if failed
            && slow.iter().filter(|s| *s == "synthesizing").count() == 2
            && slow.iter().any(|s| s == "queued")
            && low.len() == 2
            && low.iter().all(|s| s == "queued")
        {
            break doc;
        }
        assert!(
            Instant::now() < deadline,
            "never got there: {doc:#}\n{}",
            d.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    };

    let (code, html) = http_get(&d.http, "/");
    assert_eq!(code, 200);
    for external in [
        "src=\"http",
        "href=\"http",
        "src=\"//",
        "href=\"//",
        "@import",
    ] {
        assert!(!html.contains(external), "the page loads {external}...");
    }

    let url = format!("http://{}/", d.http);
    let profile = dir.join("chromium-profile");
    let dump = headless(bin, &profile, &url, &["--dump-dom"]);
    let after = status(&d.http);
    let dom = String::from_utf8_lossy(&dump.stdout);
    let log = String::from_utf8_lossy(&dump.stderr);
    assert!(dump.status.success(), "chromium failed: {log}");
    assert!(!log.contains("Uncaught"), "a script error:\n{log}");
    assert!(
        dom.contains("data-errors=\"0\""),
        "the page reported script errors:\n{dom}"
    );
    let polls = dom
        .split("data-polls=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .and_then(|n| n.parse::<u32>().ok());
    assert!(
        polls.is_some_and(|n| n >= 1),
        "no poll drew: {polls:?}\n{dom}"
    );

    // Every job live before and after the dump has its lane.
    let after_ids = job_ids(&after);
    let live: Vec<String> = job_ids(&before)
        .into_iter()
        .filter(|id| after_ids.contains(id))
        .collect();
    assert!(live.len() >= 3, "{before:#}");
    for id in &live {
        assert!(
            dom.contains(&format!("class=\"lane\" data-job=\"{}\"", escaped(id))),
            "no lane for {id}"
        );
    }
    for state in ["synthesizing", "queued"] {
        assert!(
            dom.contains(&format!("data-state=\"{state}\"")),
            "no {state} partition drawn"
        );
    }

    // The ledger's figures, as /status gave them on both sides of the dump.
    for (field, id) in [
        ("budget_bytes", "ledger-budget"),
        ("charged_bytes", "ledger-charged"),
        ("resident_bytes", "ledger-resident"),
        ("peak_charged_bytes", "ledger-peak"),
    ] {
        let (b, a) = (&before["ledger"][field], &after["ledger"][field]);
        assert_eq!(b, a, "the ledger moved while the page was read: {field}");
        let bytes = b.as_u64().expect("a number");
        assert!(
            dom.contains(&format!("id=\"{id}\" data-bytes=\"{bytes}\"")),
            "{field} {bytes} not shown"
        );
    }
    assert!(before["ledger"]["budget_bytes"].as_u64() == Some(2 << 30));
    assert!(before["ledger"]["charged_bytes"].as_u64() > Some(0));

    // The queue per priority.
    for p in ["low", "normal"] {
        let (b, a) = (
            &before["baton_queued_by_priority"][p],
            &after["baton_queued_by_priority"][p],
        );
        assert_eq!(b, a, "the {p} queue moved while the page was read");
        let n = b.as_u64().expect("a count");
        assert!(n >= 1, "{before:#}");
        let row = dom
            .split(&format!("data-priority=\"{p}\""))
            .nth(1)
            .and_then(|s| s.split("<span class=\"num\">").nth(1))
            .and_then(|s| s.split('<').next());
        assert_eq!(row, Some(n.to_string().as_str()), "the {p} queue's count");
    }

    // The failure and its reason.
    let failure = before["baton_failures"]
        .as_array()
        .and_then(|f| f.iter().find(|f| f["job_id"] == fail_id.as_str()))
        .expect("the failure");
    let reason = failure["reason"].as_str().expect("a reason");
    assert!(reason.contains("failed"), "{reason}");
    assert!(dom.contains(&format!("<tr data-job=\"{}\">", escaped(fail_id))));
    assert!(dom.contains(&escaped(reason)), "the reason is not shown");

    // A screenshot for people to look at.
    let shot = screenshot_path();
    let _ = std::fs::remove_file(&shot);
    let arg = format!("--screenshot={}", shot.display());
    let out = headless(bin, &profile, &url, &[&arg, "--window-size=1400,1000"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let png = std::fs::read(&shot).expect("the screenshot");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "{}",
        png.len()
    );
    eprintln!("screenshot: {}", shot.display());
}
