//! `dashboards/baton.json`, the Grafana dashboard: it parses, every panel queries through the
//! dashboard's datasource variable, and every `baton_*` metric it queries is served on
//! `/metrics` by an engine that has proved one partition on the CPU (a histogram's `_bucket`,
//! `_sum` and `_count` count as the histogram).

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use baton::circuits::Synthetic;
use baton::{Config, Engine, Request};
use rand::SeedableRng;
use serde_json::Value;

fn dashboard() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/dashboards/baton.json");
    let text = std::fs::read_to_string(path).expect("dashboards/baton.json");
    serde_json::from_str(&text).expect("the dashboard is JSON")
}

/// Every string under a key `key`, anywhere in `v`.
fn strings_under<'a>(v: &'a Value, key: &str, out: &mut Vec<&'a str>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                match x.as_str() {
                    Some(s) if k == key => out.push(s),
                    _ => strings_under(x, key, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| strings_under(x, key, out)),
        _ => {}
    }
}

/// The `baton_*` names in a PromQL expression.
fn metric_names(expr: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = expr;
    while let Some(i) = rest.find("baton_") {
        let before = rest[..i].chars().last();
        let tail = &rest[i..];
        let end = tail
            .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(tail.len());
        // Not the tail of a longer identifier.
        if !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            names.push(tail[..end].to_string());
        }
        rest = &tail[end..];
    }
    names
}

/// The metric names with at least one sample in a Prometheus text exposition.
fn exposed(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| l.split(['{', ' ']).next())
        .map(str::to_string)
        .collect()
}

fn get_metrics(addr: SocketAddr) -> String {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    write!(
        s,
        "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut out = String::new();
    s.read_to_string(&mut out).expect("an answer");
    assert!(out.starts_with("HTTP/1.1 200"), "{out}");
    out
}

#[test]
fn the_dashboard_parses_and_queries_only_what_metrics_serves() {
    let d = dashboard();
    assert_eq!(d["title"], "baton");
    assert!(d["uid"].as_str().is_some_and(|u| !u.is_empty()));
    let panels = d["panels"].as_array().expect("panels");
    let mut ids = BTreeSet::new();
    for p in panels {
        let id = p["id"].as_u64().expect("a panel id");
        assert!(ids.insert(id), "panel id {id} twice");
        if p["type"] == "row" {
            continue;
        }
        assert_eq!(p["datasource"]["uid"], "${datasource}", "{}", p["title"]);
        let targets = p["targets"].as_array().expect("targets");
        assert!(!targets.is_empty(), "{} queries nothing", p["title"]);
        for t in targets {
            assert!(t["refId"].is_string() && t["expr"].is_string(), "{t}");
        }
    }

    let mut exprs = Vec::new();
    strings_under(&d, "expr", &mut exprs);
    strings_under(&d, "definition", &mut exprs);
    let queried: BTreeSet<String> = exprs.iter().flat_map(|e| metric_names(e)).collect();
    // What the issue asks the dashboard to show.
    for family in [
        "baton_mailbox_depth",
        "baton_stage_seconds_bucket",
        "baton_ledger_bytes",
        "baton_gpu_busy_seconds_total",
        "baton_proofs_total",
        "baton_warmups_total",
        "baton_restarts_total",
    ] {
        assert!(queried.contains(family), "the dashboard lacks {family}");
    }

    // An engine on the CPU, its /metrics served, after one partition proved.
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let pk = Arc::new(
        baton::generate_random_parameters(Synthetic::new(1 << 9, 0), &mut rng).expect("setup"),
    );
    let cfg = Config {
        budget_bytes: Some(64 << 20),
        synthesis_workers: 1,
        backend: baton::config::BackendChoice::Cpu,
        metrics_listen: Some("127.0.0.1:0".into()),
        ..Config::default()
    };
    let engine = Engine::start(cfg).expect("start");
    let proofs = engine
        .prove_blocking(Request::new(pk, vec![Synthetic::new(1 << 9, 1)]))
        .expect("prove");
    assert_eq!(proofs.len(), 1);
    let text = get_metrics(engine.metrics_addr().expect("metrics.listen"));
    engine.shutdown_blocking();
    let served = exposed(&text);
    let missing: Vec<&String> = queried
        .iter()
        .filter(|name| {
            let base = ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|s| name.strip_suffix(s))
                .unwrap_or(name);
            // A histogram serves its base name only through its suffixed series.
            !served.contains(*name) && !served.contains(&format!("{base}_count"))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "queried but not on /metrics: {missing:?}\n{text}"
    );
}

#[test]
fn metric_names_are_found_in_promql() {
    assert_eq!(
        metric_names(
            r#"sum by (le) (rate(baton_stage_seconds_bucket{x="1"}[5m])) / max(baton_ledger_budget_bytes)"#
        ),
        ["baton_stage_seconds_bucket", "baton_ledger_budget_bytes"]
    );
    assert!(metric_names("rate(notbaton_x[1m])").is_empty());
}
