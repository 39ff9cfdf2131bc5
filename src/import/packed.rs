//! Labelled positions in a compact binary form, for sets too large for text (tens of millions of
//! positions for a network): 40 bytes a position on disk and in memory, read without parsing a
//! FEN, and turned into network inputs straight from the pieces (bullet keeps its training
//! boards the same way, 32 bytes of chess board each).
//!
//! A record ([`PackedPosition`], little-endian):
//!
//! | bytes | field |
//! |---|---|
//! | 0..12 | occupancy: bit `s` set when square `s` (rank * 9 + file) holds a piece |
//! | 12..28 | the pieces in square order, one nibble each, low nibble first: 0-6 red king, advisor, elephant, horse, rook, cannon, pawn; 7-13 the black ones; 14 a red dark piece, 15 a black one |
//! | 28..30 | the search score in centipawns, red's view (`i16`) |
//! | 30 | the game result, red's view: 0 lost, 1 drawn, 2 won |
//! | 31 | flags: bit 0 black to move, bit 1 a Jieqi position |
//! | 32..36 | Jieqi pools (the identities still hidden from the side the record was seen by): 13 bits per colour, red first: advisor, elephant, horse, rook, cannon (2 bits each), pawn (3 bits) |
//! | 36 | the halfmove clock, capped at 255 |
//! | 37..40 | zero |
//!
//! A file is the 16-byte header (`XQPACKED`, format version `u32`, zero `u32`) and the records.

use crate::core::fen::Setup;
use crate::core::{Color, Piece, PieceType, Position, Square, Variant};
use std::io::Read;
use std::path::Path;
use thiserror::Error;

/// Bytes of one record.
pub const RECORD_BYTES: usize = 40;
const MAGIC: &[u8; 8] = b"XQPACKED";
const VERSION: u32 = 1;
const HEADER_BYTES: usize = 16;
/// The file extension `xqtune` recognises packed files by.
pub const EXTENSION: &str = "xqp";

#[derive(Debug, Error)]
pub enum PackedError {
    #[error("{path}: {msg}")]
    Io { path: String, msg: String },
    #[error("{path}: not a packed position file (no XQPACKED header)")]
    Magic { path: String },
    #[error("{path}: packed format version {found}, this xqtune reads version {VERSION}")]
    Version { path: String, found: u32 },
    #[error(
        "{path}: {bytes} bytes after the header is not a whole number of {RECORD_BYTES}-byte records (truncated?)"
    )]
    Truncated { path: String, bytes: usize },
    #[error("{path}: record {index}: {why}")]
    Record {
        path: String,
        index: usize,
        why: String,
    },
    #[error("{0}")]
    Pack(String),
}

/// A red or black piece, or a dark (face-down) one of a colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PackedPiece {
    Bright(Piece),
    Dark(Color),
}

impl PackedPiece {
    fn nibble(self) -> u8 {
        match self {
            PackedPiece::Bright(p) => p.color.index() as u8 * 7 + p.kind.index() as u8,
            PackedPiece::Dark(c) => 14 + c.index() as u8,
        }
    }

    fn from_nibble(n: u8) -> PackedPiece {
        match n {
            0..=13 => PackedPiece::Bright(Piece::new(
                if n < 7 { Color::Red } else { Color::Black },
                PieceType::from_index((n % 7) as usize),
            )),
            14 => PackedPiece::Dark(Color::Red),
            _ => PackedPiece::Dark(Color::Black),
        }
    }
}

/// The pool kinds in their packed order with their bit widths.
const POOL_FIELDS: [(PieceType, u32); 6] = [
    (PieceType::Advisor, 2),
    (PieceType::Elephant, 2),
    (PieceType::Horse, 2),
    (PieceType::Rook, 2),
    (PieceType::Cannon, 2),
    (PieceType::Pawn, 3),
];
const POOL_BITS: u32 = 13;

