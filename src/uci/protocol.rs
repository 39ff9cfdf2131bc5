//! The two dialects of a session: UCI as Pikafish speaks it for Xiangqi and UCCI as
//! ElephantEye and Fairy-Stockfish speak it. Each has its own handshake words and its own shape
//! of the `info` and `bestmove` lines a search answers with.

use crate::core::Move;
use crate::search::SearchInfo;

/// The dialect of a session: this engine answers in the one the GUI opened with, and the match
/// runner speaks the one an external engine was configured for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// UCI as Pikafish speaks it for Xiangqi (ranks 0-9, moves `h2e2`).
    #[default]
    Uci,
    /// UCCI as ElephantEye and Fairy-Stockfish speak it.
    Ucci,
}

impl Protocol {
    /// The command that opens a session (`uci` / `ucci`).
    pub fn hello(self) -> &'static str {
        match self {
            Protocol::Uci => "uci",
            Protocol::Ucci => "ucci",
        }
    }

    /// The engine's answer that ends the handshake (`uciok` / `ucciok`).
    pub fn hello_ok(self) -> &'static str {
        match self {
            Protocol::Uci => "uciok",
            Protocol::Ucci => "ucciok",
        }
    }
}

impl std::str::FromStr for Protocol {
    type Err = String;
    fn from_str(s: &str) -> Result<Protocol, String> {
        match s.to_ascii_lowercase().as_str() {
            "uci" => Ok(Protocol::Uci),
            "ucci" => Ok(Protocol::Ucci),
            _ => Err(format!("unknown protocol '{s}' (expected uci or ucci)")),
        }
    }
}

/// The answer that ends a search: `bestmove`, or what each dialect says when there is no move.
pub(super) fn bestmove_line(m: Move, protocol: Protocol) -> String {
    match (m.is_null(), protocol) {
        (true, Protocol::Uci) => "bestmove (none)".into(),
        (true, Protocol::Ucci) => "nobestmove".into(),
        (false, _) => format!("bestmove {m}"),
    }
}

/// One `info` line for a finished iteration.
pub fn info_line(i: &SearchInfo, protocol: Protocol) -> String {
    let pv: Vec<String> = i.pv.iter().map(|m| m.to_string()).collect();
    let nps = i.nodes * 1000 / i.time_ms.max(1);
    match protocol {
        Protocol::Uci => {
            let score = match i.mate_in {
                Some(m) => format!("mate {m}"),
                None => format!("cp {}", i.score),
            };
            format!(
                "info depth {} seldepth {} score {score} nodes {} nps {nps} hashfull {} time {} pv {}",
                i.depth,
                i.seldepth,
                i.nodes,
                i.hashfull,
                i.time_ms,
                pv.join(" ")
            )
        }
        Protocol::Ucci => format!(
            "info depth {} score {} time {} nodes {} pv {}",
            i.depth,
            i.score,
            i.time_ms,
            i.nodes,
            pv.join(" ")
        ),
    }
}
