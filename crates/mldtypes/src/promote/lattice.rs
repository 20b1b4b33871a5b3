//! A generic, data-driven promotion lattice, and property checks for any binary
//! promotion table.
//!
//! A [`Lattice`] is built from a DAG given as "immediately higher" edges (the
//! form in which JAX writes its lattice). Construction computes each node's
//! upper-bound set by transitive closure, rejects cycles and pairs whose least
//! upper bound is not unique, and fills a dense `n × n` join table, so that the
//! binary join at run time is one table lookup ([`Lattice::join_index`]).
//!
//! Pairs without *any* common upper bound are allowed (their join is undefined):
//! JAX's lattice is such a partial lattice, its sub-byte integers and small
//! floats being sinks. [`Lattice::new_complete`] additionally rejects them.
//!
//! [`BinaryTable`] is the table form of any promotion system (lattice or not),
//! with checkers for commutativity, idempotence and associativity that return the
//! violating pairs and triples.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::hash::Hash;

/// Sentinel in the dense join table: no common upper bound.
const UNDEFINED: u16 = u16::MAX;

/// Why a DAG is not a (partial) lattice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LatticeError {
    /// The edges contain a cycle through `node`.
    Cycle {
        /// A node on the cycle.
        node: String,
    },
    /// `a` and `b` have several minimal common upper bounds, none below the
    /// others, so their join is ambiguous.
    AmbiguousJoin {
        /// First node of the pair.
        a: String,
        /// Second node of the pair.
        b: String,
        /// The incomparable minimal upper bounds.
        candidates: Vec<String>,
    },
    /// `a` and `b` have no common upper bound (only reported by
    /// [`Lattice::new_complete`]).
    NoUpperBound {
        /// First node of the pair.
        a: String,
        /// Second node of the pair.
        b: String,
    },
    /// An edge names a node missing from the explicit node list given to
    /// [`Lattice::with_nodes`].
    UnknownNode {
        /// The node's `Display` text.
        node: String,
    },
    /// The lattice has more nodes than the join table can index (65 535).
    TooManyNodes(usize),
}

impl fmt::Display for LatticeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LatticeError::Cycle { node } => write!(f, "cycle detected in lattice at node {node}"),
            LatticeError::AmbiguousJoin { a, b, candidates } => write!(
                f,
                "nodes {a} and {b} have no unique least upper bound: candidates are {}",
                candidates.join(", ")
            ),
            LatticeError::NoUpperBound { a, b } => {
                write!(f, "nodes {a} and {b} have no common upper bound")
            }
            LatticeError::UnknownNode { node } => {
                write!(
                    f,
                    "edge refers to node {node} which is not in the node list"
                )
            }
            LatticeError::TooManyNodes(n) => {
                write!(f, "lattice has {n} nodes; at most 65535 are supported")
            }
        }
    }
}

impl std::error::Error for LatticeError {}

/// A fixed-width bitset over node indices.
#[derive(Clone, Debug, PartialEq, Eq)]
struct BitSet(Vec<u64>);

impl BitSet {
    fn new(n: usize) -> Self {
        BitSet(vec![0; n.div_ceil(64)])
    }
    fn insert(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    fn contains(&self, i: usize) -> bool {
        self.0[i / 64] >> (i % 64) & 1 == 1
    }
    fn intersection(&self, o: &BitSet) -> BitSet {
        BitSet(self.0.iter().zip(&o.0).map(|(a, b)| a & b).collect())
    }
    fn is_subset(&self, o: &BitSet) -> bool {
        self.0.iter().zip(&o.0).all(|(a, b)| a & !b == 0)
    }
    fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(w, &bits)| {
            (0..64)
                .filter(move |b| bits >> b & 1 == 1)
                .map(move |b| w * 64 + b)
        })
    }
}

