//! Rounding control: the nine rounding modes of Graphcore's gfloat 0.5.2
//! (the IEEE P3109 working group's reference), saturation, and the random
//! bits of stochastic rounding, explicit or made from a seed by a
//! counter-based generator.
//!
//! A [`Rounding`] is the one argument every rounding face of the crate
//! takes: the scalar core ([`crate::float::core::round_f32`],
//! [`crate::float::core::round_f64`]), the slice conversions
//! ([`crate::cast::round_slice`], [`crate::cast::round_bytes`],
//! [`crate::cast::Codec::round_f32_slice`]) and, through them, the Python
//! function `mldtypes.cast` and `mldtypes cast --rounding`.
//!
//! # Modes
//!
//! Each [`RoundMode`] means exactly one of gfloat's `RoundMode` members.
//! Write `v` for the value, `q` for the spacing of the target's values
//! around it (the unit in the last place, the subnormal quantum below the
//! smallest normal), `⌊|v|/q⌋·q` and `(⌊|v|/q⌋ + 1)·q` for the two
//! candidates, and `δ = |v|/q − ⌊|v|/q⌋` (in `[0, 1)`) for the dropped
//! fraction; "up" moves the magnitude to the larger candidate.
//!
//! | mode | gfloat | up when |
//! |---|---|---|
//! | `nearest_even` | `TiesToEven` | `δ > ½`, or `δ = ½` and the smaller candidate's code is odd |
//! | `nearest_away` | `TiesToAway` | `δ ≥ ½` |
//! | `toward_zero` | `TowardZero` | never |
//! | `toward_negative` | `TowardNegative` | `v < 0` and `δ > 0` |
//! | `toward_positive` | `TowardPositive` | `v > 0` and `δ > 0` |
//! | `stochastic` | `Stochastic` | `round_half_even(δ·2^N) + r ≥ 2^N` |
//! | `stochastic_odd` | `StochasticOdd` | `round_half_odd(δ·2^N) + r ≥ 2^N` |
//! | `stochastic_fast` | `StochasticFast` | `fl(δ + (2r + 1)·2^−(N+1)) ≥ 1` |
//! | `stochastic_fastest` | `StochasticFastest` | `fl(δ + r·2^−N) ≥ 1` |
//!
//! `r` is the element's random number (`0 ≤ r < 2^N`), `N` the number of
//! random bits (`sr_bits`, 1 to 32). The parity of a code without mantissa
//! bits (IEEE P3109 formats of precision 1, float8_e8m0fnu) is the parity of
//! its biased exponent, zero counting as even. `fl` is the rounding of
//! gfloat's `round_ndarray` arithmetic: to nearest even in float64, for
//! float32 and float64 sources alike (gfloat 0.5.2 on NumPy 2 promotes a
//! float32 array to float64 before it splits off `δ`); it changes the
//! comparison only for inputs far below the target's smallest subnormal.
//! (gfloat converts `2r + 1` and `r` to the source's type first, which
//! rounds them for float32 sources with `N > 23`; ours uses them exactly,
//! a documented deviation outside the vectors' `N ∈ {3, 8, 13}`.) `stochastic` is unbiased (its expected
//! result is `v`) up to the rounding of `δ` to `N` bits; `stochastic_fast`
//! and `stochastic_fastest` are biased by up to `2^−(N+1)` and `2^−N` ulp.
//!
//! # Overflow and saturation
//!
//! A value is rounded as if the exponent range were unbounded, then:
//!
//! - with `saturate`, every finite result beyond the largest finite value
//!   and every infinite input become ±max (gfloat's `sat=True`); NaN stays
//!   NaN;
//! - without it, a finite result beyond ±max becomes ±max under
//!   `toward_zero`, under `toward_negative` for positive values and under
//!   `toward_positive` for negative ones (the directed modes never round
//!   past a finite value toward infinity); every other overflow, and an
//!   infinite input, gives ±inf where the format has infinities, else its
//!   NaN (the float8 "fn"/"fnuz" formats, float8_e8m0fnu, finite IEEE P3109
//!   formats), as gfloat does;
//! - formats without infinities and NaN (float6_e2m3fn, float6_e3m2fn,
//!   float4_e2m1fn) always saturate, and NaN becomes −0 / +0 as ml_dtypes'
//!   `astype` gives it (gfloat raises `ValueError` for both).
//!
//! # Signs, zeros and NaN
//!
//! Negative zero stays negative where the format has one, else it becomes
//! +0. A NaN input gives the format's NaN with the input's sign where the
//! format's NaN has a sign (ml_dtypes' NaN codes; float16 keeps the payload
//! as NumPy's conversions do). Unsigned formats (the IEEE P3109 `u`
//! formats): a negative value that rounds to zero in the given mode gives
//! +0, any other negative value (−inf included, saturated or not) gives NaN.
//! float8_e8m0fnu has no zero: zero and negative values give NaN, and a
//! result below its smallest value 2^−127 is 2^−127 (code `0x00`), as
//! ml_dtypes' `astype` gives it for round-to-nearest.
//!
//! `nearest_even` without saturation and without random bits gives exactly
//! the bits of [`crate::cast::convert_slice`] (ml_dtypes' `astype`) for
//! every format but float8_e8m0fnu, whose ml_dtypes conversion rounds ties
//! away from zero and rounds float32 subnormals above 2^−127 up to 2^−126;
//! those two rules stay with `astype` and [`crate::float::core::encode_f32`],
//! and rounding with a [`Rounding`] ties to the even code as gfloat does.
//!
//! # Where gfloat 0.5.2 differs
//!
//! The committed vectors (`tests/vectors/rounding/`, from
//! `tools/gen_rounding_vectors.py`) hold gfloat's codes; ours equal them
//! except where gfloat raises or gives no value of the format:
//!
//! - formats without infinities and NaN: gfloat raises for NaN and for an
//!   overflow without `sat`; ours saturates, and turns NaN into the zero
//!   of ml_dtypes' `astype`;
//! - gfloat writes every NaN as the format's `code_of_nan`; ours keeps the
//!   sign where the format has two NaNs;
//! - unsigned formats: gfloat rounds a negative value as a signed one (its
//!   `is_negative` is masked by the signedness) and encodes codes outside
//!   the format; ours follows the rule above;
//! - float8_e8m0fnu: gfloat encodes zero as code 0 (the value 2^−127) and
//!   gives values below 2^−127 outside the format; ours gives NaN for zero
//!   and 2^−127 for values below it;
//! - float32 values rounded up past float32's largest value into a wider
//!   format: gfloat computes the result in float32 and overflows to
//!   infinity (or max with `sat`); ours gives the exact 2^128.
//!
//! # Random bits
//!
//! [`Random::Bits`] hands each element its number explicitly (`u8`, `u16`
//! or `u32` words, one per element, each below `2^sr_bits`), used exactly
//! as gfloat uses `srbits`. [`Random::Seed`] makes them from the seed's
//! stream of 32-bit words ([`seeded_word`]): word `j` is word `j mod 4` of
//! Philox4x32-10 ([`philox4x32_10`], as in Random123 and PyTorch) applied
//! to the counter `[lo32(j / 4), hi32(j / 4), 0, 0]` under the key
//! `[lo32(seed), hi32(seed)]`. Element `i` (its position in the whole
//! array: the slice's `offset` plus its index in the slice) keeps the top
//! `sr_bits` bits of word `i` when `sr_bits` is above 16, and of half
//! `i mod 2` of word `i / 2` (the low half for an even `i`) when it is 16
//! or less ([`seeded_bits`]). A result therefore depends only on the seed and the
//! element's index: not on threads, chunking or the order of the work. To
//! round part of a larger array, pass the part's first index as `offset`
//! ([`Rounding::part`] does it for any sub-range).
//!
//! # Wiring other conversions
//!
//! Converters that cut their input into pieces (MX blocks, checkpoint
//! tensors split across threads and shards) keep results reproducible by
//! handing each piece `rounding.part(start, end)`: explicit bits are cut to
//! the same range, a seed's offset moves to the piece's first element.
//!
//! # Examples
//!
//! ```
//! use mldtypes::cast::round_slice;
//! use mldtypes::float8_e4m3fn;
//! use mldtypes::round::{RoundMode, Rounding};
//!
//! let x = [1.0625f32, -1.0625, 500.0, f32::INFINITY];
//! let mut y = [float8_e4m3fn::ZERO; 4];
//! // 1.0625 lies halfway between 1 and 1.125.
//! round_slice(&x, &mut y, &Rounding::new(RoundMode::TowardZero)).unwrap();
//! assert_eq!(y[..3].iter().map(|v| v.to_f32()).collect::<Vec<_>>(), [1.0, -1.0, 448.0]);
//! assert!(y[3].is_nan()); // float8_e4m3fn has no infinity
//! round_slice(&x, &mut y, &Rounding::new(RoundMode::NearestAway).saturating(true)).unwrap();
//! assert_eq!(y.map(|v| v.to_f32()), [1.125, -1.125, 448.0, 448.0]);
//!
//! // Stochastic rounding from a seed: the same bits whatever the chunking.
//! let x: Vec<f32> = (0..1000).map(|i| 1.0 + i as f32 / 4096.0).collect();
//! let r = Rounding::new(RoundMode::Stochastic).with_seed(42, 16);
//! let mut whole = vec![float8_e4m3fn::ZERO; 1000];
//! round_slice(&x, &mut whole, &r).unwrap();
//! let mut parts = vec![float8_e4m3fn::ZERO; 1000];
//! round_slice(&x[..300], &mut parts[..300], &r.part(0, 300)).unwrap();
//! round_slice(&x[300..], &mut parts[300..], &r.part(300, 1000)).unwrap();
//! assert_eq!(whole, parts);
//! ```

