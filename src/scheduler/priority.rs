//! The four admission levels and their names.

use std::fmt;
use std::str::FromStr;

/// How urgently a job wants its partitions admitted: higher first, FIFO within a level.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Priority {
    /// Background work (bulk PoRep that may wait).
    Low = 0,
    /// The default.
    #[default]
    Normal = 1,
    /// Deadline work (WindowPoSt).
    High = 2,
    /// Must finish within an epoch (WinningPoSt).
    Critical = 3,
}

impl Priority {
    /// Every level, lowest first.
    pub const ALL: [Priority; 4] = [
        Priority::Low,
        Priority::Normal,
        Priority::High,
        Priority::Critical,
    ];
    /// How many levels there are.
    pub const COUNT: usize = 4;

    /// The lower-case name used in logs, metrics and the journal.
    pub const fn as_str(self) -> &'static str {
        match self {
            Priority::Low => "low",
            Priority::Normal => "normal",
            Priority::High => "high",
            Priority::Critical => "critical",
        }
    }

    /// The level with index `i` (0 = low), if any.
    pub fn from_index(i: usize) -> Option<Self> {
        Self::ALL.get(i).copied()
    }
}

impl fmt::Display for Priority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not one of the four levels.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown priority {0:?} (expected low, normal, high or critical)")]
pub struct UnknownPriority(pub String);

impl FromStr for Priority {
    type Err = UnknownPriority;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|p| p.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| UnknownPriority(s.to_string()))
    }
}