/// A join-semilattice (possibly partial) over nodes of type `N`, built from
/// "immediately higher" edges.
///
/// Node `a ≤ b` iff `b` is reachable from `a` along edges; the join `a ∨ b` is
/// the least common upper bound.
#[derive(Clone, Debug)]
pub struct Lattice<N> {
    nodes: Vec<N>,
    index: HashMap<N, usize>,
    edges: Vec<Vec<usize>>,
    upper: Vec<BitSet>,
    join: Vec<u16>,
}

/// For each input of a join, the chain of lattice edges leading up to the
/// result (see [`Lattice::explain`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Explanation<N> {
    /// The join of all inputs.
    pub join: N,
    /// One path per input, starting at the input and ending at `join`; each
    /// consecutive pair is an "immediately higher" edge. A path of length 1
    /// means the input already is the join.
    pub paths: Vec<Vec<N>>,
}

impl<N: Copy + Eq + Hash + fmt::Display> Lattice<N> {
    /// Builds a partial lattice from `(node, immediately higher nodes)` entries;
    /// the node order is the order of first appearance (as key or target).
    ///
    /// # Errors
    ///
    /// [`LatticeError::Cycle`] if the edges have a cycle,
    /// [`LatticeError::AmbiguousJoin`] if some pair has several incomparable
    /// minimal upper bounds.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::promote::lattice::Lattice;
    /// // Python's int -> float -> complex.
    /// let l = Lattice::new(&[("int", &["float"][..]), ("float", &["complex"][..])]).unwrap();
    /// assert_eq!(l.join(&"int", &"complex"), Some("complex"));
    /// ```
    pub fn new<E: AsRef<[N]>>(edges: &[(N, E)]) -> Result<Self, LatticeError> {
        let mut nodes = Vec::new();
        for (n, ups) in edges {
            for m in std::iter::once(n).chain(ups.as_ref()) {
                if !nodes.contains(m) {
                    nodes.push(*m);
                }
            }
        }
        Self::with_nodes(&nodes, edges)
    }

    /// Like [`Lattice::new`], but also rejects pairs with no common upper bound,
    /// so that the result is a true lattice (every pair has a join).
    ///
    /// # Errors
    ///
    /// As [`Lattice::new`], plus [`LatticeError::NoUpperBound`].
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::promote::lattice::{Lattice, LatticeError};
    /// // B and C have no upper bound: a DAG but not a lattice (JEP 9407's example).
    /// let e = Lattice::new_complete(&[("A", &["B", "C"][..])]).unwrap_err();
    /// assert!(matches!(e, LatticeError::NoUpperBound { .. }));
    /// ```
    pub fn new_complete<E: AsRef<[N]>>(edges: &[(N, E)]) -> Result<Self, LatticeError> {
        let l = Self::new(edges)?;
        let n = l.nodes.len();
        for i in 0..n {
            for j in i + 1..n {
                if l.join[i * n + j] == UNDEFINED {
                    return Err(LatticeError::NoUpperBound {
                        a: l.nodes[i].to_string(),
                        b: l.nodes[j].to_string(),
                    });
                }
            }
        }
        Ok(l)
    }

