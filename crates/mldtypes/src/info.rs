//! `finfo` / `iinfo`: machine limits of every format, as ml_dtypes reports them.