/// A rounding mode: one of gfloat 0.5.2's `RoundMode` members (see the
/// [module documentation](self) for their exact definitions).
///
/// # Examples
///
/// ```
/// use mldtypes::round::RoundMode;
/// let m: RoundMode = "toward_zero".parse().unwrap();
/// assert_eq!(m, RoundMode::TowardZero);
/// assert_eq!(m.gfloat_name(), "TowardZero");
/// assert!(RoundMode::StochasticFast.is_stochastic());
/// assert!("up".parse::<RoundMode>().unwrap_err().to_string().contains("nearest_even"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum RoundMode {
    /// Round to nearest, ties to even (IEEE 754 `roundTiesToEven`; gfloat `TiesToEven`).
    #[default]
    NearestEven,
    /// Round to nearest, ties away from zero (IEEE 754 `roundTiesToAway`; gfloat `TiesToAway`).
    NearestAway,
    /// Round toward zero: truncate the magnitude (gfloat `TowardZero`).
    TowardZero,
    /// Round toward −∞ (gfloat `TowardNegative`).
    TowardNegative,
    /// Round toward +∞ (gfloat `TowardPositive`).
    TowardPositive,
    /// Stochastic rounding, the dropped fraction rounded to nearest even on
    /// `sr_bits` bits before the comparison (gfloat `Stochastic`).
    Stochastic,
    /// Stochastic rounding, the dropped fraction rounded to nearest odd on
    /// `sr_bits` bits before the comparison (gfloat `StochasticOdd`).
    StochasticOdd,
    /// Stochastic rounding with half a random step added (gfloat
    /// `StochasticFast`): biased by up to `2^−(sr_bits+1)` ulp.
    StochasticFast,
    /// Stochastic rounding by adding the random step and truncating
    /// (gfloat `StochasticFastest`): biased by up to `2^−sr_bits` ulp.
    StochasticFastest,
}

