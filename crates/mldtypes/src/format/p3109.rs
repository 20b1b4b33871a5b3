//! The IEEE P3109 family of binary formats for machine learning: see [`P3109`].

use super::{Format, FormatError, NanEncoding, NonFinite};

/// The IEEE P3109 family of binary formats for machine learning (interim
/// report v3.1), one descriptor per member.
///
/// A member is named by its width K (2–16 bits), its precision P (significand
/// bits, counting the implicit one), its signedness and its domain:
/// `p3109_k8p3se` is K = 8, P = 3, signed, extended (with infinities) —
/// gfloat 0.5.2's `format_info_p3109(8, 3, Signed, Extended)`. The interim
/// report's spelling `binary8p3se` is accepted as an alias.
///
/// | | signed (`s`) | unsigned (`u`) |
/// |---|---|---|
/// | precision | `1 <= P <= K - 1` | `1 <= P <= K` |
/// | exponent bits | `K - P` | `K - P + 1` |
/// | bias | `2^(K - P - 1)` | `2^(K - P)` |
/// | NaN | the would-be −0 code (`0x80` at K = 8) | the all-ones code (`0xFF`) |
/// | extended (`e`) | ±inf at the largest codes (`0x7F`, `0xFF`) | +inf below the NaN (`0xFE`) |
/// | finite (`f`) | no infinity | no infinity |
///
/// Every member has subnormals and a single zero (no −0); P = 1 members have
/// no mantissa field, a zero at code 0, and round ties to the even *code*.
/// Members with more than 8 exponent bits reach beyond float32, with more
/// than 11 beyond float64 (see [`Format::fits_f32`], [`Format::fits_f64`]).
/// There are 30 members at K = 8 and [`P3109::COUNT`] = 510 in all.
///
/// # Examples
///
/// ```
/// use mldtypes::format::{Format, P3109};
/// let p = P3109::new(8, 3, true, true).unwrap();
/// assert_eq!(p.name(), "p3109_k8p3se");
/// assert_eq!(p.alias(), "binary8p3se");
/// let f: Format = p.format();
/// assert_eq!((f.exp_bits, f.man_bits, f.bias), (5, 2, 16));
/// assert_eq!(f.max_finite(), 49152.0); // 0x7E; 0x7F is +inf
/// assert_eq!("binary8p4sf".parse::<P3109>(), Ok(P3109::new(8, 4, true, false).unwrap()));
/// assert_eq!(P3109::all().count(), P3109::COUNT);
/// ```
///
/// `Copy`, hashable and ordered (by [`P3109::index`]); a value always
/// names a member of the family (the constructor checks K and P).
///
/// Source: IEEE P3109 interim report v3.1; gfloat 0.5.2
/// `format_info_p3109` (the reference the committed vectors come from).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct P3109 {
    // Field order gives the derived `Ord` the order of `index`.
    k: u8,
    unsigned: bool,
    p: u8,
    finite: bool,
}

/// Members of width `k` (signed and unsigned, both domains): `2(k−1) + 2k`.
const fn per_width(k: u32) -> usize {
    (4 * k - 2) as usize
}

/// Index of the first member of width `k`: `2k(k−2)`.
const fn width_offset(k: u32) -> usize {
    (2 * k * (k - 2)) as usize
}

impl P3109 {
    /// Number of members: 510 (widths 2 to 16).
    pub const COUNT: usize = width_offset(17);

    /// The member of width `k`, precision `p`, signed or unsigned, with the
    /// extended domain (±inf) or the finite one.
    ///
    /// # Errors
    ///
    /// [`FormatError::P3109`] unless `2 <= k <= 16` and `1 <= p <= k - 1`
    /// (signed) or `1 <= p <= k` (unsigned).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::format::{FormatError, P3109};
    /// assert_eq!(P3109::new(16, 1, false, false).unwrap().name(), "p3109_k16p1uf");
    /// assert_eq!(
    ///     P3109::new(17, 3, true, true),
    ///     Err(FormatError::P3109 { k: 17, p: 3, signed: true })
    /// );
    /// ```
    pub const fn new(k: u32, p: u32, signed: bool, extended: bool) -> Result<P3109, FormatError> {
        let top = if signed { k.saturating_sub(1) } else { k };
        if k < 2 || k > 16 || p < 1 || p > top {
            return Err(FormatError::P3109 { k, p, signed });
        }
        Ok(P3109 {
            k: k as u8,
            unsigned: !signed,
            p: p as u8,
            finite: !extended,
        })
    }

