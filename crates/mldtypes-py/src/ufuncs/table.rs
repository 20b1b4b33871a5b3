//! Result tables: a ufunc of one float of at most 16 bits (or of two floats
//! of at most 8 bits) has at most 65,536 distinct inputs, so its results
//! can be computed once, by the scalar code that defines them, and looked
//! up afterwards.
//!
//! A [`Lazy`] table is built on the first call of its loop, per (ufunc,
//! format), by evaluating the loop's scalar definition on every input
//! (every stored code, or every pair of one-byte codes) and recording, for
//! each input, the result codes and the floating-point exception flags the
//! evaluation raised (invalid, divide by zero, overflow, underflow: the four
//! NumPy reports). A loop call then reads each element's result from the
//! table and raises the union of its elements' flags once at the end, so
//! results and `numpy.errstate` reports are those of the scalar code, input
//! for input.
//!
//! Sizes: one code table of at most 65,536 × 2 bytes (128 KiB), and the
//! flags in pages of 256 entries shared between equal pages (a page index
//! per 256 inputs; most pages raise nothing and share page 0): a few KiB.
//!
//! Thread safety: the table lives in a [`OnceLock`]. The first caller
//! builds it while others wait without holding any Python lock (the build
//! runs no Python code); a panic during the build leaves it unbuilt.

use std::sync::OnceLock;

use super::desc::FloatDesc;
use super::simd::Shape8;
use super::FpFlags;

/// A [`FlagPages::summary`] whose run raises different flags for
/// different entries (bit 7: no `FE_*` flag of x86-64 or AArch64).
pub(crate) const MIXED: u8 = 0x80;

/// Flags of the entries of a table, in pages of 256 entries.
pub(crate) struct FlagPages {
    /// The page of each run of 256 entries (runs past the table's end: 0).
    page_of: [u8; 256],
    /// Per run of 256 entries: their flags when all 256 raise the same, else
    /// [`MIXED`]: one look-up per element gives the union of the flags of a
    /// block, or says that the block needs the per-entry pages.
    summary: [u8; 256],
    /// Distinct pages; page 0 raises nothing.
    pages: Box<[[u8; 256]]>,
    /// Whether any entry raises a flag.
    any: bool,
    /// The union of the flags of the [`MIXED`] runs' entries: once a
    /// union of flags holds these, no per-entry look-up can add to it.
    mixed_union: u8,
    /// Per run of 256 entries: the union of their flags.
    run_union: [u8; 256],
    /// The flags of every entry, one byte each, built on first use by
    /// [`FlagPages::dense`] (the pair tables' loops and the two-byte
    /// look-ups' blocks of mixed runs: one look-up per element independent
    /// of the result's).
    dense: OnceLock<Box<[u8]>>,
}

impl FlagPages {
    /// Pages of `flags` (one byte of `FE_*` bits per entry, at most 65,536
    /// entries).
    pub(crate) fn new(flags: &[u8]) -> FlagPages {
        assert!(flags.len() <= 1 << 16, "at most 65,536 entries");
        let mut pages: Vec<[u8; 256]> = vec![[0; 256]];
        let mut page_of = [0u8; 256];
        for (run, chunk) in flags.chunks(256).enumerate() {
            let mut page = [0u8; 256];
            page[..chunk.len()].copy_from_slice(chunk);
            let idx = match pages.iter().position(|p| *p == page) {
                Some(i) => i,
                None => {
                    pages.push(page);
                    pages.len() - 1
                }
            };
            // At most 256 runs, so at most 256 distinct pages.
            page_of[run] = idx as u8;
        }
        let mut summary = [0u8; 256];
        for (sm, &p) in summary.iter_mut().zip(&page_of) {
            let page = &pages[p as usize];
            *sm = if page.iter().all(|&f| f == page[0]) {
                page[0]
            } else {
                MIXED
            };
        }
        let mixed_union = summary
            .iter()
            .zip(&page_of)
            .filter(|(&sm, _)| sm == MIXED)
            .fold(0, |u, (_, &p)| {
                pages[p as usize].iter().fold(u, |u, &f| u | f)
            });
        let run_union = page_of.map(|p| pages[p as usize].iter().fold(0, |u, &f| u | f));
        FlagPages {
            any: pages.len() > 1,
            mixed_union,
            run_union,
            page_of,
            summary,
            pages: pages.into_boxed_slice(),
            dense: OnceLock::new(),
        }
    }

    /// The flags of all 65,536 entries, one byte each (64 KiB, built on the
    /// first call; entries past the table's end raise nothing).
    pub(crate) fn dense(&self) -> &[u8; 1 << 16] {
        let d = self.dense.get_or_init(|| {
            let mut d = vec![0u8; 1 << 16];
            for (run, chunk) in d.chunks_exact_mut(256).enumerate() {
                chunk.copy_from_slice(self.page(run));
            }
            d.into_boxed_slice()
        });
        (&**d).try_into().expect("65,536 entries")
    }

    /// The flags of entry `i` (below 65,536).
    #[inline(always)]
    pub(crate) fn get(&self, i: usize) -> u8 {
        self.pages[self.page_of[(i >> 8) & 0xff] as usize][i & 0xff]
    }

