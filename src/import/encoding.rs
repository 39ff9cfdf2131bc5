//! Text encodings of game collections: UTF-8, GBK (GB18030) and Big5, detected or forced.
//!
//! Detection: a byte-order mark wins; otherwise text that is valid UTF-8 is UTF-8. Otherwise the
//! bytes are decoded strictly as GBK and as Big5; the two byte ranges overlap so much that both
//! often succeed, and the decoding that yields more characters of move notation (進退平, 車馬炮,
//! 进车马 ...) is kept: a wrong decoding turns them into unrelated characters.

use encoding_rs::{BIG5, Encoding, GB18030, GBK, UTF_8};
use std::borrow::Cow;

/// The encodings the importer knows, by the names `--encoding` accepts.
pub fn encoding_by_name(name: &str) -> Option<&'static Encoding> {
    match name.to_ascii_lowercase().replace('_', "-").as_str() {
        "utf-8" | "utf8" => Some(UTF_8),
        "gbk" | "gb2312" | "cp936" => Some(GBK),
        "gb18030" => Some(GB18030),
        "big5" | "big-5" | "cp950" => Some(BIG5),
        _ => None,
    }
}

/// Characters that are frequent in Chinese move notation and PGN headers, in both scripts.
fn notation_score(text: &str) -> usize {
    text.chars()
        .filter(|c| {
            matches!(
                c,
                '進' | '进'
                    | '退'
                    | '平'
                    | '車'
                    | '车'
                    | '馬'
                    | '马'
                    | '炮'
                    | '砲'
                    | '兵'
                    | '卒'
                    | '相'
                    | '象'
                    | '仕'
                    | '士'
                    | '帥'
                    | '帅'
                    | '將'
                    | '将'
                    | '前'
                    | '後'
                    | '后'
                    | '一'
                    | '二'
                    | '三'
                    | '四'
                    | '五'
                    | '六'
                    | '七'
                    | '八'
                    | '九'
                    | '１'
                    | '２'
                    | '３'
                    | '４'
                    | '５'
                    | '６'
                    | '７'
                    | '８'
                    | '９'
            )
        })
        .count()
}

/// The decoded text, the encoding used, and whether bytes had to be replaced (malformed input).
pub struct Decoded<'a> {
    pub text: Cow<'a, str>,
    pub encoding: &'static Encoding,
    pub had_errors: bool,
}

/// Decodes `bytes` with `forced`, or with the detected encoding.
pub fn decode<'a>(bytes: &'a [u8], forced: Option<&'static Encoding>) -> Decoded<'a> {
    if let Some(enc) = forced {
        let (text, _, had_errors) = enc.decode(bytes);
        return Decoded {
            text,
            encoding: enc,
            had_errors,
        };
    }
    if let Some((enc, bom_len)) = Encoding::for_bom(bytes) {
        let (text, had_errors) = enc.decode_without_bom_handling(&bytes[bom_len..]);
        return Decoded {
            text,
            encoding: enc,
            had_errors,
        };
    }
    if let Ok(s) = std::str::from_utf8(bytes) {
        return Decoded {
            text: Cow::Borrowed(s),
            encoding: UTF_8,
            had_errors: false,
        };
    }
    let mut best: Option<(bool, usize, Decoded)> = None;
    for enc in [BIG5, GBK] {
        let (text, had_errors) = enc.decode_without_bom_handling(bytes);
        let score = notation_score(&text);
        let better = match &best {
            None => true,
            // Clean decodings beat ones with replacements; then more notation characters win.
            Some((best_clean, best_score, _)) => (!had_errors, score) > (*best_clean, *best_score),
        };
        if better {
            best = Some((
                !had_errors,
                score,
                Decoded {
                    text,
                    encoding: enc,
                    had_errors,
                },
            ));
        }
    }
    best.map(|(_, _, d)| d).unwrap_or(Decoded {
        text: Cow::Borrowed(""),
        encoding: UTF_8,
        had_errors: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "[Event \"測試\"]\n1. 炮二平五 馬８進７ 2. 馬二進三 車９平８ 1-0\n";
    const SAMPLE_SC: &str = "[Event \"测试\"]\n1. 炮二平五 马８进７ 2. 马二进三 车９平８ 1-0\n";

    #[test]
    fn detects_utf8_gbk_and_big5() {
        let d = decode(SAMPLE.as_bytes(), None);
        assert_eq!((d.encoding, d.text.as_ref()), (UTF_8, SAMPLE));
        let (big5, _, bad) = BIG5.encode(SAMPLE);
        assert!(!bad);
        let d = decode(&big5, None);
        assert_eq!((d.encoding, d.text.as_ref()), (BIG5, SAMPLE));
        let (gbk, _, bad) = GBK.encode(SAMPLE_SC);
        assert!(!bad);
        let d = decode(&gbk, None);
        assert_eq!((d.encoding, d.text.as_ref()), (GBK, SAMPLE_SC));
        let mut bom = vec![0xEF, 0xBB, 0xBF];
        bom.extend_from_slice(SAMPLE.as_bytes());
        assert_eq!(decode(&bom, None).text.as_ref(), SAMPLE);
    }

    #[test]
    fn forced_encoding_and_names() {
        assert_eq!(encoding_by_name("GBK"), Some(GBK));
        assert_eq!(encoding_by_name("big5"), Some(BIG5));
        assert_eq!(encoding_by_name("utf8"), Some(UTF_8));
        assert_eq!(encoding_by_name("latin1"), None);
        let (big5, _, _) = BIG5.encode(SAMPLE);
        let d = decode(&big5, Some(GBK));
        assert_ne!(d.text.as_ref(), SAMPLE);
    }
}
