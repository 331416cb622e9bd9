//! Reading a C1 output: the bare `SealCommitPhase1Output` JSON filecoin-proofs-api writes (as
//! Lotus and Curio store it), or the envelope Curio sends its prover and lotus-bench writes,
//! `{"SectorNum": n, "Phase1Out": "<base64 of that JSON>", "SectorSize": bytes}`.

use base64::Engine as _;
use filecoin_proofs_api::seal::SealCommitPhase1Output;
use serde::Deserialize;

use super::error::{FilecoinError, Result};

/// A C1 output and what its envelope said, if it came in one.
#[derive(Clone, Debug)]
pub struct C1Input {
    /// The C1 output.
    pub output: SealCommitPhase1Output,
    /// The envelope's sector number.
    pub sector_id: Option<u64>,
    /// The envelope's sector size in bytes.
    pub sector_size: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Envelope {
    #[serde(rename = "SectorNum")]
    sector_num: u64,
    #[serde(rename = "Phase1Out")]
    phase1_out: String,
    #[serde(rename = "SectorSize")]
    sector_size: u64,
}

/// What serde found, in words that say whether the file was cut short or garbled.
fn json_error(what: &str, e: &serde_json::Error, len: usize) -> FilecoinError {
    use serde_json::error::Category;
    let at = format!("line {} column {}", e.line(), e.column());
    let reason = match e.classify() {
        Category::Eof => {
            format!("{what} is truncated: it ends ({len} bytes) at {at} inside a value")
        }
        Category::Syntax => format!("{what} is not valid JSON: syntax error at {at}: {e}"),
        Category::Data => format!("{what} is JSON but not a C1 output: {e}"),
        Category::Io => format!("{what} could not be read: {e}"),
    };
    FilecoinError::C1Json { reason }
}

/// Parses a C1 file's bytes, bare or in Curio's envelope.
pub fn parse_c1(bytes: &[u8]) -> Result<C1Input> {
    // A bare C1 output never holds this key (and base64 text never holds a quote).
    let is_envelope = bytes.windows(11).any(|w| w == b"\"Phase1Out\"");
    if !is_envelope {
        let output =
            serde_json::from_slice(bytes).map_err(|e| json_error("C1 JSON", &e, bytes.len()))?;
        return Ok(C1Input {
            output,
            sector_id: None,
            sector_size: None,
        });
    }
    let env: Envelope =
        serde_json::from_slice(bytes).map_err(|e| json_error("C1 envelope", &e, bytes.len()))?;
    let inner = base64::engine::general_purpose::STANDARD
        .decode(env.phase1_out.trim())
        .map_err(|e| FilecoinError::C1Base64 {
            reason: e.to_string(),
        })?;
    let output: SealCommitPhase1Output = serde_json::from_slice(&inner)
        .map_err(|e| json_error("the envelope's Phase1Out", &e, inner.len()))?;
    let c1_size = u64::from(output.registered_proof.sector_size());
    if c1_size != env.sector_size {
        return Err(FilecoinError::Mismatch {
            what: "sector size",
            left: format!("envelope SectorSize {}", env.sector_size),
            right: format!("C1 proof type {:?} ({c1_size})", output.registered_proof),
        });
    }
    Ok(C1Input {
        output,
        sector_id: Some(env.sector_num),
        sector_size: Some(env.sector_size),
    })
}

impl C1Input {
    /// The sector id to prove: the envelope's, the caller's, or both when they agree.
    pub fn sector_id(&self, given: Option<u64>) -> Result<u64> {
        pick_sector_id(self.sector_id, given)
    }
}

fn pick_sector_id(envelope: Option<u64>, given: Option<u64>) -> Result<u64> {
    match (envelope, given) {
        (Some(a), Some(b)) if a != b => Err(FilecoinError::Mismatch {
            what: "sector id",
            left: format!("envelope SectorNum {a}"),
            right: format!("given {b}"),
        }),
        (Some(a), _) => Ok(a),
        (None, Some(b)) => Ok(b),
        (None, None) => Err(FilecoinError::MissingSectorId),
    }
}

/// Wraps a bare C1 JSON in Curio's envelope (tests, tools).
pub fn envelope(c1_json: &[u8], sector_id: u64, sector_size: u64) -> Vec<u8> {
    let b64 = base64::engine::general_purpose::STANDARD.encode(c1_json);
    format!("{{\"SectorNum\":{sector_id},\"Phase1Out\":\"{b64}\",\"SectorSize\":{sector_size}}}")
        .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_and_truncation_are_told_apart() {
        let e = parse_c1(b"{\"registered_proof\": ")
            .err()
            .map(|e| e.to_string());
        assert!(
            e.as_deref().is_some_and(|e| e.contains("truncated")),
            "{e:?}"
        );
        let e = parse_c1(b"{not json").err().map(|e| e.to_string());
        assert!(
            e.as_deref().is_some_and(|e| e.contains("not valid JSON")),
            "{e:?}"
        );
        let e = parse_c1(b"{\"a\": 1}").err().map(|e| e.to_string());
        assert!(
            e.as_deref().is_some_and(|e| e.contains("not a C1 output")),
            "{e:?}"
        );
        let env = br#"{"SectorNum":1,"Phase1Out":"%%%","SectorSize":2048}"#;
        assert!(matches!(parse_c1(env), Err(FilecoinError::C1Base64 { .. })));
    }

    #[test]
    fn sector_ids_must_agree() {
        assert_eq!(pick_sector_id(Some(4), None).ok(), Some(4));
        assert_eq!(pick_sector_id(Some(4), Some(4)).ok(), Some(4));
        assert_eq!(pick_sector_id(None, Some(5)).ok(), Some(5));
        assert!(matches!(
            pick_sector_id(Some(4), Some(5)),
            Err(FilecoinError::Mismatch { .. })
        ));
        assert!(matches!(
            pick_sector_id(None, None),
            Err(FilecoinError::MissingSectorId)
        ));
    }
}
