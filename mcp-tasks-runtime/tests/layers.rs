//! The runtime's modules depend on each other one way (ARCHITECTURE.md): no import circles, and
//! nothing below `server/mod.rs` (the server's facade) imports from it.
//!
//! Reads `src/` as text: a file depends on every module a path in it names (the longest prefix
//! that is a file), whether the path starts with `crate::`, `super::` (any number of them),
//! `self::` or the name of one of the file's own submodules (`memory::connect` in
//! `server/mod.rs`), and whether it is written whole or in a `use` group (`use super::{a, b::C}`);
//! comments, globs (`use super::*`) and `#[cfg(test)]` modules do not count. A file naming one of
//! its own ancestors is no edge of the circle check (a folder's `mod.rs` may hold what its files
//! share), except that nothing may name `server/mod.rs` from below it. Any strongly connected set
//! of more than one file is a circle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src/") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn module_of(src: &Path, file: &Path) -> Module {
    let rel = file
        .strip_prefix(src)
        .expect("under src/")
        .with_extension("");
    let mut parts: Module = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The text that counts: line comments removed, and nothing from the first `#[cfg(test)]` on.
fn code(text: &str) -> String {
    let uncommented: String = text
        .lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n");
    match uncommented.find("#[cfg(test)]") {
        Some(at) => uncommented[..at].to_owned(),
        None => uncommented,
    }
}

/// How a path starts: `crate::`, `super::` (how many), `self::`, or a submodule's name.
#[derive(Debug, Clone, PartialEq)]
enum Head {
    Crate,
    Super(usize),
    SelfModule,
    Child(String),
}

/// Every path in `text` that starts at a module (`crate`, `super`, `self`, or one of the names in
/// `children`): its head and its segments, one entry per leaf of a `use` group
/// (`super::{a::B, c}` is `super::a::B` and `super::c`).
fn paths(text: &str, children: &[&str]) -> Vec<(Head, Vec<String>)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if !is_word(bytes[at]) {
            at += 1;
            continue;
        }
        let len = bytes[at..].iter().take_while(|b| is_word(**b)).count();
        let word = &text[at..at + len];
        let start = at;
        at += len;
        // A word inside a path (`a::word`) is no head; nor is one not followed by `::`, nor a
        // visibility's (`pub(in crate::server)`).
        let before = text[..start].trim_end();
        if before.ends_with("::") || before.ends_with("(in") || !text[at..].starts_with("::") {
            continue;
        }
        let head = match word {
            "crate" => Head::Crate,
            "self" => Head::SelfModule,
            "super" => Head::Super(1),
            _ if children.contains(&word) => Head::Child(word.to_owned()),
            _ => continue,
        };
        let (mut found, end) = tree(text, at);
        at = end;
        for segments in &mut found {
            let mut head = head.clone();
            // `super::super::x`: the leading `super`s are part of the head.
            while let (Head::Super(n), Some("super")) =
                (&head, segments.first().map(String::as_str))
            {
                head = Head::Super(n + 1);
                segments.remove(0);
            }
            // A glob (`use super::*`) names no module: it is how an inline module (`mod
            // tests`) takes its file's items.
            if !segments.is_empty() {
                out.push((head, std::mem::take(segments)));
            }
        }
    }
    out
}