/// One labelled position (see the module doc for the layout).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(transparent)]
pub struct PackedPosition(pub [u8; RECORD_BYTES]);

const _: () = assert!(std::mem::size_of::<PackedPosition>() == RECORD_BYTES);

impl PackedPosition {
    /// Packs `pos` as its side to move sees it (dark pieces as dark, the pools as the position
    /// holds them), with the search score `score` (centipawns, red's view; clamped to `i16`) and
    /// the result `result` (red's score: 0, 0.5 or 1).
    pub fn pack(pos: &Position, score: i32, result: f32) -> Result<PackedPosition, PackedError> {
        let mut b = [0u8; RECORD_BYTES];
        let mut n = 0usize;
        for s in 0..Square::COUNT {
            let sq = Square(s as u8);
            let piece = if pos.is_dark(sq) {
                match pos.piece_at(sq) {
                    Some(p) => PackedPiece::Dark(p.color),
                    None => continue,
                }
            } else {
                match pos.piece_at(sq) {
                    Some(p) => PackedPiece::Bright(p),
                    None => continue,
                }
            };
            if n == 32 {
                return Err(PackedError::Pack(format!(
                    "more than 32 pieces in {}",
                    pos.to_fen()
                )));
            }
            b[s / 8] |= 1 << (s % 8);
            b[12 + n / 2] |= piece.nibble() << (4 * (n % 2));
            n += 1;
        }
        let score = score.clamp(i16::MIN as i32, i16::MAX as i32) as i16;
        b[28..30].copy_from_slice(&score.to_le_bytes());
        b[30] = if result > 0.75 {
            2
        } else if result < 0.25 {
            0
        } else {
            1
        };
        let jieqi = pos.variant() == Variant::Jieqi;
        b[31] = u8::from(pos.side_to_move() == Color::Black) | (u8::from(jieqi) << 1);
        if jieqi {
            let mut bits = 0u32;
            for c in Color::ALL {
                let mut shift = c.index() as u32 * POOL_BITS;
                for (kind, width) in POOL_FIELDS {
                    let count = pos.pool_count(c, kind);
                    if count >= 1 << width {
                        return Err(PackedError::Pack(format!(
                            "a pool of {count} {}s in {}",
                            kind.name(),
                            pos.to_fen()
                        )));
                    }
                    bits |= count << shift;
                    shift += width;
                }
            }
            b[32..36].copy_from_slice(&bits.to_le_bytes());
        }
        b[36] = pos.rule60().min(255) as u8;
        Ok(PackedPosition(b))
    }

    fn occupied(&self, s: usize) -> bool {
        self.0[s / 8] & (1 << (s % 8)) != 0
    }

