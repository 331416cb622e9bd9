//! Unit tests of `cs`.

use super::*;

#[test]
fn density_marks_and_filters() {
    let mut d = Density::default();
    for _ in 0..130 {
        d.push();
    }
    d.mark(3);
    d.mark(3);
    d.mark(129);
    assert_eq!(d.count(), 2);
    assert!(d.get(3) && d.get(129) && !d.get(4));
    let v: Vec<usize> = (0..130).collect();
    assert_eq!(d.filter(&v), vec![3, 129]);
}

#[derive(Clone)]
struct Nested;

impl Circuit<Scalar> for Nested {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let x = cs.alloc(|| "x", || Ok(Scalar::from(3u64)))?;
        cs.enforce(|| "fine", |lc| lc + x, |lc| lc + CS::one(), |lc| lc + x);
        let mut ns = cs.namespace(|| "round 1");
        let mut inner = ns.namespace(|| "sbox");
        inner.enforce(|| "cube", |lc| lc + x, |lc| lc + x, |lc| lc + x);
        Ok(())
    }
}

#[test]
fn unsatisfied_constraint_is_named_by_index_and_path() {
    match ProvingAssignment::synthesize(Nested) {
        Err(Error::Unsatisfied { index, name }) => {
            assert_eq!(index, 1);
            assert_eq!(name, "cube");
            assert_eq!(
                constraint_path(Nested, index).as_deref(),
                Some("round 1/sbox/cube")
            );
        }
        other => panic!("expected Unsatisfied, got {other:?}"),
    }
    assert_eq!(constraint_path(Nested, 99), None);
}

#[test]
fn parallel_filter_matches_a_plain_scan() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    for n in [0usize, 1, 63, 64, 65, 4095 * 64 + 7, 300_001] {
        let mut d = Density::default();
        for i in 0..n {
            d.push();
            if rng.gen_bool(0.3) {
                d.mark(i);
            }
        }
        let v: Vec<u32> = (0..n as u32).collect();
        let want: Vec<u32> = v.iter().copied().filter(|i| d.get(*i as usize)).collect();
        assert_eq!(d.filter(&v), want, "n = {n}");
        assert_eq!(want.len(), d.count());
        if n > 1 {
            let short = &v[..n - 1];
            let want: Vec<u32> = short
                .iter()
                .copied()
                .filter(|i| d.get(*i as usize))
                .collect();
            assert_eq!(d.filter(short), want, "short input, n = {n}");
        }
    }
}
