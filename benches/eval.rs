//! Evaluation speed: `evaluate` (the engine's path, no tracing) and `trace` (the tuner's path)
//! over positions from seeded random playouts. Reported per position.

use criterion::{Criterion, Throughput, black_box, criterion_group, criterion_main};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use xqtune::core::Position;
use xqtune::eval::{EvalParams, evaluate, trace};

fn positions() -> Vec<Position> {
    let mut out = Vec::new();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for _ in 0..20 {
        let mut pos = Position::startpos();
        for ply in 0..100 {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            pos.make_move(moves.as_slice()[rng.gen_range(0..moves.len())]);
            if ply % 2 == 1 {
                out.push(pos.clone());
            }
        }
    }
    out
}

fn bench(c: &mut Criterion) {
    let params = EvalParams::default();
    let pos = positions();
    let mut g = c.benchmark_group("eval");
    g.throughput(Throughput::Elements(pos.len() as u64));
    g.bench_function("evaluate", |b| {
        b.iter(|| {
            let mut s = 0i64;
            for p in &pos {
                s += evaluate(black_box(p), &params) as i64;
            }
            s
        })
    });
    g.bench_function("trace", |b| {
        b.iter(|| {
            let mut n = 0usize;
            for p in &pos {
                n += trace(black_box(p), &params).coeffs.len();
            }
            n
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
