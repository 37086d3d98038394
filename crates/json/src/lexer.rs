//! The one JSON lexer of this crate, for both parsers: the proto3 JSON mapping
//! ([`crate::protobuf::parse`]) and the object-graph form ([`crate::objgraph`]).
//!
//! It reads one token at a time without recursion (nesting is the parsers' business)
//! and knows nothing of either format's errors: it reports a [`LexError`] (a kind and a
//! byte offset) that each parser turns into its own error. What the two parsers accept
//! differs in a few places, so the lexer has a [`Dialect`]; everything not listed there
//! is the same for both:
//!
//! * whitespace is `' '`, `\t`, `\n`, `\r`;
//! * punctuation `{ } [ ] : ,`, the words `true`, `false`, `null` (a token that starts
//!   like none of these is [`LexErrorKind::Unexpected`] at its first byte);
//! * strings: the escapes `\" \\ \/ \b \f \n \r \t \uXXXX`, raw bytes below 0x20 are
//!   errors, the text must be UTF-8 (the error at the first byte that is not);
//! * numbers start with `-` or a digit.

/// What the two parsers read differently.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// proto3 JSON, as Python's `json` module reads it for `json_format.Parse`:
    /// numbers by the JSON grammar (`-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`,
    /// the longest such prefix, the rest left for the next token), `\u` escapes of
    /// exactly four hex digits, a surrogate pair joined into one character and a lone
    /// surrogate an error. Errors in a string are placed at its opening quote
    /// (unterminated) or at the backslash of the escape (bad escape, bad `\u`, lone
    /// surrogate, including when the second half of a pair is the bad one).
    Proto3,
    /// The object-graph form: a number is any run of `0-9 . e E + -` after its first
    /// byte, checked only when the parser converts it; a `\u` escape may also be `+`
    /// and three hex digits (what `u32::from_str_radix` reads), and every surrogate code
    /// unit, paired or not, becomes U+FFFD. Errors are placed at the byte where reading
    /// stopped: the end of the text (unterminated), the character after the backslash
    /// (bad escape), the first of the four after `\u` (bad `\u`).
    Objgraph,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    LBrace,
    RBrace,
    LBrack,
    RBrack,
    Colon,
    Comma,
    /// A string's value, escapes decoded.
    Str(String),
    /// A number's text as written (in [`Dialect::Objgraph`], not yet checked).
    Num(String),
    True,
    False,
    Null,
    /// No more tokens: only whitespace was left.
    End,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LexErrorKind {
    /// A byte no token starts with, or a word that is not `true`, `false` or `null`:
    /// the offset is its first byte.
    Unexpected,
    UnterminatedString,
    BadEscape,
    BadUnicodeEscape,
    UnpairedSurrogate,
    ControlCharacter,
    InvalidUtf8,
    BadNumber,
}

impl LexErrorKind {
    /// The proto3 parser's words for it (`Unexpected` it words itself, with the byte).
    pub(crate) fn message(self) -> &'static str {
        match self {
            LexErrorKind::Unexpected => "unexpected byte",
            LexErrorKind::UnterminatedString => "unterminated string",
            LexErrorKind::BadEscape => "bad escape",
            LexErrorKind::BadUnicodeEscape => "bad \\u escape",
            LexErrorKind::UnpairedSurrogate => "unpaired surrogate",
            LexErrorKind::ControlCharacter => "control character in string",
            LexErrorKind::InvalidUtf8 => "invalid UTF-8 in string",
            LexErrorKind::BadNumber => "bad number",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LexError {
    pub kind: LexErrorKind,
    /// Byte offset in the text (where depends on the [`Dialect`]).
    pub offset: usize,
}

fn err<T>(kind: LexErrorKind, offset: usize) -> Result<T, LexError> {
    Err(LexError { kind, offset })
}

pub(crate) struct Lexer<'t> {
    text: &'t [u8],
    pos: usize,
    dialect: Dialect,
}

impl<'t> Lexer<'t> {
    pub(crate) fn new(text: &'t [u8], dialect: Dialect) -> Self {
        Lexer { text, pos: 0, dialect }
    }

    fn skip_ws(&mut self) {
        while self.pos < self.text.len() && matches!(self.text[self.pos], b' ' | b'\t' | b'\n' | b'\r') {
            self.pos += 1;
        }
    }

