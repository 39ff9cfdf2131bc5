//! The module's contracts, end to end: the file round trip and its error paths, the kernels
//! against the from-scratch reference, the quantised network against its float form, and the
//! incremental accumulators against full rebuilds along random games.

use super::*;
use crate::core::{Color, Move, Position};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Positions from seeded random playouts of both variants (Jieqi moves with their reveals).
fn random_positions(seed: u64, games: usize) -> Vec<Position> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    for g in 0..games {
        let mut pos = if g % 3 == 2 {
            Position::jieqi_startpos()
        } else {
            Position::startpos()
        };
        for _ in 0..rng.gen_range(0..120) {
            let children: Vec<Move> = pos.children().map(|(m, _)| m).collect();
            if children.is_empty() {
                break;
            }
            pos.make_move(children[rng.gen_range(0..children.len())]);
            if rng.gen_bool(0.25) {
                out.push(pos.clone());
            }
        }
        out.push(pos);
    }
    out
}

fn networks() -> Vec<Network> {
    let mut nets = Vec::new();
    for (i, feature_set) in FeatureSetId::ALL.into_iter().enumerate() {
        for activation in Activation::ALL {
            for (hidden, buckets) in [(32, 1), (128, 8)] {
                let arch = Architecture::new(feature_set, hidden, buckets, activation);
                nets.push(Network::random_with(i as u64 * 100 + hidden as u64, arch));
            }
        }
    }
    nets
}

#[test]
fn file_round_trip_is_exact() {
    for net in networks() {
        let bytes = net.to_bytes();
        let back = Network::from_bytes(&bytes).unwrap();
        assert_eq!(back, net);
        assert_eq!(back.hash(), net.hash());
        assert_eq!(back.description(), net.description());
        assert_eq!(back.to_bytes(), bytes);
    }
}

#[test]
fn file_layout_matches_the_documentation() {
    let net = Network::random(5, 32, 2, Activation::CReLU);
    let b = net.to_bytes();
    let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
    assert_eq!(&b[..8], b"XQTNNUE\0");
    let header: Vec<u32> = (8..48).step_by(4).map(u32_at).collect();
    let desc = "random network, seed 5";
    assert_eq!(
        header,
        [1, 1, 1260, 32, 2, 0, 255, 64, 400, desc.len() as u32]
    );
    assert_eq!(&b[48..48 + desc.len()], desc.as_bytes());
    let weights = 48 + desc.len();
    let i16_at = |i: usize| i16::from_le_bytes([b[i], b[i + 1]]);
    assert_eq!(i16_at(weights), net.ft_weights()[0]);
    let out_w = weights + 2 * (1260 * 32 + 32);
    assert_eq!(i16_at(out_w + 2 * 70), net.out_weights()[70]);
    let out_b = out_w + 2 * (2 * 2 * 32);
    assert_eq!(
        i32::from_le_bytes(b[out_b + 4..out_b + 8].try_into().unwrap()),
        net.out_biases()[1]
    );
    assert_eq!(b.len(), out_b + 8 + 8);
    let hash = u64::from_le_bytes(b[b.len() - 8..].try_into().unwrap());
    assert_eq!(hash, crate::util::fnv1a(b[..b.len() - 8].iter().copied()));
    assert_eq!(hash, net.hash());
}

