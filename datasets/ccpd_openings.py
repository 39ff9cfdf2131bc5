#!/usr/bin/env python3
"""Builds datasets/openings.txt from the CCPD opening variations (Big5 PGN, Chinese notation).

    python3 datasets/ccpd_openings.py PATH/TO/ccpd/openings.pgn.gz 8 > datasets/openings.txt

Keeps the first PLIES plies (default 8) of every variation that starts from the initial
position, converted to coordinates (files a-i from red's left, ranks 0-9 from red's side),
one line per distinct resulting position. Variations from other FENs are handicap or odd
positions and are left out. The match runner re-checks every move for legality when it loads
the file. A stopgap until `src/core/notation.rs` can do the conversion in Rust.

CCPD: Chinese Chess Practical Dataset, Yu-Han Tseng and Bo-Nian Chen (2026), CC BY 4.0.
"""
import gzip, re, sys, collections
raw = gzip.open(sys.argv[1]).read()
text = raw.decode('big5', errors='replace')
games = re.split(r'\n(?=\[Game )', text)
PIECE = {'車':'R','俥':'R','车':'R','馬':'N','傌':'N','马':'N','炮':'C','砲':'C','包':'C','相':'B','象':'B','仕':'A','士':'A','帥':'K','將':'K','帅':'K','将':'K','兵':'P','卒':'P'}
RED_NUM = {c:i+1 for i,c in enumerate('一二三四五六七八九')}
BLK_NUM = {c:i+1 for i,c in enumerate('１２３４５６７８９')}
BLK_NUM.update({c:i+1 for i,c in enumerate('123456789')})
def num(ch, red):
    if ch in RED_NUM: return RED_NUM[ch]
    if ch in BLK_NUM: return BLK_NUM[ch]
    raise ValueError(ch)
def parse_fen(fen):
    rows = fen.split()[0].split('/')
    board = {}
    for i,row in enumerate(rows):
        rank = 9 - i; x = 0
        for ch in row:
            if ch.isdigit(): x += int(ch)
            else:
                up = ch.upper(); kind = {'R':'R','N':'N','H':'N','B':'B','E':'B','A':'A','K':'K','C':'C','P':'P'}[up]
                board[(x,rank)] = ('r' if ch.isupper() else 'b', kind); x += 1
    side = 'r' if len(fen.split())<2 or fen.split()[1] in 'wr' else 'b'
    return board, side
def conv(board, side, mv):
    red = side == 'r'
    mv = mv.strip()
    if len(mv) != 4: raise ValueError('len '+mv)
    a,b,c,d = mv
    fwd = 1 if red else -1
    def filex(n): return 9-n if red else n-1
    if a in '前後后中':
        kind = PIECE[b]
        cands = [s for s,p in board.items() if p == (side,kind)]
        # same file with >=2
        files = collections.Counter(s[0] for s in cands)
        col = [f for f,n in files.items() if n >= 2]
        if len(col) != 1: raise ValueError('prefix ambiguous '+mv)
        on = sorted([s for s in cands if s[0]==col[0]], key=lambda s: s[1]*fwd)
        if a == '前': src = on[-1]
        elif a in '後后': src = on[0]
        else:
            if len(on) != 3: raise ValueError('mid '+mv)
            src = on[1]
    else:
        kind = PIECE[a]
        x = filex(num(b, red))
        on = [s for s,p in board.items() if p == (side,kind) and s[0]==x]
        if len(on) != 1:
            if len(on) == 0: raise ValueError('none '+mv)
            # try each: diagonal pieces may be determined by destination
            raise ValueError('ambiguous '+mv)
        src = on[0]
    n = num(d, red)
    sx, sy = src
    if kind in 'RCPK':
        if c == '進': dst = (sx, sy + fwd*n)
        elif c == '退': dst = (sx, sy - fwd*n)
        elif c == '平': dst = (filex(n), sy)
        else: raise ValueError('dir '+mv)
    else:
        tx = filex(n); dx = abs(tx - sx)
        dy = {'N': 2 if dx == 1 else 1, 'B': 2, 'A': 1}[kind]
        if c == '進': dst = (tx, sy + fwd*dy)
        elif c == '退': dst = (tx, sy - fwd*dy)
        else: raise ValueError('dir '+mv)
    if not (0 <= dst[0] <= 8 and 0 <= dst[1] <= 9): raise ValueError('off '+mv)
    if board.get(dst, (None,))[0] == side: raise ValueError('own '+mv)
    board[dst] = board.pop(src)
    return 'abcdefghi'[sx]+str(sy)+'abcdefghi'[dst[0]]+str(dst[1])
HEADER = """\
# xqtune default opening suite: one opening per line, played twice with colours swapped.
# Derived from CCPD (Chinese Chess Practical Dataset), Yu-Han Tseng and Bo-Nian Chen (2026),
# github.com/Yvonne761/Chinese-Chess-Practical-Dataset, licensed CC BY 4.0
# (creativecommons.org/licenses/by/4.0): the first 8 plies of each opening variation of
# openings.pgn.gz that starts from the initial position, converted from Chinese notation to
# coordinates by datasets/ccpd_openings.py, duplicates (same position) removed.
# Comments: the variation's [Event] and the original moves. Format: see src/play/openings.rs.
"""
PLIES = int(sys.argv[2]) if len(sys.argv) > 2 else 8
START = 'rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1'
out = []; errs = 0; seen = set()
for g in games:
    m = re.search(r'\[FEN "([^"]*)"\]', g)
    fen = m.group(1) if m else START
    ev = re.search(r'\[Event "([^"]*)"\]', g)
    body = re.sub(r'\[[^\]]*\]', '', g)
    body = re.sub(r'\{[^}]*\}', '', body)
    toks = [t for t in body.split() if not re.match(r'^\d+\.$', t) and t not in ('*','1-0','0-1','1/2-1/2')]
    toks = [re.sub(r'^\d+\.', '', t) for t in toks]
    toks = [t for t in toks if t]
    if len(toks) < PLIES: continue
    try:
        board, side = parse_fen(fen)
        mvs = []
        for t in toks[:PLIES]:
            mvs.append(conv(board, side, t)); side = 'b' if side == 'r' else 'r'
    except Exception as e:
        errs += 1; continue
    key = (tuple(sorted(board.items())), side)
    if key in seen: continue
    seen.add(key)
    if fen != START:
        continue
    line = 'startpos moves ' + ' '.join(mvs)
    out.append((ev.group(1) if ev else '', line, toks[:PLIES]))
print(len(games), 'games', errs, 'errors', len(out), 'distinct', file=sys.stderr)
print(HEADER, end='')
for ev, line, t in out:
    print(line, '#', ev.replace('#',''), '|', ' '.join(t))
