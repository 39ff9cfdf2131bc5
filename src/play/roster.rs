//! The engines file of a tournament: a JSON array of engines, each an external program or this
//! engine in-process, read and validated into [`RosterEntry`]s with errors that name the file,
//! the engine and the field (cutechess's `engines.json` and fastchess's `-engine` options, in
//! one file):
//!
//! ```json
//! [
//!   {"name": "xq", "internal": true, "params": "tuned.json", "net": "xq.nnue"},
//!   {"name": "pikafish", "command": "./pikafish", "options": {"Hash": 16, "Threads": 1}},
//!   {"name": "eleeye", "command": "./eleeye", "protocol": "ucci", "variants": ["xiangqi"]}
//! ]
//! ```
//!
//! An entry has either `command` (an external program, with `protocol` uci or ucci, default
//! uci, and `options`, name to value, sent by `setoption`) or `"internal": true` (xqtune
//! in-process, with an evaluation `params` file and a `net` network, both optional).
//! `variants` lists the games it plays (default: both for xqtune in-process, `["xiangqi"]` for
//! a program). Relative paths (`params`, `net`, and a command's program when it names a path
//! such as `./engine`) are relative to the engines file's folder.

use super::external::ExternalConfig;
use super::process::{join_command, split_command};
use super::runner::Engine;
use super::{EngineConfig, load_eval};
use crate::core::Variant;
use crate::search::{EngineOptions, SearchParams};
use crate::uci::Protocol;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Why an engines file was refused.
#[derive(Debug, Error)]
pub enum RosterError {
    #[error("{file}: {why}")]
    File { file: String, why: String },
    #[error("{file}: {engine}: {field}: {why}")]
    Field {
        file: String,
        engine: String,
        field: String,
        why: String,
    },
    #[error("{file}: two engines are named '{name}' (engines {first} and {second})")]
    Duplicate {
        file: String,
        name: String,
        first: usize,
        second: usize,
    },
}

/// How an engine of the file is played.
#[derive(Clone, Debug, PartialEq)]
pub enum EntryKind {
    /// A UCI/UCCI program: its command line split into program and arguments.
    External {
        program: String,
        args: Vec<String>,
        protocol: Protocol,
        options: Vec<(String, String)>,
    },
    /// xqtune in-process, with an evaluation parameter file and a network (both optional).
    Internal {
        params: Option<PathBuf>,
        net: Option<PathBuf>,
    },
}

/// One engine of the file, validated (paths made absolute).
#[derive(Clone, Debug, PartialEq)]
pub struct RosterEntry {
    pub name: String,
    pub kind: EntryKind,
    pub variants: Vec<Variant>,
}

const KEYS: &[&str] = &[
    "name", "command", "protocol", "options", "variants", "internal", "params", "net",
];

/// `path` made absolute against `base` when relative.
fn resolve(base: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path.strip_prefix(".").unwrap_or(path))
    }
}

impl RosterEntry {
    /// The entry in the file's format (absolute paths), for the run's `config.json`.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("name".into(), Value::from(self.name.clone()));
        match &self.kind {
            EntryKind::External {
                program,
                args,
                protocol,
                options,
            } => {
                m.insert("command".into(), Value::from(join_command(program, args)));
                m.insert(
                    "protocol".into(),
                    Value::from(match protocol {
                        Protocol::Uci => "uci",
                        Protocol::Ucci => "ucci",
                    }),
                );
                let opts: Map<String, Value> = options
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::from(v.clone())))
                    .collect();
                m.insert("options".into(), Value::Object(opts));
            }
            EntryKind::Internal { params, net } => {
                m.insert("internal".into(), Value::Bool(true));
                if let Some(p) = params {
                    m.insert("params".into(), Value::from(p.display().to_string()));
                }
                if let Some(p) = net {
                    m.insert("net".into(), Value::from(p.display().to_string()));
                }
            }
        }
        m.insert(
            "variants".into(),
            Value::Array(
                self.variants
                    .iter()
                    .map(|v| Value::from(v.to_string()))
                    .collect(),
            ),
        );
        Value::Object(m)
    }

    pub fn plays(&self, v: Variant) -> bool {
        self.variants.contains(&v)
    }

    pub fn is_internal(&self) -> bool {
        matches!(self.kind, EntryKind::Internal { .. })
    }

    /// The match runner's engine for games of `variant`: an external program's
    /// configuration, or this engine with its parameter file and network loaded.
    pub fn engine(&self, variant: crate::core::Variant) -> anyhow::Result<Engine> {
        use anyhow::Context;
        Ok(match &self.kind {
            EntryKind::External {
                program,
                args,
                protocol,
                options,
            } => Engine::External(ExternalConfig {
                name: self.name.clone(),
                program: program.clone(),
                args: args.clone(),
                protocol: *protocol,
                options: options.clone(),
                timeout_ms: ExternalConfig::DEFAULT_TIMEOUT_MS,
            }),
            EntryKind::Internal { params, net } => Engine::Internal(EngineConfig {
                name: self.name.clone(),
                eval: load_eval(params.as_deref())
                    .with_context(|| format!("engine '{}'", self.name))?,
                search: SearchParams::default(),
                options: EngineOptions::default(),
                network: super::load_network(net.as_deref(), variant)
                    .with_context(|| format!("engine '{}'", self.name))?,
            }),
        })
    }
}

