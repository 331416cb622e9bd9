//! No import circle among the files of `src/`: a file that uses an item of another file (through
//! a `use` line or an inline `crate::`/`super::` path) depends on the file that *defines* the
//! item, following `pub use` re-exports to their source. A `pub use` counts as a dependency only
//! when the re-exported name is also used in the file's own code (a module that only re-exports
//! its children is a table of contents, not a user). `mod` declarations, comments and
//! `#[cfg(test)] mod tests` blocks are not dependencies. Any loop of two or more files fails.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// One `use` item: its absolute path (empty = not a crate path), the name it binds and whether
/// it is a re-export.
struct UseItem {
    path: Vec<String>,
    name: String,
    public: bool,
}

struct File {
    module: Vec<String>,
    code: String,
    uses: Vec<UseItem>,
    inline: Vec<Vec<String>>,
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `src/a/b.rs` → `[a, b]`; `src/a/mod.rs` → `[a]`; `src/lib.rs` → `[]`.
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.pop() {
        let stem = last.trim_end_matches(".rs").to_string();
        if stem != "mod" && stem != "lib" {
            parts.push(stem);
        }
    }
    parts
}

/// The file's code without comment lines, string literals and its unit-test module.
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect();
    // Blank out string literals (paths in messages are not dependencies).
    let mut out = String::new();
    let mut in_str = false;
    let mut escaped = false;
    for ch in lines.join("\n").chars() {
        if in_str {
            if escaped {
                escaped = false;
            } else if ch == '\\' {
                escaped = true;
            } else if ch == '"' {
                in_str = false;
                out.push('"');
            }
            continue;
        }
        if ch == '"' {
            in_str = true;
        }
        out.push(ch);
    }
    out
}