impl RoundMode {
    /// Every mode, in the order of the [module documentation](self)'s table.
    pub const ALL: [RoundMode; 9] = [
        RoundMode::NearestEven,
        RoundMode::NearestAway,
        RoundMode::TowardZero,
        RoundMode::TowardNegative,
        RoundMode::TowardPositive,
        RoundMode::Stochastic,
        RoundMode::StochasticOdd,
        RoundMode::StochasticFast,
        RoundMode::StochasticFastest,
    ];

    /// The name used by the Python and command-line faces (`"nearest_even"`,
    /// `"toward_zero"`, `"stochastic_fast"`, …).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(mldtypes::round::RoundMode::StochasticOdd.name(), "stochastic_odd");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            RoundMode::NearestEven => "nearest_even",
            RoundMode::NearestAway => "nearest_away",
            RoundMode::TowardZero => "toward_zero",
            RoundMode::TowardNegative => "toward_negative",
            RoundMode::TowardPositive => "toward_positive",
            RoundMode::Stochastic => "stochastic",
            RoundMode::StochasticOdd => "stochastic_odd",
            RoundMode::StochasticFast => "stochastic_fast",
            RoundMode::StochasticFastest => "stochastic_fastest",
        }
    }

    /// The name of the gfloat 0.5.2 `RoundMode` member this mode is.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(mldtypes::round::RoundMode::NearestAway.gfloat_name(), "TiesToAway");
    /// ```
    pub const fn gfloat_name(self) -> &'static str {
        match self {
            RoundMode::NearestEven => "TiesToEven",
            RoundMode::NearestAway => "TiesToAway",
            RoundMode::TowardZero => "TowardZero",
            RoundMode::TowardNegative => "TowardNegative",
            RoundMode::TowardPositive => "TowardPositive",
            RoundMode::Stochastic => "Stochastic",
            RoundMode::StochasticOdd => "StochasticOdd",
            RoundMode::StochasticFast => "StochasticFast",
            RoundMode::StochasticFastest => "StochasticFastest",
        }
    }

    /// Whether the mode needs random bits.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(!mldtypes::round::RoundMode::TowardPositive.is_stochastic());
    /// ```
    pub const fn is_stochastic(self) -> bool {
        matches!(
            self,
            RoundMode::Stochastic
                | RoundMode::StochasticOdd
                | RoundMode::StochasticFast
                | RoundMode::StochasticFastest
        )
    }

    /// Whether the mode is one of the directed ones, which turn a finite
    /// overflow toward zero into ±max (see the [module documentation](self)).
    pub(crate) const fn clamps(self, negative: bool) -> bool {
        match self {
            RoundMode::TowardZero => true,
            RoundMode::TowardNegative => !negative,
            RoundMode::TowardPositive => negative,
            _ => false,
        }
    }
}

impl std::fmt::Display for RoundMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The error of parsing a [`RoundMode`] name: the text is not one of the
/// nine names; its message lists them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseRoundModeError(String);

impl std::fmt::Display for ParseRoundModeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = RoundMode::ALL.iter().map(|m| m.name()).collect();
        write!(
            f,
            "unknown rounding mode {}; the modes are {}",
            crate::dtype::echo(&self.0),
            names.join(", ")
        )
    }
}

impl std::error::Error for ParseRoundModeError {}

impl std::str::FromStr for RoundMode {
    type Err = ParseRoundModeError;

    /// Parses a mode's [`name`](RoundMode::name), or its gfloat name
    /// (`"TiesToEven"`, …).
    fn from_str(s: &str) -> Result<RoundMode, ParseRoundModeError> {
        RoundMode::ALL
            .iter()
            .copied()
            .find(|m| m.name() == s || m.gfloat_name() == s)
            .ok_or_else(|| ParseRoundModeError(s.to_string()))
    }
}

