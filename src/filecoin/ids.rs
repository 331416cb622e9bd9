//! Names the field uses: circuit ids (`porep-32g`, as cuzk names its keys), the registered proof
//! types by their numeric chain ids, sector sizes, and the prover id Lotus derives from a miner.

use std::fmt;
use std::str::FromStr;

use filecoin_proofs_api::{RegisteredPoStProof, RegisteredSealProof, RegisteredUpdateProof};

use super::error::{FilecoinError, Result};

/// The sector sizes filecoin-proofs supports, with their short names.
pub const SECTOR_SIZES: [(u64, &str); 5] = [
    (2 << 10, "2k"),
    (8 << 20, "8m"),
    (512 << 20, "512m"),
    (32 << 30, "32g"),
    (64 << 30, "64g"),
];

/// Which circuit a key belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CircuitKind {
    /// PoRep commit (C2): the stacked DRG circuit.
    Porep,
    /// WindowPoSt (fallback PoSt, window flavour).
    WindowPost,
    /// WinningPoSt (fallback PoSt, winning flavour).
    WinningPost,
    /// SnapDeals (empty sector update).
    SnapDeals,
}

impl CircuitKind {
    fn prefix(self) -> &'static str {
        match self {
            CircuitKind::Porep => "porep",
            CircuitKind::WindowPost => "wpost",
            CircuitKind::WinningPost => "winning",
            CircuitKind::SnapDeals => "snap",
        }
    }

    /// Every kind.
    pub const ALL: [CircuitKind; 4] = [
        CircuitKind::Porep,
        CircuitKind::WindowPost,
        CircuitKind::WinningPost,
        CircuitKind::SnapDeals,
    ];
}

/// A circuit and its sector size, written `porep-32g`, `wpost-2k`, `winning-512m`, `snap-64g`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CircuitId {
    /// The circuit.
    pub kind: CircuitKind,
    /// Sector size in bytes.
    pub sector_size: u64,
}

/// The short name of a sector size (`32g`), if filecoin-proofs supports it.
pub fn sector_size_name(bytes: u64) -> Option<&'static str> {
    SECTOR_SIZES
        .iter()
        .find(|(b, _)| *b == bytes)
        .map(|(_, n)| *n)
}

/// Parses a sector size: `2KiB`, `32GiB`, `8m`, `2048`, ...
pub fn parse_sector_size(s: &str) -> Result<u64> {
    let t = s.trim().to_ascii_lowercase();
    let t = t
        .strip_suffix("ib")
        .or_else(|| t.strip_suffix('b'))
        .unwrap_or(&t);
    let found = SECTOR_SIZES
        .iter()
        .find(|(b, n)| *n == t || b.to_string() == t)
        .map(|(b, _)| *b);
    found.ok_or_else(|| {
        FilecoinError::BadInput(format!(
            "sector size {s:?}: expected one of 2KiB, 8MiB, 512MiB, 32GiB, 64GiB"
        ))
    })
}

impl fmt::Display for CircuitId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let size = sector_size_name(self.sector_size)
            .map(str::to_string)
            .unwrap_or_else(|| format!("{}b", self.sector_size));
        write!(f, "{}-{size}", self.kind.prefix())
    }
}

impl FromStr for CircuitId {
    type Err = FilecoinError;

    fn from_str(s: &str) -> Result<Self> {
        let bad = || {
            FilecoinError::BadInput(format!(
                "circuit id {s:?}: expected porep|wpost|winning|snap, a dash and a sector size (e.g. porep-32g)"
            ))
        };
        let (prefix, size) = s.split_once('-').ok_or_else(bad)?;
        let kind = CircuitKind::ALL
            .into_iter()
            .find(|k| k.prefix() == prefix)
            .ok_or_else(bad)?;
        let sector_size = parse_sector_size(size).map_err(|_| bad())?;
        Ok(CircuitId { kind, sector_size })
    }
}

impl CircuitId {
    /// The circuit of a seal proof type (all non-aggregated PoRep versions share one circuit per
    /// sector size).
    pub fn of_seal(p: RegisteredSealProof) -> Self {
        CircuitId {
            kind: CircuitKind::Porep,
            sector_size: u64::from(p.sector_size()),
        }
    }