#[test]
fn save_and_load() {
    let dir = std::env::temp_dir().join(format!("xqtune-nnue-{}", std::process::id()));
    let path = dir.join("net.nnue");
    let net = Network::random(9, 64, 4, Activation::SCReLU);
    net.save(&path).unwrap();
    assert_eq!(Network::load(&path).unwrap(), net);
    let missing = dir.join("missing.nnue");
    assert!(matches!(
        Network::load(&missing),
        Err(NnueError::Io { path, .. }) if path == missing
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn every_truncation_is_reported_as_such() {
    let bytes = Network::random(1, 32, 1, Activation::SCReLU).to_bytes();
    for len in 0..bytes.len() {
        match Network::from_bytes(&bytes[..len]) {
            Err(NnueError::Truncated { needed, found }) => {
                assert_eq!(found, len);
                assert!(needed > len, "{needed} <= {len}");
            }
            other => panic!("length {len}: {other:?}"),
        }
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(matches!(
        Network::from_bytes(&longer),
        Err(NnueError::TrailingBytes { extra: 1 })
    ));
}

/// Sets the little-endian u32 at `at` and refreshes the hash, so that only the field is wrong.
fn with_field(bytes: &[u8], at: usize, value: u32) -> Vec<u8> {
    let mut b = bytes.to_vec();
    b[at..at + 4].copy_from_slice(&value.to_le_bytes());
    let n = b.len();
    let hash = crate::util::fnv1a(b[..n - 8].iter().copied());
    b[n - 8..].copy_from_slice(&hash.to_le_bytes());
    b
}

#[test]
fn each_bad_field_is_named() {
    let bytes = Network::random(2, 32, 2, Activation::SCReLU).to_bytes();
    let err = |b: &[u8]| Network::from_bytes(b).unwrap_err();
    let mut b = bytes.clone();
    b[0] = b'Y';
    assert!(matches!(err(&b), NnueError::BadMagic));
    assert!(matches!(err(b"hello"), NnueError::BadMagic));
    assert!(matches!(
        err(&with_field(&bytes, 8, 2)),
        NnueError::UnsupportedVersion {
            found: 2,
            supported: 1
        }
    ));
    assert!(matches!(
        err(&with_field(&bytes, 12, 9)),
        NnueError::UnknownFeatureSet(9)
    ));
    assert!(matches!(
        err(&with_field(&bytes, 16, 1259)),
        NnueError::SizeMismatch {
            field: "inputs",
            expected: 1260,
            found: 1259
        }
    ));
    // The king-bucket set has 9 * 1260 inputs, not 1260.
    assert!(matches!(
        err(&with_field(&bytes, 12, 2)),
        NnueError::SizeMismatch {
            field: "inputs",
            expected: 11340,
            ..
        }
    ));
    for (at, value, field) in [
        (20, 33, "hidden size"),
        (20, 1 << 30, "hidden size"),
        (24, 0, "output bucket count"),
        (32, 0, "QA"),
        (36, u32::MAX, "QB"),
        (40, 1 << 20, "scale"),
        (44, 1 << 20, "description length"),
    ] {
        match err(&with_field(&bytes, at, value)) {
            NnueError::AbsurdSize { field: f, .. } => assert_eq!(f, field),
            e => panic!("{field}: {e:?}"),
        }
    }
    assert!(matches!(
        err(&with_field(&bytes, 28, 2)),
        NnueError::UnknownActivation(2)
    ));
    // A valid header promising more hidden neurons than the file holds.
    assert!(matches!(
        err(&with_field(&bytes, 20, 64)),
        NnueError::Truncated { .. }
    ));
    // A weight changed: only the hash can tell.
    let mut b = bytes.clone();
    b[1000] ^= 0x10;
    assert!(matches!(err(&b), NnueError::HashMismatch { .. }));
    // SCReLU output weights beyond 32767 / QA: QA 1000 makes the limit 32, which the random
    // weights (up to ±128) pass.
    assert!(matches!(
        err(&with_field(&bytes, 32, 1000)),
        NnueError::WeightOutOfRange { .. }
    ));
    // A description that is not UTF-8.
    let mut b = bytes.clone();
    b[48] = 0xff;
    let b = with_field(&b, 44, "random network, seed 2".len() as u32);
    assert!(matches!(err(&b), NnueError::DescriptionNotUtf8));
}

/// No byte string makes the reader panic, and no corruption of a valid file passes.
#[test]
fn corruptions_are_errors_never_panics() {
    let bytes = Network::random(3, 32, 2, Activation::CReLU).to_bytes();
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    for _ in 0..3000 {
        let mut b = bytes.clone();
        for _ in 0..rng.gen_range(1..4) {
            let i = rng.gen_range(0..b.len());
            b[i] ^= rng.gen_range(1..=255u8);
        }
        if rng.gen_bool(0.2) {
            b.truncate(rng.gen_range(0..b.len()));
        }
        assert!(Network::from_bytes(&b).is_err());
    }
    // Random bytes behind a valid magic and header start, of random lengths.
    for _ in 0..3000 {
        let len = rng.gen_range(0..200);
        let mut b: Vec<u8> = (0..len).map(|_| rng.r#gen()).collect();
        let keep = rng.gen_range(0..=48).min(len);
        b[..keep].copy_from_slice(&bytes[..keep]);
        assert!(Network::from_bytes(&b).is_err());
    }
}

/// The kernels, plain and AVX2, give exactly the from-scratch reference's integers.
#[test]
fn kernels_equal_the_reference() {
    let positions = random_positions(1, 12);
    for mut net in networks() {
        for simd in [Simd::Plain, Simd::Avx2] {
            if !net.set_simd(simd) {
                continue;
            }
            for pos in &positions {
                assert_eq!(
                    net.evaluate_position(pos),
                    net.evaluate_reference(pos),
                    "{simd:?} {:?} {}",
                    net.architecture(),
                    pos.to_fen()
                );
            }
        }
    }
}

#[test]
fn plain_and_avx2_accumulators_are_identical() {
    if !Simd::Avx2.available() {
        return;
    }
    let mut net = Network::random(8, 256, 8, Activation::SCReLU);
    for pos in random_positions(2, 6) {
        net.set_simd(Simd::Plain);
        let plain = Accumulator::from_position(&net, &pos);
        net.set_simd(Simd::Avx2);
        assert_eq!(Accumulator::from_position(&net, &pos), plain);
    }
}

/// A network whose weights lie on the quantisation grid loses nothing to quantisation: the
/// integer evaluation is the float one truncated toward zero.
#[test]
fn quantised_equals_float_on_the_grid() {
    let positions = random_positions(3, 9);
    for net in networks() {
        let float = net.to_float();
        for pos in &positions {
            let q = net.evaluate_position(pos) as f32;
            let f = float.evaluate(pos);
            assert!(
                (q - f).abs() <= 1.0 + 1e-4 * f.abs(),
                "{q} vs {f} {:?}",
                net.architecture()
            );
        }
    }
}

/// Off the grid, quantisation moves the evaluation by a little: each neuron sums about 33
/// rounding errors of up to 0.5 / QA, so over a few hundred neurons the output moves by about
/// a percent of its spread.
#[test]
fn quantised_is_close_to_float() {
    let positions = random_positions(4, 9);
    for activation in Activation::ALL {
        let arch = Architecture::new(FeatureSetId::XiangqiPlanes, 256, 8, activation);
        let float = FloatNetwork::random(21, arch);
        let net = float.quantise().unwrap();
        let mut worst = 0f32;
        let mut spread = 0f32;
        for pos in &positions {
            let f = float.evaluate(pos);
            worst = worst.max((net.evaluate_position(pos) as f32 - f).abs());
            spread = spread.max(f.abs());
        }
        assert!(
            spread > 500.0,
            "{activation:?}: the evaluations vary too little"
        );
        assert!(
            worst < 0.025 * spread,
            "{activation:?}: {worst} of {spread}"
        );
    }
}

/// Random walks through both variants' game trees (moves, captures, reveals, null moves, takes
/// back): at every node the incrementally updated accumulator equals a rebuild, and the lazy
/// stack, evaluated at random nodes, equals the reference.
#[test]
fn incremental_accumulators_equal_rebuilds() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for (n, mut net) in networks().into_iter().enumerate() {
        if n % 2 == 1 && !net.set_simd(Simd::Plain) {
            continue;
        }
        for game in 0..4 {
            let root = if game % 2 == 1 {
                Position::jieqi_startpos()
            } else {
                Position::startpos()
            };
            let mut pos = root.clone();
            let mut accs = vec![Accumulator::from_position(&net, &pos)];
            let mut stack = AccumulatorStack::new(&net);
            stack.reset(&net, &pos);
            let mut nulls = Vec::new();
            for _ in 0..400 {
                let depth = accs.len() - 1;
                let children: Vec<Move> = pos.children().map(|(m, _)| m).collect();
                let back = depth > 0 && (children.is_empty() || rng.gen_bool(0.35));
                if back {
                    if nulls.pop() == Some(true) {
                        pos.unmake_null();
                    } else {
                        pos.unmake_move();
                    }
                    stack.pop();
                    accs.pop();
                } else {
                    if children.is_empty() {
                        break;
                    }
                    let delta = if !pos.in_check() && rng.gen_bool(0.05) {
                        pos.make_null();
                        nulls.push(true);
                        FeatureDelta::NONE
                    } else {
                        let m = children[rng.gen_range(0..children.len())];
                        let d = delta_of(&pos, m);
                        pos.make_move(m);
                        nulls.push(false);
                        d
                    };
                    stack.push(delta);
                    let mut child = Accumulator::new(&net);
                    child.update(&net, &accs[depth], &delta, &pos);
                    accs.push(child);
                }
                let fresh = Accumulator::from_position(&net, &pos);
                assert_eq!(accs.last().unwrap(), &fresh, "{}", pos.to_fen());
                assert_eq!(stack.depth(), accs.len() - 1);
                if rng.gen_bool(0.3) {
                    assert_eq!(
                        stack.evaluate(&net, &pos),
                        net.evaluate_reference(&pos),
                        "{:?} {}",
                        net.architecture(),
                        pos.to_fen()
                    );
                    for c in Color::ALL {
                        assert_eq!(stack.top_values(c), Some(fresh.values(c)));
                    }
                }
            }
        }
    }
}

/// Long runs of unevaluated plies are rebuilt rather than replayed, with the same result; a new
/// network loaded mid-game is picked up.
#[test]
fn stack_handles_long_chains_and_network_changes() {
    let net = Network::random(6, 64, 4, Activation::SCReLU);
    let other = Network::random(7, 128, 2, Activation::CReLU);
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let mut pos = Position::startpos();
    let mut stack = AccumulatorStack::new(&net);
    stack.reset(&net, &pos);
    for ply in 0..300 {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            break;
        }
        let m = moves.as_slice()[rng.gen_range(0..moves.len())];
        stack.push(delta_of(&pos, m));
        pos.make_move(m);
        if ply % 29 == 0 {
            assert_eq!(stack.evaluate(&net, &pos), net.evaluate_reference(&pos));
        }
        if ply % 41 == 40 {
            assert_eq!(stack.evaluate(&other, &pos), other.evaluate_reference(&pos));
            assert_eq!(stack.evaluate(&net, &pos), net.evaluate_reference(&pos));
        }
    }
    // Null moves past the stack's first allocation.
    let mut pos = Position::startpos();
    stack.reset(&net, &pos);
    for _ in 0..300 {
        stack.push(FeatureDelta::NONE);
        pos.make_null();
    }
    assert_eq!(stack.depth(), 300);
    assert_eq!(stack.evaluate(&net, &pos), net.evaluate_reference(&pos));
}