    /// Skips whitespace; the next byte (`None` at the end) and its offset, not consumed.
    /// For a parser that must see what comes before it reads a whole token.
    pub(crate) fn peek(&mut self) -> (Option<u8>, usize) {
        self.skip_ws();
        (self.text.get(self.pos).copied(), self.pos)
    }

    /// Skips whitespace and consumes the next byte if it is `c` (punctuation).
    pub(crate) fn eat(&mut self, c: u8) -> bool {
        let hit = self.peek().0 == Some(c);
        self.pos += hit as usize;
        hit
    }

    /// The next token, whitespace skipped, and the offset where it starts.
    pub(crate) fn next(&mut self) -> Result<(Tok, usize), LexError> {
        let (c, at) = self.peek();
        let Some(c) = c else { return Ok((Tok::End, at)) };
        let tok = match c {
            b'{' => Tok::LBrace,
            b'}' => Tok::RBrace,
            b'[' => Tok::LBrack,
            b']' => Tok::RBrack,
            b':' => Tok::Colon,
            b',' => Tok::Comma,
            b'"' => return Ok((Tok::Str(self.string()?), at)),
            b'-' | b'0'..=b'9' => return Ok((Tok::Num(self.number()?), at)),
            _ => {
                let rest = &self.text[at..];
                let (tok, n) = if rest.starts_with(b"true") {
                    (Tok::True, 4)
                } else if rest.starts_with(b"false") {
                    (Tok::False, 5)
                } else if rest.starts_with(b"null") {
                    (Tok::Null, 4)
                } else {
                    return err(LexErrorKind::Unexpected, at);
                };
                self.pos += n;
                return Ok((tok, at));
            }
        };
        self.pos += 1;
        Ok((tok, at))
    }

    /// A string; `self.pos` is at its opening quote.
    fn string(&mut self) -> Result<String, LexError> {
        let t = self.text;
        let start = self.pos;
        self.pos += 1;
        let mut s = String::new();
        loop {
            // A run of plain bytes, copied at once.
            let run = self.pos;
            while self.pos < t.len() && !matches!(t[self.pos], b'"' | b'\\' | 0..=0x1f) {
                self.pos += 1;
            }
            match std::str::from_utf8(&t[run..self.pos]) {
                Ok(chunk) => s.push_str(chunk),
                Err(e) => return err(LexErrorKind::InvalidUtf8, run + e.valid_up_to()),
            }
            match t.get(self.pos) {
                None => return self.unterminated(start),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(s);
                }
                Some(b'\\') => s.push(self.escape(start)?),
                Some(_) => return err(LexErrorKind::ControlCharacter, self.pos),
            }
        }
    }

    /// The end of the text inside a string that starts at `start`.
    fn unterminated<T>(&self, start: usize) -> Result<T, LexError> {
        let at = match self.dialect {
            Dialect::Proto3 => start,
            Dialect::Objgraph => self.text.len(),
        };
        err(LexErrorKind::UnterminatedString, at)
    }