    /// The width K in bits.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(mldtypes::format::P3109::new(6, 3, true, false).unwrap().k(), 6);
    /// ```
    pub const fn k(self) -> u32 {
        self.k as u32
    }

    /// The precision P in bits (the significand, counting the implicit bit).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(mldtypes::format::P3109::new(6, 3, true, false).unwrap().p(), 3);
    /// ```
    pub const fn p(self) -> u32 {
        self.p as u32
    }

    /// Whether the member has a sign bit (`s`) rather than none (`u`).
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(!mldtypes::format::P3109::new(8, 4, false, true).unwrap().is_signed());
    /// ```
    pub const fn is_signed(self) -> bool {
        !self.unsigned
    }

    /// Whether the member has the extended domain (`e`, with ±inf) rather
    /// than the finite one (`f`).
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(mldtypes::format::P3109::new(8, 4, true, true).unwrap().is_extended());
    /// ```
    pub const fn is_extended(self) -> bool {
        !self.finite
    }

    /// The position of the member in the family's order: by width, then
    /// signed before unsigned, then by precision, then extended before
    /// finite (`0..P3109::COUNT`).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::format::P3109;
    /// assert_eq!(P3109::new(2, 1, true, true).unwrap().index(), 0);
    /// assert_eq!(P3109::from_index(42), Some(P3109::all().nth(42).unwrap()));
    /// ```
    pub const fn index(self) -> usize {
        let k = self.k as u32;
        let mut i = width_offset(k) + 2 * (self.p as usize - 1) + self.finite as usize;
        if self.unsigned {
            i += 2 * (k as usize - 1);
        }
        i
    }

    /// The member at `index` of the family's order, `None` past the end.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::format::P3109;
    /// assert_eq!(P3109::from_index(0).unwrap().name(), "p3109_k2p1se");
    /// assert_eq!(P3109::from_index(P3109::COUNT - 1).unwrap().name(), "p3109_k16p16uf");
    /// assert_eq!(P3109::from_index(P3109::COUNT), None);
    /// ```
    pub const fn from_index(index: usize) -> Option<P3109> {
        if index >= Self::COUNT {
            return None;
        }
        let mut k = 2;
        while index >= width_offset(k) + per_width(k) {
            k += 1;
        }
        let mut r = index - width_offset(k);
        let signed_count = 2 * (k as usize - 1);
        let unsigned = r >= signed_count;
        if unsigned {
            r -= signed_count;
        }
        Some(P3109 {
            k: k as u8,
            unsigned,
            p: (r / 2 + 1) as u8,
            finite: r % 2 == 1,
        })
    }

    /// Every member, in [`P3109::index`] order.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::format::P3109;
    /// let k8: Vec<_> = P3109::all().filter(|p| p.k() == 8).collect();
    /// assert_eq!(k8.len(), 30);
    /// ```
    pub fn all() -> impl ExactSizeIterator<Item = P3109> + Clone {
        (0..Self::COUNT).map(|i| match Self::from_index(i) {
            Some(p) => p,
            None => unreachable!("index below COUNT"),
        })
    }