/// Explicit random numbers, one per element: `u8`, `u16` or `u32` words.
///
/// # Examples
///
/// ```
/// use mldtypes::round::RandomBits;
/// let b = RandomBits::U8(&[1, 2, 3]);
/// assert_eq!(b.len(), 3);
/// assert_eq!(b.get(2), 3);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RandomBits<'a> {
    /// One byte per element.
    U8(&'a [u8]),
    /// Two bytes per element.
    U16(&'a [u16]),
    /// Four bytes per element.
    U32(&'a [u32]),
}

impl<'a> RandomBits<'a> {
    /// The number of elements.
    pub fn len(&self) -> usize {
        match self {
            RandomBits::U8(b) => b.len(),
            RandomBits::U16(b) => b.len(),
            RandomBits::U32(b) => b.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i`'s number.
    ///
    /// # Panics
    ///
    /// If `i` is out of bounds, as slice indexing does.
    pub fn get(&self, i: usize) -> u32 {
        match self {
            RandomBits::U8(b) => b[i] as u32,
            RandomBits::U16(b) => b[i] as u32,
            RandomBits::U32(b) => b[i],
        }
    }

    /// The numbers of elements `start..end`.
    ///
    /// # Panics
    ///
    /// If the range is out of bounds, as slice indexing does.
    pub fn range(&self, start: usize, end: usize) -> RandomBits<'a> {
        match *self {
            RandomBits::U8(b) => RandomBits::U8(&b[start..end]),
            RandomBits::U16(b) => RandomBits::U16(&b[start..end]),
            RandomBits::U32(b) => RandomBits::U32(&b[start..end]),
        }
    }

    /// The first element whose number is `2^sr_bits` or more, with its number.
    fn first_too_large(&self, sr_bits: u32) -> Option<(usize, u32)> {
        fn scan<T: Copy + Ord + Default + Into<u32>>(b: &[T], limit: u64) -> Option<(usize, u32)> {
            // Blocks of 4096 are checked without early exit (vectorised),
            // the offending block again element by element.
            for (k, c) in b.chunks(4096).enumerate() {
                // The block's largest number, in the words' own width.
                if c.iter().fold(T::default(), |m, &x| m.max(x)).into() as u64 >= limit {
                    let j = c.iter().position(|&x| x.into() as u64 >= limit)?;
                    return Some((k * 4096 + j, c[j].into()));
                }
            }
            None
        }
        let limit = 1u64 << sr_bits;
        match self {
            RandomBits::U8(b) => scan(b, limit),
            RandomBits::U16(b) => scan(b, limit),
            RandomBits::U32(b) => scan(b, limit),
        }
    }
}

/// Where a stochastic rounding's random numbers come from.
///
/// # Examples
///
/// ```
/// use mldtypes::round::{Random, RandomBits};
/// let r = Random::Bits { bits: RandomBits::U16(&[0, 65535]), sr_bits: 16 };
/// assert_eq!(r.sr_bits(), Some(16));
/// assert_eq!(Random::None.sr_bits(), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Random<'a> {
    /// No random numbers (the deterministic modes).
    #[default]
    None,
    /// One explicit number per element, each below `2^sr_bits`
    /// (gfloat's `srbits` and `srnumbits`).
    Bits {
        /// The numbers, as many as there are elements.
        bits: RandomBits<'a>,
        /// How many bits each number has: 1 to 32.
        sr_bits: u32,
    },
    /// Numbers made by Philox4x32-10 keyed by `seed`, for the elements at
    /// `offset`, `offset + 1`, … of the whole array (see [`seeded_bits`]).
    Seed {
        /// The generator's key.
        seed: u64,
        /// The position of the slice's first element in the whole array.
        offset: u64,
        /// How many bits each number has: 1 to 32.
        sr_bits: u32,
    },
}

impl Random<'_> {
    /// The number of random bits per element, `None` without randomness.
    pub const fn sr_bits(&self) -> Option<u32> {
        match self {
            Random::None => None,
            Random::Bits { sr_bits, .. } | Random::Seed { sr_bits, .. } => Some(*sr_bits),
        }
    }
}

/// How a conversion rounds: the mode, saturation, and the random numbers of
/// the stochastic modes. See the [module documentation](self).
///
/// # Examples
///
/// ```
/// use mldtypes::round::{Random, RoundMode, Rounding};
/// let r = Rounding::new(RoundMode::StochasticFast).saturating(true).with_seed(7, 12);
/// assert_eq!(r.random, Random::Seed { seed: 7, offset: 0, sr_bits: 12 });
/// assert!(r.validate(100).is_ok());
/// assert!(Rounding::new(RoundMode::Stochastic).validate(100).is_err()); // no random bits
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Rounding<'a> {
    /// The rounding mode.
    pub mode: RoundMode,
    /// Map finite overflow and ±inf to ±max (gfloat's `sat`).
    pub saturate: bool,
    /// The random numbers (stochastic modes only).
    pub random: Random<'a>,
}

impl<'a> Rounding<'a> {
    /// Round to nearest, ties to even, without saturation: ml_dtypes'
    /// `astype` (see the [module documentation](self) for
    /// float8_e8m0fnu).
    pub const NEAREST_EVEN: Rounding<'static> = Rounding::new(RoundMode::NearestEven);

    /// `mode`, without saturation and without random numbers.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::round::{RoundMode, Rounding};
    /// assert!(!Rounding::new(RoundMode::TowardZero).saturate);
    /// ```
    pub const fn new(mode: RoundMode) -> Rounding<'static> {
        Rounding {
            mode,
            saturate: false,
            random: Random::None,
        }
    }

    /// The same rounding, saturating or not.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::round::{RoundMode, Rounding};
    /// assert!(Rounding::new(RoundMode::TowardZero).saturating(true).saturate);
    /// ```
    pub const fn saturating(self, saturate: bool) -> Rounding<'a> {
        Rounding { saturate, ..self }
    }

    /// The same rounding with explicit random numbers, one per element.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::round::{RandomBits, RoundMode, Rounding};
    /// let bits = [3u8, 200];
    /// let r = Rounding::new(RoundMode::Stochastic).with_bits(RandomBits::U8(&bits), 8);
    /// assert!(r.validate(2).is_ok());
    /// ```
    pub const fn with_bits<'b>(self, bits: RandomBits<'b>, sr_bits: u32) -> Rounding<'b> {
        Rounding {
            mode: self.mode,
            saturate: self.saturate,
            random: Random::Bits { bits, sr_bits },
        }
    }

    /// The same rounding with random numbers made from `seed` (offset 0).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::round::{RoundMode, Rounding};
    /// let r = Rounding::new(RoundMode::Stochastic).with_seed(1, 16);
    /// assert!(r.validate(10).is_ok());
    /// ```
    pub const fn with_seed(self, seed: u64, sr_bits: u32) -> Rounding<'static> {
        Rounding {
            mode: self.mode,
            saturate: self.saturate,
            random: Random::Seed {
                seed,
                offset: 0,
                sr_bits,
            },
        }
    }

    /// The rounding of elements `start..end` of the slice this rounding is
    /// for: explicit numbers cut to that range, a seed's offset moved by
    /// `start`. Rounding every part with its `part` gives the bits of
    /// rounding the whole.
    ///
    /// # Panics
    ///
    /// If the range is outside the explicit numbers (as slice indexing does);
    /// [`Rounding::validate`] the whole first.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::round::{Random, RoundMode, Rounding};
    /// let r = Rounding::new(RoundMode::Stochastic).with_seed(9, 8);
    /// assert_eq!(r.part(100, 200).random, Random::Seed { seed: 9, offset: 100, sr_bits: 8 });
    /// ```
    pub fn part(&self, start: usize, end: usize) -> Rounding<'a> {
        let random = match self.random {
            Random::None => Random::None,
            Random::Bits { bits, sr_bits } => Random::Bits {
                bits: bits.range(start, end),
                sr_bits,
            },
            Random::Seed {
                seed,
                offset,
                sr_bits,
            } => Random::Seed {
                seed,
                offset: offset.wrapping_add(start as u64),
                sr_bits,
            },
        };
        Rounding { random, ..*self }
    }

    /// Checks the rounding for a slice of `len` elements.
    ///
    /// # Errors
    ///
    /// [`RoundingError::MissingRandom`] for a stochastic mode without
    /// random numbers, [`RoundingError::UnusedRandom`] for a deterministic
    /// one with them, [`RoundingError::SrBits`] for `sr_bits` outside
    /// 1 to 32, [`RoundingError::BitsLength`] if the explicit numbers are
    /// not one per element, [`RoundingError::BitsTooLarge`] for the first
    /// number that is `2^sr_bits` or more.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::round::{RandomBits, RoundMode, Rounding, RoundingError};
    /// let r = Rounding::new(RoundMode::Stochastic).with_bits(RandomBits::U8(&[1, 9]), 3);
    /// assert_eq!(r.validate(2), Err(RoundingError::BitsTooLarge { index: 1, value: 9, sr_bits: 3 }));
    /// ```
    pub fn validate(&self, len: usize) -> Result<(), RoundingError> {
        self.validate_form(len)?;
        if let Random::Bits { bits, sr_bits } = self.random {
            if let Some((index, value)) = bits.first_too_large(sr_bits) {
                return Err(RoundingError::BitsTooLarge {
                    index,
                    value,
                    sr_bits,
                });
            }
        }
        Ok(())
    }

    /// [`validate`](Rounding::validate) but for the values of explicit
    /// random numbers: the conversions that check those as they read them.
    pub(crate) fn validate_form(&self, len: usize) -> Result<(), RoundingError> {
        match (self.mode.is_stochastic(), self.random) {
            (true, Random::None) => return Err(RoundingError::MissingRandom(self.mode)),
            (false, Random::None) => return Ok(()),
            (false, _) => return Err(RoundingError::UnusedRandom(self.mode)),
            _ => {}
        }
        let sr_bits = self.random.sr_bits().unwrap_or(0);
        if !(1..=32).contains(&sr_bits) {
            return Err(RoundingError::SrBits(sr_bits));
        }
        if let Random::Bits { bits, .. } = self.random {
            if bits.len() != len {
                return Err(RoundingError::BitsLength {
                    bits: bits.len(),
                    elements: len,
                });
            }
        }
        Ok(())
    }

    /// Element `i`'s random number (0 for the deterministic modes): the
    /// number the conversions use for it.
    ///
    /// # Panics
    ///
    /// If `i` is beyond explicit numbers, as slice indexing does;
    /// [`validate`](Rounding::validate) the rounding first.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::round::{seeded_bits, RoundMode, Rounding};
    /// let r = Rounding::new(RoundMode::Stochastic).with_seed(5, 13);
    /// assert_eq!(r.part(10, 20).number(3), seeded_bits(5, 13, 13));
    /// ```
    pub fn number(&self, i: usize) -> u32 {
        match self.random {
            Random::None => 0,
            Random::Bits { bits, .. } => bits.get(i),
            Random::Seed {
                seed,
                offset,
                sr_bits,
            } => seeded_bits(seed, offset.wrapping_add(i as u64), sr_bits),
        }
    }
}

