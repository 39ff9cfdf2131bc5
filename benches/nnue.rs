//! NNUE inference speed at L1 = 256 and 512 (SCReLU, 8 output buckets, random weights), with
//! the plain and the AVX2 kernels: rebuilding an accumulator (`refresh`), updating one from its
//! parent by a move (`update`), a move's push plus a lazy evaluation on the accumulator stack
//! as the search will do it (`update_evaluate`), the output layer alone (`output`), and the
//! whole forward pass from scratch (`full`). Reported per position or per move.

use criterion::{Criterion, Throughput, black_box, criterion_group, criterion_main};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use xqtune::core::Position;
use xqtune::eval::nnue::{
    Accumulator, AccumulatorStack, Activation, FeatureDelta, Network, Simd, delta_of,
};

/// A seeded random game: the positions after each move, and each move's delta.
fn game(seed: u64, plies: usize) -> (Position, Vec<Position>, Vec<FeatureDelta>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let root = Position::startpos();
    let mut pos = root.clone();
    let (mut positions, mut deltas) = (Vec::new(), Vec::new());
    for _ in 0..plies {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            break;
        }
        let m = moves.as_slice()[rng.gen_range(0..moves.len())];
        deltas.push(delta_of(&pos, m));
        pos.make_move(m);
        positions.push(pos.clone());
    }
    (root, positions, deltas)
}

fn bench(c: &mut Criterion) {
    let (root, positions, deltas) = game(1, 200);
    for hidden in [256, 512] {
        for simd in [Simd::Plain, Simd::Avx2] {
            let mut net = Network::random(1, hidden, 8, Activation::SCReLU);
            if !net.set_simd(simd) {
                continue;
            }
            let name = format!("nnue/L{hidden}/{}", format!("{simd:?}").to_lowercase());
            let mut g = c.benchmark_group(name);
            g.throughput(Throughput::Elements(positions.len() as u64));
            let accs: Vec<Accumulator> = positions
                .iter()
                .map(|p| Accumulator::from_position(&net, p))
                .collect();
            let mut scratch = Accumulator::new(&net);
            g.bench_function("refresh", |b| {
                b.iter(|| {
                    for p in &positions {
                        scratch.refresh(&net, black_box(p));
                    }
                })
            });
            g.bench_function("update", |b| {
                b.iter(|| {
                    for k in 1..positions.len() {
                        scratch.update(&net, &accs[k - 1], black_box(&deltas[k]), &positions[k]);
                    }
                })
            });
            let mut stack = AccumulatorStack::new(&net);
            g.bench_function("update_evaluate", |b| {
                b.iter(|| {
                    stack.reset(&net, &root);
                    let mut s = 0i64;
                    for (p, d) in positions.iter().zip(&deltas) {
                        stack.push(*black_box(d));
                        s += stack.evaluate(&net, p) as i64;
                    }
                    s
                })
            });
            g.bench_function("output", |b| {
                b.iter(|| {
                    let mut s = 0i64;
                    for (a, p) in accs.iter().zip(&positions) {
                        s += net.evaluate(black_box(a), p) as i64;
                    }
                    s
                })
            });
            g.bench_function("full", |b| {
                b.iter(|| {
                    let mut s = 0i64;
                    for p in &positions {
                        scratch.refresh(&net, black_box(p));
                        s += net.evaluate(&scratch, p) as i64;
                    }
                    s
                })
            });
            g.finish();
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
