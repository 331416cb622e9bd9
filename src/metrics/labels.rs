//! The label values of the `baton_*` metrics, one enum per label: `actor`, `stage`, `result`
//! (proofs and warm-ups), `endpoint`, `reason` (refusals and key evictions).

/// The actor kinds: the `actor` label of `baton_mailbox_depth` and `baton_restarts_total`, and
/// the actor named in a failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ActorKind {
    /// The Supervisor.
    Supervisor,
    /// A synthesis worker.
    Synthesis,
    /// A GPU actor.
    Gpu,
    /// A B_G2 worker.
    Bg2,
    /// The Dealloc actor.
    Dealloc,
}

impl ActorKind {
    /// Every kind.
    pub const ALL: [ActorKind; 5] = [
        Self::Supervisor,
        Self::Synthesis,
        Self::Gpu,
        Self::Bg2,
        Self::Dealloc,
    ];

    /// The label.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Supervisor => "supervisor",
            Self::Synthesis => "synthesis",
            Self::Gpu => "gpu",
            Self::Bg2 => "bg2",
            Self::Dealloc => "dealloc",
        }
    }
}

/// The timed steps of a partition: the `stage` label of `baton_stage_seconds`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// Synthesis.
    Synthesis,
    /// Waiting in front of the GPU actors.
    QueuedGpu,
    /// Expanding a witness that waited packed as bits (host, in the GPU actor).
    Expand,
    /// A whole-partition device call, from its start to its sums (its key's upload, a/b/c
    /// evaluated on the device, H and every MSM): `resident`, `device_abc`, `h` and `g1_msm`
    /// are parts of it.
    PartitionCall,
    /// Making a key's bases resident on the device for whole-partition calls: ahead of its
    /// partitions when a job is admitted, or else in the key's first partition on each device
    /// (zero in the partitions after that).
    Resident,
    /// a/b/c evaluated on the device from the key's recording (a witness-only partition).
    DeviceAbc,
    /// The H computation.
    H,
    /// The G1 MSMs.
    G1Msm,
    /// The B_G2 MSM and proof assembly.
    Bg2,
    /// Dropping buffers.
    Dealloc,
}

impl Step {
    /// Every step, in pipeline order.
    pub const ALL: [Step; 10] = [
        Self::Synthesis,
        Self::QueuedGpu,
        Self::Expand,
        Self::PartitionCall,
        Self::Resident,
        Self::DeviceAbc,
        Self::H,
        Self::G1Msm,
        Self::Bg2,
        Self::Dealloc,
    ];

    /// The label.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Synthesis => "synthesis",
            Self::QueuedGpu => "queued_gpu",
            Self::Expand => "expand",
            Self::PartitionCall => "partition_call",
            Self::DeviceAbc => "device_abc",
            Self::Resident => "resident",
            Self::H => "h",
            Self::G1Msm => "g1_msm",
            Self::Bg2 => "bg2",
            Self::Dealloc => "dealloc",
        }
    }
}

/// How a partition attempt ended: the `result` label of `baton_proofs_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProofResult {
    /// A proof was made.
    Ok,
    /// The partition failed for good (one per failed job).
    Failed,
    /// The attempt failed and the partition was queued again.
    Retried,
    /// Skipped because its job had already failed.
    Abandoned,
}

impl ProofResult {
    /// Every result.
    pub const ALL: [ProofResult; 4] = [Self::Ok, Self::Failed, Self::Retried, Self::Abandoned];

    /// The label.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Failed => "failed",
            Self::Retried => "retried",
            Self::Abandoned => "abandoned",
        }
    }
}

/// How a key's warm-up on a device ended: the `result` label of `baton_warmups_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WarmResult {
    /// Bases (and the domain's tables) were uploaded.
    Uploaded,
    /// Nothing uploaded: already resident, no room without evicting, or a stage with nothing to
    /// make resident (the CPU's, or a key no device partition can take).
    Skipped,
    /// The upload failed; the key's first partition uploads it instead.
    Failed,
    /// The warm-up panicked; the GPU actor restarted.
    Panicked,
}

impl WarmResult {
    /// The label.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Uploaded => "uploaded",
            Self::Skipped => "skipped",
            Self::Failed => "failed",
            Self::Panicked => "panicked",
        }
    }
}

/// Where `baton serve` refused a call: the `endpoint` label of `baton_server_refusals_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Endpoint {
    /// The gRPC service.
    Grpc,
    /// The HTTP port (`/metrics`, `/healthz`, `/status`).
    Http,
}

impl Endpoint {
    /// Every endpoint.
    pub const ALL: [Endpoint; 2] = [Self::Grpc, Self::Http];

    /// The label.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Grpc => "grpc",
            Self::Http => "http",
        }
    }
}

/// Why `baton serve` refused a call: the `reason` label of `baton_server_refusals_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Refusal {
    /// A token is required and none was sent.
    NoToken,
    /// The token sent is not the daemon's.
    WrongToken,
    /// No token is configured and the client's address is outside `server.allow_clients`.
    NotAllowed,
    /// The request message is larger than `server.max_request_bytes`.
    TooLarge,
}

impl Refusal {
    /// Every reason.
    pub const ALL: [Refusal; 4] = [
        Self::NoToken,
        Self::WrongToken,
        Self::NotAllowed,
        Self::TooLarge,
    ];

    /// The label.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::NoToken => "no_token",
            Self::WrongToken => "wrong_token",
            Self::NotAllowed => "not_allowed",
            Self::TooLarge => "too_large",
        }
    }
}

/// Why a proving key was evicted: the `reason` label of `baton_key_evictions_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyEviction {
    /// A job needed the memory: the least recently used key no job held.
    Pressure,
    /// A client asked (EvictSRS).
    Request,
}

impl KeyEviction {
    /// Every reason.
    pub const ALL: [KeyEviction; 2] = [Self::Pressure, Self::Request];

    /// The label.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Pressure => "pressure",
            Self::Request => "request",
        }
    }
}