/// Why a [`Rounding`] was refused. Nothing is written when a conversion
/// returns one (as [`crate::cast::CastError::Rounding`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoundingError {
    /// A stochastic mode was given neither explicit random numbers nor a seed.
    MissingRandom(RoundMode),
    /// A deterministic mode was given random numbers or a seed, which it
    /// would not use.
    UnusedRandom(RoundMode),
    /// `sr_bits` is outside 1 to 32.
    SrBits(u32),
    /// The explicit random numbers are not one per element.
    BitsLength {
        /// Numbers given.
        bits: usize,
        /// Elements to round.
        elements: usize,
    },
    /// An explicit random number is `2^sr_bits` or more.
    BitsTooLarge {
        /// The element's index.
        index: usize,
        /// Its number.
        value: u32,
        /// The number of random bits.
        sr_bits: u32,
    },
}

impl std::fmt::Display for RoundingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RoundingError::MissingRandom(m) => write!(
                f,
                "rounding mode {m} needs random bits: give explicit random bits or a seed"
            ),
            RoundingError::UnusedRandom(m) => write!(
                f,
                "rounding mode {m} is deterministic: random bits and seeds are for the stochastic \
                 modes only"
            ),
            RoundingError::SrBits(n) => {
                write!(f, "sr_bits = {n} is out of range: it must be 1 to 32")
            }
            RoundingError::BitsLength { bits, elements } => write!(
                f,
                "{bits} random numbers for {elements} elements: there must be one per element"
            ),
            RoundingError::BitsTooLarge {
                index,
                value,
                sr_bits,
            } => write!(
                f,
                "random number {value} (element {index}) does not fit sr_bits = {sr_bits}: every \
                 number must be below 2^{sr_bits} = {}",
                1u64 << sr_bits
            ),
        }
    }
}