/// Reads and validates an engines file.
pub fn load_roster(path: &Path) -> Result<Vec<RosterEntry>, RosterError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| RosterError::File {
        file: file.clone(),
        why: format!("cannot read it: {e}"),
    })?;
    let base = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let base = base.canonicalize().unwrap_or_else(|_| base.to_path_buf());
    parse_roster(&file, &text, &base)
}

/// Parses the text of an engines file named `file`; relative paths are taken from `base`.
pub fn parse_roster(file: &str, text: &str, base: &Path) -> Result<Vec<RosterEntry>, RosterError> {
    let whole = |why: String| RosterError::File {
        file: file.to_string(),
        why,
    };
    let value: Value =
        serde_json::from_str(text).map_err(|e| whole(format!("not valid JSON: {e}")))?;
    let Value::Array(items) = value else {
        return Err(whole(
            "expected an array of engines ([{\"name\": ..., \"command\": ...}, ...])".into(),
        ));
    };
    if items.is_empty() {
        return Err(whole("no engines".into()));
    }
    let mut out: Vec<RosterEntry> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let entry = parse_entry(file, i + 1, item, base)?;
        if let Some(first) = out.iter().position(|e| e.name == entry.name) {
            return Err(RosterError::Duplicate {
                file: file.to_string(),
                name: entry.name,
                first: first + 1,
                second: i + 1,
            });
        }
        out.push(entry);
    }
    Ok(out)
}

