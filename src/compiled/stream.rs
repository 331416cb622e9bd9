//! Witness-only synthesis with the sparse evaluation running beside it. The circuit's witness
//! code is sequential and the evaluation needs only what it has assigned so far, so a second
//! thread evaluates each run of row blocks (with the a·b = c check, in parallel when the pool
//! has room) as soon as the witness holds every column they use, and the first-touch cost of
//! the a/b/c buffers is paid there too. When the circuit ends, what is left is evaluated.
//!
//! The circuit thread publishes its assignments in order through a channel (aux in chunks, each
//! input at once); the evaluator owns the witness it assembles from them, so nothing is shared
//! while it grows. Chunks go back to the circuit thread for reuse.

use std::sync::mpsc::{channel, Receiver, Sender};

use bellperson::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;

use super::error::CompiledError;
use super::recording::Shape;
use super::recording::{Recording, BLOCK_ROWS};
use super::witness::{check_counts, WitnessCs};
use crate::groth16::prover::{Abc, Witness};

/// Aux values per published chunk.
const CHUNK: usize = 1 << 14;

/// What the circuit thread tells the evaluator, in assignment order.
enum Published {
    /// The next `CHUNK` (or, last, fewer) aux values.
    Aux(Vec<Scalar>),
    /// The next input.
    Input(Scalar),
    /// Synthesis ended with this many constraints; nothing follows.
    Done(usize),
}

/// The circuit side: assignments are counted and published, constraints only counted.
struct Publisher {
    to_evaluator: Sender<Published>,
    spare_chunks: Receiver<Vec<Scalar>>,
    chunk: Vec<Scalar>,
    /// Aux values already sent.
    sent_aux: usize,
    /// Inputs allocated, the constant one included.
    inputs: usize,
    constraints: usize,
}

impl Publisher {
    fn flush(&mut self) {
        let next = self
            .spare_chunks
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(CHUNK));
        let full = std::mem::replace(&mut self.chunk, next);
        self.sent_aux += full.len();
        // A closed channel means the evaluator failed; its error is reported after the join.
        let _ = self.to_evaluator.send(Published::Aux(full));
    }

    fn finish(mut self) {
        if !self.chunk.is_empty() {
            self.flush();
        }
        let _ = self.to_evaluator.send(Published::Done(self.constraints));
    }
}

impl ConstraintSystem<Scalar> for Publisher {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        crate::scheduler::yield_point::checkpoint();
        self.chunk.push(f()?);
        let index = self.sent_aux + self.chunk.len() - 1;
        if self.chunk.len() == CHUNK {
            self.flush();
        }
        Ok(Variable::new_unchecked(Index::Aux(index)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let _ = self.to_evaluator.send(Published::Input(f()?));
        self.inputs += 1;
        Ok(Variable::new_unchecked(Index::Input(self.inputs - 1)))
    }

    count_constraints!(constraints);

    ignore_namespaces!();
}

/// The evaluator side: assembles the witness from what is published and evaluates every block
/// whose columns it holds; at `Done`, checks the counts and evaluates the rest in parallel.
fn evaluate(
    rec: &Recording,
    published: Receiver<Published>,
    spare_chunks: Sender<Vec<Scalar>>,
) -> Result<(Abc, Vec<Scalar>, Vec<Scalar>), CompiledError> {
    let shape = rec.shape();
    let mut inputs = Vec::with_capacity(shape.inputs);
    inputs.push(Scalar::ONE);
    let mut aux = Vec::with_capacity(shape.aux);
    let d = shape.domain_size();
    let mut abc = Abc {
        a: Vec::with_capacity(d),
        b: Vec::with_capacity(d),
        c: Vec::with_capacity(d),
    };
    let (mut next, mut bad) = (0, None);
    let constraints = loop {
        match published.recv() {
            Ok(Published::Aux(mut chunk)) => {
                aux.extend_from_slice(&chunk);
                chunk.clear();
                let _ = spare_chunks.send(chunk);
            }
            Ok(Published::Input(v)) => inputs.push(v),
            Ok(Published::Done(constraints)) => break constraints,
            // The circuit failed or panicked; the caller reports its error.
            Err(_) => return Err(CompiledError::Synthesis(SynthesisError::AssignmentMissing)),
        }
        let rows = rec.ready_rows(next, inputs.len(), aux.len());
        if !rows.is_empty() {
            next = rows.end.div_ceil(BLOCK_ROWS);
            bad = bad.or(rec.evaluate_rows(rows, rec.columns(&inputs, &aux), &mut abc));
        }
    };
    check_counts(
        shape,
        Shape {
            inputs: inputs.len(),
            aux: aux.len(),
            constraints,
        },
    )?;
    let rest = abc.a.len()..shape.rows();
    bad = bad.or(rec.evaluate_rows(rest, rec.columns(&inputs, &aux), &mut abc));
    match bad {
        Some(index) => Err(CompiledError::Unsatisfied { index }),
        None => Ok((abc, inputs, aux)),
    }
}

/// Witness-only synthesis of `circuit` with a/b/c evaluated beside it (see the module docs);
/// the same result as [`WitnessCs::synthesize`] followed by [`Recording::evaluate`].
pub fn synthesize<C: Circuit<Scalar>>(
    circuit: C,
    rec: &Recording,
) -> Result<(Abc, Witness), CompiledError> {
    let (to_evaluator, published) = channel();
    let (spare_chunks, spares) = channel();
    std::thread::scope(|scope| {
        let evaluator = std::thread::Builder::new()
            .name("baton-abc".into())
            .spawn_scoped(scope, || evaluate(rec, published, spare_chunks));
        let evaluator = match evaluator {
            Ok(handle) => handle,
            // No thread to be had: the same work, one step after the other.
            Err(_) => {
                let cs = WitnessCs::synthesize(circuit, rec.shape())?;
                let abc = rec.evaluate(&cs.inputs, &cs.aux)?;
                return Ok((abc, rec.witness(cs.inputs, cs.aux)));
            }
        };
        // The publisher is dropped before the join whatever happens, so the evaluator always
        // sees the end of the stream.
        let produced = {
            let mut cs = Publisher {
                to_evaluator,
                spare_chunks: spares,
                chunk: Vec::with_capacity(CHUNK),
                sent_aux: 0,
                inputs: 1,
                constraints: 0,
            };
            circuit.synthesize(&mut cs).map(|()| cs.finish())
        };
        let evaluated = evaluator.join();
        produced?;
        let (abc, inputs, aux) = evaluated.map_err(|_| CompiledError::Internal {
            reason: "the a/b/c evaluator thread panicked".into(),
        })??;
        Ok((abc, rec.witness(inputs, aux)))
    })
}