impl std::error::Error for RoundingError {}

/// Philox4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel random numbers:
/// as easy as 1, 2, 3", SC 2011; the Random123 library): the four 32-bit
/// words the counter-based generator gives for `counter` under `key`, ten
/// rounds of multiplication by `0xD2511F53` / `0xCD9E8D57` with the key
/// bumped by the Weyl constants `0x9E3779B9` / `0xBB67AE85`. Checked against
/// Random123's known-answer vectors.
///
/// # Examples
///
/// ```
/// use mldtypes::round::philox4x32_10;
/// // Random123's tests/kat_vectors, "philox4x32 10" with zero counter and key.
/// assert_eq!(philox4x32_10([0; 4], [0; 2]), [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]);
/// ```
#[inline(always)]
pub const fn philox4x32_10(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    const M0: u64 = 0xD251_1F53;
    const M1: u64 = 0xCD9E_8D57;
    const W0: u32 = 0x9E37_79B9;
    const W1: u32 = 0xBB67_AE85;
    let [mut c0, mut c1, mut c2, mut c3] = counter;
    let [mut k0, mut k1] = key;
    let mut i = 0;
    while i < 10 {
        let p0 = M0 * c0 as u64;
        let p1 = M1 * c2 as u64;
        let (n0, n1, n2, n3) = (
            (p1 >> 32) as u32 ^ c1 ^ k0,
            p1 as u32,
            (p0 >> 32) as u32 ^ c3 ^ k1,
            p0 as u32,
        );
        (c0, c1, c2, c3) = (n0, n1, n2, n3);
        k0 = k0.wrapping_add(W0);
        k1 = k1.wrapping_add(W1);
        i += 1;
    }
    [c0, c1, c2, c3]
}

