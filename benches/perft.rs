//! Perft speed: the move generator's benchmark (`cargo bench --bench perft`). The node counts
//! are asserted so that a faster but wrong generator cannot pass as an improvement.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;
use xqtune::core::{Position, perft};

/// (name, FEN, depth, expected nodes). The middle-game position is "cpw2" of the perft suite.
const CASES: [(&str, &str, u32, u64); 3] = [
    (
        "startpos_d3",
        "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1",
        3,
        79_666,
    ),
    (
        "startpos_d4",
        "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1",
        4,
        3_290_240,
    ),
    (
        "midgame_d4",
        "r1ba1a3/4kn3/2n1b4/pNp1p1p1p/4c4/6P2/P1P2R2P/1CcC5/9/2BAKAB2 w - - 0 1",
        4,
        1_339_047,
    ),
];

fn bench_perft(c: &mut Criterion) {
    let mut group = c.benchmark_group("perft");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    for (name, fen, depth, nodes) in CASES {
        let mut pos = Position::from_fen(fen).expect("valid bench FEN");
        assert_eq!(perft::perft(&mut pos, depth), nodes, "{name}");
        group.throughput(Throughput::Elements(nodes));
        group.bench_function(name, |b| {
            b.iter(|| perft::perft(black_box(&mut pos), black_box(depth)))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_perft);
criterion_main!(benches);