    /// An escape; `self.pos` is at its backslash, in a string that starts at `start`.
    fn escape(&mut self, start: usize) -> Result<char, LexError> {
        let at = self.pos;
        let Some(&c) = self.text.get(at + 1) else { return self.unterminated(start) };
        self.pos += 2;
        Ok(match c {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let hi = self.hex4(at)?;
                if self.dialect == Dialect::Objgraph {
                    return Ok(char::from_u32(hi).unwrap_or('\u{fffd}'));
                }
                let cp = if (0xd800..0xdc00).contains(&hi) {
                    if !self.text[self.pos..].starts_with(b"\\u") {
                        return err(LexErrorKind::UnpairedSurrogate, at);
                    }
                    self.pos += 2;
                    let lo = self.hex4(at)?;
                    if !(0xdc00..0xe000).contains(&lo) {
                        return err(LexErrorKind::UnpairedSurrogate, at);
                    }
                    0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00)
                } else if (0xdc00..0xe000).contains(&hi) {
                    return err(LexErrorKind::UnpairedSurrogate, at);
                } else {
                    hi
                };
                match char::from_u32(cp) {
                    Some(ch) => ch,
                    None => return err(LexErrorKind::BadUnicodeEscape, at),
                }
            }
            _ => {
                let off = match self.dialect {
                    Dialect::Proto3 => at,
                    Dialect::Objgraph => at + 1,
                };
                return err(LexErrorKind::BadEscape, off);
            }
        })
    }

    /// The four hex digits at `self.pos` of a `\u` escape whose backslash is at `at`.
    fn hex4(&mut self, at: usize) -> Result<u32, LexError> {
        let digits = self.text.get(self.pos..self.pos + 4).and_then(|h| {
            h.iter().enumerate().try_fold(0u32, |v, (i, &c)| {
                // `u32::from_str_radix`, which the object-graph parser used, takes a sign.
                let d = if i == 0 && c == b'+' && self.dialect == Dialect::Objgraph { Some(0) } else { (c as char).to_digit(16) };
                Some(v * 16 + d?)
            })
        });
        let Some(v) = digits else {
            let off = match self.dialect {
                Dialect::Proto3 => at,
                Dialect::Objgraph => self.pos,
            };
            return err(LexErrorKind::BadUnicodeEscape, off);
        };
        self.pos += 4;
        Ok(v)
    }

    /// A number's text; `self.pos` is at its first byte (`-` or a digit).
    fn number(&mut self) -> Result<String, LexError> {
        let t = self.text;
        let start = self.pos;
        let end = match self.dialect {
            Dialect::Objgraph => {
                let mut p = start + 1;
                while p < t.len() && matches!(t[p], b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-') {
                    p += 1;
                }
                p
            }
            Dialect::Proto3 => {
                let digits = |p: &mut usize| {
                    let s = *p;
                    while *p < t.len() && t[*p].is_ascii_digit() {
                        *p += 1;
                    }
                    *p - s
                };
                let mut p = start;
                if t[p] == b'-' {
                    p += 1;
                }
                match t.get(p) {
                    Some(b'0') => p += 1,
                    Some(b'1'..=b'9') => {
                        digits(&mut p);
                    }
                    _ => return err(LexErrorKind::BadNumber, start),
                }
                if t.get(p) == Some(&b'.') {
                    p += 1;
                    if digits(&mut p) == 0 {
                        return err(LexErrorKind::BadNumber, start);
                    }
                }
                if matches!(t.get(p), Some(b'e' | b'E')) {
                    p += 1;
                    if matches!(t.get(p), Some(b'+' | b'-')) {
                        p += 1;
                    }
                    if digits(&mut p) == 0 {
                        return err(LexErrorKind::BadNumber, start);
                    }
                }
                p
            }
        };
        self.pos = end;
        // ASCII only, by construction.
        Ok(t[start..end].iter().map(|&b| b as char).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::Dialect::{Objgraph, Proto3};
    use super::LexErrorKind::*;
    use super::*;
    use proptest::prelude::*;

    /// All tokens up to the end or the first error.
    fn lex(text: &[u8], d: Dialect) -> Result<Vec<(Tok, usize)>, LexError> {
        let mut lx = Lexer::new(text, d);
        let mut toks = Vec::new();
        loop {
            let (t, at) = lx.next()?;
            if t == Tok::End {
                return Ok(toks);
            }
            toks.push((t, at));
        }
    }

    fn both(text: &[u8]) -> [Result<Vec<(Tok, usize)>, LexError>; 2] {
        [lex(text, Proto3), lex(text, Objgraph)]
    }

    fn one(text: &[u8], d: Dialect) -> Result<Tok, LexError> {
        let toks = lex(text, d)?;
        assert_eq!(toks.len(), 1, "{:?}", String::from_utf8_lossy(text));
        Ok(toks[0].0.clone())
    }

    fn fail(kind: LexErrorKind, offset: usize) -> Result<Tok, LexError> {
        Err(LexError { kind, offset })
    }

    fn s(v: &str) -> Result<Tok, LexError> {
        Ok(Tok::Str(v.into()))
    }

    fn n(v: &str) -> Result<Tok, LexError> {
        Ok(Tok::Num(v.into()))
    }

    #[test]
    fn tokens_and_offsets() {
        let text = b" {\"k\" :[1, -2.5e3,true,false ,null]}\r\n\t";
        let want = vec![
            (Tok::LBrace, 1),
            (Tok::Str("k".into()), 2),
            (Tok::Colon, 6),
            (Tok::LBrack, 7),
            (Tok::Num("1".into()), 8),
            (Tok::Comma, 9),
            (Tok::Num("-2.5e3".into()), 11),
            (Tok::Comma, 17),
            (Tok::True, 18),
            (Tok::Comma, 22),
            (Tok::False, 23),
            (Tok::Comma, 29),
            (Tok::Null, 30),
            (Tok::RBrack, 34),
            (Tok::RBrace, 35),
        ];
        for r in both(text) {
            assert_eq!(r.unwrap(), want);
        }
        // The end is where the trailing whitespace stops.
        let mut lx = Lexer::new(b"1 \n", Proto3);
        lx.next().unwrap();
        assert_eq!(lx.next().unwrap(), (Tok::End, 3));
        assert_eq!(lx.next().unwrap(), (Tok::End, 3));
        assert_eq!(Lexer::new(b"", Objgraph).next().unwrap(), (Tok::End, 0));
    }

    #[test]
    fn peek_and_eat_skip_whitespace_only() {
        let mut lx = Lexer::new(b"  , \"x", Proto3);
        assert_eq!(lx.peek(), (Some(b','), 2));
        assert!(!lx.eat(b':'));
        assert!(lx.eat(b','));
        assert_eq!(lx.peek(), (Some(b'"'), 4));
        // Peeking does not read the (unterminated) string.
        assert!(!lx.eat(b']'));
        assert_eq!(lx.next(), Err(LexError { kind: UnterminatedString, offset: 4 }));
        let mut lx = Lexer::new(b" ", Proto3);
        assert_eq!(lx.peek(), (None, 1));
    }

    #[test]
    fn whitespace_is_the_four_json_bytes() {
        for ws in [&b"\x0b"[..], b"\x0c", b"\xc2\xa0", b"\0"] {
            let mut t = ws.to_vec();
            t.push(b'1');
            for r in both(&t) {
                assert_eq!(r.unwrap_err(), LexError { kind: Unexpected, offset: 0 });
            }
        }
    }

    #[test]
    fn words() {
        for d in [Proto3, Objgraph] {
            assert_eq!(one(b"null", d), Ok(Tok::Null));
            for (t, at) in [(&b"tru"[..], 0), (b"nul", 0), (b"False", 0), (b"x", 0), (b"+1", 0), (b".5", 0), (b"NaN", 0), (b"Infinity", 0)] {
                assert_eq!(lex(t, d).unwrap_err(), LexError { kind: Unexpected, offset: at }, "{t:?}");
            }
            // A word ends where the word does: what follows is the next token.
            assert_eq!(lex(b"truex", d).unwrap_err(), LexError { kind: Unexpected, offset: 4 });
            assert_eq!(lex(b"nulll", d).unwrap_err(), LexError { kind: Unexpected, offset: 4 });
            assert_eq!(lex(b"true1", d).unwrap(), vec![(Tok::True, 0), (Tok::Num("1".into()), 4)]);
        }
    }

    #[test]
    fn strings_both_dialects() {
        for d in [Proto3, Objgraph] {
            assert_eq!(one(br#""a\"\\\/\b\f\n\r\t""#, d), s("a\"\\/\u{8}\u{c}\n\r\t"));
            assert_eq!(one(br#""\u00e9\u0041\uFFFF\u0000""#, d), s("\u{e9}A\u{ffff}\0"));
            assert_eq!(one("\"h\u{e9}\u{1f600}\u{7f}\"".as_bytes(), d), s("h\u{e9}\u{1f600}\u{7f}"));
            assert_eq!(one(b"\"\"", d), s(""));
            // Raw control bytes are errors where they stand.
            assert_eq!(one(b"\"ab\x01\"", d), fail(ControlCharacter, 3));
            assert_eq!(one(b"\"a\nb\"", d), fail(ControlCharacter, 2));
            assert_eq!(one(b"\"\t\"", d), fail(ControlCharacter, 1));
        }
    }

    #[test]
    fn truncated_strings() {
        // (text, proto3 offset, objgraph offset): proto3 at the opening quote, objgraph
        // at the end of the text.
        for (t, p, o) in [(&b"\""[..], 0, 1), (b" \"abc", 1, 5), (b"\"abc\\", 0, 5), (b"[\"a\\\"", 1, 5)] {
            assert_eq!(one(t, Proto3).unwrap_err(), LexError { kind: UnterminatedString, offset: p }, "{t:?}");
            assert_eq!(lex(t, Objgraph).unwrap_err(), LexError { kind: UnterminatedString, offset: o }, "{t:?}");
        }
        // A `\u` cut short is a bad escape: at the backslash, or where the digits start.
        for t in [&b"\"ab\\u"[..], b"\"ab\\u12", b"\"ab\\u12\""] {
            assert_eq!(one(t, Proto3), fail(BadUnicodeEscape, 3), "{t:?}");
            assert_eq!(one(t, Objgraph), fail(BadUnicodeEscape, 5), "{t:?}");
        }
    }

    #[test]
    fn bad_escapes() {
        for e in [&b"x"[..], b"U", b"'", b"a", b"0", b"\xc3\xa9", b" "] {
            let mut t = b"\"ab\\".to_vec();
            t.extend_from_slice(e);
            t.push(b'"');
            assert_eq!(one(&t, Proto3), fail(BadEscape, 3), "{t:?}");
            assert_eq!(one(&t, Objgraph), fail(BadEscape, 4), "{t:?}");
        }
        for t in [&b"\"\\uZZZZ\""[..], b"\"\\u12g4\"", b"\"\\u-123\"", b"\"\\u 123\"", b"\"\\u12\xc3\xa9\""] {
            assert_eq!(one(t, Proto3), fail(BadUnicodeEscape, 1), "{t:?}");
            assert_eq!(one(t, Objgraph), fail(BadUnicodeEscape, 3), "{t:?}");
        }
        // `u32::from_str_radix` took a leading `+`: the object-graph form still does.
        assert_eq!(one(br#""\u+041""#, Objgraph), s("A"));
        assert_eq!(one(br#""\u+041""#, Proto3), fail(BadUnicodeEscape, 1));
        assert_eq!(one(br#""\u0+41""#, Objgraph), fail(BadUnicodeEscape, 3));
        assert_eq!(one(br#""\u++41""#, Objgraph), fail(BadUnicodeEscape, 3));
    }

    #[test]
    fn surrogates() {
        let pair = br#""x\ud83d\ude00y""#;
        assert_eq!(one(pair, Proto3), s("x\u{1f600}y"));
        assert_eq!(one(br#""\uDBFF\uDFFF""#, Proto3), s("\u{10ffff}"));
        // Proto3: a lone half is an error at the (first) backslash.
        for (t, at) in [
            (&br#""\ud800""#[..], 1),
            (br#""ab\udc00\ud800""#, 3),
            (br#""\ud800x""#, 1),
            (br#""\ud800\n""#, 1),
            (br#""\ud800\ud800""#, 1),
            (br#""\ud800\u0041""#, 1),
            (br#""\udfff""#, 1),
        ] {
            assert_eq!(one(t, Proto3), fail(UnpairedSurrogate, at), "{t:?}");
        }
        // ... and a bad second escape is a bad escape at the first backslash.
        assert_eq!(one(br#""\ud800\uzzzz""#, Proto3), fail(BadUnicodeEscape, 1));
        assert_eq!(one(br#""\ud800\u12"#, Proto3), fail(BadUnicodeEscape, 1));
        assert_eq!(one(br#""\ud800\"#, Proto3), fail(UnpairedSurrogate, 1));
        // Objgraph: every surrogate code unit is U+FFFD, paired or not.
        assert_eq!(one(pair, Objgraph), s("x\u{fffd}\u{fffd}y"));
        assert_eq!(one(br#""\ud800""#, Objgraph), s("\u{fffd}"));
        assert_eq!(one(br#""\udc00\ud800\u0041""#, Objgraph), s("\u{fffd}\u{fffd}A"));
    }

    #[test]
    fn non_utf8() {
        // At the first byte that is not UTF-8, in either dialect (object-graph text is a
        // `&str`, so this cannot happen there).
        for d in [Proto3, Objgraph] {
            for (t, at) in [
                (&b"\"\xff\""[..], 1),
                (b"\"ab\xc3\"", 3),
                (b"\"ab\xc3", 3),
                (b"\"\xe2\x82\"", 1),
                (b"\"\xed\xa0\x80\"", 1),
                (b"\"\xc0\xaf\"", 1),
                (b"\"\xc3\xa9\xf0\x9f\x98\"", 3),
                (b"\"a\\n\x80\"", 4),
            ] {
                assert_eq!(one(t, d), fail(InvalidUtf8, at), "{t:?}");
            }
            // Outside a string, a byte no token starts with.
            assert_eq!(lex(b"\xff", d).unwrap_err(), LexError { kind: Unexpected, offset: 0 });
        }
    }

    #[test]
    fn numbers_proto3_follow_the_grammar() {
        for t in ["0", "-0", "1", "-12", "1.5", "-0.0e-0", "1e5", "1E+2", "2.5e-300", "1e400", "123456789012345678901234567890"] {
            assert_eq!(one(t.as_bytes(), Proto3), n(t), "{t}");
        }
        // The longest prefix that is a number; the rest is the next token.
        assert_eq!(lex(b"01", Proto3).unwrap(), vec![(Tok::Num("0".into()), 0), (Tok::Num("1".into()), 1)]);
        assert_eq!(lex(b"-01", Proto3).unwrap(), vec![(Tok::Num("-0".into()), 0), (Tok::Num("1".into()), 2)]);
        assert_eq!(lex(b"1-2", Proto3).unwrap(), vec![(Tok::Num("1".into()), 0), (Tok::Num("-2".into()), 1)]);
        assert_eq!(lex(b"1.5.3", Proto3).unwrap_err(), LexError { kind: Unexpected, offset: 3 });
        for t in ["-", "1.", "1.e5", "1e", "1e+", "-.5", "--1", " -x", "1.5e-"] {
            let at = t.len() - t.trim_start().len();
            assert_eq!(lex(t.as_bytes(), Proto3).unwrap_err(), LexError { kind: BadNumber, offset: at }, "{t}");
        }
    }

    #[test]
    fn numbers_objgraph_are_runs() {
        // Any run of number bytes, checked later by the parser.
        for t in ["0", "01", "1.", "-", "1-2", "1.5.3", "1e", "--1", "1e+-5", "9".repeat(5000).as_str()] {
            assert_eq!(one(t.as_bytes(), Objgraph), n(t), "{t}");
        }
        assert_eq!(lex(b"-inf", Objgraph).unwrap_err(), LexError { kind: Unexpected, offset: 1 });
        assert_eq!(lex(b"12x", Objgraph).unwrap_err(), LexError { kind: Unexpected, offset: 2 });
    }

    #[test]
    fn huge_inputs_and_deep_nesting() {
        // The lexer has no nesting of its own: a million brackets are a million tokens.
        let deep = "[".repeat(1_000_000) + &"]".repeat(1_000_000);
        for d in [Proto3, Objgraph] {
            let mut lx = Lexer::new(deep.as_bytes(), d);
            let mut count = 0;
            while lx.next().unwrap().0 != Tok::End {
                count += 1;
            }
            assert_eq!(count, 2_000_000);
        }
        let big = format!("-{}.{}e-{}", "9".repeat(100_000), "1".repeat(1000), "7".repeat(50));
        assert_eq!(one(big.as_bytes(), Proto3), n(&big));
        let long = format!("\"{}\"", "\\u00e9".repeat(100_000));
        assert_eq!(one(long.as_bytes(), Proto3), s(&"\u{e9}".repeat(100_000)));
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

        /// Any bytes: no panic, every token moves on, errors point inside the text.
        #[test]
        fn any_bytes_lex_cleanly(b in proptest::collection::vec(
            prop_oneof![Just(b'"'), Just(b'\\'), Just(b'u'), Just(b'd'), Just(b'8'), Just(b'+'), Just(b'-'), Just(b'.'), Just(b'e'), any::<u8>()],
            0..64), objgraph in any::<bool>()) {
            let mut lx = Lexer::new(&b, if objgraph { Objgraph } else { Proto3 });
            let mut last = None;
            loop {
                match lx.next() {
                    Ok((Tok::End, at)) => { prop_assert!(at <= b.len()); break; }
                    Ok((_, at)) => {
                        prop_assert!(last.is_none_or(|l| at > l));
                        last = Some(at);
                    }
                    Err(e) => { prop_assert!(e.offset <= b.len()); break; }
                }
            }
        }

        /// What the printers write, the lexer reads back.
        #[test]
        fn written_strings_read_back(text in any::<String>(), ensure_ascii in any::<bool>()) {
            let mut out = Vec::new();
            crate::write::string(&mut out, text.as_bytes(), ensure_ascii);
            prop_assert_eq!(one(&out, Proto3), s(&text));
            if !ensure_ascii {
                prop_assert_eq!(one(&out, Objgraph), s(&text));
            }
        }
    }
}
