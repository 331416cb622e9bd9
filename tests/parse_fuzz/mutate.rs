//! Structure-aware mutations: of raw bytes (flips, cuts, splices, and bincode length prefixes
//! overwritten with huge counts), of JSON documents (a node of any depth replaced by another
//! type, nested thousands deep, removed, repeated; a number made too large for its type), and of
//! Curio's C1 envelope (each field wrong in its own way, `Phase1Out` not quite base64).

use base64::Engine as _;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{json, Map, Value};

/// Counts that a length prefix or a number field might claim.
pub fn odd_u64() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        Just(1),
        0u64..40,
        Just(255),
        Just(2048),
        Just(1 << 16),
        Just(1 << 31),
        Just(1 << 32),
        Just(32 << 30),
        Just(64 << 30),
        Just(1 << 60),
        Just(u64::MAX / 2),
        Just(u64::MAX),
        any::<u64>(),
    ]
}

/// One change to a byte string.
#[derive(Clone, Debug)]
pub enum ByteOp {
    /// XOR one byte with a non-zero mask.
    Flip(Index, u8),
    /// Cut the bytes at this point.
    Truncate(Index),
    /// Insert bytes.
    Insert(Index, Vec<u8>),
    /// Remove up to this many bytes.
    Remove(Index, usize),
    /// Copy a stretch (of up to this many bytes) in again right after itself.
    Duplicate(Index, usize),
    /// Overwrite what looks like a bincode length prefix (a little-endian u64 below 4096)
    /// with this count; any 8 bytes if nothing looks like one.
    Length(Index, u64),
}

/// One to four byte changes.
pub fn byte_ops() -> impl Strategy<Value = Vec<ByteOp>> {
    let op = prop_oneof![
        (any::<Index>(), 1u8..=255).prop_map(|(i, m)| ByteOp::Flip(i, m)),
        any::<Index>().prop_map(ByteOp::Truncate),
        (any::<Index>(), vec(any::<u8>(), 1..16)).prop_map(|(i, b)| ByteOp::Insert(i, b)),
        (any::<Index>(), 1usize..64).prop_map(|(i, n)| ByteOp::Remove(i, n)),
        (any::<Index>(), prop_oneof![1usize..256, 256usize..8192])
            .prop_map(|(i, n)| ByteOp::Duplicate(i, n)),
        (any::<Index>(), odd_u64()).prop_map(|(i, n)| ByteOp::Length(i, n)),
    ];
    vec(op, 1..=4)
}

/// Where a little-endian u64 below 4096 starts: the candidates for a length prefix.
fn prefixes(b: &[u8]) -> Vec<usize> {
    (0..b.len().saturating_sub(7))
        .filter(|&i| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&b[i..i + 8]);
            (1..4096).contains(&u64::from_le_bytes(w))
        })
        .collect()
}

/// `bytes` with `ops` applied in order.
pub fn apply_bytes(bytes: &[u8], ops: &[ByteOp]) -> Vec<u8> {
    let mut b = bytes.to_vec();
    for op in ops {
        let at = |i: &Index, len: usize| if len == 0 { 0 } else { i.index(len) };
        match op {
            ByteOp::Flip(i, m) if !b.is_empty() => {
                let k = at(i, b.len());
                b[k] ^= m;
            }
            ByteOp::Flip(..) => b.push(0),
            ByteOp::Truncate(i) => b.truncate(at(i, b.len())),
            ByteOp::Insert(i, ins) => {
                let k = at(i, b.len() + 1);
                b.splice(k..k, ins.iter().copied());
            }
            ByteOp::Remove(i, n) => {
                let k = at(i, b.len());
                let end = (k + n).min(b.len());
                b.drain(k..end);
            }
            ByteOp::Duplicate(i, n) => {
                let k = at(i, b.len());
                let end = (k + n).min(b.len());
                let copy = b[k..end].to_vec();
                b.splice(end..end, copy);
            }
            ByteOp::Length(i, n) => {
                let candidates = prefixes(&b);
                let k = match candidates.is_empty() {
                    false => candidates[i.index(candidates.len())],
                    true if b.len() >= 8 => at(i, b.len() - 7),
                    true => {
                        b.resize(8, 0);
                        0
                    }
                };
                b[k..k + 8].copy_from_slice(&n.to_le_bytes());
            }
        }
    }
    b
}

