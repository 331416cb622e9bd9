//! The HTTP port: `routes` (`/metrics`, `/healthz`, `/status`, `/`, behind the gRPC gate),
//! `status_json` the `/status` document cuzk's tools read, `status_build` what fills it, and
//! `status_page` the page at `/` that draws it (also served by the CLI's `--status-port`).

pub mod routes;
pub mod status_build;
pub mod status_json;
pub mod status_page;