    /// gfloat's name, `p3109_k{K}p{P}{s|u}{e|f}` (`"p3109_k8p3se"`).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(mldtypes::format::P3109::new(8, 3, false, false).unwrap().name(), "p3109_k8p3uf");
    /// ```
    pub const fn name(self) -> &'static str {
        NAMES[self.index()].as_str()
    }

    /// The interim report's name, `binary{K}p{P}{s|u}{e|f}` (`"binary8p3se"`),
    /// accepted by [`P3109::from_str`](std::str::FromStr) and
    /// [`crate::dtype::DType`]'s parsers as an alias.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(mldtypes::format::P3109::new(16, 11, true, true).unwrap().alias(), "binary16p11se");
    /// ```
    pub const fn alias(self) -> &'static str {
        ALIASES[self.index()].as_str()
    }

    /// The member named `s` (its name or alias, ASCII case-insensitive),
    /// without allocating.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::format::P3109;
    /// assert_eq!(P3109::from_name("P3109_K8P3SE").map(P3109::k), Some(8));
    /// assert_eq!(P3109::from_name("binary8p8se"), None); // signed P <= K - 1
    /// ```
    pub fn from_name(s: &str) -> Option<P3109> {
        let t = s.as_bytes();
        let rest = if t.len() > 7 && t[..7].eq_ignore_ascii_case(b"p3109_k") {
            &t[7..]
        } else if t.len() > 6 && t[..6].eq_ignore_ascii_case(b"binary") {
            &t[6..]
        } else {
            return None;
        };
        // {K}p{P}{s|u}{e|f}
        let digits = |b: &[u8]| -> Option<(u32, usize)> {
            let n = b.iter().take_while(|c| c.is_ascii_digit()).count();
            // No leading zeros, at most two digits.
            if n == 0 || n > 2 || (n > 1 && b[0] == b'0') {
                return None;
            }
            let v = b[..n].iter().fold(0u32, |a, c| a * 10 + (c - b'0') as u32);
            Some((v, n))
        };
        let (k, n) = digits(rest)?;
        let rest = &rest[n..];
        if !matches!(rest.first(), Some(b'p' | b'P')) {
            return None;
        }
        let (p, n) = digits(&rest[1..])?;
        let tail = &rest[1 + n..];
        if tail.len() != 2 {
            return None;
        }
        let signed = match tail[0].to_ascii_lowercase() {
            b's' => true,
            b'u' => false,
            _ => return None,
        };
        let extended = match tail[1].to_ascii_lowercase() {
            b'e' => true,
            b'f' => false,
            _ => return None,
        };
        P3109::new(k, p, signed, extended).ok()
    }

    /// The member's descriptor (see [`Format::p3109`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::format::{P3109, FLOAT8_E4M3FNUZ};
    /// // p3109_k8p4sf has float8_e4m3fnuz's layout and values (another name).
    /// let f = P3109::new(8, 4, true, false).unwrap().format();
    /// assert_eq!((f.exp_bits, f.man_bits, f.bias), (4, 3, 8));
    /// assert_eq!(f.max_finite(), FLOAT8_E4M3FNUZ.max_finite());
    /// ```
    pub const fn format(self) -> Format {
        let k = self.k as u32;
        let p = self.p as u32;
        let man_bits = p - 1;
        let (exp_bits, nan_encoding) = if self.unsigned {
            (k - p + 1, NanEncoding::AllOnes)
        } else {
            (k - p, NanEncoding::NegativeZero)
        };
        Format {
            name: self.name(),
            exp_bits,
            man_bits,
            // 2^(K−P−1) signed, 2^(K−P) unsigned: 2^(exp_bits − 1) either way.
            bias: 1 << (exp_bits - 1),
            non_finite: if self.finite {
                NonFinite::NanOnly
            } else {
                NonFinite::InfAtMax
            },
            nan_encoding,
            signed: !self.unsigned,
            has_zero: true,
        }
    }
}

impl std::fmt::Display for P3109 {
    /// The member's name (`p3109_k8p3se`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for P3109 {
    type Err = FormatError;

