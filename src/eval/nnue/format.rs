//! The network file: a versioned, little-endian binary with a header before the weights and a
//! hash after them (Stockfish's `.nnue` files carry a version, an architecture hash and a
//! description before the weights).
//!
//! ```text
//! offset  size  field
//!      0     8  magic "XQTNNUE\0"
//!      8     4  u32 format version (1)
//!     12     4  u32 feature set id (1: xiangqi-planes, 2: xiangqi-king-buckets)
//!     16     4  u32 inputs (must equal the feature set's)
//!     20     4  u32 hidden neurons per perspective (L1; a multiple of 32 in 32..=4096)
//!     24     4  u32 output buckets (1..=32)
//!     28     4  u32 activation (0: CReLU, 1: SCReLU)
//!     32     4  i32 QA (1..=32767)
//!     36     4  i32 QB (1..=32767)
//!     40     4  i32 SCALE, centipawns per unit of output (1..=65535)
//!     44     4  u32 description length n in bytes (at most 65536)
//!     48     n  description, UTF-8
//!              i16 × inputs·hidden     feature weights, row-major by input: the hidden
//!                                      vector that input i adds starts at i·hidden
//!              i16 × hidden            feature biases
//!              i16 × buckets·2·hidden  output weights, row-major by bucket: bucket b's row
//!                                      starts at b·2·hidden, the side to move's half first
//!              i32 × buckets           output biases (scale QA·QB)
//!   end-8     8  u64 FNV-1a of every byte before it
//! ```
//!
//! Reading checks, in this order: the magic, the version, the header fields (feature set,
//! inputs, activation, sizes), the length the header promises, the hash, the description's
//! encoding; each failure is its own [`NnueError`]. The weights' ranges are checked when the
//! network is built from them.

use super::arch::{Activation, Architecture, MAX_DESCRIPTION};
use super::error::NnueError;
use super::features::FeatureSetId;
use super::simd::{LANES, Line};
use crate::util::fnv1a;

pub const MAGIC: [u8; 8] = *b"XQTNNUE\0";
pub const FORMAT_VERSION: u32 = 1;
/// Bytes before the description.
pub const HEADER_BYTES: usize = 48;
const HASH_BYTES: usize = 8;

/// The contents of a file, parsed and checked up to the weights' ranges.
#[derive(Debug)]
pub struct Decoded {
    pub arch: Architecture,
    pub description: String,
    pub ft_weights: Vec<Line>,
    pub ft_bias: Vec<Line>,
    pub out_weights: Vec<Line>,
    pub out_bias: Vec<i32>,
    pub hash: u64,
}

/// The file of a network: header, weights in the documented order, hash. The i16 slices are
/// flat (row-major as documented); their lengths must match `arch`.
pub fn encode(
    arch: &Architecture,
    description: &str,
    ft_weights: &[i16],
    ft_bias: &[i16],
    out_weights: &[i16],
    out_bias: &[i32],
) -> Vec<u8> {
    let weights = ft_weights.len() + ft_bias.len() + out_weights.len();
    let mut out = Vec::with_capacity(
        HEADER_BYTES + description.len() + 2 * weights + 4 * out_bias.len() + HASH_BYTES,
    );
    out.extend_from_slice(&MAGIC);
    for v in [
        FORMAT_VERSION,
        arch.feature_set.to_u32(),
        arch.inputs() as u32,
        arch.hidden as u32,
        arch.buckets as u32,
        arch.activation.to_u32(),
    ] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for v in [arch.qa, arch.qb, arch.scale] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&(description.len() as u32).to_le_bytes());
    out.extend_from_slice(description.as_bytes());
    for part in [ft_weights, ft_bias, out_weights] {
        for v in part {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    for v in out_bias {
        out.extend_from_slice(&v.to_le_bytes());
    }
    let hash = fnv1a(out.iter().copied());
    out.extend_from_slice(&hash.to_le_bytes());
    out
}

/// The FNV-1a hash [`encode`] appends: of every byte of the file before the hash.
pub fn hash_of_encoded(bytes: &[u8]) -> u64 {
    fnv1a(bytes[..bytes.len() - HASH_BYTES].iter().copied())
}

/// Little-endian fields read from a byte string; running out is [`NnueError::Truncated`].
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, needed: usize) -> Result<&'a [u8], NnueError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            return Err(NnueError::Truncated {
                needed: needed.max(self.at.saturating_add(n)),
                found: self.bytes.len(),
            });
        };
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn u32(&mut self) -> Result<u32, NnueError> {
        let b = self.take(4, HEADER_BYTES)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn i32(&mut self) -> Result<i32, NnueError> {
        Ok(self.u32()? as i32)
    }

    /// `count` i16 values (a multiple of [`LANES`]) as lines.
    fn lines(&mut self, count: usize) -> Result<Vec<Line>, NnueError> {
        let b = self.take(2 * count, 0)?;
        Ok(b.chunks_exact(2 * LANES)
            .map(|chunk| {
                let mut line = Line::ZERO;
                for (v, pair) in line.0.iter_mut().zip(chunk.chunks_exact(2)) {
                    *v = i16::from_le_bytes([pair[0], pair[1]]);
                }
                line
            })
            .collect())
    }
}

