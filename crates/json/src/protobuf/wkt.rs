//! The text forms of Timestamp, Duration and FieldMask in the proto3 JSON mapping, both
//! directions, exactly as the official Python library (`json_format`, protobuf 7.x)
//! prints and parses them — including what its parser accepts beyond RFC 3339:
//!
//! * Timestamp: the zone is found as the first `Z`, else the first `+`, else the last
//!   `-`; the date and time go through Python's `strptime("%Y-%m-%dT%H:%M:%S")` (one-digit
//!   month, day, hour, minute and second allowed, a day may be `" 7"`, lowercase `t`
//!   rejected, seconds 60 and 61 rejected); up to 9 fraction digits read by `float()`
//!   (so `"00.Z"`, `"00.5 Z"`, `"00.5e-1Z"` and `"00.1_5Z"` are accepted); an offset
//!   `±H:M` read by `int()` (any digit count, no range check); the result must lie in
//!   0001-01-01T00:00:00Z ..= 9999-12-31T23:59:59.999999999Z.
//! * Duration: must end in `s`; seconds by `int()`, the fraction by `float()` and
//!   rounded half-to-even to nanoseconds (any digit count); ±315576000000 s, nanos of
//!   the seconds' sign.
//! * FieldMask: `,`-separated lowerCamelCase paths ↔ snake_case; `_` is rejected when
//!   parsing, uppercase letters and a `_` not followed by a lowercase letter when
//!   printing.
//!
//! Python's `int()`/`float()`/`strptime` also take non-ASCII decimal digits; these
//! functions take ASCII digits only.

/// Seconds of 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z.
pub(crate) const TIMESTAMP_SECONDS: std::ops::RangeInclusive<i64> = -62135596800..=253402300799;
pub(crate) const DURATION_SECONDS_MAX: i64 = 315576000000;