    /// Builds a partial lattice over an explicit node list (which fixes the
    /// indices used by [`Lattice::join_index`]); edges may only name listed
    /// nodes; listed nodes without an entry are sinks.
    ///
    /// # Errors
    ///
    /// As [`Lattice::new`], plus [`LatticeError::UnknownNode`].
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::promote::lattice::Lattice;
    /// let l = Lattice::with_nodes(&['a', 'b', 'c'], &[('a', &['c'][..])]).unwrap();
    /// assert_eq!(l.join_index(0, 2), Some(2));
    /// assert_eq!(l.join_index(0, 1), None); // 'b' is an isolated sink
    /// ```
    pub fn with_nodes<E: AsRef<[N]>>(nodes: &[N], edges: &[(N, E)]) -> Result<Self, LatticeError> {
        let n = nodes.len();
        if n >= UNDEFINED as usize {
            return Err(LatticeError::TooManyNodes(n));
        }
        let index: HashMap<N, usize> = nodes.iter().enumerate().map(|(i, x)| (*x, i)).collect();
        let lookup = |x: &N| {
            index
                .get(x)
                .copied()
                .ok_or_else(|| LatticeError::UnknownNode {
                    node: x.to_string(),
                })
        };
        let mut adj = vec![Vec::new(); n];
        for (from, ups) in edges {
            let f = lookup(from)?;
            for u in ups.as_ref() {
                let t = lookup(u)?;
                if !adj[f].contains(&t) {
                    adj[f].push(t);
                }
            }
        }
        // Upper-bound sets by transitive closure (reflexive).
        let mut upper = Vec::with_capacity(n);
        for start in 0..n {
            let mut ub = BitSet::new(n);
            let mut queue: VecDeque<usize> = adj[start].iter().copied().collect();
            while let Some(x) = queue.pop_front() {
                if x == start {
                    return Err(LatticeError::Cycle {
                        node: nodes[start].to_string(),
                    });
                }
                if !ub.contains(x) {
                    ub.insert(x);
                    queue.extend(adj[x].iter().copied());
                }
            }
            ub.insert(start);
            upper.push(ub);
        }
        // Dense join table.
        let mut join = vec![UNDEFINED; n * n];
        for i in 0..n {
            for j in 0..n {
                let common = upper[i].intersection(&upper[j]);
                let least: Vec<usize> = common
                    .iter()
                    .filter(|&c| common.is_subset(&upper[c]))
                    .collect();
                match least.as_slice() {
                    [] => {
                        if common.iter().next().is_some() {
                            let minimal: Vec<String> = common
                                .iter()
                                .filter(|&c| !common.iter().any(|d| d != c && upper[d].contains(c)))
                                .map(|c| nodes[c].to_string())
                                .collect();
                            return Err(LatticeError::AmbiguousJoin {
                                a: nodes[i].to_string(),
                                b: nodes[j].to_string(),
                                candidates: minimal,
                            });
                        }
                    }
                    [one] => join[i * n + j] = *one as u16,
                    _ => unreachable!("antisymmetry: two least elements would be equal"),
                }
            }
        }
        Ok(Lattice {
            nodes: nodes.to_vec(),
            index,
            edges: adj,
            upper,
            join,
        })
    }

    /// The nodes, in index order.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::promote::lattice::Lattice;
    /// let l = Lattice::new(&[(1, &[2][..])]).unwrap();
    /// assert_eq!(l.nodes(), &[1, 2]);
    /// ```
    pub fn nodes(&self) -> &[N] {
        &self.nodes
    }

    /// The index of `node`, or `None` if it is not in the lattice.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::promote::lattice::Lattice;
    /// let l = Lattice::new(&[(1, &[2][..])]).unwrap();
    /// assert_eq!(l.index_of(&2), Some(1));
    /// assert_eq!(l.index_of(&7), None);
    /// ```
    pub fn index_of(&self, node: &N) -> Option<usize> {
        self.index.get(node).copied()
    }

    /// The nodes immediately above `node` (its outgoing edges).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::promote::lattice::Lattice;
    /// let l = Lattice::new(&[(1, &[2, 3][..])]).unwrap();
    /// assert_eq!(l.immediately_higher(&1), vec![2, 3]);
    /// ```
    pub fn immediately_higher(&self, node: &N) -> Vec<N> {
        self.index_of(node)
            .map(|i| self.edges[i].iter().map(|&j| self.nodes[j]).collect())
            .unwrap_or_default()
    }

    /// The upper-bound set of `node` (every `m` with `node ≤ m`, itself included),
    /// in index order.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::promote::lattice::Lattice;
    /// let l = Lattice::new(&[(1, &[2][..]), (2, &[3][..])]).unwrap();
    /// assert_eq!(l.upper_bounds(&1), vec![1, 2, 3]);
    /// ```
    pub fn upper_bounds(&self, node: &N) -> Vec<N> {
        self.index_of(node)
            .map(|i| self.upper[i].iter().map(|j| self.nodes[j]).collect())
            .unwrap_or_default()
    }