    /// The flags of the run of entries `i >> 8` if all its entries raise the
    /// same ones, else [`MIXED`].
    #[inline(always)]
    pub(crate) fn summary(&self, i: usize) -> u8 {
        self.summary[(i >> 8) & 0xff]
    }

    /// The per-run summaries ([`FlagPages::summary`] of each run).
    #[inline(always)]
    pub(crate) fn summaries(&self) -> &[u8; 256] {
        &self.summary
    }

    /// The flags of entries `256 i .. 256 i + 256`.
    #[inline(always)]
    pub(crate) fn page(&self, i: usize) -> &[u8; 256] {
        &self.pages[self.page_of[i] as usize]
    }

    /// Whether the union `f` of the summaries of some entries (bit
    /// [`MIXED`] set when a run was mixed) is already the union of their
    /// flags: no run was mixed, or `f` holds every flag a mixed run's entry
    /// can raise, and a pass over the entries' own flags is not needed.
    #[inline(always)]
    pub(crate) fn settled(&self, f: u8) -> bool {
        f & MIXED == 0 || f & self.mixed_union == self.mixed_union
    }

    /// Per run of 256 entries (`i >> 8`): the union of their flags.
    #[inline(always)]
    pub(crate) fn run_unions(&self) -> &[u8; 256] {
        &self.run_union
    }

    /// Whether any entry raises a flag.
    #[inline(always)]
    pub(crate) fn any(&self) -> bool {
        self.any
    }

    /// Bytes held.
    pub(crate) fn bytes(&self) -> usize {
        self.page_of.len()
            + self.summary.len()
            + 256 * self.pages.len()
            + self.dense.get().map_or(0, |d| d.len())
    }
}

/// One output column of a table: the result of each input.
pub(crate) enum Column {
    /// One-byte codes or booleans.
    U8(Box<[u8]>),
    /// Two-byte codes (65,536 of them plus two entries of padding, which
    /// the gathers of `simd::lut16` may read).
    U16(Box<[u16]>),
    /// C `int` values that fit 16 bits (`frexp`'s exponents).
    I16(Box<[i16]>),
}

impl Column {
    /// Bytes held.
    pub(crate) fn bytes(&self) -> usize {
        match self {
            Column::U8(v) => v.len(),
            Column::U16(v) => 2 * v.len(),
            Column::I16(v) => 2 * v.len(),
        }
    }

    /// The one-byte column (panics on another kind: a table is always read
    /// by the loop it was built for).
    #[inline(always)]
    pub(crate) fn u8s(&self) -> &[u8] {
        match self {
            Column::U8(v) => v,
            _ => unreachable!("a one-byte table column"),
        }
    }

    /// The C `int` column.
    #[inline(always)]
    pub(crate) fn i16s(&self) -> &[i16] {
        match self {
            Column::I16(v) => v,
            _ => unreachable!("an int table column"),
        }
    }
}

/// The results of a ufunc for every input.
pub(crate) struct Table {
    /// The first output.
    pub(crate) first: Column,
    /// The second output of `modf`, `frexp`, `divmod`.
    pub(crate) second: Option<Column>,
    /// The flags of each input.
    pub(crate) flags: FlagPages,
    /// What the first output is, for the AVX2 loops of one-byte codes.
    pub(crate) shape8: Shape8,
    /// bfloat16 `exp` / `exp2`: the computed forms that replace the
    /// look-ups ([`super::expk`]).
    pub(crate) exp: Option<super::expk::ExpForm>,
}

impl Table {
    /// A table with no entries, for loops that compute instead.
    pub(crate) fn empty() -> Table {
        Table {
            first: Column::U8(Box::new([])),
            second: None,
            flags: FlagPages::new(&[]),
            shape8: Shape8::Table,
            exp: None,
        }
    }

    /// Bytes held by the table (outputs and flags).
    pub(crate) fn bytes(&self) -> usize {
        self.first.bytes() + self.second.as_ref().map_or(0, Column::bytes) + self.flags.bytes()
    }
}

/// A table built on first use from the scalar definition `build`.
pub(crate) struct Lazy {
    /// The format of the loop's operands.
    pub(crate) desc: &'static FloatDesc,
    /// Builds the table: evaluates the ufunc's scalar definition on every
    /// input.
    build: fn(&FloatDesc) -> Table,
    cell: OnceLock<Table>,
}

impl Lazy {
    /// A table of `desc` built by `build` on first use.
    pub(crate) const fn new(desc: &'static FloatDesc, build: fn(&FloatDesc) -> Table) -> Lazy {
        Lazy {
            desc,
            build,
            cell: OnceLock::new(),
        }
    }

    /// The table, built now if no call has built it yet. The caller's
    /// floating-point flags are left as they were.
    #[inline]
    pub(crate) fn get(&self) -> &Table {
        self.cell.get_or_init(|| {
            let flags = FpFlags::save();
            let t = (self.build)(self.desc);
            flags.restore();
            t
        })
    }

    /// Builds a fresh table (not kept), for tests and build-time
    /// measurements; flags left as they were.
    pub(crate) fn build_fresh(&self) -> Table {
        let flags = FpFlags::save();
        let t = (self.build)(self.desc);
        flags.restore();
        t
    }
}