/// Parses and checks a network file (see the module documentation for the order of checks).
pub fn decode(bytes: &[u8]) -> Result<Decoded, NnueError> {
    let head = &bytes[..bytes.len().min(MAGIC.len())];
    if head != &MAGIC[..head.len()] {
        return Err(NnueError::BadMagic);
    }
    let mut r = Reader { bytes, at: 0 };
    r.take(MAGIC.len(), HEADER_BYTES)?;
    let version = r.u32()?;
    if version != FORMAT_VERSION {
        return Err(NnueError::UnsupportedVersion {
            found: version,
            supported: FORMAT_VERSION,
        });
    }
    let feature_set = r.u32()?;
    let inputs = r.u32()? as usize;
    let hidden = r.u32()? as usize;
    let buckets = r.u32()? as usize;
    let activation = r.u32()?;
    let (qa, qb, scale) = (r.i32()?, r.i32()?, r.i32()?);
    let description_len = r.u32()? as usize;

    let feature_set =
        FeatureSetId::from_u32(feature_set).ok_or(NnueError::UnknownFeatureSet(feature_set))?;
    if inputs != feature_set.inputs() {
        return Err(NnueError::SizeMismatch {
            field: "inputs",
            expected: feature_set.inputs(),
            found: inputs,
        });
    }
    let activation =
        Activation::from_u32(activation).ok_or(NnueError::UnknownActivation(activation))?;
    let arch = Architecture {
        feature_set,
        hidden,
        buckets,
        activation,
        qa,
        qb,
        scale,
    };
    arch.validate()?;
    if description_len > MAX_DESCRIPTION {
        return Err(NnueError::AbsurdSize {
            field: "description length",
            value: description_len as i64,
            allowed: "0..=65536",
        });
    }

    // The validated sizes keep every product far below usize::MAX.
    let ft_len = arch.ft_weight_count();
    let out_len = arch.out_weight_count();
    let total =
        HEADER_BYTES + description_len + 2 * (ft_len + hidden + out_len) + 4 * buckets + HASH_BYTES;
    if bytes.len() < total {
        return Err(NnueError::Truncated {
            needed: total,
            found: bytes.len(),
        });
    }
    if bytes.len() > total {
        return Err(NnueError::TrailingBytes {
            extra: bytes.len() - total,
        });
    }
    let computed = hash_of_encoded(bytes);
    let stored = u64::from_le_bytes(
        bytes[total - HASH_BYTES..]
            .try_into()
            .expect("eight bytes remain"),
    );
    if stored != computed {
        return Err(NnueError::HashMismatch { stored, computed });
    }

    let description = std::str::from_utf8(r.take(description_len, total)?)
        .map_err(|_| NnueError::DescriptionNotUtf8)?
        .to_string();
    let ft_weights = r.lines(ft_len)?;
    let ft_bias = r.lines(hidden)?;
    let out_weights = r.lines(out_len)?;
    let out_bias = r
        .take(4 * buckets, total)?
        .chunks_exact(4)
        .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    Ok(Decoded {
        arch,
        description,
        ft_weights,
        ft_bias,
        out_weights,
        out_bias,
        hash: stored,
    })
}