/// The paths that follow `::` at `at` (one, or one per leaf of a `{...}` group), and where they
/// end.
fn tree(text: &str, mut at: usize) -> (Vec<Vec<String>>, usize) {
    let mut prefix = Vec::new();
    loop {
        let rest = &text[at..];
        let Some(after) = rest.strip_prefix("::") else {
            return (vec![prefix], at);
        };
        let skipped = after.len() - after.trim_start().len();
        let after = after.trim_start();
        at += 2 + skipped;
        if after.starts_with('{') {
            at += 1;
            let mut out = Vec::new();
            loop {
                let rest = &text[at..];
                let blank = rest.len() - rest.trim_start().len();
                at += blank;
                match text[at..].chars().next() {
                    None => return (out, at),
                    Some('}') => return (out, at + 1),
                    Some(',') => at += 1,
                    Some(c) if is_word(c as u8) => {
                        let len = text[at..].bytes().take_while(|b| is_word(*b)).count();
                        let word = text[at..at + len].to_owned();
                        let (leaves, end) = tree(text, at + len);
                        for leaf in leaves {
                            let mut path = prefix.clone();
                            if word != "self" {
                                path.push(word.clone());
                            }
                            path.extend(leaf);
                            out.push(path);
                        }
                        at = end;
                    }
                    Some(c) => at += c.len_utf8(),
                }
            }
        }
        let len = after.bytes().take_while(|b| is_word(*b)).count();
        if len == 0 {
            return (vec![prefix], at);
        }
        prefix.push(after[..len].to_owned());
        at += len;
    }
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn resolve(files: &BTreeSet<Module>, mut path: Module) -> Option<Module> {
    while !path.is_empty() {
        if files.contains(&path) {
            return Some(path);
        }
        path.pop();
    }
    None
}

/// The modules each module's paths name (its own name excluded).
fn imports(src: &Path) -> BTreeMap<Module, Vec<Module>> {
    let mut found = Vec::new();
    rust_files(src, &mut found);
    let files: BTreeMap<Module, PathBuf> =
        found.into_iter().map(|f| (module_of(src, &f), f)).collect();
    let names: BTreeSet<Module> = files.keys().cloned().collect();
    let mut out = BTreeMap::new();
    for (module, file) in &files {
        let text = code(&std::fs::read_to_string(file).expect("read a source file"));
        let children: Vec<&str> = (names.iter())
            .filter(|m| m.len() == module.len() + 1 && m.starts_with(module))
            .map(|m| m[module.len()].as_str())
            .collect();
        let mut to = Vec::new();
        for (head, segments) in paths(&text, &children) {
            let mut path = match &head {
                Head::Crate => Vec::new(),
                // `super` from `a/b.rs` is `a`; from `a/b/mod.rs` it is `a` too.
                Head::Super(n) => module[..module.len().saturating_sub(*n)].to_vec(),
                Head::SelfModule => module.clone(),
                Head::Child(name) => {
                    let mut path = module.clone();
                    path.push(name.clone());
                    path
                }
            };
            path.extend(segments);
            let Some(target) = resolve(&names, path) else {
                continue;
            };
            if &target != module {
                to.push(target);
            }
        }
        out.insert(module.clone(), to);
    }
    out
}

fn edges(src: &Path) -> BTreeMap<Module, BTreeSet<Module>> {
    (imports(src).into_iter())
        .map(|(module, imports)| {
            let to = (imports.into_iter())
                .filter(|target| !(target.len() < module.len() && module.starts_with(target)))
                .collect();
            (module, to)
        })
        .collect()
}

/// Strongly connected sets of more than one module (Tarjan).
fn circles(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct Walk<'a> {
        edges: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a Module, usize>,
        low: BTreeMap<&'a Module, usize>,
        stack: Vec<&'a Module>,
        next: usize,
        out: Vec<Vec<Module>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a Module) {
            self.index.insert(v, self.next);
            self.low.insert(v, self.next);
            self.next += 1;
            self.stack.push(v);
            for w in &self.edges[v] {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.stack.contains(&w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut set = Vec::new();
                while let Some(w) = self.stack.pop() {
                    set.push(w.clone());
                    if w == v {
                        break;
                    }
                }
                if set.len() > 1 {
                    set.sort();
                    self.out.push(set);
                }
            }
        }
    }
    let mut walk = Walk {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !walk.index.contains_key(v) {
            walk.visit(v);
        }
    }
    walk.out
}

fn show(set: &[Module]) -> String {
    set.iter()
        .map(|m| {
            if m.is_empty() {
                "lib".into()
            } else {
                m.join("/")
            }
        })
        .collect::<Vec<_>>()
        .join(" <-> ")
}

#[test]
fn the_runtime_has_no_import_circles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let edges = edges(&src);
    assert!(
        edges.len() > 40,
        "read {} modules from {}",
        edges.len(),
        src.display()
    );
    let found: Vec<String> = circles(&edges).iter().map(|c| show(c)).collect();
    assert!(
        found.is_empty(),
        "import circles in the runtime:\n{}",
        found.join("\n")
    );
}

