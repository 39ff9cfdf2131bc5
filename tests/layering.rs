//! The module layering docs/architecture.md describes, checked on the sources: every top-level
//! module is ranked ([`LAYERS`]) and uses only lower ones, and neither `src/core` nor
//! `src/eval` has an import cycle between its files. A `use` or a path naming a sibling module (`super::x`,
//! `crate::core::x`) is an edge; test modules are left out (they may use anything).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The code of `text` before its `#[cfg(test)]` module, so tests do not count as edges.
fn non_test_code(text: &str) -> &str {
    match text.find("#[cfg(test)]\nmod ") {
        Some(i) => &text[..i],
        None => text,
    }
}

/// Every identifier that follows `prefix` in `code`, including each name of a `prefix{a, b::c}`
/// group (only the first segment of each name).
fn names_after(code: &str, prefix: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut rest = code;
    while let Some(i) = rest.find(prefix) {
        rest = &rest[i + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for part in group[..end].split(',') {
                out.insert(ident(part));
            }
        } else {
            out.insert(ident(rest));
        }
    }
    out.remove("");
    out
}

/// `module -> modules of the same folder it uses`.
fn graph(dir: &str) -> BTreeMap<String, BTreeSet<String>> {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let crate_prefix = format!(
        "crate::{}::",
        dir.trim_start_matches("src/").replace('/', "::")
    );
    let mut sources = BTreeMap::new();
    for entry in std::fs::read_dir(&folder).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if path.extension().is_some_and(|e| e == "rs") && name != "mod" {
            sources.insert(name, std::fs::read_to_string(&path).unwrap());
        }
    }
    let modules: BTreeSet<String> = sources.keys().cloned().collect();
    sources
        .iter()
        .map(|(name, text)| {
            let code = non_test_code(text);
            let used = names_after(code, "super::")
                .into_iter()
                .chain(names_after(code, &crate_prefix))
                .filter(|m| modules.contains(m) && m != name)
                .collect();
            (name.clone(), used)
        })
        .collect()
}

/// A cycle of `g` as a path `a -> b -> ... -> a`, if there is one.
fn find_cycle(g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        u: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(u.to_string(), 1);
        stack.push(u.to_string());
        for v in &g[u] {
            match state.get(v.as_str()) {
                Some(1) => {
                    let start = stack.iter().position(|s| s == v).unwrap();
                    let mut cycle = stack[start..].to_vec();
                    cycle.push(v.clone());
                    return Some(cycle);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(v, g, state, stack) {
                        return Some(c);
                    }
                }
            }
        }
        stack.pop();
        state.insert(u.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for u in g.keys() {
        if !state.contains_key(u.as_str())
            && let Some(c) = visit(u, g, &mut state, &mut Vec::new())
        {
            return Some(c);
        }
    }
    None
}

#[test]
fn core_has_no_import_cycle() {
    let g = graph("src/core");
    assert!(g.len() > 5, "src/core read: {g:?}");
    assert_eq!(find_cycle(&g), None, "import graph of src/core: {g:?}");
}

#[test]
fn eval_has_no_import_cycle() {
    let g = graph("src/eval");
    assert!(g.len() > 5, "src/eval read: {g:?}");
    assert_eq!(find_cycle(&g), None, "import graph of src/eval: {g:?}");
}

#[test]
fn nnue_has_no_import_cycle() {
    let g = graph("src/eval/nnue");
    assert!(g.len() > 5, "src/eval/nnue read: {g:?}");
    assert_eq!(find_cycle(&g), None, "import graph of src/eval/nnue: {g:?}");
}

/// The top-level modules of `src/`, lowest layer first: a module may use only modules of a
/// lower layer (and itself). The executor and the trainer sit at the bottom of the toolkit
/// beside the rules: they run jobs and fit numbers they do not understand, so they use nothing
/// of the engine (checked by [`toolkit_bottom_knows_no_chess`]).
const LAYERS: &[(&str, u32)] = &[
    ("util", 0),
    ("progress", 0),
    ("chart", 0),
    ("core", 1),
    ("exec", 1),
    ("train", 1),
    ("tunable", 2),
    ("eval", 3),
    ("search", 4),
    ("uci", 5),
    ("bench", 6),
    ("import", 6),
    ("play", 7),
    ("tune", 8),
    ("cli", 9),
];

/// Every top-level module (a file `src/x.rs` or a folder `src/x/`) with the non-test code of
/// its files (files named `*test*` are test modules).
fn top_level_modules() -> BTreeMap<String, String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if name == "lib" || name == "main" {
            continue;
        }
        let mut code = String::new();
        let mut files = vec![path.clone()];
        while let Some(p) = files.pop() {
            if p.is_dir() {
                for e in std::fs::read_dir(&p).unwrap() {
                    files.push(e.unwrap().path());
                }
            } else if p.extension().is_some_and(|e| e == "rs")
                && !p.file_name().unwrap().to_string_lossy().contains("test")
            {
                code.push_str(non_test_code(&std::fs::read_to_string(&p).unwrap()));
                code.push('\n');
            }
        }
        out.insert(name, code);
    }
    out
}

fn layer(module: &str) -> u32 {
    LAYERS
        .iter()
        .find(|(m, _)| *m == module)
        .unwrap_or_else(|| panic!("src/{module} has no layer in tests/layering.rs: give it one"))
        .1
}

#[test]
fn no_module_uses_one_above_it() {
    let modules = top_level_modules();
    assert!(modules.len() >= 12, "src/ read: {:?}", modules.keys());
    let mut wrong = Vec::new();
    for (name, code) in &modules {
        let own = layer(name);
        for used in names_after(code, "crate::") {
            if !modules.contains_key(&used) || &used == name {
                continue;
            }
            if layer(&used) >= own {
                wrong.push(format!(
                    "{name} (layer {own}) uses {used} (layer {})",
                    layer(&used)
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn toolkit_bottom_knows_no_chess() {
    let modules = top_level_modules();
    for bottom in ["exec", "train"] {
        let Some(code) = modules.get(bottom) else {
            continue;
        };
        for used in names_after(code, "crate::") {
            assert!(
                used == "util" || used == bottom || !modules.contains_key(&used),
                "{bottom} uses crate::{used}"
            );
        }
    }
}

#[test]
fn the_layer_check_sees_an_upward_use() {
    let code =
        non_test_code("use crate::play::Engine;\n#[cfg(test)]\nmod tests { use crate::tune; }");
    let used = names_after(code, "crate::");
    assert!(used.contains("play") && !used.contains("tune"));
    assert!(layer("play") >= layer("exec"));
}

#[test]
fn the_checker_sees_a_cycle() {
    let g: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec![]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
    .collect();
    let cycle = find_cycle(&g).expect("a -> b -> c -> a");
    assert_eq!(cycle.first(), cycle.last());
    assert_eq!(cycle.len(), 4);
    let code = "use super::{attacks::Bitboard, types::Color};\nuse crate::core::fen;";
    assert_eq!(
        names_after(code, "super::"),
        ["attacks", "types"].map(String::from).into()
    );
    assert_eq!(
        names_after(code, "crate::core::"),
        ["fen"].map(String::from).into()
    );
}