/// JSON values of the wrong type or range for wherever they land.
pub fn odd_json() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        Just(json!(-1)),
        Just(json!(256)),
        Just(json!(1.5)),
        Just(json!(1e300)),
        odd_u64().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        ".{0,24}".prop_map(Value::String),
        Just(json!("StackedDrg32GiBV1_1")),
        Just(json!("StackedDrg2KiBV1")),
        Just(json!([])),
        Just(json!({})),
        vec(any::<u8>(), 0..40).prop_map(|v| json!(v)),
        Just(json!([[0, 0], [1, 1]])),
    ]
}

/// One change to a JSON document, at a node picked by depth, then among that depth's nodes.
#[derive(Clone, Debug)]
pub enum JsonOp {
    /// Replace the node.
    Replace(Index, Index, Value),
    /// Keep the node's type and change its value: a number XORed with the mask (a byte stays a
    /// byte), a bool negated, a string's first character changed.
    Tweak(Index, Index, u8),
    /// Wrap the node in this many arrays (a few; [`TextOp::Deep`] nests thousands deep).
    Nest(Index, Index, usize),
    /// Remove the node from its parent.
    Remove(Index, Index),
    /// Add a member to the object (or element to the array) at the node.
    Add(Index, Index, String, Value),
    /// Keep this fraction (per 256) of the array at the node.
    Shorten(Index, Index, u8),
    /// Repeat the array's first element this many more times.
    Repeat(Index, Index, usize),
}

/// One to three JSON changes.
pub fn json_ops() -> impl Strategy<Value = Vec<JsonOp>> {
    let ii = || (any::<Index>(), any::<Index>());
    let op = prop_oneof![
        3 => (ii(), odd_json()).prop_map(|((d, n), v)| JsonOp::Replace(d, n, v)),
        3 => (ii(), 1u8..=255).prop_map(|((d, n), m)| JsonOp::Tweak(d, n, m)),
        1 => (ii(), prop_oneof![1usize..8, Just(127), Just(129)])
            .prop_map(|((d, n), k)| JsonOp::Nest(d, n, k)),
        2 => ii().prop_map(|(d, n)| JsonOp::Remove(d, n)),
        1 => (ii(), "[a-z_]{1,12}", odd_json()).prop_map(|((d, n), k, v)| JsonOp::Add(d, n, k, v)),
        2 => (ii(), any::<u8>()).prop_map(|((d, n), f)| JsonOp::Shorten(d, n, f)),
        1 => (ii(), 1usize..20).prop_map(|((d, n), k)| JsonOp::Repeat(d, n, k)),
    ];
    vec(op, 1..=3)
}

/// One to three JSON changes that mostly keep a document of its type: values changed in
/// place, array elements removed or repeated.
pub fn shape_ops() -> impl Strategy<Value = Vec<JsonOp>> {
    let ii = || (any::<Index>(), any::<Index>());
    let op = prop_oneof![
        4 => (ii(), 1u8..=255).prop_map(|((d, n), m)| JsonOp::Tweak(d, n, m)),
        1 => ii().prop_map(|(d, n)| JsonOp::Remove(d, n)),
        1 => (ii(), any::<u8>()).prop_map(|((d, n), f)| JsonOp::Shorten(d, n, f)),
        2 => (ii(), prop_oneof![1usize..20, 20usize..300]).prop_map(|((d, n), k)| JsonOp::Repeat(d, n, k)),
    ];
    vec(op, 1..=3)
}