    /// The circuit of a PoSt proof type.
    pub fn of_post(p: RegisteredPoStProof) -> Self {
        let kind = match p.typ() {
            filecoin_proofs_api::PoStType::Window => CircuitKind::WindowPost,
            filecoin_proofs_api::PoStType::Winning => CircuitKind::WinningPost,
        };
        CircuitId {
            kind,
            sector_size: u64::from(p.sector_size()),
        }
    }

    /// The circuit of an update proof type.
    pub fn of_update(p: RegisteredUpdateProof) -> Self {
        CircuitId {
            kind: CircuitKind::SnapDeals,
            sector_size: u64::from(p.sector_size()),
        }
    }
}

/// The prover id Lotus derives from a miner id: the payload of the ID address `f0<miner>`, i.e.
/// the unsigned LEB128 varint of the id, zero-padded to 32 bytes.
pub fn prover_id_from_miner(miner_id: u64) -> [u8; 32] {
    let mut out = [0u8; 32];
    let (mut v, mut i) = (miner_id, 0);
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out[i] = byte;
            return out;
        }
        out[i] = byte | 0x80;
        i += 1;
    }
}

const SEAL_PROOFS: [RegisteredSealProof; 20] = {
    use RegisteredSealProof::*;
    [
        StackedDrg2KiBV1,
        StackedDrg8MiBV1,
        StackedDrg512MiBV1,
        StackedDrg32GiBV1,
        StackedDrg64GiBV1,
        StackedDrg2KiBV1_1,
        StackedDrg8MiBV1_1,
        StackedDrg512MiBV1_1,
        StackedDrg32GiBV1_1,
        StackedDrg64GiBV1_1,
        StackedDrg2KiBV1_1_Feat_SyntheticPoRep,
        StackedDrg8MiBV1_1_Feat_SyntheticPoRep,
        StackedDrg512MiBV1_1_Feat_SyntheticPoRep,
        StackedDrg32GiBV1_1_Feat_SyntheticPoRep,
        StackedDrg64GiBV1_1_Feat_SyntheticPoRep,
        StackedDrg2KiBV1_2_Feat_NonInteractivePoRep,
        StackedDrg8MiBV1_2_Feat_NonInteractivePoRep,
        StackedDrg512MiBV1_2_Feat_NonInteractivePoRep,
        StackedDrg32GiBV1_2_Feat_NonInteractivePoRep,
        StackedDrg64GiBV1_2_Feat_NonInteractivePoRep,
    ]
};

const POST_PROOFS: [RegisteredPoStProof; 15] = {
    use RegisteredPoStProof::*;
    [
        StackedDrgWinning2KiBV1,
        StackedDrgWinning8MiBV1,
        StackedDrgWinning512MiBV1,
        StackedDrgWinning32GiBV1,
        StackedDrgWinning64GiBV1,
        StackedDrgWindow2KiBV1,
        StackedDrgWindow8MiBV1,
        StackedDrgWindow512MiBV1,
        StackedDrgWindow32GiBV1,
        StackedDrgWindow64GiBV1,
        StackedDrgWindow2KiBV1_2,
        StackedDrgWindow8MiBV1_2,
        StackedDrgWindow512MiBV1_2,
        StackedDrgWindow32GiBV1_2,
        StackedDrgWindow64GiBV1_2,
    ]
};

const UPDATE_PROOFS: [RegisteredUpdateProof; 5] = {
    use RegisteredUpdateProof::*;
    [
        StackedDrg2KiBV1,
        StackedDrg8MiBV1,
        StackedDrg512MiBV1,
        StackedDrg32GiBV1,
        StackedDrg64GiBV1,
    ]
};

fn by_number<T: Copy>(table: &[T], n: u64, what: &str) -> Result<T> {
    usize::try_from(n)
        .ok()
        .and_then(|i| table.get(i).copied())
        .ok_or_else(|| FilecoinError::BadInput(format!("unknown registered {what} proof {n}")))
}

