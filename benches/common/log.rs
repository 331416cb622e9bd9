//! The backend's and the engine's tracing in a GPU bench's log, as `baton` prints it:
//! BATON_LOG's filter (default warn) on stderr.

pub fn init_from_env() {
    let filter = std::env::var("BATON_LOG").unwrap_or_else(|_| "warn".into());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}