/// The JSON pointers of `v`'s nodes below the root, by depth (depth 1 first).
fn pointers(v: &Value) -> Vec<Vec<String>> {
    fn walk(v: &Value, at: String, depth: usize, out: &mut Vec<Vec<String>>) {
        if depth > 0 {
            if out.len() < depth {
                out.resize(depth, Vec::new());
            }
            out[depth - 1].push(at.clone());
        }
        match v {
            Value::Object(m) => m.iter().for_each(|(k, c)| {
                let k = k.replace('~', "~0").replace('/', "~1");
                walk(c, format!("{at}/{k}"), depth + 1, out)
            }),
            Value::Array(a) => a
                .iter()
                .enumerate()
                .for_each(|(i, c)| walk(c, format!("{at}/{i}"), depth + 1, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(v, String::new(), 0, &mut out);
    out
}

/// `doc` with `ops` applied in order (an op with no node to act on does nothing).
pub fn apply_json(doc: &Value, ops: &[JsonOp]) -> Value {
    let mut v = doc.clone();
    for op in ops {
        let (d, n) = match op {
            JsonOp::Replace(d, n, _)
            | JsonOp::Tweak(d, n, _)
            | JsonOp::Nest(d, n, _)
            | JsonOp::Remove(d, n)
            | JsonOp::Add(d, n, ..)
            | JsonOp::Shorten(d, n, _)
            | JsonOp::Repeat(d, n, _) => (d, n),
        };
        let levels = pointers(&v);
        if levels.is_empty() {
            continue;
        }
        let level = &levels[d.index(levels.len())];
        let at = level[n.index(level.len())].clone();
        if let JsonOp::Remove(..) = op {
            let (parent, last) = at.rsplit_once('/').unwrap_or(("", ""));
            match v.pointer_mut(parent) {
                Some(Value::Object(m)) => {
                    m.remove(&last.replace("~1", "/").replace("~0", "~"));
                }
                Some(Value::Array(a)) => {
                    if let Ok(i) = last.parse::<usize>() {
                        if i < a.len() {
                            a.remove(i);
                        }
                    }
                }
                _ => {}
            }
            continue;
        }
        let Some(node) = v.pointer_mut(&at) else {
            continue;
        };
        match op {
            JsonOp::Replace(_, _, new) => *node = new.clone(),
            JsonOp::Tweak(_, _, m) => match node {
                Value::Number(x) => {
                    if let Some(u) = x.as_u64() {
                        *node = json!(u ^ u64::from(*m));
                    }
                }
                Value::Bool(b) => *b = !*b,
                Value::String(t) => {
                    let rest: String = t.chars().skip(1).collect();
                    *t = format!("{}{rest}", char::from(b'A' + m % 26));
                }
                _ => {}
            },
            JsonOp::Nest(_, _, k) => {
                let mut inner = node.take();
                for _ in 0..*k {
                    inner = Value::Array(vec![inner]);
                }
                *node = inner;
            }
            JsonOp::Add(_, _, key, val) => match node {
                Value::Object(m) => {
                    m.insert(key.clone(), val.clone());
                }
                Value::Array(a) => a.push(val.clone()),
                _ => {}
            },
            JsonOp::Shorten(_, _, f) => {
                if let Value::Array(a) = node {
                    let keep = a.len() * usize::from(*f) / 256;
                    a.truncate(keep);
                }
            }
            JsonOp::Repeat(_, _, k) => {
                if let Value::Array(a) = node {
                    if let Some(first) = a.first().cloned() {
                        a.extend(std::iter::repeat_n(first, *k));
                    }
                }
            }
            JsonOp::Remove(..) => {}
        }
    }
    v
}

/// Numbers no Rust integer or float type holds, and other number-like text.
const BIG_NUMBERS: [&str; 7] = [
    "18446744073709551616",
    "-18446744073709551617",
    "340282366920938463463374607431768211456",
    "1e400",
    "-0",
    "0.000000000000000000000000001",
    "00",
];

/// One change to JSON text, in place of a run of digits (a number, or part of one).
#[derive(Clone, Debug)]
pub enum TextOp {
    /// One of [`BIG_NUMBERS`] instead.
    BigNumber(Index, Index),
    /// The number inside this many brackets, closed or not (too deep for any parser's stack;
    /// built as text, since a `Value` that deep would overflow the test's own stack).
    Deep(Index, usize, bool),
}

/// None or one text change.
pub fn text_ops() -> impl Strategy<Value = Vec<TextOp>> {
    let op = prop_oneof![
        3 => (any::<Index>(), any::<Index>()).prop_map(|(k, w)| TextOp::BigNumber(k, w)),
        1 => (any::<Index>(), prop_oneof![Just(200usize), Just(5000), Just(100_000)], any::<bool>())
            .prop_map(|(k, n, closed)| TextOp::Deep(k, n, closed)),
    ];
    vec(op, 0..=1)
}

/// `text` with `ops` applied in order.
pub fn apply_text(text: &[u8], ops: &[TextOp]) -> Vec<u8> {
    let mut out = text.to_vec();
    for op in ops {
        let mut runs = Vec::new();
        let mut i = 0;
        while i < out.len() {
            let start = i;
            while i < out.len() && out[i].is_ascii_digit() {
                i += 1;
            }
            if i > start {
                runs.push((start, i));
            } else {
                i += 1;
            }
        }
        let k = match op {
            TextOp::BigNumber(k, _) | TextOp::Deep(k, ..) => k,
        };
        let Some(&(s, e)) = runs.get(k.index(runs.len().max(1))) else {
            continue;
        };
        let with: Vec<u8> = match op {
            TextOp::BigNumber(_, w) => BIG_NUMBERS[w.index(BIG_NUMBERS.len())].into(),
            TextOp::Deep(_, n, closed) => {
                let mut d = vec![b'['; *n];
                d.extend_from_slice(&out[s..e]);
                if *closed {
                    d.extend(std::iter::repeat_n(b']', *n));
                }
                d
            }
        };
        out.splice(s..e, with);
    }
    out
}

/// How one envelope field is sent.
#[derive(Clone, Debug)]
pub enum Field {
    /// As it should be.
    Good,
    /// Left out.
    Missing,
    /// Another value in its place.
    Odd(Value),
}

fn field() -> impl Strategy<Value = Field> {
    prop_oneof![
        6 => Just(Field::Good),
        1 => Just(Field::Missing),
        2 => odd_json().prop_map(Field::Odd),
    ]
}

/// How `Phase1Out`'s base64 is spoilt, if at all.
#[derive(Clone, Debug)]
pub enum Base64Op {
    /// Untouched.
    Good,
    /// Cut short.
    Truncate(Index),
    /// A character put in.
    Insert(Index, char),
    /// The URL-safe alphabet, without padding.
    UrlSafe,
    /// Whitespace around it (the parser trims) or inside it (it does not).
    Spaces(Index),
}

fn base64_op() -> impl Strategy<Value = Base64Op> {
    prop_oneof![
        6 => Just(Base64Op::Good),
        1 => any::<Index>().prop_map(Base64Op::Truncate),
        1 => (any::<Index>(), prop_oneof![Just('='), Just('%'), Just('-'), Just('"'), Just('\\'), any::<char>()])
            .prop_map(|(i, c)| Base64Op::Insert(i, c)),
        1 => Just(Base64Op::UrlSafe),
        1 => any::<Index>().prop_map(Base64Op::Spaces),
    ]
}

/// Curio's envelope around a (possibly spoilt) C1 document.
#[derive(Clone, Debug)]
pub struct Envelope {
    /// `SectorNum`.
    pub sector_num: Field,
    /// `SectorSize`.
    pub sector_size: Field,
    /// `Phase1Out`: the base64, or another value instead.
    pub phase1_out: Field,
    /// What is done to the base64.
    pub base64: Base64Op,
    /// An extra member.
    pub extra: Option<(String, Value)>,
}

/// An envelope with each field mostly good.
pub fn envelope() -> impl Strategy<Value = Envelope> {
    (
        field(),
        field(),
        prop_oneof![8 => Just(Field::Good), 1 => Just(Field::Missing), 1 => odd_json().prop_map(Field::Odd)],
        base64_op(),
        proptest::option::weighted(0.1, ("[A-Za-z]{1,10}", odd_json())),
    )
        .prop_map(
            |(sector_num, sector_size, phase1_out, base64, extra)| Envelope {
                sector_num,
                sector_size,
                phase1_out,
                base64,
                extra,
            },
        )
}

impl Envelope {
    /// The envelope's JSON around `inner`, for a sector `id` of `size` bytes.
    pub fn wrap(&self, inner: &[u8], id: u64, size: u64) -> Vec<u8> {
        let b64 = match &self.base64 {
            Base64Op::UrlSafe => base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(inner),
            _ => base64::engine::general_purpose::STANDARD.encode(inner),
        };
        let at = |i: &Index| i.index(b64.len() + 1);
        let b64 = match &self.base64 {
            Base64Op::Good | Base64Op::UrlSafe => b64,
            Base64Op::Truncate(i) => b64[..at(i)].to_string(),
            Base64Op::Insert(i, c) => {
                let mut s = b64.clone();
                s.insert(at(i), *c);
                s
            }
            Base64Op::Spaces(i) => {
                let mut s = format!(" {b64}\n");
                s.insert(at(i), ' ');
                s
            }
        };
        let mut m = Map::new();
        let mut put = |k: &str, f: &Field, good: Value| match f {
            Field::Good => {
                m.insert(k.into(), good);
            }
            Field::Missing => {}
            Field::Odd(v) => {
                m.insert(k.into(), v.clone());
            }
        };
        put("SectorNum", &self.sector_num, json!(id));
        put("SectorSize", &self.sector_size, json!(size));
        put("Phase1Out", &self.phase1_out, Value::String(b64));
        if let Some((k, v)) = &self.extra {
            m.insert(k.clone(), v.clone());
        }
        let mut out = serde_json::to_vec(&Value::Object(m)).unwrap_or_default();
        if matches!(self.phase1_out, Field::Missing) {
            // Still an envelope to the parser's eye.
            out.extend_from_slice(b" \"Phase1Out\"");
        }
        out
    }
}