/// Splits a use tree (`a::{b, c::{d as e}, self}`) into (path, bound name) pairs.
fn expand_tree(prefix: &[String], tree: &str, out: &mut Vec<(Vec<String>, String)>) {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let head: Vec<String> = tree[..open]
            .split("::")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let mut base = prefix.to_vec();
        base.extend(head);
        let (mut depth, mut start) = (0usize, 0usize);
        for (i, ch) in inner.char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => depth = depth.saturating_sub(1),
                ',' if depth == 0 => {
                    expand_tree(&base, &inner[start..i], out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        expand_tree(&base, &inner[start..], out);
        return;
    }
    if tree.is_empty() {
        return;
    }
    let (path, alias) = match tree.split_once(" as ") {
        Some((p, a)) => (p.trim(), Some(a.trim().to_string())),
        None => (tree, None),
    };
    let mut full = prefix.to_vec();
    full.extend(path.split("::").map(|s| s.trim().to_string()));
    if full.last().is_some_and(|s| s == "self") {
        full.pop();
    }
    let name = alias.unwrap_or_else(|| full.last().cloned().unwrap_or_default());
    out.push((full, name));
}

/// Makes `path` (as written in `module`) absolute from the crate root; `None` for other crates.
fn absolute(
    module: &[String],
    path: &[String],
    modules: &BTreeSet<Vec<String>>,
) -> Option<Vec<String>> {
    let first = path.first()?;
    let mut base: Vec<String>;
    let mut rest = path;
    match first.as_str() {
        "crate" => {
            base = Vec::new();
            rest = &path[1..];
        }
        "super" | "self" => {
            base = module.to_vec();
            while let Some(seg) = rest.first() {
                match seg.as_str() {
                    "super" => {
                        base.pop();
                    }
                    "self" => {}
                    _ => break,
                }
                rest = &rest[1..];
            }
        }
        _ => {
            let mut child = module.to_vec();
            child.push(first.clone());
            if !modules.contains(&child) {
                return None;
            }
            base = module.to_vec();
        }
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The module file that defines the item at `path`, following re-exports.
fn resolve(
    path: &[String],
    modules: &BTreeSet<Vec<String>>,
    reexports: &HashMap<Vec<String>, HashMap<String, Vec<String>>>,
    depth: usize,
) -> Option<Vec<String>> {
    let mut prefix = path.len();
    while prefix > 0 && !modules.contains(&path[..prefix].to_vec()) {
        prefix -= 1;
    }
    let module = path[..prefix].to_vec();
    if prefix == path.len() || depth > 16 {
        return Some(module);
    }
    let item = &path[prefix];
    if let Some(target) = reexports.get(&module).and_then(|m| m.get(item)) {
        let mut next = target.clone();
        next.extend(path[prefix + 1..].iter().cloned());
        return resolve(&next, modules, reexports, depth + 1).or(Some(module));
    }
    Some(module)
}

/// Inline `mod name { ... }` blocks: (start, end, name), so that `super::` inside one means the
/// file's own module.
fn inline_modules(code: &str) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = code[from..].find("mod ") {
        let at = from + i;
        from = at + 4;
        let before_ok = at == 0 || !code.as_bytes()[at - 1].is_ascii_alphanumeric();
        let name: String = code[at + 4..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let after = code[at + 4 + name.len()..].trim_start();
        if !before_ok || name.is_empty() || !after.starts_with('{') {
            continue;
        }
        let open = code.len() - after.len();
        let mut depth = 0usize;
        for (j, ch) in code[open..].char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        out.push((open, open + j, name.clone()));
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// The module that code at byte `at` of a file of module `module` belongs to.
fn module_at(module: &[String], spans: &[(usize, usize, String)], at: usize) -> Vec<String> {
    let mut m = module.to_vec();
    for (start, end, name) in spans {
        if *start <= at && at <= *end {
            m.push(name.clone());
        }
    }
    m
}

fn contains_word(code: &str, word: &str) -> bool {
    let bytes = code.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    code.match_indices(word).any(|(i, _)| {
        let before = i == 0 || !ident(bytes[i - 1]);
        let after = i + word.len() >= bytes.len() || !ident(bytes[i + word.len()]);
        before && after
    })
}

/// Files in loops of two or more, each loop as a sorted list.
fn loops(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Kosaraju: order by finish time, then collect components on the reversed graph.
    fn visit(
        n: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        seen: &mut BTreeSet<String>,
        order: &mut Vec<String>,
    ) {
        if !seen.insert(n.to_string()) {
            return;
        }
        for m in g.get(n).into_iter().flatten() {
            visit(m, g, seen, order);
        }
        order.push(n.to_string());
    }
    let mut seen = BTreeSet::new();
    let mut order = Vec::new();
    for n in edges.keys() {
        visit(n, edges, &mut seen, &mut order);
    }
    let mut rev: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (a, bs) in edges {
        for b in bs {
            rev.entry(b.clone()).or_default().insert(a.clone());
        }
    }
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for n in order.iter().rev() {
        let mut comp = Vec::new();
        visit(n, &rev, &mut seen, &mut comp);
        if comp.len() > 1 {
            comp.sort();
            out.push(comp);
        }
    }
    out
}

/// Every file of `src/` (the library's) and the files it depends on.
fn file_edges() -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    rs_files(&root, &mut paths);
    // main.rs is the binary crate: it sees the library only as `baton::`.
    paths.retain(|p| p.file_name().is_some_and(|n| n != "main.rs"));
    let use_re = |code: &str| -> Vec<(bool, usize, String)> {
        let mut out = Vec::new();
        let mut offset = 0;
        while let Some((public, start)) = find_use(&code[offset..]) {
            let start = offset + start;
            let Some(end) = code[start..].find(';') else {
                break;
            };
            out.push((public, start, code[start..start + end].to_string()));
            offset = start + end + 1;
        }
        out
    };
    let mut files: BTreeMap<String, File> = BTreeMap::new();
    let mut modules = BTreeSet::new();
    for p in &paths {
        let rel = p.strip_prefix(&root).expect("under src");
        let module = module_of(rel);
        modules.insert(module.clone());
        let text = std::fs::read_to_string(p).expect("readable source");
        for (_, _, name) in inline_modules(&code_of(&text)) {
            let mut inner = module.clone();
            inner.push(name);
            modules.insert(inner);
        }
        files.insert(
            format!("src/{}", rel.display()),
            File {
                module,
                code: code_of(&text),
                uses: Vec::new(),
                inline: Vec::new(),
            },
        );
    }
    let mut reexports: HashMap<Vec<String>, HashMap<String, Vec<String>>> = HashMap::new();
    for f in files.values_mut() {
        let spans = inline_modules(&f.code);
        let mut trees = Vec::new();
        for (public, at, tree) in use_re(&f.code) {
            let mut expanded = Vec::new();
            expand_tree(&[], &tree, &mut expanded);
            for (path, name) in expanded {
                trees.push((public, module_at(&f.module, &spans, at), path, name));
            }
        }
        for (public, module, path, name) in trees {
            let path = absolute(&module, &path, &modules).unwrap_or_default();
            if public && !path.is_empty() {
                reexports
                    .entry(module.clone())
                    .or_default()
                    .insert(name.clone(), path.clone());
            }
            f.uses.push(UseItem { path, name, public });
        }
        let without_uses = strip_uses(&f.code);
        for start in ["crate::", "super::"] {
            for (i, _) in without_uses.match_indices(start) {
                let prev = without_uses[..i].chars().last();
                if prev.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                    continue;
                }
                let tail: String = without_uses[i..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                    .collect();
                let segs: Vec<String> = tail
                    .split("::")
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect();
                // Positions in the use-stripped text are close enough for inline-module spans,
                // which hold no inline paths in practice; use the file's module.
                if let Some(abs) = absolute(&f.module, &segs, &modules) {
                    f.inline.push(abs);
                }
            }
        }
    }
    let mut file_of: HashMap<Vec<String>, String> = HashMap::new();
    for (name, f) in &files {
        for (_, _, inner) in inline_modules(&f.code) {
            let mut m = f.module.clone();
            m.push(inner);
            file_of.insert(m, name.clone());
        }
        file_of.insert(f.module.clone(), name.clone());
    }
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (name, f) in &files {
        let body = strip_uses(&f.code);
        let mut targets: Vec<&Vec<String>> = f.inline.iter().collect();
        for u in &f.uses {
            if u.path.is_empty() {
                continue;
            }
            if !u.public || contains_word(&body, &u.name) {
                targets.push(&u.path);
            }
        }
        for t in targets {
            let Some(m) = resolve(t, &modules, &reexports, 0) else {
                continue;
            };
            if let Some(target) = file_of.get(&m) {
                if target != name {
                    edges
                        .entry(name.clone())
                        .or_default()
                        .insert(target.clone());
                }
            }
        }
        edges.entry(name.clone()).or_default();
    }
    edges
}

#[test]
fn no_import_circle_among_src_files() {
    let edges = file_edges();
    let bad = loops(&edges);
    let explain: Vec<String> = bad
        .iter()
        .map(|l| {
            let inner: Vec<String> = l
                .iter()
                .map(|f| {
                    let to: Vec<&String> = edges[f].iter().filter(|t| l.contains(t)).collect();
                    format!("  {f} -> {to:?}")
                })
                .collect();
            inner.join("\n")
        })
        .collect();
    assert!(
        bad.is_empty(),
        "import circles among src/ files:\n{}",
        explain.join("\n--\n")
    );
    // The checker sees real dependencies (it would miss every circle if it saw none).
    assert!(
        edges["src/engine/mod.rs"].contains("src/engine/actors/supervisor.rs"),
        "{:?}",
        edges["src/engine/mod.rs"]
    );
}

/// `src/a/b/c.rs` → `a`, `src/x.rs` → `x`; `None` for the crate root.
fn top_module(file: &str) -> Option<String> {
    let rel = file.strip_prefix("src/")?;
    match rel.split_once('/') {
        Some((dir, _)) => Some(dir.to_string()),
        None => Some(rel.trim_end_matches(".rs").to_string()).filter(|m| m != "lib"),
    }
}

/// The layers: no loop among the crate's top-level modules either (a file of one using a file
/// of another is an edge between the two), so each folder builds only on the ones below it.
#[test]
fn no_import_circle_among_top_level_modules() {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut why: BTreeMap<(String, String), String> = BTreeMap::new();
    for (from, tos) in file_edges() {
        let Some(a) = top_module(&from) else { continue };
        edges.entry(a.clone()).or_default();
        for to in tos {
            let Some(b) = top_module(&to) else { continue };
            if a != b {
                why.entry((a.clone(), b.clone()))
                    .or_insert_with(|| format!("{from} -> {to}"));
                edges.entry(a.clone()).or_default().insert(b);
            }
        }
    }
    let bad = loops(&edges);
    let explain: Vec<String> = bad
        .iter()
        .map(|l| {
            let inner: Vec<String> = l
                .iter()
                .flat_map(|a| {
                    edges[a]
                        .iter()
                        .filter(|b| l.contains(b))
                        .map(|b| format!("  {a} -> {b} (e.g. {})", why[&(a.clone(), b.clone())]))
                        .collect::<Vec<_>>()
                })
                .collect();
            inner.join("\n")
        })
        .collect();
    assert!(
        bad.is_empty(),
        "import circles among src/'s top-level modules:\n{}",
        explain.join("\n--\n")
    );
    assert!(edges["engine"].contains("ledger"), "{:?}", edges["engine"]);
}

/// The next `use` statement in `code`: whether it is `pub`, and where its tree starts.
fn find_use(code: &str) -> Option<(bool, usize)> {
    let mut from = 0;
    while let Some(i) = code[from..].find("use ") {
        let at = from + i;
        let line_start = code[..at].rfind('\n').map_or(0, |n| n + 1);
        let lead = code[line_start..at].trim();
        if lead.is_empty() || lead.starts_with("pub") {
            return Some((lead.starts_with("pub"), at + 4));
        }
        from = at + 4;
    }
    None
}

/// `code` without its `use` statements (what remains is the file's own code).
fn strip_uses(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some((_, start)) = find_use(rest) {
        let line_start = rest[..start - 4].rfind('\n').map_or(0, |n| n + 1);
        out.push_str(&rest[..line_start]);
        match rest[start..].find(';') {
            Some(end) => rest = &rest[start + end + 1..],
            None => {
                rest = "";
                break;
            }
        }
    }
    out.push_str(rest);
    out
}