    /// Whether `a ≤ b` in the lattice order.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::promote::lattice::Lattice;
    /// let l = Lattice::new(&[(1, &[2][..])]).unwrap();
    /// assert!(l.le(&1, &2) && !l.le(&2, &1));
    /// ```
    pub fn le(&self, a: &N, b: &N) -> bool {
        match (self.index_of(a), self.index_of(b)) {
            (Some(i), Some(j)) => self.upper[i].contains(j),
            _ => false,
        }
    }

    /// The join of two node indices: one lookup in the dense join table.
    /// `None` if the pair has no common upper bound (or an index is out of range).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::promote::lattice::Lattice;
    /// let l = Lattice::with_nodes(&[0u8, 1, 2], &[(0, &[2][..]), (1, &[2][..])]).unwrap();
    /// assert_eq!(l.join_index(0, 1), Some(2));
    /// ```
    #[inline]
    pub fn join_index(&self, a: usize, b: usize) -> Option<usize> {
        let n = self.nodes.len();
        if a >= n || b >= n {
            return None;
        }
        match self.join[a * n + b] {
            UNDEFINED => None,
            j => Some(j as usize),
        }
    }

    /// The join `a ∨ b`, or `None` if undefined or a node is unknown.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::promote::lattice::Lattice;
    /// let l = Lattice::new(&[("u8", &["i16"][..]), ("i8", &["i16"][..])]).unwrap();
    /// assert_eq!(l.join(&"u8", &"i8"), Some("i16"));
    /// ```
    pub fn join(&self, a: &N, b: &N) -> Option<N> {
        let j = self.join_index(self.index_of(a)?, self.index_of(b)?)?;
        Some(self.nodes[j])
    }

    /// The n-ary join (least upper bound of every node in `nodes`), folding the
    /// binary join table; `None` for an empty list, an unknown node, or no
    /// common upper bound.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::promote::lattice::Lattice;
    /// let l = Lattice::new(&[("b", &["i"][..]), ("i", &["f"][..]), ("f", &["c"][..])]).unwrap();
    /// assert_eq!(l.join_all(&["b", "f", "i"]), Some("f"));
    /// assert_eq!(l.join_all(&[]), None);
    /// ```
    pub fn join_all(&self, nodes: &[N]) -> Option<N> {
        let (first, rest) = nodes.split_first()?;
        let mut acc = self.index_of(first)?;
        for x in rest {
            acc = self.join_index(acc, self.index_of(x)?)?;
        }
        Some(self.nodes[acc])
    }

    /// Explains the join of `nodes`: for each input, a shortest path of
    /// "immediately higher" edges from it up to the join. `None` when the join
    /// is undefined.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::promote::lattice::Lattice;
    /// let l = Lattice::new(&[("u8", &["i16"][..]), ("i8", &["i16"][..]), ("i16", &["i32"][..])]).unwrap();
    /// let e = l.explain(&["u8", "i8"]).unwrap();
    /// assert_eq!(e.join, "i16");
    /// assert_eq!(e.paths, vec![vec!["u8", "i16"], vec!["i8", "i16"]]);
    /// ```
    pub fn explain(&self, nodes: &[N]) -> Option<Explanation<N>> {
        let join = self.join_all(nodes)?;
        let target = self.index_of(&join)?;
        let paths = nodes
            .iter()
            .map(|x| self.path(self.index_of(x)?, target))
            .collect::<Option<Vec<_>>>()?;
        Some(Explanation { join, paths })
    }

    /// Breadth-first shortest edge path from index `from` to index `to`.
    fn path(&self, from: usize, to: usize) -> Option<Vec<N>> {
        let n = self.nodes.len();
        let mut prev = vec![usize::MAX; n];
        let mut queue = VecDeque::from([from]);
        prev[from] = from;
        while let Some(x) = queue.pop_front() {
            if x == to {
                let mut path = vec![self.nodes[x]];
                let mut cur = x;
                while cur != from {
                    cur = prev[cur];
                    path.push(self.nodes[cur]);
                }
                path.reverse();
                return Some(path);
            }
            for &y in &self.edges[x] {
                if prev[y] == usize::MAX {
                    prev[y] = x;
                    queue.push_back(y);
                }
            }
        }
        None
    }