    /// Parses a name or alias ([`P3109::from_name`]).
    ///
    /// # Errors
    ///
    /// [`FormatError::P3109`] naming K and P when the text has the shape of
    /// a name but no such member exists; `k: 0, p: 0` when the text is not
    /// a P3109 name at all.
    fn from_str(s: &str) -> Result<P3109, FormatError> {
        if let Some(p) = P3109::from_name(s) {
            return Ok(p);
        }
        // The shape of a name with K or P outside the family: report them.
        let lower = s.to_ascii_lowercase();
        let body = lower
            .strip_prefix("p3109_k")
            .or_else(|| lower.strip_prefix("binary"))
            .unwrap_or("");
        let mut parts = body.splitn(2, 'p');
        let k = parts.next().and_then(|x| x.parse::<u32>().ok());
        let rest = parts.next().unwrap_or("");
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let p = digits.parse::<u32>().ok();
        let signed = !rest[digits.len()..].starts_with('u');
        Err(match (k, p) {
            (Some(k), Some(p)) => FormatError::P3109 { k, p, signed },
            _ => FormatError::P3109 { k: 0, p: 0, signed },
        })
    }
}

impl Format {
    /// The descriptor of the IEEE P3109 member of width `k`, precision `p`,
    /// signed or unsigned, extended (±inf) or finite domain, as gfloat
    /// 0.5.2's `format_info_p3109(k, p, signedness, domain)` defines it:
    /// exponent bits `k − p` (signed) or `k − p + 1` (unsigned), mantissa
    /// bits `p − 1`, bias `2^(exponent bits − 1)`, subnormals, one zero, one
    /// NaN (the would-be −0 code when signed, the all-ones code when
    /// unsigned), and in the extended domain ±infinity at the largest codes
    /// ([`NonFinite::InfAtMax`]).
    ///
    /// # Errors
    ///
    /// [`FormatError::P3109`] outside the family (see [`P3109::new`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::format::{Format, FLOAT8_E5M2FNUZ};
    /// let f = Format::p3109(8, 3, true, false).unwrap();
    /// assert_eq!(f.name, "p3109_k8p3sf");
    /// assert_eq!((f.max_finite(), f.nan_code()), (FLOAT8_E5M2FNUZ.max_finite(), Some(0x80)));
    /// let e = Format::p3109(8, 3, true, true).unwrap();
    /// assert_eq!((e.max_code(), e.inf_code(), e.max_finite()), (0x7e, Some(0x7f), 49152.0));
    /// ```
    pub const fn p3109(
        k: u32,
        p: u32,
        signed: bool,
        extended: bool,
    ) -> Result<Format, FormatError> {
        match P3109::new(k, p, signed, extended) {
            Ok(m) => Ok(m.format()),
            Err(e) => Err(e),
        }
    }
}

/// A name of at most 16 ASCII bytes, built at compile time.
#[derive(Clone, Copy)]
struct Name {
    bytes: [u8; 16],
    len: u8,
}

impl Name {
    const fn as_str(&self) -> &str {
        let (head, _) = self.bytes.split_at(self.len as usize);
        match std::str::from_utf8(head) {
            Ok(s) => s,
            Err(_) => panic!("names are ASCII"),
        }
    }
}

/// Appends the decimal digits of `v` (< 100).
const fn push_num(n: &mut Name, v: u32) {
    if v >= 10 {
        n.bytes[n.len as usize] = b'0' + (v / 10) as u8;
        n.len += 1;
    }
    n.bytes[n.len as usize] = b'0' + (v % 10) as u8;
    n.len += 1;
}

const fn push(n: &mut Name, s: &[u8]) {
    let mut i = 0;
    while i < s.len() {
        n.bytes[n.len as usize] = s[i];
        n.len += 1;
        i += 1;
    }
}

/// Every member's name (`alias`: the interim report's spelling).
const fn names(alias: bool) -> [Name; P3109::COUNT] {
    let mut out = [Name {
        bytes: [0; 16],
        len: 0,
    }; P3109::COUNT];
    let mut i = 0;
    while i < P3109::COUNT {
        let m = match P3109::from_index(i) {
            Some(m) => m,
            None => panic!("index below COUNT"),
        };
        let n = &mut out[i];
        push(n, if alias { b"binary" } else { b"p3109_k" });
        push_num(n, m.k as u32);
        push(n, b"p");
        push_num(n, m.p as u32);
        push(n, if m.unsigned { b"u" } else { b"s" });
        push(n, if m.finite { b"f" } else { b"e" });
        i += 1;
    }
    out
}

