//! Tests of `--cuzk-config`: Curio's example config, cuzk's defaults, unknown keys, bad values.

use super::*;
use crate::Config;

fn curio_example() -> CuzkConfig {
    let text = include_str!("../../../tests/fixtures/cuzk.example.toml");
    CuzkConfig::parse(Path::new("cuzk.example.toml"), text).expect("curio's example maps")
}

#[test]
fn curio_example_maps_onto_baton() {
    let c = curio_example();
    let layer = c.layer();
    let mut pairs: Vec<(&str, &str)> = layer
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    pairs.sort();
    assert_eq!(
        pairs,
        [
            ("gpu.devices", "all"),
            ("log.level", "info"),
            ("memory.budget", "auto"),
            ("memory.margin", "5368709120"),
            ("server.listen", "0.0.0.0:9820"),
        ]
    );
    assert_eq!(
        c.env(),
        [("FIL_PROOFS_PARAMETER_CACHE", "/data/zk/params".to_string())]
    );
    let threads = c.mapped.iter().find(|m| m.cuzk == "synthesis.threads");
    assert_eq!(
        threads.map(|m| (m.target, m.value.clone())),
        Some((Target::Env("RAYON_NUM_THREADS"), None)),
        "0 = all CPUs, rayon's own default"
    );
    assert!(
        c.mapped.iter().all(|m| !m.default),
        "every mapped key is in the file"
    );
    assert_eq!(
        c.unmapped,
        [
            "gpus.gpu_threads",
            "gpus.gpu_workers_per_device",
            "memory.eviction_min_idle",
            "pipeline.enabled",
            "pipeline.synthesis_concurrency",
            "pipeline.synthesis_lookahead",
            "scheduler.max_batch_size",
            "scheduler.max_batch_wait_ms",
            "scheduler.sort_by_type",
        ]
    );
    assert!(c.unknown.is_empty());
    let line = c.unmapped_line().expect("some are unmapped");
    assert!(
        !line.contains('\n') && line.contains("scheduler.sort_by_type"),
        "{line}"
    );
    assert_eq!(c.log_level(), Some("info"));
    assert_eq!(c.origin("server.listen"), Some("daemon.listen"));

    // Its listen address reaches other machines: baton wants a guard, and says which.
    let none = std::iter::empty();
    let err = Config::load_from_layered(Path::new("/nonexistent.toml"), none, &layer, &[])
        .expect_err("0.0.0.0 without a guard");
    assert!(err.to_string().contains("server.allow_clients"), "{err}");
    let env = [
        ("BATON_SERVER_ALLOW_CLIENTS", "10.0.0.0/8"),
        ("BATON_LOG_LEVEL", "debug"),
    ]
    .map(|(k, v)| (k.to_string(), v.to_string()));
    let cfg = Config::load_from_layered(Path::new("/nonexistent.toml"), env, &layer, &[])
        .expect("with a client range");
    assert_eq!(cfg.server.listen.to_string(), "0.0.0.0:9820");
    assert_eq!((cfg.budget_bytes, cfg.margin_bytes), (None, 5 << 30));
    assert!(cfg.gpu_devices.is_empty(), "every GPU");
    assert_eq!(cfg.log_level, "debug", "BATON_* wins over the cuzk file");
}

#[test]
fn defaults_unknown_keys_and_bad_values() {
    let text = "[daemon]\nstatus_listen = \"127.0.0.1:9821\"\nfuture = 1\n\
                [memory]\ntotal_budget = \"256GiB\"\npinned_budget = \"50GiB\"\n\
                [gpus]\ndevices = [1, 0]\n[synthesis]\nthreads = 8\npartition_workers = 12\n\
                [pipeline]\nmax_parallel_synthesis = 6\n[extra]\nthing = true\n";
    let c = CuzkConfig::parse(Path::new("c.toml"), text).expect("maps");
    let layer = c.layer();
    let get = |k: &str| layer.iter().find(|(x, _)| x == k).map(|(_, v)| v.as_str());
    assert_eq!(
        get("server.listen"),
        Some("unix:///run/curio/cuzk.sock"),
        "cuzk's default"
    );
    assert_eq!(get("metrics.listen"), Some("127.0.0.1:9821"));
    assert_eq!(get("memory.budget"), Some("274877906944"));
    assert_eq!(
        get("memory.margin"),
        Some("5368709120"),
        "cuzk's default margin"
    );
    assert_eq!(get("gpu.devices"), Some("1,0"));
    assert_eq!(get("synthesis.workers"), Some("6"));
    assert_eq!(
        c.env(),
        [
            ("RAYON_NUM_THREADS", "8".to_string()),
            ("FIL_PROOFS_PARAMETER_CACHE", "/data/zk/params".to_string()),
        ]
    );
    assert_eq!(
        c.unmapped,
        ["memory.pinned_budget", "synthesis.partition_workers"]
    );
    assert_eq!(c.unknown, ["daemon.future", "extra.thing"]);
    let line = c.unmapped_line().expect("a line");
    assert!(
        line.contains("unknown to cuzk too: daemon.future, extra.thing"),
        "{line}"
    );
    let cfg = Config::load_from_layered(
        Path::new("/nonexistent.toml"),
        std::iter::empty(),
        &layer,
        &[],
    )
    .expect("a unix socket needs no guard");
    assert_eq!(cfg.gpu_devices, vec![1, 0]);
    assert_eq!(cfg.metrics_listen.as_deref(), Some("127.0.0.1:9821"));

    for (bad, key) in [
        ("[daemon]\nlisten = \"nowhere\"\n", "daemon.listen"),
        (
            "[daemon]\nstatus_listen = \"localhost\"\n",
            "daemon.status_listen",
        ),
        ("[memory]\ntotal_budget = \"lots\"\n", "memory.total_budget"),
        ("[gpus]\ndevices = [\"a\"]\n", "gpus.devices"),
        ("[synthesis]\nthreads = -1\n", "synthesis.threads"),
    ] {
        let err = CuzkConfig::parse(Path::new("c.toml"), bad).expect_err(bad);
        assert!(err.to_string().contains(key), "{bad}: {err}");
    }
    let err = CuzkConfig::parse(Path::new("c.toml"), "[daemon\n").expect_err("not TOML");
    assert!(err.to_string().contains("c.toml"), "{err}");
    assert!(CuzkConfig::read(Path::new("/nonexistent/cuzk.toml")).is_err());
}
