//! Texel epoch speed: one loss + gradient pass over one million precomputed traces
//! (48 coefficients each over 1,500 parameters, about the shape of a tapered Xiangqi
//! evaluation's traces). `cargo bench --bench texel`; the issue asks for well under a second
//! per epoch on 2 cores.

use criterion::{Criterion, criterion_group, criterion_main};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use xqtune::tune::texel::TraceSet;

fn synthetic(n: usize, p: usize, per: usize) -> TraceSet {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut ts = TraceSet::new();
    let mut coeffs = Vec::with_capacity(per);
    for _ in 0..n {
        coeffs.clear();
        for _ in 0..per {
            coeffs.push((rng.gen_range(0..p as u32), rng.gen_range(-1.0f32..1.0)));
        }
        ts.push(
            rng.gen_range(-50.0..50.0),
            &coeffs,
            [0.0, 0.5, 1.0][rng.gen_range(0..3)],
        );
    }
    ts
}

fn bench(c: &mut Criterion) {
    let ts = synthetic(1_000_000, 1500, 48);
    let theta = vec![10.0f64; 1500];
    let mut g = c.benchmark_group("texel");
    g.sample_size(10);
    g.bench_function("loss_grad_1M_positions", |b| {
        b.iter(|| std::hint::black_box(ts.loss_grad(&theta, 1.0)))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