static NAMES: [Name; P3109::COUNT] = names(false);
static ALIASES: [Name; P3109::COUNT] = names(true);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn family_counts_and_order() {
        assert_eq!(P3109::COUNT, 510);
        let all: Vec<P3109> = P3109::all().collect();
        for (i, m) in all.iter().enumerate() {
            assert_eq!(m.index(), i);
            assert_eq!(P3109::from_index(i), Some(*m));
            assert_eq!(P3109::from_name(m.name()), Some(*m));
            assert_eq!(P3109::from_name(m.alias()), Some(*m));
            assert_eq!(m.name().parse::<P3109>(), Ok(*m));
            assert_eq!(m.format().validate(), Ok(()), "{m}");
            let f = m.format();
            assert_eq!(f.bits(), m.k(), "{m}");
            assert_eq!(f.precision(), m.p(), "{m}");
        }
        assert!(all.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(all.iter().filter(|m| m.k() == 8).count(), 30);
        let mut names: Vec<&str> = all.iter().map(|m| m.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), 510);
    }

    #[test]
    fn names_are_refused_outside_the_family() {
        for bad in [
            "p3109_k8p8se",
            "p3109_k1p1ue",
            "p3109_k17p1ue",
            "p3109_k08p3se",
            "p3109_k8p3sx",
            "p3109_k8p3s",
            "p3109_k8p3see",
            "binary8p0se",
            "p3109_k8q3se",
            "float8_e4m3fn",
        ] {
            assert_eq!(P3109::from_name(bad), None, "{bad}");
        }
        assert_eq!(
            "p3109_k8p9ue".parse::<P3109>(),
            Err(FormatError::P3109 {
                k: 8,
                p: 9,
                signed: false
            })
        );
        assert_eq!(
            "bfloat16".parse::<P3109>(),
            Err(FormatError::P3109 {
                k: 0,
                p: 0,
                signed: true
            })
        );
    }

    #[test]
    fn layouts_follow_the_interim_report() {
        let se = Format::p3109(8, 3, true, true).unwrap();
        assert_eq!((se.exp_bits, se.man_bits, se.bias), (5, 2, 16));
        assert_eq!(
            (se.nan_code(), se.inf_code(), se.max_code()),
            (Some(0x80), Some(0x7f), 0x7e)
        );
        let sf = Format::p3109(8, 3, true, false).unwrap();
        assert_eq!((sf.inf_code(), sf.max_code()), (None, 0x7f));
        let ue = Format::p3109(8, 3, false, true).unwrap();
        assert_eq!((ue.exp_bits, ue.man_bits, ue.bias), (6, 2, 32));
        assert_eq!(
            (ue.nan_code(), ue.inf_code(), ue.max_code()),
            (Some(0xff), Some(0xfe), 0xfd)
        );
        let uf = Format::p3109(8, 8, false, false).unwrap();
        assert_eq!((uf.exp_bits, uf.man_bits, uf.bias), (1, 7, 1));
        let p1 = Format::p3109(8, 1, true, true).unwrap();
        assert_eq!((p1.exp_bits, p1.man_bits, p1.bias), (7, 0, 64));
        // The degenerate member: 0, ±inf and NaN only.
        let tiny = Format::p3109(2, 1, true, true).unwrap();
        assert_eq!((tiny.max_code(), tiny.max_finite()), (0, 0.0));
        assert!(!Format::p3109(16, 1, true, true).unwrap().fits_f64());
        assert!(Format::p3109(16, 5, true, true).unwrap().fits_f64());
        assert!(Format::p3109(10, 2, true, true).unwrap().fits_f32());
        assert!(!Format::p3109(10, 1, true, true).unwrap().fits_f32());
    }
}