/// The random number [`Random::Seed`] gives the element at `index` of the
/// whole array, from the seed's stream of 32-bit words ([`seeded_word`]):
/// - `sr_bits` from 17 to 32: word `index`, shifted right to its top
///   `sr_bits` bits;
/// - `sr_bits` from 1 to 16: a half of word `index / 2`, the low one for
///   an even `index` and the high one for an odd one, shifted right to its
///   top `sr_bits` bits (each word serves two elements: half the generator
///   calls);
/// - `sr_bits` 0: 0.
///
/// # Examples
///
/// ```
/// use mldtypes::round::{philox4x32_10, seeded_bits, seeded_word};
/// let words = philox4x32_10([1, 0, 0, 0], [5, 0]);
/// assert_eq!(seeded_word(5, 6), words[2]); // word 6: block 1, word 2
/// assert_eq!(seeded_bits(5, 6, 32), words[2]);
/// assert_eq!(seeded_bits(5, 6, 24), words[2] >> 8);
/// // 16 bits or fewer: elements 12 and 13 share word 6.
/// assert_eq!(seeded_bits(5, 12, 16), words[2] & 0xffff);
/// assert_eq!(seeded_bits(5, 13, 8), words[2] >> 24);
/// ```
#[inline]
pub const fn seeded_bits(seed: u64, index: u64, sr_bits: u32) -> u32 {
    if sr_bits <= 16 {
        let w = seeded_word(seed, index / 2);
        half_bits(w, (index % 2) as u32, sr_bits)
    } else {
        top_bits(seeded_word(seed, index), sr_bits)
    }
}

/// Word `j` of the stream of 32-bit words a seed gives: word `j mod 4` of
/// [`philox4x32_10`] applied to the counter `[lo32(j / 4), hi32(j / 4), 0,
/// 0]` under the key `[lo32(seed), hi32(seed)]` (Philox4x32-10 of Salmon,
/// Moraes, Dror and Shaw, SC 2011; the Random123 library). [`seeded_bits`]
/// takes each element's random number from it.
///
/// # Examples
///
/// ```
/// use mldtypes::round::{philox4x32_10, seeded_word};
/// assert_eq!(seeded_word(0, 1), philox4x32_10([0; 4], [0; 2])[1]);
/// ```
#[inline]
pub const fn seeded_word(seed: u64, j: u64) -> u32 {
    let block = j / 4;
    philox4x32_10(
        [block as u32, (block >> 32) as u32, 0, 0],
        [seed as u32, (seed >> 32) as u32],
    )[(j % 4) as usize]
}

/// The top `n` bits of `w` (`n` from 0 to 32).
#[inline(always)]
pub(crate) const fn top_bits(w: u32, n: u32) -> u32 {
    ((w as u64) >> (32 - n)) as u32
}

/// The top `n` bits (`n` from 0 to 16) of half `h` of `w` (0 the low one).
#[inline(always)]
const fn half_bits(w: u32, h: u32, n: u32) -> u32 {
    ((w >> (16 * h)) & 0xffff) >> (16 - n)
}

/// Fills `dst` with the numbers of the elements `first`, `first + 1`, … of
/// `Random::Seed { seed, .. }` (`sr_bits` from 1 to 32) as
/// [`seeded_bits`] gives them, the seed's words made by `words(j, cut,
/// out)` (words `j`, `j + 1`, … of [`seeded_word`]'s stream into `out`, as
/// [`fill_words`] does): one word per element above 16 bits, half a word
/// at or below (through [`fill_halves_with`]).
#[inline(always)]
pub(crate) fn fill_seeded_with(
    first: u64,
    sr_bits: u32,
    dst: &mut [u32],
    mut words: impl FnMut(u64, Cut, &mut [u32]),
    halves: impl Fn(&[u32], u32, &mut [u32]),
) {
    if sr_bits > 16 {
        return words(first, Cut::Top(sr_bits), dst);
    }
    fill_halves_with(first, sr_bits, dst, words, halves)
}

/// Fills `dst` with the numbers of the elements `first`, `first + 1`, … of
/// `Random::Seed { seed, .. }` for `sr_bits` from 1 to 16, as
/// [`seeded_bits`] gives them: `words` as in [`fill_seeded_with`], and
/// `halves(ws, sr_bits, out)` writing the numbers of the two halves of
/// each word of `ws` in turn into `out` (twice as long), as [`halves`]
/// does.
#[inline(always)]
pub(crate) fn fill_halves_with(
    first: u64,
    sr_bits: u32,
    dst: &mut [u32],
    mut words: impl FnMut(u64, Cut, &mut [u32]),
    halves: impl Fn(&[u32], u32, &mut [u32]),
) {
    const W: usize = 1024;
    let mut buf = [0u32; W];
    let mut i = 0;
    while i < dst.len() {
        let e = first.wrapping_add(i as u64);
        let (j, odd) = (e / 2, (e % 2) as usize);
        // Words up to the stream's end (element indices wrap at 2^64, so
        // words at 2^63), at most a buffer of them.
        let room = (1u64 << 63) - j;
        let nw = ((odd + dst.len() - i).div_ceil(2))
            .min(W)
            .min(room.min(W as u64) as usize);
        let n = (2 * nw - odd).min(dst.len() - i);
        words(j, Cut::Top(32), &mut buf[..nw]);
        let out = &mut dst[i..i + n];
        let (head, body) = out.split_at_mut(odd.min(n));
        if let [first_one] = head {
            *first_one = half_bits(buf[0], 1, sr_bits);
        }
        let ws = &buf[odd..nw];
        let pairs = body.len() / 2;
        halves(&ws[..pairs], sr_bits, &mut body[..2 * pairs]);
        if body.len() % 2 == 1 {
            body[2 * pairs] = half_bits(ws[pairs], 0, sr_bits);
        }
        i += n;
    }
}