    /// The binary join table of this lattice (undefined joins as `None`).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::promote::lattice::Lattice;
    /// let t = Lattice::new(&[(1, &[2][..])]).unwrap().table();
    /// assert_eq!(t.get(&2, &1), Some(Some(&2)));
    /// ```
    pub fn table(&self) -> BinaryTable<N> {
        let n = self.nodes.len();
        BinaryTable {
            nodes: self.nodes.clone(),
            cells: (0..n * n)
                .map(|k| self.join_index(k / n, k % n).map(|j| self.nodes[j]))
                .collect(),
        }
    }
}

/// A binary promotion table over `nodes`: row `a`, column `b` holds the result
/// of promoting `a` with `b`, or `None` where the system leaves it undefined
/// (a `-` cell in the seed tables; an error at run time).
///
/// The fields are private so that a table always has exactly `nodes.len()²`
/// cells: build one with [`BinaryTable::new`] (checked) or
/// [`BinaryTable::from_fn`], read it with [`BinaryTable::nodes`],
/// [`BinaryTable::cells`] and [`BinaryTable::get`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BinaryTable<N> {
    /// Row and column labels, in order.
    nodes: Vec<N>,
    /// Row-major cells, `nodes.len()²` of them.
    cells: Vec<Option<N>>,
}

/// Error of [`BinaryTable::new`]: the cell count is not the square of the
/// label count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableShapeError {
    /// Number of labels.
    pub nodes: usize,
    /// Number of cells given.
    pub cells: usize,
}

impl fmt::Display for TableShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a table of {} labels needs {} cells, not {}",
            self.nodes,
            self.nodes.saturating_mul(self.nodes),
            self.cells
        )
    }
}

impl std::error::Error for TableShapeError {}

impl<N: Copy + Eq> BinaryTable<N> {
    /// A table from its labels and row-major cells.
    ///
    /// # Errors
    ///
    /// [`TableShapeError`] unless `cells.len() == nodes.len()²`.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::promote::lattice::BinaryTable;
    /// let t = BinaryTable::new(vec!['x', 'y'], vec![Some('x'), None, None, Some('y')]).unwrap();
    /// assert_eq!(t.get(&'x', &'y'), Some(None));
    /// assert!(BinaryTable::new(vec!['x', 'y'], vec![Some('x')]).is_err());
    /// ```
    pub fn new(nodes: Vec<N>, cells: Vec<Option<N>>) -> Result<Self, TableShapeError> {
        if nodes.len().checked_mul(nodes.len()) != Some(cells.len()) {
            return Err(TableShapeError {
                nodes: nodes.len(),
                cells: cells.len(),
            });
        }
        Ok(BinaryTable { nodes, cells })
    }

    /// Builds from parts the caller has shaped (crate-internal).
    pub(crate) fn from_parts(nodes: Vec<N>, cells: Vec<Option<N>>) -> Self {
        debug_assert_eq!(nodes.len() * nodes.len(), cells.len());
        BinaryTable { nodes, cells }
    }

    /// Row and column labels, in order.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::promote::lattice::BinaryTable;
    /// let t = BinaryTable::from_fn(vec![1, 2], |a, b| Some(*a.max(b)));
    /// assert_eq!(t.nodes(), &[1, 2]);
    /// ```
    pub fn nodes(&self) -> &[N] {
        &self.nodes
    }

    /// Row-major cells, `nodes().len()²` of them (`None`: undefined).
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::promote::lattice::BinaryTable;
    /// let t = BinaryTable::from_fn(vec![1, 2], |a, b| Some(*a.max(b)));
    /// assert_eq!(t.cells(), &[Some(1), Some(2), Some(2), Some(2)]);
    /// ```
    pub fn cells(&self) -> &[Option<N>] {
        &self.cells
    }