fn parse_entry(
    file: &str,
    number: usize,
    item: &Value,
    base: &Path,
) -> Result<RosterEntry, RosterError> {
    let label = |name: Option<&str>| match name {
        Some(n) => format!("engine {number} ('{n}')"),
        None => format!("engine {number}"),
    };
    let Value::Object(m) = item else {
        return Err(RosterError::Field {
            file: file.to_string(),
            engine: label(None),
            field: "(entry)".into(),
            why: "expected an object with \"name\" and \"command\" (or \"internal\": true)".into(),
        });
    };
    let name_text = m.get("name").and_then(Value::as_str).map(str::trim);
    let err = |field: &str, why: String| RosterError::Field {
        file: file.to_string(),
        engine: label(name_text.filter(|n| !n.is_empty())),
        field: field.to_string(),
        why,
    };
    for k in m.keys() {
        if !KEYS.contains(&k.as_str()) {
            return Err(err(
                k,
                format!("unknown field (expected one of {})", KEYS.join(", ")),
            ));
        }
    }
    let name = match m.get("name") {
        None => return Err(err("name", "missing".into())),
        Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
        Some(Value::String(_)) => return Err(err("name", "empty".into())),
        Some(v) => return Err(err("name", format!("expected a string, found {v}"))),
    };
    let string = |key: &str| -> Result<Option<String>, RosterError> {
        match m.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(err(key, format!("expected a string, found {v}"))),
        }
    };
    let internal = match m.get("internal") {
        None | Some(Value::Bool(false)) => false,
        Some(Value::Bool(true)) => true,
        Some(v) => {
            return Err(err(
                "internal",
                format!("expected true or false, found {v}"),
            ));
        }
    };
    let command = string("command")?;
    let variants = match m.get("variants") {
        None if internal => vec![Variant::Xiangqi, Variant::Jieqi],
        None => vec![Variant::Xiangqi],
        Some(Value::Array(vs)) => {
            let mut out = Vec::new();
            for v in vs {
                let Some(s) = v.as_str() else {
                    return Err(err(
                        "variants",
                        format!("expected variant names, found {v}"),
                    ));
                };
                let parsed: Variant = s.parse().map_err(|_| {
                    err(
                        "variants",
                        format!("unknown variant '{s}' (expected xiangqi or jieqi)"),
                    )
                })?;
                if !out.contains(&parsed) {
                    out.push(parsed);
                }
            }
            if out.is_empty() {
                return Err(err(
                    "variants",
                    "empty: the engine would play nothing".into(),
                ));
            }
            out
        }
        Some(v) => {
            return Err(err(
                "variants",
                format!("expected an array such as [\"xiangqi\", \"jieqi\"], found {v}"),
            ));
        }
    };
    let kind = match (internal, command) {
        (true, Some(_)) => {
            return Err(err(
                "command",
                "an in-process engine (\"internal\": true) has no command".into(),
            ));
        }
        (false, None) => {
            return Err(err(
                "command",
                "missing (give the program's command line, or \"internal\": true for xqtune \
                 in-process)"
                    .into(),
            ));
        }
        (true, None) => {
            for k in ["protocol", "options"] {
                if m.contains_key(k) {
                    return Err(err(k, "only for an external engine (\"command\")".into()));
                }
            }
            let path = |key: &str| -> Result<Option<PathBuf>, RosterError> {
                Ok(string(key)?.map(|p| resolve(base, Path::new(&p))))
            };
            EntryKind::Internal {
                params: path("params")?,
                net: path("net")?,
            }
        }
        (false, Some(command)) => {
            for k in ["params", "net"] {
                if m.contains_key(k) {
                    return Err(err(
                        k,
                        "only for xqtune in-process (\"internal\": true); an external engine \
                         takes its files through its options"
                            .into(),
                    ));
                }
            }
            let (program, args) =
                split_command(&command).map_err(|e| err("command", e.to_string()))?;
            let program = if Path::new(&program).components().count() > 1 {
                resolve(base, Path::new(&program)).display().to_string()
            } else {
                program
            };
            let protocol = match string("protocol")? {
                None => Protocol::Uci,
                Some(p) => p.parse().map_err(|e: String| err("protocol", e))?,
            };
            let options = match m.get("options") {
                None => Vec::new(),
                Some(Value::Object(o)) => {
                    let mut v = Vec::new();
                    for (k, x) in o {
                        let field = format!("options.{k}");
                        if k.trim().is_empty() {
                            return Err(err("options", "an option with an empty name".into()));
                        }
                        let value = match x {
                            Value::String(s) => s.clone(),
                            Value::Number(n) => n.to_string(),
                            Value::Bool(b) => b.to_string(),
                            other => {
                                return Err(err(
                                    &field,
                                    format!(
                                        "expected a string, a number or true/false, found {other}"
                                    ),
                                ));
                            }
                        };
                        v.push((k.trim().to_string(), value));
                    }
                    v
                }
                Some(v) => {
                    return Err(err(
                        "options",
                        format!("expected an object of name: value, found {v}"),
                    ));
                }
            };
            EntryKind::External {
                program,
                args,
                protocol,
                options,
            }
        }
    };
    Ok(RosterEntry {
        name,
        kind,
        variants,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<RosterEntry>, RosterError> {
        parse_roster("e.json", text, Path::new("/base"))
    }

    #[test]
    fn both_kinds_and_their_defaults() {
        let r = parse(
            r#"[
              {"name": "xq", "internal": true, "params": "p.json", "net": "/n/x.nnue"},
              {"name": "pika", "command": "./bin/pikafish --x 'a b'",
               "options": {"Hash": 16, "Ponder": false, "EvalFile": "x.nnue"}},
              {"name": "ee", "command": "eleeye", "protocol": "ucci", "variants": ["xiangqi", "jieqi"]}
            ]"#,
        )
        .unwrap();
        assert_eq!(r.len(), 3);
        assert_eq!(
            r[0].kind,
            EntryKind::Internal {
                params: Some("/base/p.json".into()),
                net: Some("/n/x.nnue".into())
            }
        );
        assert_eq!(r[0].variants, [Variant::Xiangqi, Variant::Jieqi]);
        let EntryKind::External {
            program,
            args,
            protocol,
            options,
        } = &r[1].kind
        else {
            panic!("{:?}", r[1]);
        };
        assert_eq!(program, "/base/bin/pikafish");
        assert_eq!(args, &["--x", "a b"]);
        assert_eq!(*protocol, Protocol::Uci);
        assert_eq!(options.len(), 3);
        assert!(options.contains(&("Hash".into(), "16".into())));
        assert!(options.contains(&("Ponder".into(), "false".into())));
        assert_eq!(r[1].variants, [Variant::Xiangqi]);
        let EntryKind::External {
            program, protocol, ..
        } = &r[2].kind
        else {
            panic!();
        };
        assert_eq!((program.as_str(), *protocol), ("eleeye", Protocol::Ucci));
        assert!(r[2].plays(Variant::Jieqi));
        // the record's form reads back to the same entries
        let back = Value::Array(r.iter().map(RosterEntry::to_json).collect()).to_string();
        assert_eq!(
            parse_roster("config", &back, Path::new("/elsewhere")).unwrap(),
            r
        );
    }

    #[test]
    fn every_error_names_the_engine_and_the_field() {
        let cases = [
            ("{}", "expected an array"),
            ("[]", "no engines"),
            ("[1", "not valid JSON"),
            ("[3]", "engine 1: (entry)"),
            (r#"[{"command": "x"}]"#, "engine 1: name: missing"),
            (
                r#"[{"name": " ", "command": "x"}]"#,
                "engine 1: name: empty",
            ),
            (r#"[{"name": "a"}]"#, "engine 1 ('a'): command: missing"),
            (
                r#"[{"name": "a", "command": "x", "protocol": "xboard"}]"#,
                "engine 1 ('a'): protocol: unknown protocol 'xboard'",
            ),
            (
                r#"[{"name": "a", "command": "x", "options": {"Hash": [1]}}]"#,
                "engine 1 ('a'): options.Hash: expected a string, a number or true/false",
            ),
            (
                r#"[{"name": "a", "command": "x", "options": [1]}]"#,
                "engine 1 ('a'): options: expected an object",
            ),
            (
                r#"[{"name": "a", "command": "x", "variants": ["chess"]}]"#,
                "variants: unknown variant 'chess'",
            ),
            (
                r#"[{"name": "a", "command": "x", "variants": []}]"#,
                "variants: empty",
            ),
            (
                r#"[{"name": "a", "command": "x", "net": "n.nnue"}]"#,
                "engine 1 ('a'): net: only for xqtune in-process",
            ),
            (
                r#"[{"name": "a", "internal": true, "command": "x"}]"#,
                "command: an in-process engine",
            ),
            (
                r#"[{"name": "a", "internal": true, "options": {}}]"#,
                "options: only for an external engine",
            ),
            (
                r#"[{"name": "a", "internal": "yes"}]"#,
                "internal: expected true or false",
            ),
            (
                r#"[{"name": "a", "command": "x", "Protocol": "uci"}]"#,
                "engine 1 ('a'): Protocol: unknown field",
            ),
            (
                r#"[{"name": "a", "command": "'x"}]"#,
                "engine 1 ('a'): command: unbalanced quote",
            ),
            (
                r#"[{"name": "a", "command": "x"}, {"name": "b", "internal": true}, {"name": "a", "command": "y"}]"#,
                "two engines are named 'a' (engines 1 and 3)",
            ),
        ];
        for (text, want) in cases {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.starts_with("e.json: "), "{e}");
            assert!(e.contains(want), "{text}: {e}");
        }
    }
}
