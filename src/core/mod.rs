//! The rules of Xiangqi and Jieqi. Depends on nothing above it (no evaluation, no search).
//!
//! # Layering
//! The modules import each other in one direction only, so each can be read knowing only those
//! below it. At the bottom, `types` (colours, kinds, squares, moves, the variant), `attacks`
//! (bitboards and attack tables), `zobrist` (hash keys) and `jieqi` (home squares, rule options,
//! start FENs, reveal suffixes) need nothing but `types`. `position` builds on them: the board,
//! make/unmake and the Jieqi pool bookkeeping, with its fields private to `core`. Above it sit
//! `movegen` (legal moves and the children of a node, one per reveal outcome), `fen` (every FEN
//! field, start positions, printing), `rules` (game-end rulings), `see` and `notation` (move
//! text, read and written); `perft` counts over `movegen`'s children, and `arbiter` (the Jieqi
//! referee and the deal) sits on top.

pub mod arbiter;
pub mod attacks;
pub mod fen;
pub mod jieqi;
pub mod movegen;
pub mod notation;
pub mod perft;
pub mod position;
pub mod rules;
pub mod see;
pub mod types;
pub mod zobrist;

pub use arbiter::{Arbiter, CaptureReveal};
pub use attacks::Bitboard;
pub use fen::{FenError, START_FEN, Setup};
pub use jieqi::JieqiRules;
pub use movegen::MoveList;
pub use notation::{ChineseStyle, MoveError, NotationError, Script};
pub use position::{Position, State};
pub use rules::{GameResult, Outcome, Perpetual, Reason, Repetition};
pub use types::{Color, Move, OptionError, Piece, PieceType, Square, Variant};