    /// The pieces in square order.
    pub fn pieces(&self) -> impl Iterator<Item = (Square, PackedPiece)> + '_ {
        (0..Square::COUNT)
            .filter(|&s| self.occupied(s))
            .enumerate()
            .map(|(n, s)| {
                let nibble = (self.0[12 + n / 2] >> (4 * (n % 2))) & 15;
                (Square(s as u8), PackedPiece::from_nibble(nibble))
            })
    }

    pub fn side_to_move(&self) -> Color {
        if self.0[31] & 1 != 0 {
            Color::Black
        } else {
            Color::Red
        }
    }

    pub fn variant(&self) -> Variant {
        if self.0[31] & 2 != 0 {
            Variant::Jieqi
        } else {
            Variant::Xiangqi
        }
    }

    /// The search score in centipawns, red's view.
    pub fn score(&self) -> i16 {
        i16::from_le_bytes([self.0[28], self.0[29]])
    }

    /// The game result, red's score (0, 0.5 or 1).
    pub fn result(&self) -> f32 {
        self.0[30] as f32 * 0.5
    }

    /// How many of `kind` of `color` are in the pool (0 in Xiangqi and for the king).
    pub fn pool_count(&self, color: Color, kind: PieceType) -> u32 {
        let bits = u32::from_le_bytes([self.0[32], self.0[33], self.0[34], self.0[35]]);
        let mut shift = color.index() as u32 * POOL_BITS;
        for (k, width) in POOL_FIELDS {
            if k == kind {
                return (bits >> shift) & ((1 << width) - 1);
            }
            shift += width;
        }
        0
    }

    pub fn rule60(&self) -> u32 {
        self.0[36] as u32
    }

    /// Checks what can be checked without building the position: a known result, zero
    /// padding, the occupancy within the board. The error says which field.
    pub fn check(&self) -> Result<(), String> {
        if self.0[30] > 2 {
            return Err(format!("result byte {} is not 0, 1 or 2", self.0[30]));
        }
        if self.0[31] & !3 != 0 {
            return Err(format!("unknown flags {:#04x}", self.0[31]));
        }
        if self.0[37..].iter().any(|&x| x != 0) || self.0[11] & 0xfc != 0 {
            return Err("non-zero padding".into());
        }
        if (0..Square::COUNT).filter(|&s| self.occupied(s)).count() > 32 {
            return Err("more than 32 pieces".into());
        }
        Ok(())
    }

    /// The position, validated as a FEN would be (the fullmove number is not kept: 1).
    pub fn to_position(&self) -> Result<Position, String> {
        self.check()?;
        let mut setup = Setup {
            board: [None; 90],
            dark: [None; 90],
            side: self.side_to_move(),
            rule60: self.rule60(),
            fullmove: 1,
            pool: None,
            hidden: [None; 90],
        };
        for (sq, p) in self.pieces() {
            match p {
                PackedPiece::Bright(piece) => setup.board[sq.index()] = Some(piece),
                PackedPiece::Dark(c) => setup.dark[sq.index()] = Some(c),
            }
        }
        if self.variant() == Variant::Jieqi {
            let mut pool = [[0u8; 7]; 2];
            for c in Color::ALL {
                for k in PieceType::ALL {
                    pool[c.index()][k.index()] = self.pool_count(c, k) as u8;
                }
            }
            setup.pool = Some(pool);
        }
        setup
            .into_position_as(self.variant())
            .map_err(|e| e.to_string())
    }
}

/// The bytes of a packed file holding `records`.
pub fn to_bytes(records: &[PackedPosition]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_BYTES + records.len() * RECORD_BYTES);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    for r in records {
        out.extend_from_slice(&r.0);
    }
    out
}

/// Writes a packed file atomically.
pub fn write(path: &Path, records: &[PackedPosition]) -> Result<(), PackedError> {
    crate::util::write_atomic(path, &to_bytes(records)).map_err(|e| PackedError::Io {
        path: path.display().to_string(),
        msg: e.to_string(),
    })
}

/// Reads a packed file whole, checking the header and every record's fields.
pub fn read(path: &Path) -> Result<Vec<PackedPosition>, PackedError> {
    let name = path.display().to_string();
    let io = |e: std::io::Error| PackedError::Io {
        path: name.clone(),
        msg: e.to_string(),
    };
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(io)?;
    from_bytes(&name, &bytes)
}

/// Whether `path` names a packed file (by its extension).
pub fn is_packed(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == EXTENSION)
}