/// The numbers of the two halves of each word of `words` in turn (the low
/// half first), each cut to its top `sr_bits` bits (1 to 16), into `out`
/// (twice as long as `words`).
#[inline(always)]
pub(crate) fn halves(words: &[u32], sr_bits: u32, out: &mut [u32]) {
    for (pair, &w) in out.chunks_exact_mut(2).zip(words) {
        pair[0] = half_bits(w, 0, sr_bits);
        pair[1] = half_bits(w, 1, sr_bits);
    }
}

/// [`fill_seeded_with`] with the scalar generator ([`fill_words`]).
#[cfg(test)]
#[inline(always)]
pub(crate) fn fill_seeded(seed: u64, first: u64, sr_bits: u32, dst: &mut [u32]) {
    fill_seeded_with(
        first,
        sr_bits,
        dst,
        |j, cut, out| fill_words(seed, j, cut, out),
        halves,
    )
}

/// How the words of a seed's stream are cut into random numbers (see
/// [`seeded_bits`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cut {
    /// The word's top `n` bits (`n` from 1 to 32).
    Top(u32),
    /// The top `n` bits of each 16-bit half, each in its own half (`n`
    /// from 1 to 16): the numbers of two elements, as 16-bit words.
    Halves(u32),
}

impl Cut {
    /// The right shift and the mask after it that make a word's numbers:
    /// `(w >> shift) & mask`.
    pub(crate) const fn shift_mask(self) -> (u32, u32) {
        match self {
            Cut::Top(n) => (32 - n, u32::MAX >> (32 - n)),
            Cut::Halves(n) => {
                let m = 0xffff >> (16 - n);
                (16 - n, m | m << 16)
            }
        }
    }

    /// The numbers of word `w`.
    #[inline(always)]
    const fn apply(self, w: u32) -> u32 {
        let (shift, mask) = self.shift_mask();
        (w >> shift) & mask
    }
}

/// Fills `dst` with words `first`, `first + 1`, … of [`seeded_word`]'s
/// stream, each cut by `cut`: four words per generator call, the calls
/// over whole blocks written so that they vectorise.
#[inline(always)]
pub(crate) fn fill_words(seed: u64, first: u64, cut: Cut, dst: &mut [u32]) {
    let key = [seed as u32, (seed >> 32) as u32];
    let mut i = 0;
    // Leading words up to a block boundary.
    while i < dst.len() && !first.wrapping_add(i as u64).is_multiple_of(4) {
        dst[i] = cut.apply(seeded_word(seed, first.wrapping_add(i as u64)));
        i += 1;
    }
    let block0 = first.wrapping_add(i as u64) / 4;
    let whole = (dst.len() - i) / 4;
    for (j, out) in dst[i..i + whole * 4].chunks_exact_mut(4).enumerate() {
        // Word indices wrap at 2^64, their blocks at 2^62.
        let b = block0.wrapping_add(j as u64) & (u64::MAX >> 2);
        let w = philox4x32_10([b as u32, (b >> 32) as u32, 0, 0], key);
        out[0] = cut.apply(w[0]);
        out[1] = cut.apply(w[1]);
        out[2] = cut.apply(w[2]);
        out[3] = cut.apply(w[3]);
    }
    i += whole * 4;
    while i < dst.len() {
        dst[i] = cut.apply(seeded_word(seed, first.wrapping_add(i as u64)));
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random123 `tests/kat_vectors`, the three `philox4x32 10` lines
    /// (counter, key, result).
    #[test]
    fn philox_known_answers() {
        let kat: [([u32; 4], [u32; 2], [u32; 4]); 3] = [
            (
                [0, 0, 0, 0],
                [0, 0],
                [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8],
            ),
            (
                [u32::MAX; 4],
                [u32::MAX; 2],
                [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd],
            ),
            (
                [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
                [0xa4093822, 0x299f31d0],
                [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1],
            ),
        ];
        for (c, k, want) in kat {
            assert_eq!(philox4x32_10(c, k), want);
        }
    }

    #[test]
    fn filling_matches_the_element_rule_at_any_offset() {
        for first in [0u64, 1, 2, 3, 5, 1 << 40, u64::MAX - 9, u64::MAX - 2048] {
            for n in [0usize, 1, 3, 4, 7, 64, 103, 2048, 2113] {
                for sr in [1, 13, 16, 17, 32] {
                    let mut v = vec![0u32; n];
                    fill_seeded(0x1234_5678_9abc, first, sr, &mut v);
                    for (i, x) in v.iter().enumerate() {
                        assert_eq!(
                            *x,
                            seeded_bits(0x1234_5678_9abc, first.wrapping_add(i as u64), sr)
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn mode_names_round_trip() {
        for m in RoundMode::ALL {
            assert_eq!(m.name().parse::<RoundMode>(), Ok(m));
            assert_eq!(m.gfloat_name().parse::<RoundMode>(), Ok(m));
        }
    }
}