/// A seal proof type by its chain number (`abi.RegisteredSealProof`: 0 = 2KiB V1 ... 8 = 32GiB
/// V1_1 ... 15.. = non-interactive).
pub fn seal_proof_from_number(n: u64) -> Result<RegisteredSealProof> {
    by_number(&SEAL_PROOFS, n, "seal")
}

/// A PoSt proof type by its chain number (`abi.RegisteredPoStProof`: 0..4 winning, 5..9 window
/// V1, 10..14 window V1_1, which filecoin-proofs calls V1_2).
pub fn post_proof_from_number(n: u64) -> Result<RegisteredPoStProof> {
    by_number(&POST_PROOFS, n, "PoSt")
}

/// An update proof type by its chain number (`abi.RegisteredUpdateProof`: 0..4).
pub fn update_proof_from_number(n: u64) -> Result<RegisteredUpdateProof> {
    by_number(&UPDATE_PROOFS, n, "update")
}

/// The proof types the parameters of `id` serve, newest first: the one to name when only the
/// circuit is known (preloading a key, making parameters).
pub fn seal_proof_for(sector_size: u64) -> Option<RegisteredSealProof> {
    SEAL_PROOFS[5..10]
        .iter()
        .copied()
        .find(|p| u64::from(p.sector_size()) == sector_size)
}

/// The newest WindowPoSt or WinningPoSt proof type of a sector size.
pub fn post_proof_for(kind: CircuitKind, sector_size: u64) -> Option<RegisteredPoStProof> {
    let range = match kind {
        CircuitKind::WinningPost => &POST_PROOFS[0..5],
        CircuitKind::WindowPost => &POST_PROOFS[10..15],
        _ => return None,
    };
    range
        .iter()
        .copied()
        .find(|p| u64::from(p.sector_size()) == sector_size)
}

/// The update proof type of a sector size.
pub fn update_proof_for(sector_size: u64) -> Option<RegisteredUpdateProof> {
    UPDATE_PROOFS
        .iter()
        .copied()
        .find(|p| u64::from(p.sector_size()) == sector_size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prover_id_is_the_id_address_payload() {
        // f01000: 1000 = 0b111_1101000 → e8 07.
        let id = prover_id_from_miner(1000);
        assert_eq!(&id[..3], &[0xe8, 0x07, 0]);
        assert_eq!(prover_id_from_miner(0)[0], 0);
        assert_eq!(&prover_id_from_miner(127)[..2], &[0x7f, 0]);
        assert_eq!(&prover_id_from_miner(128)[..3], &[0x80, 0x01, 0]);
        assert_eq!(prover_id_from_miner(u64::MAX)[9], 0x01);
    }

    #[test]
    fn circuit_ids_round_trip_and_bad_ones_are_named() {
        for s in [
            "porep-32g",
            "wpost-2k",
            "winning-512m",
            "snap-64g",
            "porep-8m",
        ] {
            assert_eq!(
                s.parse::<CircuitId>().map(|c| c.to_string()).ok(),
                Some(s.into())
            );
        }
        let e = "porep-3g".parse::<CircuitId>().err().map(|e| e.to_string());
        assert!(e.is_some_and(|e| e.contains("porep-3g")));
        assert_eq!(parse_sector_size("32GiB").ok(), Some(32 << 30));
        assert_eq!(parse_sector_size("2048").ok(), Some(2048));
        assert!(parse_sector_size("3KiB").is_err());
    }

    #[test]
    fn chain_numbers_map_to_proof_types() {
        assert_eq!(
            seal_proof_from_number(8).ok(),
            Some(RegisteredSealProof::StackedDrg32GiBV1_1)
        );
        assert_eq!(
            post_proof_from_number(13).ok(),
            Some(RegisteredPoStProof::StackedDrgWindow32GiBV1_2)
        );
        assert!(seal_proof_from_number(20).is_err());
        assert_eq!(
            seal_proof_for(2048),
            Some(RegisteredSealProof::StackedDrg2KiBV1_1)
        );
    }
}