#[test]
fn a_circle_is_found() {
    // The checker itself: two modules naming each other are one circle, a third one outside it.
    let m = |s: &str| vec![s.to_owned()];
    let edges = BTreeMap::from([
        (m("a"), BTreeSet::from([m("b")])),
        (m("b"), BTreeSet::from([m("a"), m("c")])),
        (m("c"), BTreeSet::new()),
    ]);
    assert_eq!(circles(&edges), vec![vec![m("a"), m("b")]]);
    // And it reads paths the way the source writes them.
    let text = "use super::peer::Peer; let x = crate::task::engine::X; supercrate::no; \
                use super::super::inner::S; use super::{a::B, c::{self, D}}; memory::connect(); \
                axum::memory::no; not_a_child::x;";
    let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        paths(text, &["memory"]),
        vec![
            (Head::Super(1), s(&["peer", "Peer"])),
            (Head::Crate, s(&["task", "engine", "X"])),
            (Head::Super(2), s(&["inner", "S"])),
            (Head::Super(1), s(&["a", "B"])),
            (Head::Super(1), s(&["c"])),
            (Head::Super(1), s(&["c", "D"])),
            (Head::Child("memory".into()), s(&["connect"])),
        ]
    );
}

/// Everything `from` depends on, directly or not.
fn reach(edges: &BTreeMap<Module, BTreeSet<Module>>, from: &Module) -> BTreeSet<Module> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![from.clone()];
    while let Some(m) = todo.pop() {
        for next in edges.get(&m).into_iter().flatten() {
            if seen.insert(next.clone()) {
                todo.push(next.clone());
            }
        }
    }
    seen
}

#[test]
fn dispatch_sees_the_client_only_through_peer() {
    // Transports own their loops and sit above dispatch: dispatch, and what it calls, never name
    // the connection, the driver or a transport (they reach the client through `server/peer.rs`).
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let edges = edges(&src);
    let above = |m: &Module| {
        let path = m.join("/");
        [
            "server/connection",
            "server/driver",
            "server/stdio",
            "server/memory",
        ]
        .contains(&path.as_str())
            || path.starts_with("server/http")
            || path.starts_with("transport")
    };
    for below in [
        "server/dispatch",
        "server/authz",
        "server/incoming",
        "server/session",
        "server/call",
        "server/call/mrtr",
        "server/tasks",
        "server/plan",
        "server/fallback",
        "server/listen",
        "server/inline",
        "server/peer",
    ] {
        let module: Module = below.split('/').map(str::to_owned).collect();
        assert!(edges.contains_key(&module), "no module {below}");
        let wrong: Vec<String> = reach(&edges, &module)
            .iter()
            .filter(|m| above(m))
            .map(|m| m.join("/"))
            .collect();
        assert!(
            wrong.is_empty(),
            "{below} depends on what sits above it: {}",
            wrong.join(", ")
        );
    }
}

#[test]
fn nothing_below_the_server_facade_imports_it() {
    // `server/mod.rs` is the top of `server/` (the `Server` facade, the `serve_*` methods, the
    // re-exports) and nothing else: the state every part shares is `server/inner.rs`, the bottom.
    // A file below it that names an item of `mod.rs` (by `super::`, `crate::server::`, or a
    // re-export) would make `mod.rs` both, and a module loop through it (`mod.rs -> stdio.rs ->
    // driver.rs -> dispatch.rs -> mod.rs`); import the item from the module that defines it.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let facade: Module = vec!["server".into()];
    let imports = imports(&src);
    let server = &imports[&facade];
    for below in [
        "server/memory",
        "server/http",
        "server/stdio",
        "server/inner",
    ] {
        let below: Module = below.split('/').map(str::to_owned).collect();
        assert!(
            server.contains(&below),
            "server/mod.rs's paths to {} were not read",
            below.join("/")
        );
    }
    let wrong: Vec<String> = (imports.iter())
        .filter(|(module, _)| module.len() > facade.len() && module.starts_with(&facade))
        .filter(|(_, imports)| imports.contains(&facade))
        .map(|(module, _)| module.join("/"))
        .collect();
    assert!(
        wrong.is_empty(),
        "these files import from server/mod.rs, which only the layers above it may: {}",
        wrong.join(", ")
    );
}
