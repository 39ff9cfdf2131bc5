//! Texel epoch speed: one loss + gradient pass over one million real traces, the Xiangqi
//! quiet positions of `datasets/ccpd-quiet.epd.gz` cycled up to 1M rows, traced under the
//! default parameters with every (Xiangqi) parameter selected, loaded through the tuner's own
//! path (`TexelShare::load`) and summed as its optimiser asks (`TrainObjective::loss_grad`).
//! `cargo bench --bench texel` (the figures: docs/measurements.md).

use criterion::{Criterion, criterion_group, criterion_main};
use std::io::{BufRead, Write};
use std::sync::Arc;
use xqtune::eval::EvalParams;
use xqtune::exec::Distributed;
use xqtune::tune::dataset::open_maybe_gz;
use xqtune::tune::texel::data::{LoadSpec, TexelDataset, TexelShare};
use xqtune::tune::texel::eval_space;
use xqtune::tune::texel::fit::{Objective, TrainObjective};

const ROWS: usize = 1_000_000;

/// The real dataset cycled up to [`ROWS`] rows, written once to a temporary file.
fn cycled_file() -> std::path::PathBuf {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/ccpd-quiet.epd.gz");
    let lines: Vec<String> = open_maybe_gz(&src)
        .expect("datasets/ccpd-quiet.epd.gz")
        .lines()
        .map_while(Result::ok)
        .collect();
    let path = std::env::temp_dir().join(format!("xqtune-bench-texel-{}.txt", std::process::id()));
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).expect("temp file"));
    for l in lines.iter().cycle().take(ROWS) {
        writeln!(out, "{l}").expect("temp file");
    }
    out.flush().expect("temp file");
    path
}

fn bench(c: &mut Criterion) {
    let params = EvalParams::default();
    let space = eval_space(&params, "").expect("space");
    let path = cycled_file();
    let spec = LoadSpec {
        data: path.clone(),
        max_positions: None,
        validation: 0.0,
        seed: 1,
        eval: params.clone(),
        only: String::new(),
        lambda: 0.0,
        score_k: None,
    };
    let data = TexelShare::load(&spec, &space, &|_| true).expect("load");
    let _ = std::fs::remove_file(&path);
    let (entries, bytes): (usize, usize) = data
        .shards
        .iter()
        .map(|s| (s.train.entries(), s.train.bytes()))
        .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    let n = data.train_len;
    eprintln!(
        "texel bench: {n} positions, {} parameters, {:.1} trace entries/position, {:.1} bytes/position",
        space.len(),
        entries as f64 / n as f64,
        bytes as f64 / n as f64
    );
    let theta: Vec<f64> = space.values().iter().map(|&v| v as f64).collect();
    let train = TrainObjective(Arc::new(TexelDataset(Distributed::whole(data))));
    let mut g = c.benchmark_group("texel");
    g.sample_size(10);
    g.bench_function("loss_grad_1M_real_positions", |b| {
        b.iter(|| std::hint::black_box(train.loss_grad(&theta, 1.0)))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
