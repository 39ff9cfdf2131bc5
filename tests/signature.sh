#!/usr/bin/env bash
# The equality signature of a refactor: the hashes of everything a seeded, node-limited run
# writes (bench nodes, match PGNs in both variants, GA/SPSA/Texel best.json, datagen output),
# on one process and, when the binary has MPI and mpirun exists, on RANKS ranks. Two commits
# whose signatures match compute the same things (Stockfish's tests/signature.sh, widened to
# the toolkit).
#
#   tests/signature.sh [BINARY] [RANKS]   (default target/release/xqtune, 3)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(realpath "${1:-target/release/xqtune}")
RANKS=${2:-3}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# The classical evaluation: since f39164d the engine's default is the embedded network; older
# binaries have no --eval flag and are classical anyway. The in-process engines of matches,
# tuners and datagen are classical in both.
CLASSICAL=()
if "$BIN" bench --help 2>/dev/null | grep -q -- '--eval'; then CLASSICAL=(--eval classical); fi

mpi_ok() {
    command -v mpirun >/dev/null 2>&1 || return 1
    # a binary built without MPI refuses --executor mpi
    "$BIN" datagen --executor mpi --games 1 --nodes 50 --out "$TMP/probe.txt" >/dev/null 2>&1
}
launch() { # ranks, args...
    local n=$1; shift
    if [ "$n" = 0 ]; then
        "$BIN" "$@"
    else
        local root=()
        [ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
        mpirun "${root[@]}" --oversubscribe -n "$n" "$BIN" "$@"
    fi
}
strip_pgn() { grep -v -e '^\[Date ' -e '^\[GameDuration ' "$1"; }
h() { sha256sum | cut -c1-16; }

echo "bench $("$BIN" bench "${CLASSICAL[@]}" 2>&1 | grep 'Nodes searched' | awk '{print $3}')"
set_ranks=(0)
if mpi_ok; then set_ranks=(0 "$RANKS"); fi
for n in "${set_ranks[@]}"; do
    tag="ranks=$n"; [ "$n" = 0 ] && tag="one process"
    common=(--concurrency 1)
    for v in xiangqi jieqi; do
        o="$TMP/m-$v-$n"
        launch "$n" match --variant "$v" --games 8 --nodes 400 --seed 7 "${common[@]}" \
            --out-dir "$o" --name m >/dev/null 2>&1
        echo "$tag match-$v $(strip_pgn "$o"/*/games.pgn | h)"
        o="$TMP/x-$v-$n"
        launch "$n" match --variant "$v" --games 4 --nodes 400 --seed 7 "${common[@]}" \
            --b-cmd "$BIN uci ${CLASSICAL[*]}" --b-name default --out-dir "$o" --name m >/dev/null 2>&1
        echo "$tag match-$v-external $(strip_pgn "$o"/*/games.pgn | h)"
    done
    tune_common=(--seed 3 --verify none "${common[@]}" --name t)
    declare -A T=(
        [spsa]="spsa --iterations 4 --games 2 --nodes 400 --only mobility.*"
        [ga]="ga --population 4 --generations 2 --games 2 --nodes 400 --final-candidates 2 --final-games 2 --only mobility.*"
        [texel]="texel --data datasets/ccpd-quiet.epd.gz --max-positions 300000 --epochs 2 --only material.*,mobility.*"
        [texel-adam]="texel --data datasets/ccpd-quiet.epd.gz --max-positions 300000 --epochs 2 --only material.*,mobility.* --optimiser adam --batch-size 24576"
    )
    for t in spsa ga texel texel-adam; do
        o="$TMP/t-$t-$n"
        # shellcheck disable=SC2086
        launch "$n" tune ${T[$t]} "${tune_common[@]}" --out "$o" >/dev/null 2>&1
        echo "$tag tune-$t $(h < "$o"/*/best.json)"
    done
    o="$TMP/t-nnue-$n"
    if launch "$n" tune nnue --data datasets/ccpd-quiet.epd.gz --max-positions 50000 --epochs 2 \
        --hidden 64 --lambda 0 "${tune_common[@]}" --out "$o" >/dev/null 2>&1; then
        echo "$tag tune-nnue $(h < "$o"/*/best.nnue)"
    else
        echo "$tag tune-nnue (none: this binary has no tune nnue)"
    fi
    for v in xiangqi jieqi; do
        o="$TMP/d-$v-$n.txt"
        launch "$n" datagen --variant "$v" --games 6 --nodes 400 --seed 5 "${common[@]}" \
            --out "$o" >/dev/null 2>&1
        echo "$tag datagen-$v $(h < "$o")"
    done
done
