//! Witness-only synthesis of one part of a circuit straight into its region of the partition's
//! aux buffer, so that parts synthesized in parallel need no copy (nor a second witness in
//! memory) to be joined. A part may re-run a common prefix of the circuit first (the PoRep
//! prelude each challenge's task runs again): the prefix's assignments go to a small system of
//! their own, to be compared with the first run's, and only what follows fills the region.
//! Inputs are few: each part keeps its own, appended in order afterwards. A part may also pack
//! its values as bits instead ([`RegionCs::packed`]), for a witness that never exists plain.

use bellperson::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;

use super::recording::Shape;
use super::witness::WitnessCs;
use crate::groth16::packed::PackedScalars;

/// One part's system: the prefix it re-ran, then its inputs and its aux region.
pub struct RegionCs<'a> {
    /// The re-run prefix's assignments (the constant one first).
    pub prefix: WitnessCs,
    /// How much of what is allocated and enforced belongs to the prefix.
    skip: Shape,
    /// Inputs allocated after the prefix.
    pub inputs: Vec<Scalar>,
    sink: Sink<'a>,
    /// Aux values allocated after the prefix (beyond the region's end they are counted, not
    /// kept).
    aux: usize,
    /// Constraints enforced, the prefix's included.
    constraints: usize,
}

/// Where a part's aux values go.
enum Sink<'a> {
    /// Its region of the plain buffer.
    Region(&'a mut [Scalar]),
    /// Packed as bits, up to this many values.
    Packed(PackedScalars, usize),
}

impl Sink<'_> {
    fn len(&self) -> usize {
        match self {
            Sink::Region(r) => r.len(),
            Sink::Packed(_, len) => *len,
        }
    }
}

impl<'a> RegionCs<'a> {
    /// A part whose first `skip` (the constant one counted in `skip.inputs`, which this
    /// system holds already) belongs to a prefix, the rest of its aux going to `region`.
    pub fn new(skip: Shape, region: &'a mut [Scalar]) -> Self {
        RegionCs {
            prefix: WitnessCs::with_room(skip),
            skip,
            inputs: Vec::new(),
            sink: Sink::Region(region),
            aux: 0,
            constraints: 0,
        }
    }

    /// A part like [`RegionCs::new`] whose `len` aux values after the prefix are packed as bits
    /// ([`RegionCs::take_packed`]) rather than written to a region.
    pub fn packed(skip: Shape, len: usize) -> RegionCs<'static> {
        RegionCs {
            prefix: WitnessCs::with_room(skip),
            skip,
            inputs: Vec::new(),
            sink: Sink::Packed(PackedScalars::with_capacity(len, 0), len),
            aux: 0,
            constraints: 0,
        }
    }

    /// The packed values of a part made by [`RegionCs::packed`] (empty for a region's part).
    pub fn take_packed(&mut self) -> PackedScalars {
        match &mut self.sink {
            Sink::Packed(p, _) => std::mem::take(p),
            Sink::Region(_) => PackedScalars::default(),
        }
    }

    /// The counts after the prefix (inputs without the constant one).
    pub fn shape(&self) -> Shape {
        Shape {
            inputs: self.inputs.len(),
            aux: self.aux,
            constraints: self.constraints.saturating_sub(self.skip.constraints),
        }
    }

    /// Whether the part filled its region exactly (no more, no less).
    pub fn filled(&self) -> bool {
        self.aux == self.sink.len()
    }

    /// Counts `n` constraints enforced without their closures ([`super::ValuesOnly`]).
    pub(super) fn count_constraints(&mut self, n: usize) {
        self.constraints += n;
    }
}

impl ConstraintSystem<Scalar> for RegionCs<'_> {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        crate::scheduler::yield_point::checkpoint();
        let v = f()?;
        if self.prefix.aux.len() < self.skip.aux {
            self.prefix.aux.push(v);
        } else {
            match &mut self.sink {
                Sink::Region(region) => {
                    if let Some(slot) = region.get_mut(self.aux) {
                        *slot = v;
                    }
                }
                Sink::Packed(p, len) => {
                    if self.aux < *len {
                        p.push(v);
                    }
                }
            }
            self.aux += 1;
        }
        // Numbered in this part only: a witness-only system's variables are never read.
        Ok(Variable::new_unchecked(Index::Aux(
            self.prefix.aux.len() + self.aux - 1,
        )))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let v = f()?;
        match self.prefix.inputs.len() < self.skip.inputs {
            true => self.prefix.inputs.push(v),
            false => self.inputs.push(v),
        }
        Ok(Variable::new_unchecked(Index::Input(
            self.prefix.inputs.len() + self.inputs.len() - 1,
        )))
    }

    count_constraints!(constraints);

    ignore_namespaces!();
}
