//! Prometheus metrics, all named here (prefix `baton_`), and an optional `/metrics` endpoint (served by [`crate::http`]).

use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts,
    Registry, TextEncoder,
};

use crate::ledger::{BufferClass, LedgerSnapshot, Stage};

mod labels;
pub use labels::{ActorKind, Endpoint, KeyEviction, ProofResult, Refusal, Step, WarmResult};

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
    /// `baton_grants_lost_total`: grants dropped unsettled (a lost message or a dead actor),
    /// reconciled by the Supervisor.
    pub grants_lost_total: IntCounter,
    /// `baton_warmups_total{device,result}`: keys made ready on a device ahead of their
    /// partitions, by [`WarmResult`].
    pub warmups_total: IntCounterVec,
    /// `baton_server_refusals_total{endpoint,reason}`: calls `baton serve` refused before any
    /// handler ran, by [`Endpoint`] and [`Refusal`].
    pub refusals_total: IntCounterVec,
    /// `baton_key_evictions_total{reason}`: proving keys the daemon evicted, by [`KeyEviction`].
    pub key_evictions_total: IntCounterVec,
    /// `baton_device_bytes{device}`: device memory in baton's buffers after the device's last
    /// call (under `gpu.memory_limit` when set).
    pub device_bytes: IntGaugeVec,
    /// `baton_synthesis_parked_seconds_total`: seconds ordinary synthesis threads spent paused
    /// while a CRITICAL partition synthesized (`synthesis.yield_to_critical`).
    pub synthesis_parked_seconds: prometheus::Counter,
}

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
        let grants_lost_total = IntCounter::new(
            "grants_lost_total",
            "Grants dropped unsettled (a lost message or a dead actor), reconciled",
        )?;
        let warmups_total = IntCounterVec::new(
            Opts::new(
                "warmups_total",
                "Keys made ready on a device ahead of their partitions, by result",
            ),
            &["device", "result"],
        )?;
        let refusals_total = IntCounterVec::new(
            Opts::new(
                "server_refusals_total",
                "Calls the daemon refused before any handler ran, by endpoint and reason",
            ),
            &["endpoint", "reason"],
        )?;
        let key_evictions_total = IntCounterVec::new(
            Opts::new("key_evictions_total", "Proving keys evicted, by reason"),
            &["reason"],
        )?;
        let device_bytes = IntGaugeVec::new(
            Opts::new(
                "device_bytes",
                "Device memory in baton's buffers after the device's last call",
            ),
            &["device"],
        )?;
        let synthesis_parked_seconds = prometheus::Counter::new(
            "synthesis_parked_seconds_total",
            "Seconds ordinary synthesis threads spent paused for CRITICAL synthesis",
        )?;
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
            grants_lost_total,
            warmups_total,
            refusals_total,
            key_evictions_total,
            device_bytes,
            synthesis_parked_seconds,
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
            Box::new(m.grants_lost_total.clone()),
            Box::new(m.warmups_total.clone()),
            Box::new(m.refusals_total.clone()),
            Box::new(m.key_evictions_total.clone()),
            Box::new(m.device_bytes.clone()),
            Box::new(m.synthesis_parked_seconds.clone()),
        ];
        for c in collectors {
            m.registry.register(c)?;
        }
        // Every series a dashboard queries exists from the start, at 0.
        for a in ActorKind::ALL {
            m.mailbox(a).set(0);
            m.restarts_total.with_label_values(&[a.as_str()]);
        }
        for r in ProofResult::ALL {
            m.proofs_total.with_label_values(&[r.as_str()]);
        }
        for r in KeyEviction::ALL {
            m.key_evictions_total.with_label_values(&[r.as_str()]);
        }
        for e in Endpoint::ALL {
            for r in Refusal::ALL {
                m.refusals_total
                    .with_label_values(&[e.as_str(), r.as_str()]);
            }
        }
        Ok(m)
    }

    /// `baton_mailbox_depth{actor}` of one actor kind.
    pub fn mailbox(&self, actor: ActorKind) -> IntGauge {
        self.mailbox_depth.with_label_values(&[actor.as_str()])
    }

    /// Counts one restart of `actor` (`baton_restarts_total{actor}`).
    pub fn restarted(&self, actor: ActorKind) {
        self.restarts_total
            .with_label_values(&[actor.as_str()])
            .inc();
    }

    /// Counts one warm-up on `device` (`baton_warmups_total{device,result}`).
    pub fn warmed(&self, device: &str, result: WarmResult) {
        self.warmups_total
            .with_label_values(&[device, result.as_str()])
            .inc();
    }

    /// Counts one call refused at `endpoint` (`baton_server_refusals_total{endpoint,reason}`).
    pub fn refused(&self, endpoint: Endpoint, reason: Refusal) {
        self.refusals_total
            .with_label_values(&[endpoint.as_str(), reason.as_str()])
            .inc();
    }

    /// Counts one key evicted for `reason` (`baton_key_evictions_total{reason}`).
    pub fn key_evicted(&self, reason: KeyEviction) {
        self.key_evictions_total
            .with_label_values(&[reason.as_str()])
            .inc();
    }

    /// Records `seconds` spent in `step` (`baton_stage_seconds{stage}`).
    pub fn observe(&self, step: Step, seconds: f64) {
        self.stage_seconds
            .with_label_values(&[step.as_str()])
            .observe(seconds);
    }

    /// Counts one partition outcome (`baton_proofs_total{result}`).
    pub fn proof(&self, result: ProofResult) {
        self.proofs_total
            .with_label_values(&[result.as_str()])
            .inc();
    }

    /// Mean seconds of each step seen so far, in pipeline order (steps not yet seen left out).
    pub fn step_means(&self) -> Vec<(&'static str, f64)> {
        Step::ALL
            .into_iter()
            .filter_map(|s| {
                let m = self
                    .stage_seconds
                    .get_metric_with_label_values(&[s.as_str()])
                    .ok()?;
                let n = m.get_sample_count();
                (n > 0).then(|| (s.as_str(), m.get_sample_sum() / n as f64))
            })
            .collect()
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
        m.proof(ProofResult::Ok);
        let text = m.render();
        for name in [
            "baton_mailbox_depth",
            "baton_proofs_total",
            "baton_ledger_budget_bytes",
            "baton_grants_waiting",
            "baton_key_evictions_total{reason=\"pressure\"} 0",
        ] {
            assert!(text.contains(name), "{name} missing from\n{text}");
        }
    }
}