/// Parses the bytes of a packed file (`name` for the errors).
pub fn from_bytes(name: &str, bytes: &[u8]) -> Result<Vec<PackedPosition>, PackedError> {
    if bytes.len() < HEADER_BYTES || &bytes[..8] != MAGIC {
        return Err(PackedError::Magic {
            path: name.to_string(),
        });
    }
    let version = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
    if version != VERSION {
        return Err(PackedError::Version {
            path: name.to_string(),
            found: version,
        });
    }
    let body = &bytes[HEADER_BYTES..];
    if !body.len().is_multiple_of(RECORD_BYTES) {
        return Err(PackedError::Truncated {
            path: name.to_string(),
            bytes: body.len(),
        });
    }
    body.chunks_exact(RECORD_BYTES)
        .enumerate()
        .map(|(index, c)| {
            let mut r = [0u8; RECORD_BYTES];
            r.copy_from_slice(c);
            let p = PackedPosition(r);
            p.check().map(|_| p).map_err(|why| PackedError::Record {
                path: name.to_string(),
                index,
                why,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(fen: &str, score: i32, result: f32) {
        let pos = Position::from_fen(fen).unwrap();
        let p = PackedPosition::pack(&pos, score, result).unwrap();
        let back = p.to_position().unwrap();
        // the fullmove number is not kept
        let strip = |f: String| f.split_whitespace().take(4).collect::<Vec<_>>().join(" ");
        assert_eq!(strip(back.to_fen()), strip(pos.to_fen()), "{fen}");
        assert_eq!(p.score() as i32, score.clamp(-32768, 32767));
        assert_eq!(p.result(), result);
        assert_eq!(p.side_to_move(), pos.side_to_move());
        assert_eq!(p.variant(), pos.variant());
        assert_eq!(p.pieces().count(), pos.occupied().count_ones() as usize);
    }

    #[test]
    fn positions_round_trip() {
        round_trip(
            "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1",
            17,
            0.5,
        );
        round_trip("3k5/9/9/9/9/9/9/9/r8/R3K4 b - - 7 40", -40000, 0.0);
        round_trip(
            "xxxxkxxxx/9/1x5x1/x1x1x1x1x/9/9/X1X1X1X1X/1X5X1/9/XXXXKXXXX w A2B2N2R2C2P5a2b2n2r2c2p5 0 1",
            12,
            1.0,
        );
        // a Jieqi position with revealed and dark pieces, a smaller pool and a clock
        round_trip(
            "xxxxkxxxx/9/1x5x1/x1x1x1x1x/9/9/X1X1X1X1X/1X5XN/9/XXXXKXXX1 b A2B2N1R2C2P5a2b2n2r2c2p5 3 2",
            -5,
            0.5,
        );
    }

    #[test]
    fn files_round_trip_and_bad_bytes_are_named() {
        let pos = Position::startpos();
        let recs = vec![
            PackedPosition::pack(&pos, 3, 1.0).unwrap(),
            PackedPosition::pack(&pos, -3, 0.0).unwrap(),
        ];
        let bytes = to_bytes(&recs);
        assert_eq!(bytes.len(), HEADER_BYTES + 2 * RECORD_BYTES);
        assert_eq!(from_bytes("f", &bytes).unwrap(), recs);
        let e = from_bytes("f", &bytes[..bytes.len() - 1]).unwrap_err();
        assert!(e.to_string().contains("truncated"), "{e}");
        let e = from_bytes("f", b"XQPACKEX\x01\0\0\0\0\0\0\0").unwrap_err();
        assert!(matches!(e, PackedError::Magic { .. }), "{e}");
        let mut v2 = bytes.clone();
        v2[8] = 2;
        assert!(matches!(
            from_bytes("f", &v2),
            Err(PackedError::Version { found: 2, .. })
        ));
        let mut bad = bytes.clone();
        bad[HEADER_BYTES + RECORD_BYTES + 30] = 7;
        let e = from_bytes("f", &bad).unwrap_err().to_string();
        assert!(e.contains("record 1") && e.contains("result byte 7"), "{e}");
        // every prefix is refused or read whole, never a panic
        for n in 0..bytes.len() {
            let _ = from_bytes("f", &bytes[..n]);
        }
    }

    #[test]
    fn a_record_that_breaks_the_rules_is_named_when_built() {
        let pos = Position::startpos();
        let mut p = PackedPosition::pack(&pos, 0, 0.5).unwrap();
        // the black king (on e9) made a red king: two red kings, no black one
        let n = p.pieces().position(|(sq, _)| sq.index() == 85).unwrap();
        p.0[12 + n / 2] &= !(15 << (4 * (n % 2)));
        assert!(p.to_position().is_err());
    }
}
