//! Opening suites from PGN collections (`xqtune import FILE --openings PLIES`): the first plies
//! of every game that starts from the initial position, one line per distinct resulting
//! position, in the format of `src/play/openings.rs`.
//!
//! Only the plies kept are checked: an opening book's variation is taken for its first moves,
//! whatever its later moves say. Each line's comment keeps the game's `[Event]` and its moves as
//! written in the source (Chinese notation in CCPD), so a reader can check the conversion.

use super::parse_pgn_fen;
use super::pgn::RawGame;
use crate::core::{Move, Position, START_FEN};
use std::collections::HashSet;

/// One opening of the suite.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpeningLine {
    /// The moves from the start position, in coordinates.
    pub moves: Vec<Move>,
    /// The game's `[Event]` tag (empty if absent).
    pub event: String,
    /// The same moves as written in the source.
    pub texts: Vec<String>,
}

impl OpeningLine {
    /// The suite line: `startpos moves ... # <event> | <moves as written>`.
    pub fn to_line(&self) -> String {
        let moves: Vec<String> = self.moves.iter().map(|m| m.uci()).collect();
        format!(
            "startpos moves {} # {} | {}",
            moves.join(" "),
            // `#` would start a second comment inside the first.
            self.event.replace('#', ""),
            self.texts.join(" ")
        )
    }
}

/// What [`opening_suite`] made of a collection.
#[derive(Clone, Debug, Default)]
pub struct OpeningSuite {
    pub lines: Vec<OpeningLine>,
    /// Games with fewer plies than asked for.
    pub short: usize,
    /// Games whose start position or first plies could not be read.
    pub unreadable: usize,
    /// Games that start from another position (handicap or odd positions).
    pub other_start: usize,
    /// Games whose opening reaches a position an earlier line already reached.
    pub duplicates: usize,
}

/// The first `plies` moves of every game of `games` that starts from the initial position,
/// in file order, without two lines reaching the same position (board and side to move).
pub fn opening_suite(games: &[RawGame], plies: usize) -> OpeningSuite {
    let mut suite = OpeningSuite::default();
    let mut seen = HashSet::new();
    for raw in games {
        if raw.moves.len() < plies {
            suite.short += 1;
            continue;
        }
        let Some((start, pos, moves)) = first_plies(raw, plies) else {
            suite.unreadable += 1;
            continue;
        };
        if start.to_fen() != START_FEN {
            suite.other_start += 1;
            continue;
        }
        let fen = pos.to_fen();
        let key: Vec<&str> = fen.split_whitespace().take(2).collect();
        if !seen.insert(key.join(" ")) {
            suite.duplicates += 1;
            continue;
        }
        suite.lines.push(OpeningLine {
            moves,
            event: raw.tag("Event").unwrap_or("").to_string(),
            texts: raw.moves[..plies].to_vec(),
        });
    }
    suite
}

/// The start position, the position after `plies` moves and those moves; `None` when the
/// text is malformed, the FEN unreadable or one of the moves illegal.
fn first_plies(raw: &RawGame, plies: usize) -> Option<(Position, Position, Vec<Move>)> {
    if raw.malformed.is_some() {
        return None;
    }
    let start = match raw.tag("FEN").map(str::trim).filter(|f| !f.is_empty()) {
        Some(f) => parse_pgn_fen(f).ok()?,
        None => Position::startpos(),
    };
    let mut pos = start.clone();
    let mut moves = Vec::with_capacity(plies);
    for text in &raw.moves[..plies] {
        let m = pos.parse_any(text).ok()?;
        pos.make_move(m);
        moves.push(m);
    }
    Some((start, pos, moves))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::pgn::split_games;

    #[test]
    fn keeps_distinct_openings_from_the_start_position() {
        let pgn = "[Event \"a #1\"]\n1. 炮二平五 馬８進７ 2. 馬二進三 車９平８ *\n\
                   [Event \"short\"]\n1. 炮二平五 *\n\
                   [Event \"illegal\"]\n1. 炮二平五 馬８進７ 2. 炮五進九 車９平８ *\n\
                   [Event \"handicap\"]\n[FEN \"rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/1NBAKABNR w - - 0 1\"]\n\
                   1. 炮二平五 馬８進７ 2. 馬二進三 車９平８ *\n\
                   [Event \"b\"]\n1. 兵七進一 卒７進１ 2. 馬八進七 馬８進７ 3. 炮二平五 illegal-later *\n\
                   [Event \"b in another order\"]\n1. 馬八進七 馬８進７ 2. 兵七進一 卒７進１ *\n";
        let suite = opening_suite(&split_games(pgn), 4);
        let lines: Vec<String> = suite.lines.iter().map(OpeningLine::to_line).collect();
        assert_eq!(
            lines,
            [
                "startpos moves h2e2 h9g7 h0g2 i9h9 # a 1 | 炮二平五 馬８進７ 馬二進三 車９平８",
                "startpos moves c3c4 g6g5 b0c2 h9g7 # b | 兵七進一 卒７進１ 馬八進七 馬８進７",
            ]
        );
        assert_eq!(
            (
                suite.short,
                suite.unreadable,
                suite.other_start,
                suite.duplicates
            ),
            (1, 1, 1, 1)
        );
        // Every line reads back as an opening of the suite format.
        let text = lines.join("\n");
        let openings = crate::play::parse_openings(&text).unwrap();
        assert_eq!(openings.len(), 2);
        assert_eq!(openings[1].moves, suite.lines[1].moves);
    }

    /// `datasets/openings.txt` is this command's output on CCPD's opening variations.
    #[test]
    fn reproduces_the_default_suite() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets");
        let bytes = std::fs::read(dir.join("ccpd/openings.pgn.gz")).unwrap();
        let mut pgn = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut pgn)
            .unwrap();
        let text = crate::import::encoding::decode(&pgn, None).text;
        let suite = opening_suite(&split_games(&text), 8);
        let made: Vec<String> = suite.lines.iter().map(OpeningLine::to_line).collect();
        let shipped = std::fs::read_to_string(dir.join("openings.txt")).unwrap();
        let shipped: Vec<&str> = shipped.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(made, shipped);
    }
}