/// RFC 3339 text of a Timestamp, as the official library prints it (0, 3, 6 or 9
/// fractional digits).
pub(crate) fn timestamp_text(seconds: i64, nanos: i64) -> Result<String, String> {
    if !(-62135596800..=253402300799).contains(&seconds) {
        return Err(format!("Timestamp is not valid: seconds {seconds} out of range"));
    }
    if !(0..1_000_000_000).contains(&nanos) {
        return Err(format!("Timestamp is not valid: nanos {nanos} out of range"));
    }
    let days = seconds.div_euclid(86400);
    let secs = seconds.rem_euclid(86400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z.rem_euclid(146097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mth = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + (mth <= 2) as i64;
    let mut t = format!("{y:04}-{mth:02}-{d:02}T{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
    push_fraction(&mut t, nanos);
    t.push('Z');
    Ok(t)
}

/// A Duration as `"<seconds>[.fraction]s"`, as the official library prints it.
pub(crate) fn duration_text(seconds: i64, nanos: i64) -> Result<String, String> {
    if !(-315576000000..=315576000000).contains(&seconds) {
        return Err(format!("Duration is not valid: seconds {seconds} out of range"));
    }
    if nanos <= -1_000_000_000 || nanos >= 1_000_000_000 {
        return Err(format!("Duration is not valid: nanos {nanos} out of range"));
    }
    if (nanos < 0 && seconds > 0) || (nanos > 0 && seconds < 0) {
        return Err("Duration is not valid: sign mismatch".into());
    }
    let mut t = String::new();
    if seconds < 0 || nanos < 0 {
        t.push('-');
    }
    t.push_str(&seconds.unsigned_abs().to_string());
    push_fraction(&mut t, nanos.abs());
    t.push('s');
    Ok(t)
}

fn push_fraction(t: &mut String, nanos: i64) {
    if nanos == 0 {
    } else if nanos % 1_000_000 == 0 {
        t.push_str(&format!(".{:03}", nanos / 1_000_000));
    } else if nanos % 1000 == 0 {
        t.push_str(&format!(".{:06}", nanos / 1000));
    } else {
        t.push_str(&format!(".{nanos:09}"));
    }
}

/// A FieldMask path in lowerCamelCase, with the official library's checks.
pub(crate) fn snake_to_camel(path: &str, out: &mut String) -> Result<(), String> {
    let mut after_underscore = false;
    for c in path.chars() {
        if c.is_uppercase() {
            return Err(format!("FieldMask path {path:?} must not contain uppercase letters"));
        }
        if after_underscore {
            if !c.is_lowercase() {
                return Err(format!("in FieldMask path {path:?}, the character after '_' must be a lowercase letter"));
            }
            out.extend(c.to_uppercase());
            after_underscore = false;
        } else if c == '_' {
            after_underscore = true;
        } else {
            out.push(c);
        }
    }
    if after_underscore {
        return Err(format!("trailing '_' in FieldMask path {path:?}"));
    }
    Ok(())
}


/// Python's `str.isspace` (what `int()` and `float()` strip).
pub(crate) fn py_isspace(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `int(text)` for base 10 with ASCII digits: surrounding whitespace, an
/// optional sign, digits with single underscores between them. `None` when Python
/// raises (or the value does not fit an `i128`, far outside every range used here).
pub(crate) fn py_int(text: &str) -> Option<i128> {
    let s = text.trim_matches(py_isspace);
    let (neg, digits) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let b = digits.as_bytes();
    if b.is_empty() || b[0] == b'_' || b[b.len() - 1] == b'_' || digits.contains("__") {
        return None;
    }
    let mut v: i128 = 0;
    for &c in b {
        if c == b'_' {
            continue;
        }
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((c - b'0') as i128)?;
    }
    Some(if neg { -v } else { v })
}

/// Python's `float(text)` (ASCII digits): surrounding whitespace, underscores only
/// between digits, `inf`/`nan` words; `None` when Python raises.
pub(crate) fn py_float(text: &str) -> Option<f64> {
    let s = text.trim_matches(py_isspace);
    let b = s.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c == b'_' && !(i > 0 && b[i - 1].is_ascii_digit() && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            return None;
        }
    }
    let t: String = s.chars().filter(|&c| c != '_').collect();
    if t.is_empty() || !t.is_ascii() {
        return None;
    }
    t.parse::<f64>().ok()
}

/// Python's `round(x * 1e9)` of a fraction (half to even); `None` when not finite.
fn round_nanos(x: f64) -> Option<i128> {
    let n = (x * 1e9).round_ties_even();
    n.is_finite().then_some(n as i128)
}

fn check_timestamp(seconds: i128, nanos: i128) -> Result<(), String> {
    if seconds < *TIMESTAMP_SECONDS.start() as i128 || seconds > *TIMESTAMP_SECONDS.end() as i128 {
        return Err(format!("Timestamp is not valid: Seconds {seconds} must be in range [-62135596800, 253402300799]"));
    }
    if !(0..1_000_000_000).contains(&nanos) {
        return Err(format!("Timestamp is not valid: Nanos {nanos} must be in a range [0, 999999]"));
    }
    Ok(())
}

/// Days from 1970-01-01 to the civil date `y-m-d` (proleptic Gregorian).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

/// Python's `datetime.strptime(text, "%Y-%m-%dT%H:%M:%S")` as seconds since the epoch.
/// The format becomes the regular expression
/// `(\d\d\d\d)-(1[0-2]|0[1-9]|[1-9])-(3[01]|[12]\d|0[1-9]|[1-9]| [1-9])T(2[0-3]|[0-1]\d|\d):([0-5]\d|\d):(6[0-1]|[0-5]\d|\d)`,
/// matched case-insensitively from the start, alternatives in order (backtracking into
/// earlier groups when later ones fail); what the match leaves over is an error
/// ("unconverted data remains"); then `datetime` checks the date and `second <= 59`.
fn strptime(text: &str) -> Result<i64, String> {
    let t = text.as_bytes();
    let dig = |i: usize| t.get(i).is_some_and(u8::is_ascii_digit);
    let is = |i: usize, c: &[u8]| t.get(i).is_some_and(|x| c.contains(x));
    // Alternatives of each group at position i, in the regular expression's order:
    // the lengths that match.
    let alts = |g: usize, i: usize| -> Vec<usize> {
        let mut v = Vec::new();
        match g {
            0 => {
                if (0..4).all(|k| dig(i + k)) {
                    v.push(4)
                }
            }
            1 => {
                if is(i, b"1") && is(i + 1, b"012") {
                    v.push(2)
                }
                if is(i, b"0") && is(i + 1, b"123456789") {
                    v.push(2)
                }
                if is(i, b"123456789") {
                    v.push(1)
                }
            }
            2 => {
                if is(i, b"3") && is(i + 1, b"01") {
                    v.push(2)
                }
                if is(i, b"12") && dig(i + 1) {
                    v.push(2)
                }
                if is(i, b"0") && is(i + 1, b"123456789") {
                    v.push(2)
                }
                if is(i, b"123456789") {
                    v.push(1)
                }
                if is(i, b" ") && is(i + 1, b"123456789") {
                    v.push(2)
                }
            }
            3 => {
                if is(i, b"2") && is(i + 1, b"0123") {
                    v.push(2)
                }
                if is(i, b"01") && dig(i + 1) {
                    v.push(2)
                }
                if dig(i) {
                    v.push(1)
                }
            }
            4 => {
                if is(i, b"012345") && dig(i + 1) {
                    v.push(2)
                }
                if dig(i) {
                    v.push(1)
                }
            }
            _ => {
                if is(i, b"6") && is(i + 1, b"01") {
                    v.push(2)
                }
                if is(i, b"012345") && dig(i + 1) {
                    v.push(2)
                }
                if dig(i) {
                    v.push(1)
                }
            }
        }
        v
    };
    const SEP: [&[u8]; 5] = [b"-", b"-", b"Tt", b":", b":"];
    // Depth-first search over the six groups: (group, position, alternative index).
    let mut spans = [(0usize, 0usize); 6];
    let mut choice = [0usize; 6];
    let mut g = 0usize;
    let mut pos = 0usize;
    let matched = loop {
        let options = alts(g, pos);
        if choice[g] < options.len() {
            let len = options[choice[g]];
            spans[g] = (pos, len);
            let end = pos + len;
            if g == 5 {
                break true;
            }
            if is(end, SEP[g]) {
                g += 1;
                pos = end + 1;
                choice[g] = 0;
                continue;
            }
            choice[g] += 1;
            continue;
        }
        // Group g has no more alternatives: back into the previous group.
        if g == 0 {
            break false;
        }
        g -= 1;
        pos = spans[g].0;
        choice[g] += 1;
    };
    let bad = || format!("time data {text:?} does not match format '%Y-%m-%dT%H:%M:%S'");
    if !matched {
        return Err(bad());
    }
    let (s5, l5) = spans[5];
    if s5 + l5 != t.len() {
        return Err(format!("unconverted data remains: {}", &text[s5 + l5..]));
    }
    let n = |k: usize| -> i64 {
        let (s, l) = spans[k];
        text[s..s + l].trim_start().parse().unwrap_or(0)
    };
    let (y, m, d, hh, mm, ss) = (n(0), n(1), n(2), n(3), n(4), n(5));
    if y < 1 {
        return Err(format!("year {y} is out of range"));
    }
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let dim = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m as usize - 1];
    if d > dim {
        return Err("day is out of range for month".into());
    }
    if ss > 59 {
        return Err("second must be in 0..59".into());
    }
    Ok(days_from_civil(y, m, d) * 86400 + hh * 3600 + mm * 60 + ss)
}

/// Parses a Timestamp's JSON text as the official Python parser does; (seconds, nanos).
pub(crate) fn parse_timestamp(value: &str) -> Result<(i64, i32), String> {
    let tz = value
        .find('Z')
        .or_else(|| value.find('+'))
        .or_else(|| value.rfind('-'))
        .ok_or("Failed to parse timestamp: missing valid timezone offset")?;
    let time_value = &value[..tz];
    let (second_value, nano_value) = match time_value.find('.') {
        None => (time_value, ""),
        Some(p) => (&time_value[..p], &time_value[p + 1..]),
    };
    if second_value.contains('t') {
        return Err(format!("time data {second_value:?} does not match format '%Y-%m-%dT%H:%M:%S', lowercase 't' is not accepted"));
    }
    let mut seconds = strptime(second_value)? as i128;
    if nano_value.chars().count() > 9 {
        return Err(format!("Failed to parse Timestamp: nanos {nano_value} more than 9 fractional digits"));
    }
    let nanos = if nano_value.is_empty() {
        0
    } else {
        let f = py_float(&format!("0.{nano_value}")).ok_or_else(|| format!("could not convert string to float: '0.{nano_value}'"))?;
        round_nanos(f).ok_or("cannot convert float infinity to integer")?
    };
    let zone = &value[tz..];
    if zone.starts_with('Z') {
        if zone.len() != 1 {
            return Err(format!("Failed to parse timestamp: invalid trailing data {value}"));
        }
    } else {
        let pos = zone.find(':').ok_or_else(|| format!("Invalid timezone offset value: {zone}"))?;
        let bad = || format!("invalid literal for int() with base 10 in timezone offset {zone:?}");
        let h = py_int(&zone[1..pos]).ok_or_else(bad)?;
        let m = py_int(&zone[pos + 1..]).ok_or_else(bad)?;
        let off = h.checked_mul(60).and_then(|x| x.checked_add(m)).and_then(|x| x.checked_mul(60)).ok_or_else(bad)?;
        seconds = if zone.starts_with('+') { seconds.checked_sub(off) } else { seconds.checked_add(off) }.ok_or_else(bad)?;
    }
    check_timestamp(seconds, nanos)?;
    Ok((seconds as i64, nanos as i32))
}

/// Parses a Duration's JSON text as the official Python parser does; (seconds, nanos).
pub(crate) fn parse_duration(value: &str) -> Result<(i64, i32), String> {
    let Some(body) = value.strip_suffix('s') else {
        return Err(format!("Duration must end with letter \"s\": {value}"));
    };
    let bad = |what: &str| format!("Couldn't parse duration: {value} : {what}");
    let (seconds, nanos) = match value.find('.') {
        None => (py_int(body).ok_or_else(|| bad("invalid literal for int()"))?, 0),
        Some(pos) => {
            let seconds = py_int(&value[..pos]).ok_or_else(|| bad("invalid literal for int()"))?;
            let sign = if value.starts_with('-') { "-" } else { "" };
            let f = py_float(&format!("{sign}0{}", &body[pos..])).ok_or_else(|| bad("could not convert string to float"))?;
            (seconds, round_nanos(f).ok_or_else(|| bad("cannot convert float infinity to integer"))?)
        }
    };
    let max = DURATION_SECONDS_MAX as i128;
    if seconds < -max || seconds > max {
        return Err(bad(&format!("Duration is not valid: Seconds {seconds} must be in range [-315576000000, 315576000000]")));
    }
    if nanos <= -1_000_000_000 || nanos >= 1_000_000_000 {
        return Err(bad(&format!("Duration is not valid: Nanos {nanos} must be in range [-999999999, 999999999]")));
    }
    if (nanos < 0 && seconds > 0) || (nanos > 0 && seconds < 0) {
        return Err(bad("Duration is not valid: Sign mismatch"));
    }
    Ok((seconds as i64, nanos as i32))
}

/// A FieldMask path from lowerCamelCase to snake_case, as the official parser converts
/// it (`_` is an error; an uppercase letter becomes `_` and its lowercase).
pub(crate) fn camel_to_snake(path: &str) -> Result<String, String> {
    let mut out = String::with_capacity(path.len() + 4);
    for c in path.chars() {
        if c == '_' {
            return Err(format!("Fail to parse FieldMask: Path name {path} must not contain \"_\"s"));
        }
        if c.is_uppercase() {
            out.push('_');
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Option<(i64, i32)> {
        parse_timestamp(s).ok()
    }
    fn du(s: &str) -> Option<(i64, i32)> {
        parse_duration(s).ok()
    }

    #[test]
    fn timestamps_as_python() {
        assert_eq!(ts("1970-01-01T00:00:00Z"), Some((0, 0)));
        assert_eq!(ts("0001-01-01T00:00:00Z"), Some((-62135596800, 0)));
        assert_eq!(ts("9999-12-31T23:59:59.999999999Z"), Some((253402300799, 999999999)));
        assert_eq!(ts("1972-01-01T10:00:20.021-05:00"), Some((63108020 + 5 * 3600, 21000000)));
        assert_eq!(ts("1970-01-01T05:30:00+05:30"), Some((0, 0)));
        assert_eq!(ts("1970-01-01T00:00:00+5:3"), Some((-(5 * 3600 + 180), 0)));
        assert_eq!(ts("1970-01-01T00:00:00+-5:00"), Some((18000, 0)));
        assert_eq!(ts("1970-01-01T00:00:00+ 1:00"), Some((-3600, 0)));
        assert_eq!(ts("1970-01-01T00:00:00-00:00"), Some((0, 0)));
        assert_eq!(ts("1970-1-1T0:0:0Z"), Some((0, 0)));
        assert_eq!(ts("1970-01- 1T00:00:00Z"), Some((0, 0)));
        assert_eq!(ts("1970-01-01T00:00:00.Z"), Some((0, 0)));
        assert_eq!(ts("1970-01-01T00:00:00.5 Z"), Some((0, 500000000)));
        assert_eq!(ts("1970-01-01T00:00:00.5e-1Z"), Some((0, 50000000)));
        assert_eq!(ts("1970-01-01T00:00:00.1_5Z"), Some((0, 150000000)));
        assert_eq!(ts("1970-01-01T00:00:00.123456789Z"), Some((0, 123456789)));
        assert_eq!(ts("2000-02-29T12:00:00Z"), Some((951825600, 0)));
        for bad in [
            "",
            "1970-01-01T00:00:00",
            "1970-01-01t00:00:00Z",
            "1970-01-01T00:00:00z",
            "1970-01-01 00:00:00Z",
            "1970-01-01T00:00:60Z",
            "1970-01-01T00:00:61Z",
            "1970-01-01T24:00:00Z",
            "1970-13-01T00:00:00Z",
            "1970-02-30T00:00:00Z",
            "1900-02-29T00:00:00Z",
            "0000-01-01T00:00:00Z",
            "1970-01-01T00:00:00.1234567890Z",
            "1970-01-01T00:00:00ZZ",
            "1970-01-01T00:00:00+0530",
            "1970-01-01T00:00:00+05:30:00",
            "1970-01-01T00:00:65Z",
            "0001-01-01T00:00:00+00:01",
            "9999-12-31T23:59:59-00:01",
            "1970-01-01T00:00:00.5e3Z",
            "1970-01-01T00:00:00.-5Z",
            "1970-01-01T00:00:00._5Z",
            "+1970-01-01T00:00:00Z",
        ] {
            assert_eq!(ts(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn durations_as_python() {
        assert_eq!(du("1s"), Some((1, 0)));
        assert_eq!(du("-1.5s"), Some((-1, -500000000)));
        assert_eq!(du("-0.5s"), Some((0, -500000000)));
        assert_eq!(du("+1.5s"), Some((1, 500000000)));
        assert_eq!(du("1.s"), Some((1, 0)));
        assert_eq!(du("1_0s"), Some((10, 0)));
        assert_eq!(du("1.5_0s"), Some((1, 500000000)));
        assert_eq!(du("1.0000000005s"), Some((1, 0)));
        assert_eq!(du("1.0000000015s"), Some((1, 2)));
        assert_eq!(du("1.5e-1s"), Some((1, 50000000)));
        assert_eq!(du("315576000000.999999999s"), Some((315576000000, 999999999)));
        assert_eq!(du("-315576000000.999999999s"), Some((-315576000000, -999999999)));
        assert_eq!(du(" 7 s"), Some((7, 0)));
        for bad in ["", "s", "1", "1S", "1e3s", " -1.5s", "1.9999999999s", "-315576000001s", "315576000001s", ".5s", "-.5s", "1.5.5s", "1.-5s", "1.5e9s", "--1s"] {
            assert_eq!(du(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn field_mask_paths() {
        assert_eq!(camel_to_snake("a.bC").unwrap(), "a.b_c");
        assert_eq!(camel_to_snake("fooBarBaz").unwrap(), "foo_bar_baz");
        assert!(camel_to_snake("a_b").is_err());
        let mut s = String::new();
        snake_to_camel("a.b_c", &mut s).unwrap();
        assert_eq!(s, "a.bC");
        assert!(snake_to_camel("aB", &mut String::new()).is_err());
        assert!(snake_to_camel("a_", &mut String::new()).is_err());
        assert!(snake_to_camel("a_1", &mut String::new()).is_err());
        assert!(snake_to_camel("\u{c9}", &mut String::new()).is_err());
    }

    #[test]
    fn text_round_trip() {
        for (s, n) in [(0i64, 0i64), (-62135596800, 0), (253402300799, 999999999), (1, 1000), (-1, 1000000), (951825600, 5)] {
            let t = timestamp_text(s, n).unwrap();
            assert_eq!(parse_timestamp(&t), Ok((s, n as i32)), "{t}");
        }
        for (s, n) in [(0i64, 0i64), (0, -1), (-315576000000, -999999999), (315576000000, 999999999), (5, 10_000_000)] {
            let t = duration_text(s, n).unwrap();
            assert_eq!(parse_duration(&t), Ok((s, n as i32)), "{t}");
        }
    }
}