    /// Builds a table by evaluating `f` on every ordered pair.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::promote::lattice::BinaryTable;
    /// let t = BinaryTable::from_fn(vec![1, 2, 3], |a, b| Some(*a.max(b)));
    /// assert_eq!(t.get(&1, &3), Some(Some(&3)));
    /// ```
    pub fn from_fn(nodes: Vec<N>, mut f: impl FnMut(&N, &N) -> Option<N>) -> Self {
        let cells = nodes
            .iter()
            .flat_map(|a| nodes.iter().map(|b| (*a, *b)).collect::<Vec<_>>());
        let cells = cells.map(|(a, b)| f(&a, &b)).collect();
        BinaryTable { nodes, cells }
    }

    fn pos(&self, x: &N) -> Option<usize> {
        self.nodes.iter().position(|n| n == x)
    }

    /// The cell for row `a`, column `b`: `None` if `a` or `b` is not a label,
    /// `Some(None)` for an undefined (`-`) cell.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::promote::lattice::BinaryTable;
    /// let t = BinaryTable::new(vec!['x', 'y'], vec![Some('x'), None, None, Some('y')]).unwrap();
    /// assert_eq!(t.get(&'x', &'y'), Some(None));
    /// assert_eq!(t.get(&'z', &'y'), None);
    /// ```
    pub fn get(&self, a: &N, b: &N) -> Option<Option<&N>> {
        let n = self.nodes.len();
        Some(self.cells.get(self.pos(a)? * n + self.pos(b)?)?.as_ref())
    }

    /// The table restricted to `nodes` (in that order); labels missing from
    /// this table are skipped.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::promote::lattice::BinaryTable;
    /// let t = BinaryTable::from_fn(vec![1, 2, 3], |a, b| Some(*a.max(b)));
    /// assert_eq!(t.restrict(&[3, 1]).cells(), vec![Some(3), Some(3), Some(3), Some(1)]);
    /// ```
    pub fn restrict(&self, nodes: &[N]) -> BinaryTable<N> {
        let keep: Vec<N> = nodes
            .iter()
            .copied()
            .filter(|x| self.pos(x).is_some())
            .collect();
        BinaryTable::from_fn(keep, |a, b| self.get(a, b).flatten().copied())
    }

    /// `a ∘ b` as an option, treating unknown labels as undefined.
    fn op(&self, a: Option<N>, b: Option<N>) -> Option<N> {
        self.get(&a?, &b?).flatten().copied()
    }

    /// Pairs `(a, b)` with `a` before `b` whose cells differ from `(b, a)`.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::promote::lattice::BinaryTable;
    /// // "left operand wins": not commutative.
    /// let t = BinaryTable::from_fn(vec![1, 2], |a, _| Some(*a));
    /// assert_eq!(t.non_commutative_pairs(), vec![(1, 2)]);
    /// ```
    pub fn non_commutative_pairs(&self) -> Vec<(N, N)> {
        let n = self.nodes.len();
        let mut out = Vec::new();
        for i in 0..n {
            for j in i + 1..n {
                if self.cells[i * n + j] != self.cells[j * n + i] {
                    out.push((self.nodes[i], self.nodes[j]));
                }
            }
        }
        out
    }

    /// Nodes `a` with `a ∘ a ≠ a`.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::promote::lattice::BinaryTable;
    /// let t = BinaryTable::from_fn(vec![1, 2], |_, _| Some(2));
    /// assert_eq!(t.non_idempotent(), vec![1]);
    /// ```
    pub fn non_idempotent(&self) -> Vec<N> {
        let n = self.nodes.len();
        (0..n)
            .filter(|&i| self.cells[i * n + i] != Some(self.nodes[i]))
            .map(|i| self.nodes[i])
            .collect()
    }

