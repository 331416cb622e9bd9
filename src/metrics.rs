//! Prometheus metrics, all named here (prefix `baton_`), and an optional `/metrics` endpoint (served by [`crate::http`]).

use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounterVec, IntGauge, IntGaugeVec, Opts, Registry,
    TextEncoder,
};

use crate::ledger::{BufferClass, LedgerSnapshot, Stage};

/// Every metric the engine exports.
#[derive(Clone)]
pub struct Metrics {
    /// The registry holding them, for embedders to scrape or extend.
    pub registry: Registry,
    /// `baton_mailbox_depth{actor}`: messages sent to an actor and not yet handled.
    pub mailbox_depth: IntGaugeVec,
    /// `baton_ledger_bytes{class,stage}`.
    pub ledger_bytes: IntGaugeVec,
    /// `baton_ledger_budget_bytes`.
    pub budget_bytes: IntGauge,
    /// `baton_ledger_peak_bytes`.
    pub peak_bytes: IntGauge,
    /// `baton_grants_waiting`: partitions admitted but not yet granted.
    pub grants_waiting: IntGauge,
    /// `baton_stage_seconds{stage}`.
    pub stage_seconds: HistogramVec,
    /// `baton_proofs_total{result}`: ok, failed, retried, abandoned (skipped after its job failed).
    pub proofs_total: IntCounterVec,
    /// `baton_gpu_busy_seconds_total{device}`.
    pub gpu_busy_seconds: prometheus::CounterVec,
    /// `baton_synthesized_alive`: partitions synthesized and not yet taken by a GPU.
    pub synthesized_alive: IntGauge,
    /// `baton_restarts_total{actor}`.
    pub restarts_total: IntCounterVec,
}

/// Actor names used as the `actor` label.
pub const ACTORS: [&str; 5] = ["supervisor", "synthesis", "gpu", "bg2", "dealloc"];

impl Metrics {
    /// Creates and registers every metric in a fresh registry.
    pub fn new() -> prometheus::Result<Self> {
        let registry = Registry::new_custom(Some("baton".into()), None)?;
        let mailbox_depth = IntGaugeVec::new(
            Opts::new("mailbox_depth", "Messages waiting per actor"),
            &["actor"],
        )?;
        let ledger_bytes = IntGaugeVec::new(
            Opts::new("ledger_bytes", "Charged bytes by buffer class and stage"),
            &["class", "stage"],
        )?;
        let budget_bytes = IntGauge::new("ledger_budget_bytes", "Memory budget of the ledger")?;
        let peak_bytes = IntGauge::new("ledger_peak_bytes", "Highest charged bytes seen")?;
        let grants_waiting = IntGauge::new("grants_waiting", "Partitions waiting for a grant")?;
        let stage_seconds = HistogramVec::new(
            HistogramOpts::new("stage_seconds", "Time per stage").buckets(vec![
                0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0,
            ]),
            &["stage"],
        )?;
        let proofs_total = IntCounterVec::new(
            Opts::new("proofs_total", "Partitions finished by result"),
            &["result"],
        )?;
        let gpu_busy_seconds = prometheus::CounterVec::new(
            Opts::new("gpu_busy_seconds_total", "Busy time per device"),
            &["device"],
        )?;
        let synthesized_alive = IntGauge::new(
            "synthesized_alive",
            "Synthesized partitions not yet on a GPU",
        )?;
        let restarts_total =
            IntCounterVec::new(Opts::new("restarts_total", "Actor restarts"), &["actor"])?;
        let m = Metrics {
            registry,
            mailbox_depth,
            ledger_bytes,
            budget_bytes,
            peak_bytes,
            grants_waiting,
            stage_seconds,
            proofs_total,
            gpu_busy_seconds,
            synthesized_alive,
            restarts_total,
        };
        let collectors: Vec<Box<dyn prometheus::core::Collector>> = vec![
            Box::new(m.mailbox_depth.clone()),
            Box::new(m.ledger_bytes.clone()),
            Box::new(m.budget_bytes.clone()),
            Box::new(m.peak_bytes.clone()),
            Box::new(m.grants_waiting.clone()),
            Box::new(m.stage_seconds.clone()),
            Box::new(m.proofs_total.clone()),
            Box::new(m.gpu_busy_seconds.clone()),
            Box::new(m.synthesized_alive.clone()),
            Box::new(m.restarts_total.clone()),
        ];
        for c in collectors {
            m.registry.register(c)?;
        }
        for a in ACTORS {
            m.mailbox_depth.with_label_values(&[a]).set(0);
        }
        Ok(m)
    }

    /// Copies a ledger snapshot into the gauges.
    pub fn observe_ledger(&self, s: &LedgerSnapshot) {
        self.budget_bytes.set(s.budget_bytes as i64);
        self.peak_bytes.set(s.peak_charged_bytes as i64);
        for class in BufferClass::ALL {
            for stage in Stage::ALL {
                self.ledger_bytes
                    .with_label_values(&[class.as_str(), stage.as_str()])
                    .set(s.bytes(class, stage) as i64);
            }
        }
    }

    /// The text exposition of every metric.
    pub fn render(&self) -> String {
        let mut buf = Vec::new();
        if TextEncoder::new()
            .encode(&self.registry.gather(), &mut buf)
            .is_err()
        {
            return String::new();
        }
        String::from_utf8(buf).unwrap_or_default()
    }

    /// Serves `GET /metrics` and `GET /healthz` on `addr` from a background thread
    /// ([`crate::http`]).
    pub fn serve(&self, addr: &str) -> std::io::Result<std::net::SocketAddr> {
        let me = self.clone();
        crate::http::serve_in_thread(addr, std::sync::Arc::new(move || me.render()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_metrics_render_with_prefix() {
        let m = Metrics::new().expect("metrics");
        m.proofs_total.with_label_values(&["ok"]).inc();
        let text = m.render();
        for name in [
            "baton_mailbox_depth",
            "baton_proofs_total",
            "baton_ledger_budget_bytes",
            "baton_grants_waiting",
        ] {
            assert!(text.contains(name), "{name} missing from\n{text}");
        }
    }
}