    /// Triples `(a, b, c)` with `(a ∘ b) ∘ c ≠ a ∘ (b ∘ c)`, over all ordered
    /// triples; an undefined cell propagates as undefined.
    ///
    /// # Examples
    ///
    /// ```
    /// use mldtypes::promote::lattice::BinaryTable;
    /// let t = BinaryTable::from_fn(vec![0i32, 1, 2], |a, b| Some((a - b).rem_euclid(3)));
    /// assert!(t.non_associative_triples().contains(&(0, 0, 1)));
    /// ```
    pub fn non_associative_triples(&self) -> Vec<(N, N, N)> {
        let mut out = Vec::new();
        for &a in &self.nodes {
            for &b in &self.nodes {
                let ab = self.op(Some(a), Some(b));
                for &c in &self.nodes {
                    let left = self.op(ab, Some(c));
                    let right = self.op(Some(a), self.op(Some(b), Some(c)));
                    if left != right {
                        out.push((a, b, c));
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jep_examples_of_non_lattices() {
        // Left DAG of JEP 9407: B and C have no upper bound.
        let left = [("A", vec!["B", "C"])];
        assert!(Lattice::new(&left).is_ok());
        assert_eq!(
            Lattice::new_complete(&left).unwrap_err(),
            LatticeError::NoUpperBound {
                a: "B".into(),
                b: "C".into()
            }
        );
        // Right DAG: A and B both below C and D, which are incomparable.
        let right = [("A", vec!["C", "D"]), ("B", vec!["C", "D"])];
        match Lattice::new(&right).unwrap_err() {
            LatticeError::AmbiguousJoin {
                a,
                b,
                mut candidates,
            } => {
                assert_eq!((a.as_str(), b.as_str()), ("A", "B"));
                candidates.sort();
                assert_eq!(candidates, vec!["C", "D"]);
            }
            e => panic!("unexpected {e}"),
        }
    }

    #[test]
    fn tables_are_always_square() {
        assert_eq!(
            BinaryTable::new(vec![1, 2, 3], vec![Some(1); 8]),
            Err(TableShapeError { nodes: 3, cells: 8 })
        );
        let t = BinaryTable::new(vec![1, 2], vec![Some(1), None, None, Some(2)]).unwrap();
        assert_eq!(t.get(&2, &2), Some(Some(&2)));
        assert_eq!(t.get(&3, &2), None);
        assert!(t.non_commutative_pairs().is_empty());
    }

    #[test]
    fn cycles_are_rejected() {
        let e = Lattice::new(&[("a", vec!["b"]), ("b", vec!["c"]), ("c", vec!["a"])]).unwrap_err();
        assert_eq!(e, LatticeError::Cycle { node: "a".into() });
        assert!(Lattice::new(&[("a", vec!["a"])]).is_err());
        let e = Lattice::with_nodes(&["a"], &[("a", vec!["z"])]).unwrap_err();
        assert_eq!(e, LatticeError::UnknownNode { node: "z".into() });
    }

    #[test]
    fn python_scalar_lattice() {
        let l =
            Lattice::new_complete(&[("int", vec!["float"]), ("float", vec!["complex"])]).unwrap();
        let t = l.table();
        assert!(t.non_commutative_pairs().is_empty());
        assert!(t.non_idempotent().is_empty());
        assert!(t.non_associative_triples().is_empty());
        let e = l.explain(&["int", "complex"]).unwrap();
        assert_eq!(
            e.paths,
            vec![vec!["int", "float", "complex"], vec!["complex"]]
        );
        assert_eq!(l.upper_bounds(&"float"), vec!["float", "complex"]);
        assert!(l.explain(&["int", "nope"]).is_none());
    }

    #[test]
    fn many_nodes_use_several_bitset_words() {
        let chain: Vec<(u32, Vec<u32>)> = (0..150).map(|i| (i, vec![i + 1])).collect();
        let l = Lattice::new(&chain).unwrap();
        assert_eq!(l.join(&3, &140), Some(140));
        assert_eq!(l.join_all(&[100, 7, 149]), Some(149));
        assert_eq!(
            l.explain(&[148, 150]).unwrap().paths[0],
            vec![148, 149, 150]
        );
    }
}
